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
        /// Nothing ran: something happened outside the scope since `settle` last reported it
        /// quiet (code on an app queue went on), so the driver settles again first.
        case lookAgain
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
    /// on app queues) reports that nothing more happened. When a step finds nothing scheduled,
    /// the driver waits up to `patience` of wall-clock time for work from outside the scope, then
    /// throws what `stall` makes of it, unless `release` lets go of what held the simulation
    /// (an answer the app owed and did not give meanwhile: see `OutsideWork.oweAnswer()`); a step
    /// past the time limit throws at once.
    ///
    /// A stall cancels `body` and is thrown at once, without waiting for `body` to end: a body
    /// that waits on something cancellation does not end (a continuation of its own) would
    /// otherwise keep the scope, and the test, waiting for ever. Such a body is left suspended
    /// until what it waits on resumes it; it then runs to its end off the scope (the stopped
    /// executor hands it to the global concurrent executor). So is a body that swallows its
    /// cancellation in a loop, once it has run ``jobsToSettle`` jobs after the scope ended.
    ///
    /// When the body has ended (or the scope stalled), `ending` runs on the executor (it cancels
    /// the scope's other tasks), and the scope returns once nothing on the executor can run.
    static func run<T: Sendable>(
        on executor: SimulationExecutor, patience: Duration, settle: @escaping @Sendable () async -> Bool = { false },
        recheck: @escaping @Sendable () async -> Bool = { false },
        step: @escaping @Sendable () async -> Step, release: @escaping @Sendable () async -> Bool = { false },
        ending: @escaping @Sendable () -> Void = {},
        stall: @escaping @Sendable (Step) async -> any Error, body: @escaping @Sendable () async throws -> T
    ) async throws -> T {
        let finished = LockedValue(false)
        let outcome = Outcome<T>()
        // (Unstructured tasks, so that a stall is reported whatever the body does; they inherit
        // the caller's task-locals, and prefer the scope's executor.)
        let bodyTask = Task(executorPreference: executor) {
            let result = await HelperTask.$preferredExecutor.withValue(executor) { () async -> Result<T, any Error> in
                do { return .success(try await body()) } catch { return .failure(error) }
            }
            finished.value = true
            // The driver may be waiting for outside work (the body's last steps ran off the
            // executor, on the main queue say, and it found nothing scheduled): it stops waiting
            // now, rather than after the stall patience, as the scope's caller waits for it.
            executor.poke()
            outcome.finish(result)
        }
        let driverTask = Task(executorPreference: executor) {
            do {
                try await HelperTask.$preferredExecutor.withValue(executor) {
                    try await drive(executor, patience, finished, settle, recheck, step, release, stall)
                }
            } catch is Ended {
                // The body ended and set the outcome.
            } catch {
                outcome.finish(.failure(error))
                bodyTask.cancel()
            }
        }
        let result = await withTaskCancellationHandler {
            await outcome.value
        } onCancel: {
            // The scope's outcome is the cancellation, whatever the body makes of its own (a
            // body that ends normally when cancelled, as iterating an event stream does, would
            // otherwise win or lose a race with the driver's noticing).
            outcome.finish(.failure(CancellationError()))
            bodyTask.cancel()
            driverTask.cancel()
            executor.poke()
        }
        // The driver ends once the body has (it finds the flag at its next idle moment), or has
        // ended already by throwing.
        driverTask.cancel()
        await driverTask.value
        // The scope's other tasks (`ending` cancels them) get to run what their cancellation
        // wakes, until nothing on the executor can run: after the scope, nothing would. A
        // task that never stops (a cancelled body swallowing its `CancellationError` in a
        // loop) is given a bounded number of jobs, then left to the global executor as the
        // stopped executor hands it on, so that the scope (a stalled test, an exploration)
        // ends rather than waits for ever.
        await Task(executorPreference: executor) {
            ending()
            await executor.untilIdle(orAfterJobs: Self.jobsToSettle)
        }.value
        return try result.get()
    }

    /// The driver: one step of time each time the scope's tasks all wait, until the body ends.
    private static func drive(
        _ executor: SimulationExecutor, _ patience: Duration, _ finished: LockedValue<Bool>,
        _ settle: @Sendable () async -> Bool, _ recheck: @Sendable () async -> Bool, _ step: @Sendable () async -> Step,
        _ release: @Sendable () async -> Bool, _ stall: @Sendable (Step) async -> any Error
    ) async throws {
        while true {
            await executor.untilIdle()
            try checkEnded(finished)
            // Work outside the scope (callbacks on app queues) made more: wait for the scope's
            // tasks again before moving time.
            if await settle() || executor.hasQueuedJobs { continue }
            try checkEnded(finished)
            let outcome = await step()
            switch outcome {
            case .ran, .lookAgain:
                continue
            case .nothingScheduled, .held:
                if await waitForProgress(executor, patience, recheck) { continue }
                if outcome == .held, await release() { continue }
                throw await stall(outcome)
            case .timeLimit:
                throw await stall(outcome)
            }
        }
    }

    /// Ends the driver: normally once the body has ended, or with `CancellationError` when the
    /// scope's caller was cancelled first. (The body was cancelled with it, but may still wait on
    /// another task of the scope, one that only time or cancellation ends: the scope's outcome
    /// is then the cancellation, and its ending cancels the scope's other tasks.)
    private static func checkEnded(_ finished: LockedValue<Bool>) throws {
        if finished.value { throw Ended() }
        if Task.isCancelled { throw CancellationError() }
    }

    /// The driver's way out once the body has ended (not an outcome: the body's is set).
    private struct Ended: Error {}

    /// Waits up to `patience` of wall-clock time for work from outside the scope; returns
    /// whether some came (or the body ended, or the scope was cancelled, meanwhile). Every ``recheckInterval`` meanwhile, `recheck` has waits on the app's
    /// state read it again (app code on its own queue may change what they read without calling
    /// the kit, which is no activity the scope hears of); one that ended is progress.
    private static func waitForProgress(
        _ executor: SimulationExecutor, _ patience: Duration, _ recheck: @Sendable () async -> Bool
    ) async -> Bool {
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: patience)
        while true {
            let left = max(.zero, clock.now.duration(to: deadline))
            // (The body's end and the scope's cancellation poke the executor: they end the wait.)
            if executor.waitForOutsideWork(timeout: min(left, recheckInterval)) { return true }
            if await recheck() { return true }
            if left <= recheckInterval { return false }
        }
    }

    /// The most jobs the scope's tasks may run after it ends before it returns regardless.
    static let jobsToSettle: UInt64 = 100_000

    /// How often waits on the app's state are read again while the scope waits for outside work.
    static let recheckInterval: Duration = .milliseconds(10)

    /// The scope's outcome: the first of the body's result and the driver's stall.
    final class Outcome<T: Sendable>: @unchecked Sendable {
        // @unchecked Sendable: `result` and `waiter` are only read and written with `lock` held;
        // the continuation is resumed after it is released.
        private let lock = Lock()
        private var result: Result<T, any Error>?
        private var waiter: CheckedContinuation<Result<T, any Error>, Never>?

        /// Sets the outcome, unless one is set already.
        func finish(_ outcome: Result<T, any Error>) {
            let waiting = lock.withLock { () -> CheckedContinuation<Result<T, any Error>, Never>? in
                guard result == nil else { return nil }
                result = outcome
                defer { waiter = nil }
                return waiter
            }
            waiting?.resume(returning: outcome)
        }

        /// The outcome, once there is one.
        var value: Result<T, any Error> {
            get async {
                await withCheckedContinuation { continuation in
                    let ready = lock.withLock { () -> Result<T, any Error>? in
                        if let result { return result }
                        waiter = continuation
                        return nil
                    }
                    if let ready { continuation.resume(returning: ready) }
                }
            }
        }
    }
}
