import BLECore

/// The machinery a scope with virtual time that drives itself runs on (``MockBLEBridge/run(timeLimit:stallPatience:_:)``
/// and ``VirtualClock/run(timeLimit:stallPatience:_:)``): the body runs on a
/// ``SimulationExecutor``, beside a driver that takes one step of time each time every task of
/// the scope waits.
@available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
enum SelfDrivingScope {
    /// What one step of the driver did.
    enum Step: Sendable {
        /// Time moved on: an event ran, sleepers woke, or an explicit advance reached its target.
        case ran
        /// Nothing is scheduled: what the tasks wait for cannot happen (unless work comes from
        /// outside the scope).
        case nothingScheduled
        /// The next thing scheduled lies past the scope's time limit.
        case timeLimit
        /// The simulation is paused (a wait for the app that must end first) and nothing outside
        /// the scope has happened yet to end it.
        case held
    }

    /// Runs `body` on `executor`, with a driver calling `step` whenever every task of the scope
    /// waits and `settle` (which waits for work outside the scope, such as delegate callbacks
    /// on app queues) reports that nothing more happened. When a step finds nothing scheduled, the driver waits up to `patience` of
    /// wall-clock time for work from outside the scope, then throws what `stall` makes of it
    /// (cancelling the body); a step past the time limit throws at once.
    static func run<T: Sendable>(
        on executor: SimulationExecutor, patience: Duration, settle: @escaping @Sendable () async -> Bool = { false },
        step: @escaping @Sendable () async -> Step,
        stall: @escaping @Sendable (Step) async -> any Error, body: @escaping @Sendable () async throws -> T
    ) async throws -> T {
        let finished = Flag()
        return try await HelperTask.$preferredExecutor.withValue(executor) {
            try await withTaskExecutorPreference(executor) {
                try await withThrowingTaskGroup(of: T?.self) { group in
                    group.addTask {
                        defer { finished.set() }
                        return try await body()
                    }
                    group.addTask {
                        while true {
                            await executor.untilIdle()
                            if Task.isCancelled || finished.isSet { return nil }
                            // Work outside the scope (callbacks on app queues) made more: wait
                            // for the scope's tasks again before moving time.
                            if await settle() || executor.hasQueuedJobs { continue }
                            if Task.isCancelled || finished.isSet { return nil }
                            let outcome = await step()
                            switch outcome {
                            case .ran:
                                continue
                            case .nothingScheduled, .held:
                                if executor.waitForOutsideWork(timeout: patience) { continue }
                                throw await stall(outcome)
                            case .timeLimit:
                                throw await stall(outcome)
                            }
                        }
                    }
                    var result: T?
                    while let outcome = try await group.next() {
                        if let outcome { result = outcome }
                    }
                    return result!
                }
            }
        }
    }

    /// A flag set once, readable from any thread.
    final class Flag: @unchecked Sendable {
        // @unchecked Sendable: `value` is only read and written with `lock` held.
        private let lock = Lock()
        private var value = false

        var isSet: Bool { lock.withLock { value } }

        func set() { lock.withLock { value = true } }
    }
}
