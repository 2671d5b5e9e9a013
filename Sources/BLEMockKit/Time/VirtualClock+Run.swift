import BLECore

extension VirtualClock {
    /// Runs code that sleeps on this clock with time that drives itself.
    ///
    /// `body` (and the tasks it starts with `async let` or task groups) runs on an executor of
    /// the scope's own, one job at a time. Whenever every one of those tasks waits, the clock
    /// wakes the next sleeper (or reaches the target of an ``advance(to:)`` made inside the
    /// scope), and the woken task runs before time moves on again. So code that sleeps in
    /// loops, timers and timeouts runs to its end deterministically, in no wall-clock time.
    ///
    /// ```swift
    /// let clock = VirtualClock()
    /// let ticks = try await clock.run {
    ///     var ticks = 0
    ///     while ticks < 10 {
    ///         try await clock.sleep(for: .seconds(1))
    ///         ticks += 1
    ///     }
    ///     return ticks
    /// }
    /// // ticks == 10, clock.now == 10s
    /// ```
    ///
    /// If every task waits and no sleeper is pending, the clock waits up to `stallPatience` of
    /// wall-clock time for work from outside the scope, then cancels `body` and throws
    /// ``Stall``; it does the same when the next wake-up lies more than `timeLimit` past the
    /// scope's start.
    ///
    /// On a bridge's clock (``MockBLEBridge/clock``) this is the bridge's
    /// ``MockBLEBridge/run(timeLimit:stallPatience:_:)``: time drives itself over the bridge's
    /// whole schedule, and a stall throws ``MockBLEBridge/Stall``.
    ///
    /// - Parameters:
    ///   - timeLimit: The most virtual time the scope may take. Defaults to one hour.
    ///   - stallPatience: How long, in wall-clock time, to wait for outside work before
    ///     reporting a stall. Defaults to one second.
    ///   - body: The code under test.
    /// - Returns: What `body` returns.
    /// - Throws: What `body` throws, or ``Stall`` (on a bridge's clock,
    ///   ``MockBLEBridge/Stall``); `APIMisuseError.invalidArgument(_:)`, before `body` runs,
    ///   when `timeLimit` is not above zero or `stallPatience` is negative; `CancellationError`
    ///   when the calling task is cancelled, whatever `body`, cancelled with it, makes of that
    ///   (and without running `body` when it is cancelled already).
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    public func run<T: Sendable>(
        timeLimit: Duration = .seconds(3_600), stallPatience: Duration = .seconds(1),
        _ body: @escaping @Sendable @isolated(any) () async throws -> T
    ) async throws -> T {
        if isBridged {
            guard let bridge else { throw Self.bridgeGone("run") }
            return try await bridge.run(timeLimit: timeLimit, stallPatience: stallPatience, body)
        }
        if let problem = MockBLEBridge.runArgumentProblem(timeLimit: timeLimit, stallPatience: stallPatience) {
            throw APIMisuseError.invalidArgument("VirtualClock.run(timeLimit:stallPatience:_:): " + problem)
        }
        // A cancelled caller runs nothing (as a bridge's run).
        try Task.checkCancellation()
        try lock.withLock {
            guard !driving else {
                throw APIMisuseError.invalidConfiguration(
                    "VirtualClock.run: a run is already active on this clock; runs do not nest")
            }
            driving = true
            runDeadline = schedule.now.advanced(by: max(timeLimit, .zero))
        }
        let executor = SimulationExecutor()
        defer {
            executor.stop()
            let waiting = lock.withLock { () -> AdvanceWaiters? in
                driving = false
                runDeadline = nil
                return advanceWaiters
            }
            waiting?.endAll()
        }
        return try await SelfDrivingScope.run(
            on: executor, patience: stallPatience, step: { self.step() },
            stall: { step in
                self.lock.withLock {
                    Stall(
                        reason: step == .timeLimit ? .timeLimitReached : .nothingScheduled, at: self.schedule.now,
                        sleepers: self.schedule.count)
                }
            }, body: body)
    }

    /// One step of a run: an explicit advance's target if it comes first, else the next sleeper.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    func step() -> SelfDrivingScope.Step {
        enum Action {
            case wake(Waiter)
            case reach(AdvanceWaiters, VirtualClock.Instant)
            case outcome(SelfDrivingScope.Step)
        }
        let action: Action = lock.withLock {
            let next = schedule.nextDeadline
            if let advanceWaiters, let horizon = advanceWaiters.horizon, next.map({ $0 > horizon }) ?? true {
                // An advance past the time limit stops the run there, as a sleeper due past it
                // does (and as a bridge's run does).
                if let runDeadline, horizon > runDeadline { return .outcome(.timeLimit) }
                _ = schedule.popNext(through: horizon)  // nothing is due by then: only moves `now`
                return .reach(advanceWaiters, horizon)
            }
            guard let next else { return .outcome(.nothingScheduled) }
            if let runDeadline, next > runDeadline { return .outcome(.timeLimit) }
            guard let waiter = schedule.popNext(through: next) else { return .outcome(.ran) }
            return .wake(waiter)
        }
        switch action {
        case .wake(let waiter):
            waiter.resume(returning: .advanced)
            return .ran
        case .reach(let waiters, let horizon):
            waiters.reach(through: horizon)
            return .ran
        case .outcome(let outcome):
            return outcome
        }
    }

    /// A ``run(timeLimit:stallPatience:_:)`` that could not go on.
    public struct Stall: Error, Hashable, Sendable, CustomStringConvertible {
        /// Why the run stopped.
        public enum Reason: Hashable, Sendable {
            /// Every task waited and no sleeper was pending.
            case nothingScheduled
            /// The next wake-up lay past the run's time limit.
            case timeLimitReached
        }

        /// Why the run stopped.
        public var reason: Reason
        /// The virtual time it stopped at.
        public var at: Instant
        /// The tasks sleeping on the clock then.
        public var sleepers: Int

        public var description: String {
            switch reason {
            case .nothingScheduled:
                "VirtualClock.run stalled at \(at): every task waits and nothing sleeps on the clock"
            case .timeLimitReached:
                "VirtualClock.run passed its time limit at \(at) with \(sleepers) sleeper(s) still pending"
            }
        }
    }
}
