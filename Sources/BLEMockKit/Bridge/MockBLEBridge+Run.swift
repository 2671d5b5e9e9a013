import BLECore
import Dispatch

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

extension MockBLEBridge {
    /// The bridge of the current ``run(timeLimit:stallPatience:_:)`` scope, for code that
    /// needs one without being handed it (task-local: each test sees its own).
    @TaskLocal public static var current: MockBLEBridge?

    /// Runs the code under test with virtual time that drives itself.
    ///
    /// `body` (and the tasks it starts with `async let`, task groups, or ``task(_:)``) runs on
    /// an executor of the scope's own, one job at a time. Whenever every one of those tasks is
    /// waiting, virtual time jumps to the next scheduled event (a connection event, an
    /// advertisement, a timeout, a sleeper on ``clock``) and runs it; the tasks it wakes run
    /// before time moves on again. So app code that waits for events — ready to send, a
    /// notification, a connection to a peripheral that advertises later — runs to its end
    /// with no ``advance(by:)`` in the test, in milliseconds of wall time, and the same seed
    /// gives the same log.
    ///
    /// ```swift
    /// let bridge = MockBLEBridge(configuration: .realistic(seed: 7))
    /// try await bridge.run {
    ///     let app = HeartRateClient(central: MockCentralManager(bridge: bridge))
    ///     try await app.start()
    ///     await app.untilReadings(10)
    /// }
    /// ```
    ///
    /// **As the body ends.** Before the run returns (or throws), the app queues are given the
    /// chance to run what they hold and the app's calls made meanwhile are applied: a
    /// CoreBluetooth-shaped manager that `body` let go of shuts down within the run (its scan,
    /// advertising and links end in the log), at the run's last instant, in the same order on
    /// every run (managers let go of together shut down in the order of their identifiers).
    ///
    /// **When nothing can happen.** If every task waits and nothing is scheduled, the bridge
    /// waits up to `stallPatience` of wall-clock time for work from outside the scope, then
    /// cancels `body` and throws ``Stall`` with every waiting operation and event stream,
    /// since when, and the seed. The same happens when the scope's virtual time passes
    /// `timeLimit` (something keeps the schedule busy — a scan, a timer — while what the
    /// test waits for never comes).
    ///
    /// **Limits.** Only the scope's tasks are seen. A plain `Task {}` or `Task.detached {}`
    /// started inside it runs elsewhere, so time may move while it runs: start such tasks with
    /// ``task(_:)``. The bridge notes each call, and each sleep on its ``clock``, from a task it cannot see (``Leftover/untrackedCall(_:)``
    /// in ``finish()``). A task that awaits something other than the simulation (wall-clock
    /// sleep, a network call) counts as waiting, and time moves on meanwhile; so does a task
    /// that hops to the main actor, unless `body` is on the main actor (the run then waits for
    /// the main queue before moving time; even then a task-group child of main-actor code, which
    /// passes through the global executor, and a call from the main actor to an async function
    /// of the main actor, which suspends inside a run, may let time move or a queued callback run
    /// first: see TestingAppCode's Limits). A request handed to a CoreBluetooth-shaped peripheral
    /// manager's delegate (BLECBM) is the exception: the app may answer it from any thread, so
    /// time does not move while it waits for the answer, for up to `stallPatience` (then time
    /// goes on, as for an app that never answers). Explicit
    /// ``advance(by:)`` inside the scope runs the schedule up to its target and returns
    /// there; outside any scope, time moves only by ``advance(by:)``, ``run(maximumEvents:)``
    /// and the calls that wait for the link.
    ///
    /// - Parameters:
    ///   - timeLimit: The most virtual time the scope may take. Defaults to one hour.
    ///   - stallPatience: How long, in wall-clock time, to wait for outside work before
    ///     reporting a stall (or before going on without an answer a peripheral app owes).
    ///     Defaults to one second.
    ///   - body: The code under test.
    /// - Returns: What `body` returns.
    /// - Throws: What `body` throws, or ``Stall``; `APIMisuseError.invalidArgument(_:)`, before
    ///   `body` runs, when `timeLimit` is not above zero or `stallPatience` is negative;
    ///   `CancellationError` when the calling task is cancelled, whatever `body`, cancelled with
    ///   it, makes of that (and without running `body` when it is cancelled already).
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    public nonisolated func run<T: Sendable>(
        timeLimit: Duration = .seconds(3_600), stallPatience: Duration = .seconds(1),
        _ body: @escaping @Sendable @isolated(any) () async throws -> T
    ) async throws -> T {
        if let problem = Self.runArgumentProblem(timeLimit: timeLimit, stallPatience: stallPatience) {
            throw APIMisuseError.invalidArgument("MockBLEBridge.run(timeLimit:stallPatience:_:): " + problem)
        }
        // A cancelled caller runs nothing: the body would start cancelled, and a body that does
        // not check would run to its end regardless (its calls ignored or failing).
        if Task.isCancelled {
            throw CancellationError()
        }
        let executor = SimulationExecutor()
        defer { executor.stop() }
        try await begin(executor, timeLimit: timeLimit, patience: stallPatience)
        // A body on the main actor runs on the main queue, which the scope's executor does not
        // see: the run waits for the main queue's work as for an app queue's before moving on.
        // The body goes back and forth between the two (a call on the bridge runs on the
        // scope's executor, and its answer resumes the body on the main queue, behind the
        // probe), so the probe says whether the executor stayed idle while it passed: only then
        // has the body nothing left to do that the driver could miss (time moved while the body
        // was between two calls made at one instant, a replay then an event late).
        let mainProbe =
            body.isolation.map { ObjectIdentifier($0) == ObjectIdentifier(MainActor.shared) } == true
            ? outside.addProbe(reportingQuiet: { [executor] in
                let before = executor.jobsStarted
                return await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
                    DispatchQueue.main.async {
                        continuation.resume(returning: executor.isIdle(sinceStarting: before))
                    }
                }
            }) : nil
        defer { if let mainProbe { outside.removeProbe(mainProbe) } }
        do {
            let value = try await scope(executor, patience: stallPatience, body)
            await settleAtEnd()
            await end(executor)
            return value
        } catch {
            await settleAtEnd()
            await end(executor)
            throw error
        }
    }

    /// Before a run ends, what app code does as the body lets go of it runs and is applied: a
    /// manager the body made and dropped shuts down once the last callback holding it has run on
    /// its app's queue, and the run applies that (its scan stopping, its advertising, its links)
    /// before it returns, rather than at an instant that depends on the threads, after it. (A
    /// bounded number of rounds: each passes every app queue and applies what they held.)
    private nonisolated func settleAtEnd() async {
        for _ in 0..<Self.settlingRoundsAtEnd {
            guard await settleOutside() else { return }
        }
    }

    /// The most rounds of outside work a run waits for as it ends (see ``settleAtEnd()``).
    static let settlingRoundsAtEnd = 16

    /// What is wrong with a run's arguments, or `nil`: a time limit must be above zero, a
    /// stall patience not negative.
    static func runArgumentProblem(timeLimit: Duration, stallPatience: Duration) -> String? {
        ConfigurationProblems.check("timeLimit", positive: timeLimit)
            ?? ConfigurationProblems.check("stallPatience", nonNegative: stallPatience)
    }

    /// The scope proper: the body and the driver, on the scope's executor.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    private nonisolated func scope<T: Sendable>(
        _ executor: SimulationExecutor, patience: Duration,
        _ body: @escaping @Sendable @isolated(any) () async throws -> T
    ) async throws -> T {
        // (Made once: the driver settles after every step.)
        let scopeHasWork: @Sendable () -> Bool = { executor.hasQueuedJobs }
        return try await Self.$current.withValue(self) {
            try await SelfDrivingScope.run(
                on: executor, patience: patience, settle: { await self.settleOutside(scopeHasWork: scopeHasWork) },
                recheck: { await self.recheckAppWaits(executor) }, step: { await self.step() },
                release: { self.outside.expireOwedAnswers() },
                ending: { self.runs.cancelTracked() },
                stall: { step in
                    let reason: Stall.Reason =
                        switch step {
                        case .timeLimit: .timeLimitReached
                        case .held: .paused
                        case .ran, .lookAgain, .nothingScheduled: .nothingScheduled
                        }
                    return await self.stall(reason, patience: patience)
                }, body: body)
        }
    }

    /// Starts a task the bridge tracks: inside a ``run(timeLimit:stallPatience:_:)`` scope it
    /// runs on the scope's executor, so time waits for it as for the scope's own tasks (a
    /// plain `Task {}` would run elsewhere); outside a scope it is a plain task.
    ///
    /// A task started in a scope belongs to it: when the scope ends (its body returned or
    /// threw, or it stalled), the task is cancelled and given the chance to end, as the scope's
    /// executor runs no more after that. (A simulated device serving its events for ever, say,
    /// ends there, and lets go of what it holds, the bridge included.)
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @discardableResult
    public nonisolated func task<T: Sendable>(
        _ operation: @escaping @Sendable () async throws -> T
    ) -> Task<T, any Error> {
        guard let executor = runs.current else { return Task { try await operation() } }
        let task = Task(executorPreference: executor) {
            try await Self.$current.withValue(self) {
                try await HelperTask.$preferredExecutor.withValue(executor) { try await operation() }
            }
        }
        // A scope that ended meanwhile will not run it: cancelled at once.
        if !runs.track(on: executor, cancel: { task.cancel() }) { task.cancel() }
        return task
    }

    /// Waits for the work handed outside the scope (delegate callbacks on app queues) to run:
    /// first every bridge job already queued (which may hand out more), then a probe through
    /// every app queue. Returns whether there was outside activity meanwhile, or a probe found
    /// work reaching the simulation from its queue (the driver then settles again before it
    /// moves time).
    ///
    /// `scopeHasWork`, for the run's driver: whether the scope's tasks have jobs queued. When
    /// they have once the app queues are passed (the body woke as a callback ran), they go first,
    /// and the held calls are applied only at the driver's next settling: what those tasks do
    /// at this instant (a manager the body lets go of shutting down) is then held with the
    /// app's calls and applied in their order, not before or after them by which thread got
    /// there first.
    nonisolated func settleOutside(scopeHasWork: (@Sendable () -> Bool)? = nil) async -> Bool {
        guard outside.beginSettling() else { return false }
        let before = outside.activity
        // App queues first (code there may be about to call the bridge), then what front ends
        // held back of the app's calls (applied in their own deterministic order), then the
        // bridge's queued jobs (which may hand the app more), then the app queues again.
        let quietBefore = await passProbesUntilQuiet()
        if let scopeHasWork, scopeHasWork() { return true }
        let settled = await runSettlers(upToMark: true)
        let quietAfter = await outside.passProbes()
        if settled || outside.activity != before || !quietBefore || !quietAfter { return true }
        // Quiet: the step that follows moves time only if nothing happened since.
        outside.noteQuiet(at: before)
        return false
    }

    /// Passes every app queue, and again as long as a pass saw outside activity (an app's call,
    /// a callback run); returns whether the first found the simulation quiet. The app's held
    /// calls are applied only after a pass that saw none, and only those held before that pass
    /// began (each pass starts by marking them): code that ran as a pass went on (a body on the
    /// main actor resuming, a callback) may have handed a queue already passed a block that
    /// calls the kit, and applied then, the calls of one instant would be split in two batches
    /// by which thread got there first (two apps' connects applied in either order). Such a
    /// block has run by the end of the next pass. (A bounded number of passes: an app that
    /// never stops calling is applied as it goes.)
    ///
    /// `marking`: whether each pass marks the held calls (the run's driver's passes do; a wait
    /// ending, which applies all that is held, leaves the driver's marks alone).
    nonisolated func passProbesUntilQuiet(marking: Bool = true) async -> Bool {
        var first: Bool?
        for _ in 0...Self.settlingPasses {
            let mark = outside.activity
            if marking { outside.markSettlers() }
            let quiet = await outside.passProbes()
            if first == nil { first = quiet }
            if quiet, outside.activity == mark { break }
        }
        return first ?? true
    }

    /// The most passes through the app queues ``passProbesUntilQuiet()`` makes after its first.
    static let settlingPasses = 8

    /// Has the waits on the app's state under way (`waitForApp`) read their conditions again,
    /// and waits until they have; returns whether one of them ended. (App code working on its
    /// own queue, without calling the kit, changes what they read with no activity to wake
    /// them.)
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    nonisolated func recheckAppWaits(_ executor: SimulationExecutor) async -> Bool {
        let ended = outside.endedAppWaits
        guard outside.hasAppWaits else { return false }
        outside.wakeWaiters()
        // A wait reads its condition on its caller's isolation: the scope's executor, or an
        // app queue (the main queue for a body on the main actor), which the probes pass.
        await executor.untilIdle()
        await outside.passProbes()
        await executor.untilIdle()
        return outside.endedAppWaits != ended
    }

    /// A direct call (a manager's, a test hook's, the test's `advance`, `finish()` or `log`)
    /// reaches the bridge: the app's calls the front ends hold are applied first, in their order
    /// (in a run, those held for the run's driver; outside runs, those queued for a drain on the
    /// app's queue that has not got to them; for the front ends' own commands, nothing). Those
    /// made before it on the caller's own thread (a CoreBluetooth-shaped call in the body, then a
    /// manager's) are among them, so the two keep the order they were made in, whenever the run's
    /// driver last settled or the drain runs; left for either, they would come after the direct
    /// call, or not, as the threads go (and in a run after whatever time it moved).
    ///
    /// In a run, a call from the run's own tasks (the body, a `bridge.task`) first waits for the
    /// callbacks already handed to app queues to have run, up to the run's stall patience: the
    /// body woken by an event at the instant apps are told of it (a discovery every scanning
    /// central hears) would otherwise apply the calls those callbacks make, or not, as far as
    /// their threads have got; once they have run, it applies all of them before its own, on
    /// every run. (An app callback that signals the body after a call keeps that call first.)
    /// It does so also while a `waitForApp` whose condition held ends (applying the app's calls,
    /// if it paused the simulation): a simulated device's task answering them then applies what
    /// those callbacks call before its answer, as it would once the wait has ended.
    func applyHeldCalls() {
        guard !applyingFrontEndCommands, outside.hasSettlers else { return }
        if isOnRunExecutor { outside.waitForCallbacks(upTo: runPatience) }
        _ = runSettlers(ownPauses: outside.pausesHoldingTestCalls)
    }

    /// Has the front ends apply what they held back of the app's calls (see
    /// ``OutsideWork/addSettler(_:)``): all of it, or (`upToMark`, the run's driver) what was
    /// held when its last pass through the app queues began. Returns whether any applied
    /// something. Runs after the bridge jobs queued before it.
    ///
    /// `ownPauses`: how many of the simulation's pauses are the caller's own (a paused
    /// `waitForApp` whose condition holds, applying the calls held meanwhile as it ends; see
    /// ``settleHeldCalls(endingWaitHolding:)``). Any other pause holds the calls back: a second
    /// wait still paused applies them as it ends.
    func runSettlers(upToMark: Bool = false, ownPauses: Int = 0) -> Bool {
        // A paused simulation applies nothing of the app's calls yet.
        if outside.holdCount > ownPauses { return false }
        var applied = false
        for settler in outside.registeredSettlers where settler.apply(self, upToMark) { applied = true }
        return applied
    }

    /// As a paused `waitForApp` whose condition holds ends, time held (`holds` of the pauses are
    /// the wait's own): applies all the app's held calls, in their order, then waits for the
    /// callbacks they brought about to run on the app queues, and again while those made calls
    /// (a bounded number of times, as a run's driver settles), so the caller goes on with the
    /// app queues quiet and nothing of the app's held, as before the calls were applied. (Left in flight, a callback
    /// holding a manager the caller then lets go of shut it down later, on the app's queue,
    /// apart from the others let go of at that instant and so in either order.)
    nonisolated func settleHeldCalls(endingWaitHolding holds: Int) async {
        for _ in 0...Self.settlingPasses {
            guard await runSettlers(ownPauses: holds) else { return }
            _ = await passProbesUntilQuiet(marking: false)
        }
    }

    /// Whether a ``run(timeLimit:stallPatience:_:)`` scope is active on this bridge (front ends
    /// then hold the app's calls back for the run's driver to apply in order).
    package nonisolated var hasActiveRun: Bool { runs.isActive }

    /// Whether the caller runs on the active run's own executor (the test body and the tasks
    /// the run tracks), rather than on an app's queue or another thread.
    package nonisolated var isOnRunExecutor: Bool {
        guard #available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *), let executor = runs.current
        else { return false }
        return executor.isCurrentThread
    }

    /// Gives the bridge's time to something outside it (a front end whose time follows the
    /// wall clock): from now on ``run(timeLimit:stallPatience:_:)`` refuses to start, naming
    /// `owner`. `nil` gives the time back.
    package nonisolated func setTimeOwner(_ owner: String?) {
        runs.setTimeOwner(owner)
        sleepClock.setBridgeTimeOwned(owner != nil)
    }

    /// The virtual time of the next scheduled event, if any (for a front end that moves time).
    package var nextScheduledDeadline: VirtualClock.Instant? { world.schedule.nextDeadline }

    /// Starts a task the active run tracks (a plain task outside runs, or where task executors
    /// do not exist): how front ends apply the app's calls.
    package nonisolated func startTracked(_ operation: @escaping @Sendable () async -> Void) {
        if #available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *) {
            task { await operation() }
        } else {
            Task { await operation() }
        }
    }

    /// Notes a call made during a run from a task the run cannot see. The call is also outside
    /// activity: the run's driver may have found every task of the run waiting and nothing
    /// scheduled before it came (a sleep it begins, events it schedules), and looks again
    /// rather than waiting out its stall patience.
    func checkTracked(_ call: @autoclosure () -> String) {
        guard #available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *), let executor = runs.current
        else { return }
        let preferred = withUnsafeCurrentTask { $0?.unownedTaskExecutor }
        guard preferred != executor.asUnownedTaskExecutor() else { return }
        let name = call()
        if !untrackedCalls.contains(name) { untrackedCalls.append(name) }
        outside.noteActivity()
    }

    // MARK: The driver

    /// Marks a run as started.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    private func begin(_ executor: SimulationExecutor, timeLimit: Duration, patience: Duration) throws {
        guard !runs.isActive else {
            throw APIMisuseError.invalidConfiguration(
                "MockBLEBridge.run: a run is already active on this bridge; runs do not nest")
        }
        if let owner = runs.timeOwner {
            throw APIMisuseError.invalidConfiguration(
                "MockBLEBridge.run: this bridge's time follows \(owner), so a run cannot drive it; "
                    + "install the simulated system with virtual time to use runs")
        }
        runs.begin(executor)
        sleepClock.setBridgeRunActive(true)
        outside.setWaker { executor.poke() }
        driving = true
        runDeadline = world.now.advanced(by: max(timeLimit, .zero))
        runPatience = patience
    }

    /// Marks a run as ended.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    private func end(_ executor: SimulationExecutor) {
        // What front ends still hold back of the app's calls is applied as the run ends (again
        // once it has: a call may have been held just before).
        _ = runSettlers()
        runs.end(executor)
        sleepClock.setBridgeRunActive(false)
        _ = runSettlers()
        outside.setWaker(nil)
        driving = false
        runDeadline = nil
        // An advance still waiting (its task was cancelled with the body) returns now.
        advanceWaiters?.endAll()
    }

    /// Runs the next event of the one schedule (a sleeper's wake-up on ``clock`` is one of
    /// them); an explicit advance whose target comes first returns there.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    func step() -> SelfDrivingScope.Step {
        // A paused simulation does nothing, not even put new managers on the air; nor does one
        // waiting for an answer the app owes (it comes from any thread, at this instant).
        // (A closure reading the world only when an answer is owed: `world.awaitsAnswer` would
        // copy the world into the closure at every step.)
        // Nor does it move while something that happened outside since the driver found the app
        // queues quiet (a body on the main actor going on as its pause ended, say) may still
        // call it at this instant: the driver looks again first.
        switch outside.timeGate(owedTo: { world.awaitsAnswer(from: $0, to: $1) }) {
        case .held: return .held
        case .lookAgain: return .lookAgain
        case .open: break
        }
        admitArrivals()
        forgetCancelled()
        let next = world.schedule.nextDeadline
        if let advanceWaiters, let horizon = advanceWaiters.horizon, next.map({ $0 > horizon }) ?? true {
            // An advance past the scope's time limit stops at it, as the schedule's events do.
            if let runDeadline, horizon > runDeadline { return .timeLimit }
            // An explicit advance reached its target: time moves there and the call returns.
            setTime(horizon)
            advanceWaiters.reach(through: horizon)
            return .ran
        }
        guard let next else { return .nothingScheduled }
        if let runDeadline, next > runDeadline { return .timeLimit }
        world.runNextEvent()
        syncClock()
        applyEffects()
        outside.wakeWaiters()
        return .ran
    }

    /// The error a stalled run throws, after cancelling its body.
    func stall(_ reason: Stall.Reason, patience: Duration? = nil) -> Stall {
        var waiting = pendingOperations
        for central in world.centralOrder {
            if let since = centralStreams[central]?.awaitedSince {
                waiting.append(.eventWait(manager: central, since: since))
            }
        }
        for peripheral in world.peripheralOrder {
            if let since = peripheralStreams[peripheral]?.awaitedSince {
                waiting.append(.eventWait(manager: peripheral, since: since))
            }
        }
        // A task reading a channel's bytes waits on a stream the simulation feeds.
        for (_, ends) in channelEnds.sorted(by: { $0.key < $1.key }) {
            for inbox in [ends.central, ends.peripheral] {
                guard let since = inbox.waitingSince else { continue }
                waiting.append(
                    .operation(
                        inbox.name, central: inbox.link.central, peripheral: inbox.link.peripheral,
                        characteristic: nil, since: since))
            }
        }
        if world.sleeperCount > 0 { waiting.append(.sleepers(count: world.sleeperCount)) }
        // A `waitUntil` whose condition never held is a wait too: name it, rather than leave
        // the report saying it knows of nothing.
        waiting += unendedConditionWaits
        // So is an advance that has not reached its target (one past the time limit).
        for target in advanceWaiters?.targets ?? [] {
            waiting.append(
                .operation(
                    "bridge.advance (to \(target), past the run's time limit)", central: nil, peripheral: nil,
                    characteristic: nil, since: world.now))
        }
        // So is a `waitForApp` whose condition on the app's state never held.
        for wait in outside.pendingAppWaits {
            waiting.append(.operation(wait.name, central: nil, peripheral: nil, characteristic: nil, since: wait.since))
        }
        driving = false
        return Stall(
            reason: reason, at: world.now, waiting: waiting, seed: configuration.seed,
            unansweredCalls: outside.unansweredCalls, hints: world.stallHints(),
            isExplorationRun: world.exploration != nil, stallPatience: patience)
    }

    /// A ``run(timeLimit:stallPatience:_:)`` scope that could not go on.
    public struct Stall: Error, Hashable, Sendable, CustomStringConvertible {
        /// Why the run stopped.
        public enum Reason: Hashable, Sendable {
            /// Every task waited and nothing was scheduled.
            case nothingScheduled
            /// The scope's virtual time passed its time limit.
            case timeLimitReached
            /// A ``MockBLEBridge/waitForApp(pausingSimulation:isolation:fileID:line:_:)`` paused the
            /// simulation and its condition never came to hold: the app never did on its own
            /// what the test waited for.
            case paused
        }

        /// Why the run stopped.
        public var reason: Reason
        /// The virtual time it stopped at.
        public var at: VirtualClock.Instant
        /// What was waiting: operations (which, on which peripheral and characteristic, since
        /// when), event streams being read, sleepers.
        public var waiting: [Leftover]
        /// The bridge's seed, to reproduce the run.
        public var seed: UInt64
        /// The calls the app made through the CoreBluetooth-shaped API (BLECBM) that got no
        /// callback, as with CoreBluetooth, in the order they were noted, each naming its
        /// manager (one the app has let go of too): those it ignored (the managers'
        /// `apiMisuses`), operations a link that went down, or Bluetooth turning off, ended
        /// (CoreBluetooth reports only the disconnection or the state change), and operations the
        /// app's letting go of their manager, or of the peripheral it was connecting to, ended. A
        /// callback the app waits for may be one of theirs.
        public var unansweredCalls: [String] = []
        /// What happened that may explain the stall, in words: links that went down with an
        /// error (or for an ATT transaction timeout) and were not connected again, connection
        /// attempts waiting for a peripheral that cannot be connected to now, scans that have
        /// discovered nothing (and why each peripheral on the bridge is not heard: out of range,
        /// Bluetooth off, not advertising, advertising other services), updates a peripheral sent
        /// while no central was subscribed (nobody received them), an update `updateValue`
        /// refused (its transmit queue full) that the peripheral did not send again once told it
        /// may, and the last operations that failed. The usual reasons app code hangs: it did not
        /// reconnect, did not subscribe again after reconnecting, dropped what it could not send,
        /// ignored an error, or waits for a peripheral that is not there (connections and scans do
        /// not time out).
        public var hints: [String] = []
        /// Whether the run was one of an ``Exploration``'s (or its replay): its link conditions
        /// and faults came from an ``ExplorationPlan``, so the seed alone does not reproduce it;
        /// the plan does (``Exploration/replay(_:timeLimit:stallPatience:failsOnLeftovers:_:)``).
        public var isExplorationRun = false
        /// The wall-clock time the run waited for work from outside it (app queues' calls and
        /// callbacks) before it gave up (its `stallPatience`), when the run had one. A timer of the
        /// app's own on the wall clock (`DispatchQueue.asyncAfter`, a `Timer`, `Task.sleep` on the
        /// continuous clock) longer than this ends the run as a stall before it fires.
        public var stallPatience: Duration?

        public var description: String {
            let why =
                switch reason {
                case .nothingScheduled:
                    if let stallPatience, stallPatience > .zero {
                        "every task waits, nothing is scheduled and no call or callback came from outside the run "
                            + "for \(stallPatience) of wall-clock time: what they wait for cannot happen in the "
                            + "simulation (a timer of the app's own on the wall clock, such as `asyncAfter`, longer "
                            + "than that stall patience looks the same: put it on the bridge's clock, or give a "
                            + "longer stallPatience)"
                    } else {
                        "every task waits and nothing is scheduled: what they wait for cannot happen"
                    }
                case .timeLimitReached: "the run's virtual time limit passed before the test ended"
                case .paused:
                    "a waitForApp(pausingSimulation: true) paused the simulation and the app never did on its own "
                        + "what it waited for"
                }
            let list =
                waiting.isEmpty
                ? "- nothing the bridge knows of: the code waits for something outside the simulation (a "
                    + "continuation or a task of its own), or for a callback no manager will deliver (was the "
                    + "manager released?)"
                : waiting.map { "- \($0)" }.joined(separator: "\n")
            let unanswered =
                unansweredCalls.isEmpty
                ? ""
                : "Calls the app made that got no callback, as with CoreBluetooth:\n"
                    + unansweredCalls.map { "- \($0)\n" }.joined()
            let explained =
                hints.isEmpty ? "" : "What may explain it:\n" + hints.map { "- \($0)\n" }.joined()
            return "MockBLEBridge.run stalled at \(at): \(why). Waiting:\n\(list)\n\(unanswered)\(explained)"
                + (isExplorationRun
                    ? "Seed \(seed), with an exploration's conditions and faults: replay its plan to "
                        + "reproduce (the seed alone does not)."
                    : "Seed \(seed): rerun with the same seed and steps to reproduce.")
        }
    }
}

/// The executor of the bridge's active run scope, reachable from any thread (so a tracked
/// task can be started, and a call checked, without hopping onto the bridge). Held as
/// `AnyObject` so the bridge itself needs no OS version that has task executors.
package final class RunRegistry: @unchecked Sendable {
    // @unchecked Sendable: `executor`, `owner` and `tracked` are only read and written with
    // `lock` held.
    private let lock: Lock
    private var executor: AnyObject?
    /// How to cancel the tasks ``MockBLEBridge/task(_:)`` started in the active run.
    private var tracked: [@Sendable () -> Void] = []

    init(lock: Lock = Lock()) {
        self.lock = lock
    }

    private var owner: String?
    /// Whether the active run is ending (its tasks were cancelled).
    private var ending = false

    /// Whether a run is active.
    package var isActive: Bool { lock.withLock { executor != nil } }

    /// Whether a run has begun on the bridge, ever.
    package var hasBegun: Bool { lock.withLock { begun } }
    private var begun = false

    /// What the bridge's time follows instead of runs, if anything.
    var timeOwner: String? { lock.withLock { owner } }

    func setTimeOwner(_ owner: String?) { lock.withLock { self.owner = owner } }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    var current: SimulationExecutor? { lock.withLock { executor as? SimulationExecutor } }

    func begin(_ executor: AnyObject) {
        lock.withLock {
            self.executor = executor
            ending = false
            begun = true
        }
    }

    func end(_ executor: AnyObject) {
        lock.withLock { if self.executor === executor { self.executor = nil } }
    }

    /// Notes a task started in the run on `executor` (`cancel` cancels it); `false` when that
    /// run has ended already, or is ending (its tasks were cancelled: one a task starts as it
    /// ends, say to restart its work, is cancelled at once too).
    func track(on executor: AnyObject, cancel: @escaping @Sendable () -> Void) -> Bool {
        lock.withLock {
            guard self.executor === executor, !ending else { return false }
            tracked.append(cancel)
            return true
        }
    }

    /// Cancels the tasks started in the run (and forgets them); from now on until the next run
    /// begins, a task started in it is cancelled at once.
    func cancelTracked() {
        let cancels = lock.withLock { () -> [@Sendable () -> Void] in
            ending = true
            defer { tracked.removeAll() }
            return tracked
        }
        for cancel in cancels { cancel() }
    }
}
