import BLECore

extension MockBLEBridge {
    /// A task sleeps on ``clock`` until `deadline`: its wake-up joins the world's one schedule
    /// (``World/sleep(until:)``) and the task suspends until the schedule reaches it.
    ///
    /// The task hops here to register, so inside a ``run(timeLimit:stallPatience:_:)`` scope
    /// the registration is queued on the bridge before the driver's next step (which runs
    /// here too, once every task of the scope waits): time never moves past a sleep that is
    /// being registered. Returns at once when `deadline` is not after ``now``.
    ///
    /// - Throws: `CancellationError` if the task is cancelled before or while sleeping; the
    ///   sleeper then leaves the clock's sleepers at once, and the schedule before the bridge
    ///   runs anything else.
    func sleepOnClock(until deadline: VirtualClock.Instant) async throws {
        forgetCancelled()
        try Task.checkCancellation()
        guard let id = world.sleep(until: deadline) else { return }
        // Published before the cancellation handler can run: until it wakes, the sleeper is in
        // the clock's published sleepers or waiting, which is how a cancellation finds it.
        publishSleepers()
        _ = try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                sleepClock.register(id, continuation)
            }
        } onCancel: {
            if sleepClock.cancelSleeper(id) {
                HelperTask.start { await self.forgetCancelled() }
            }
        }
    }

    /// Takes the wake-ups of cancelled sleepers off the schedule.
    func forgetCancelledSleepers() {
        // A cancelled sleeper is on the schedule until taken off here: with no sleeper there,
        // there is nothing to take (and the clock's lock is not touched on every call).
        guard world.sleeperCount > 0 else { return }
        let cancelled = sleepClock.takeCancelledSleepers()
        guard !cancelled.isEmpty else { return }
        for id in cancelled { world.cancelSleep(id) }
        publishSleepers()
    }

    /// Publishes the world's sleepers to the clock.
    func publishSleepers() {
        sleepClock.publish(sleepers: world.sleepers)
    }
}
