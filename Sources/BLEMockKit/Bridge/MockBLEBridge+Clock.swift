import BLECore

extension MockBLEBridge {
    /// A task begins a sleep on ``clock`` until `deadline`: its wake-up joins the world's one
    /// schedule (``World/sleep(until:)``), and the sleeper is published to the clock. Returns
    /// its id, or `nil` when `deadline` is not after ``now`` (the sleep is over at once).
    ///
    /// The task hops here to register, so inside a ``run(timeLimit:stallPatience:_:)`` scope
    /// the wake-up is on the schedule before the driver's next step (which runs here too, once
    /// every task of the scope waits): time never moves past a sleep that is being registered.
    /// The task then waits on the clock (``VirtualClock/sleepOnBridge(until:)``), not here: a
    /// sleeping task does not keep the bridge alive.
    ///
    /// A sleep begun during a run by a task the run cannot see (a plain `Task {}` an app starts
    /// in a callback, say) is noted as an untracked call: time may have moved before it began,
    /// so its deadline, and what the app does at it, may differ from run to run.
    ///
    /// - Throws: `CancellationError` if the task is cancelled already.
    func beginSleep(until deadline: VirtualClock.Instant) throws -> SleeperID? {
        forgetCancelled()
        try Task.checkCancellation()
        if driving { checkTracked("MockBLEBridge.clock.sleep") }
        guard let id = world.sleep(until: deadline) else { return nil }
        // Published before the task can be cancelled in its wait: until it wakes, the sleeper
        // is in the clock's published sleepers or waiting, which is how a cancellation finds it.
        publishSleepers()
        return id
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
