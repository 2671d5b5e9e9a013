import BLECore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Runs one test body under many seeds, each with its own link conditions and fault
/// schedule, stops at the first failure, and shrinks it to a minimal plan that replays it.
///
/// This is deterministic simulation testing: every run is a fresh realistic bridge whose
/// seed, conditions and faults come from an ``ExplorationPlan`` drawn from the seed within an
/// ``ExplorationBudget``. The body runs in the bridge's self-driving scope
/// (``MockBLEBridge/run(timeLimit:stallPatience:_:)``), so managers it creates without a
/// bridge join the run's bridge and no wall-clock time passes. A run fails when the body
/// throws or the run stalls; a failure is shrunk (faults removed or moved later, roomier
/// conditions) while it still fails the same way, and reported in words and as Swift code.
///
/// ```swift
/// let report = await Exploration(seeds: 200).run { run in
///     let watch = try await Watch.start(bridge: run.bridge)   // the test's peripheral
///     let app = Uploader(central: MockCentralManager())        // joins the run's bridge
///     try await app.upload(file)
///     try Exploration.require(await watch.received == file, "the file arrived whole")
/// }
/// #expect(report.failures.isEmpty, "\(report)")
/// ```
///
/// **Failing the body.** Throw: any error the body throws fails the run. Do not record test
/// issues inside the body (`#expect`, `XCTAssert`): they would be recorded for every failing
/// seed and every shrinking step. ``require(_:_:)`` throws an ``ExplorationFailure``.
///
/// **Determinism and cores.** Runs share nothing, so up to ``parallelism`` run at once; the
/// report depends only on the seeds, the budget and the body: the first failure is always the
/// failing seed that comes first in ``seeds``.
@available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
public struct Exploration: Sendable {
    /// What each seed may draw.
    public var budget: ExplorationBudget
    /// The seeds to explore, in order: at least one (an exploration of none is refused, see
    /// ``ExplorationReport/problem``).
    public var seeds: [UInt64]
    /// The seed count the exploration was created with, if it was (for the problem of a count
    /// below 1).
    private var seedCount: Int?
    /// Whether to stop at the first failing seed (the default) or run every seed.
    public var stopsAtFirstFailure: Bool
    /// Whether to shrink failures (the first one, or each with ``stopsAtFirstFailure`` off).
    /// Defaults to `true`.
    public var shrinks: Bool
    /// The most runs at once. Defaults to the number of active processors.
    public var parallelism: Int
    /// The most virtual time one run may take before it counts as stalled. Defaults to
    /// ten minutes.
    public var timeLimit: Duration
    /// Whether leftovers ``MockBLEBridge/finish()`` reports (operations still waiting, unread
    /// events, misuses) fail a run. Defaults to `false`: faults leave things over.
    public var failsOnLeftovers: Bool
    /// The most candidate plans shrinking one failure may run. Defaults to 300.
    public var maximumShrinkRuns: Int
    /// How long, in wall-clock time, a run whose tasks all wait with nothing scheduled waits
    /// for work from outside it (delegate callbacks on app queues) before it counts as
    /// stalled (``MockBLEBridge/run(timeLimit:stallPatience:_:)``). Defaults to one second;
    /// a body with no outside work can take much less, which makes shrinking a stall fast.
    public var stallPatience: Duration

    /// The most seeds ``init(budget:seeds:from:stopsAtFirstFailure:shrinks:parallelism:timeLimit:failsOnLeftovers:maximumShrinkRuns:stallPatience:)``
    /// takes by count: ten million, as `mockble explore --seeds` (far more than an exploration
    /// runs in a day, far from what would exhaust memory listing them).
    public static let maximumSeedCount = 10_000_000

    /// Creates an exploration of `seeds` seeds from `first` (0, 1, 2, … by default; seeds past
    /// `UInt64.max` wrap around to 0). A count below 1 or above ``maximumSeedCount`` is
    /// refused: no seed is listed, the report's ``ExplorationReport/problem`` says so, and it has
    /// not passed.
    public init(
        budget: ExplorationBudget = ExplorationBudget(), seeds count: Int = 1_000, from first: UInt64 = 0,
        stopsAtFirstFailure: Bool = true, shrinks: Bool = true, parallelism: Int? = nil,
        timeLimit: Duration = .seconds(600), failsOnLeftovers: Bool = false, maximumShrinkRuns: Int = 300,
        stallPatience: Duration = .seconds(1)
    ) {
        let listed = (1...Self.maximumSeedCount).contains(count) ? count : 0
        self.init(
            budget: budget, seeds: (0..<UInt64(listed)).map { first &+ $0 },
            stopsAtFirstFailure: stopsAtFirstFailure, shrinks: shrinks, parallelism: parallelism,
            timeLimit: timeLimit, failsOnLeftovers: failsOnLeftovers, maximumShrinkRuns: maximumShrinkRuns,
            stallPatience: stallPatience)
        seedCount = count
    }

    /// Creates an exploration of the given seeds. An empty list is refused: the report's
    /// ``ExplorationReport/problem`` says so, and it has not passed.
    public init(
        budget: ExplorationBudget = ExplorationBudget(), seeds: [UInt64], stopsAtFirstFailure: Bool = true,
        shrinks: Bool = true, parallelism: Int? = nil, timeLimit: Duration = .seconds(600),
        failsOnLeftovers: Bool = false, maximumShrinkRuns: Int = 300, stallPatience: Duration = .seconds(1)
    ) {
        self.budget = budget
        self.seeds = seeds
        self.stopsAtFirstFailure = stopsAtFirstFailure
        self.shrinks = shrinks
        self.parallelism = parallelism ?? ProcessInfo.processInfo.activeProcessorCount
        self.timeLimit = timeLimit
        self.failsOnLeftovers = failsOnLeftovers
        self.maximumShrinkRuns = maximumShrinkRuns
        self.stallPatience = stallPatience
    }

    /// The body of an exploration: one run, given its bridge and plan.
    ///
    /// Its isolation is kept: a body on the main actor (`{ @MainActor run in … }`) runs each
    /// seed's ``MockBLEBridge/run(timeLimit:stallPatience:_:)`` on the main actor, so the run
    /// waits for the main queue before it moves time, as a run whose own body is on the main
    /// actor does.
    public typealias Body = @Sendable @isolated(any) (ExplorationRun) async throws -> Void

    /// Explores: runs `body` for each seed (stopping at the first failure unless told not
    /// to), shrinks the failures, and reports. `progress`, if given, hears after each run.
    ///
    /// Cancelling the calling task stops starting runs; the report then covers the runs that
    /// ended.
    public func run(progress: (@Sendable (ExplorationProgress) -> Void)? = nil, _ body: @escaping Body) async
        -> ExplorationReport
    {
        await explore(progress: progress) { plan, keeping in
            await Self.replay(
                plan, timeLimit: timeLimit, stallPatience: stallPatience, failsOnLeftovers: failsOnLeftovers,
                keeping: keeping, body)
        }
    }

    /// One run under a plan, however it is made (a test body, a scenario); only the
    /// calibration run collects the operations injected errors may aim at (reading the log
    /// of every run for them would cost each run for nothing), and only a reported failure's
    /// last run keeps its timeline and log.
    typealias Trial = @Sendable (_ plan: ExplorationPlan, _ keeping: Keeping) async -> ExplorationOutcome

    /// What a run keeps besides how it ended.
    struct Keeping: Sendable {
        /// The operations injected errors may aim at (``ExplorationOutcome/targets``).
        var targets = false
        /// The failed run's timeline and log (``ExplorationOutcome/artifacts``).
        var artifacts = false
    }

    /// The exploration proper, over any kind of run.
    func explore(progress: (@Sendable (ExplorationProgress) -> Void)?, _ trial: @escaping Trial) async
        -> ExplorationReport
    {
        var report = ExplorationReport(budget: budget, seedsPlanned: seeds.count)
        if let problem = budget.problem ?? parameterProblem {
            report.problem = problem
            return report
        }
        guard let firstSeed = seeds.first else { return report }
        var notice = ExplorationProgress(seedsPlanned: seeds.count)
        defer {
            notice.shrinking = nil
            notice.isFinished = true
            progress?(notice)
        }
        // The window: as given, or the length of a fault-free run of the first seed.
        let window: ClosedRange<Duration>
        // The operations injected errors may aim at: those of the calibration run.
        var targets: [PlannedFault.Target] = []
        // When the calibration run made each of them.
        var targetTimes: [PlannedFault.Target: Duration] = [:]
        if let given = budget.window {
            window = given
        } else {
            var calibration = ExplorationPlan.draw(seed: firstSeed, budget: budget, window: .zero ... .zero)
            calibration.faults = []
            let outcome = await trial(calibration, Keeping(targets: true))
            if Task.isCancelled {
                report.wasCancelled = true
                return report
            }
            report.calibration = outcome
            // Failing with no faults is the first seed's failure. (Told to keep going, the
            // first seed's own run reports it.)
            if outcome.failed, stopsAtFirstFailure {
                report.failures.append(await failure(outcome, windowEnd: outcome.duration, trial, &notice, progress))
                report.seedsRun = 1
                report.coverage.add(outcome)
                report.window = .zero...outcome.duration
                report.wasCancelled = Task.isCancelled
                return report
            }
            window = .zero...max(outcome.duration, .milliseconds(100))
            targets = outcome.targets
            targetTimes = outcome.targetTimes
        }
        report.window = window
        let outcomes = await explore(window: window, &notice, progress)
        report.seedsRun += outcomes.count
        for outcome in outcomes { report.coverage.add(outcome) }
        for outcome in outcomes where outcome.failed {
            report.failures.append(await failure(outcome, windowEnd: window.upperBound, trial, &notice, progress))
            if stopsAtFirstFailure { break }
        }
        // (Cancelled while a failure was checked or shrunk, too.)
        report.wasCancelled = Task.isCancelled
        return report

        // (Nested so that `trial` is captured once.)
        func explore(
            window: ClosedRange<Duration>, _ notice: inout ExplorationProgress,
            _ progress: (@Sendable (ExplorationProgress) -> Void)?
        ) async -> [ExplorationOutcome] {
            let width = max(1, parallelism)
            var results: [ExplorationOutcome?] = Array(repeating: nil, count: seeds.count)
            var firstFailure: Int?
            await withTaskGroup(of: (Int, ExplorationOutcome, cutShort: Bool).self) { group in
                var next = 0
                var running = 0
                func mayStart() -> Bool {
                    guard next < seeds.count, !Task.isCancelled else { return false }
                    guard stopsAtFirstFailure, let firstFailure else { return true }
                    return next < firstFailure
                }
                while true {
                    while running < width, mayStart() {
                        let (index, plan) = (
                            next,
                            ExplorationPlan.draw(
                                seed: seeds[next], budget: budget, window: window, targets: targets,
                                targetTimes: targetTimes)
                        )
                        group.addTask {
                            let outcome = await trial(plan, Keeping())
                            // Cancelled by the time it ended: the cancellation may have cut the
                            // run short, whatever its body made of that (a body that wraps the
                            // CancellationError in an error of its own fails with that one).
                            return (index, outcome, Task.isCancelled)
                        }
                        next += 1
                        running += 1
                    }
                    guard let (index, outcome, cutShort) = await group.next() else { break }
                    running -= 1
                    // A run the cancellation cut short tells nothing about its seed.
                    if cutShort { continue }
                    results[index] = outcome
                    notice.seedsDone += 1
                    if outcome.failed {
                        notice.failures += 1
                        firstFailure = min(firstFailure ?? index, index)
                    }
                    progress?(notice)
                }
            }
            // With a stop at the first failure, the runs after it (started while it ran) are
            // dropped, so the report does not depend on how many ran at once.
            let kept = stopsAtFirstFailure ? results.prefix(through: firstFailure ?? results.count - 1) : results[...]
            return kept.compactMap { $0 }
        }
    }

    /// Shrinks one failing run (when shrinking is on) into a reported failure.
    private func failure(
        _ outcome: ExplorationOutcome, windowEnd: Duration, _ trial: Trial,
        _ notice: inout ExplorationProgress, _ progress: (@Sendable (ExplorationProgress) -> Void)?
    ) async -> ExplorationFailureReport {
        var minimal = outcome
        // The found plan once more: a body that does not fail the same way again depends on
        // something besides the bridge (the wall clock, unseeded randomness, threads racing),
        // and shrinking it would keep steps at random. It is reported as found, and as such.
        let again = Task.isCancelled ? nil : await trial(outcome.plan, Keeping())
        // (A check the cancellation cut short tells nothing: the failure is not called unreproducible.)
        let reproduces = Task.isCancelled || (again.map { $0.failed && $0.signature == outcome.signature } ?? true)
        var shrinker = ExplorationShrinker(
            failing: outcome.plan, windowEnd: windowEnd, maximumTries: shrinks && reproduces ? maximumShrinkRuns : 0,
            faultKinds: budget.faultKinds)
        while !Task.isCancelled, let candidate = shrinker.next() {
            let tried = await trial(candidate, Keeping())
            let same = tried.failed && tried.signature == outcome.signature
            shrinker.record(stillFails: same)
            if same { minimal = tried }
            notice.shrinking = ExplorationProgress.Shrinking(
                seed: outcome.plan.seed, runs: shrinker.tried, faults: shrinker.current.faults.count,
                lastStep: shrinker.steps.last)
            progress?(notice)
        }
        // The minimal plan once more, keeping what the run leaves for a person to look at.
        var artifacts: RunArtifacts?
        if !Task.isCancelled {
            let kept = await trial(minimal.plan, Keeping(artifacts: true))
            if kept.failed { artifacts = kept.artifacts }
        }
        var report = ExplorationFailureReport(
            found: outcome, minimal: minimal, steps: shrinker.steps, shrinkRuns: shrinker.tried, artifacts: artifacts,
            reproduces: reproduces)
        report.wasCutShort = Task.isCancelled
        return report
    }

    private var parameterProblem: String? {
        if seeds.isEmpty {
            if let seedCount, seedCount < 1 {
                return "Exploration(seeds: \(seedCount)): a seed count of \(seedCount) is outside 1…, so no seed "
                    + "would be explored"
            }
            if let seedCount, seedCount > Self.maximumSeedCount {
                return "Exploration(seeds: \(seedCount)): a seed count of \(seedCount) is outside "
                    + "1…\(Self.maximumSeedCount); explore fewer seeds at a time (from: picks where to start)"
            }
            return "Exploration.seeds: the list is empty, so no seed would be explored; give at least one seed"
        }
        if parallelism < 1 { return "Exploration.parallelism: \(parallelism) is outside 1…" }
        if maximumShrinkRuns < 0 { return "Exploration.maximumShrinkRuns: \(maximumShrinkRuns) is outside 0…" }
        if timeLimit <= .zero {
            return "Exploration.timeLimit: \(FixtureDuration.string(timeLimit)) is outside 0s… (exclusive)"
        }
        if stallPatience < .zero {
            return "Exploration.stallPatience: \(FixtureDuration.string(stallPatience)) is outside 0s…"
        }
        return nil
    }

    /// Runs `body` once under `plan`, on a fresh bridge: how a failure found by exploring is
    /// replayed (``ExplorationPlan/swiftCode`` writes this call).
    public static func replay(
        _ plan: ExplorationPlan, timeLimit: Duration = .seconds(600), stallPatience: Duration = .seconds(1),
        failsOnLeftovers: Bool = false, _ body: @escaping Body
    ) async -> ExplorationOutcome {
        await replay(
            plan, timeLimit: timeLimit, stallPatience: stallPatience, failsOnLeftovers: failsOnLeftovers,
            keeping: Keeping(targets: true, artifacts: true), body)
    }

    /// ``replay(_:timeLimit:stallPatience:failsOnLeftovers:_:)``, collecting the run's
    /// ``ExplorationOutcome/targets`` and ``ExplorationOutcome/artifacts`` only when asked.
    static func replay(
        _ plan: ExplorationPlan, timeLimit: Duration, stallPatience: Duration, failsOnLeftovers: Bool,
        keeping: Keeping, _ body: @escaping Body
    ) async -> ExplorationOutcome {
        if let problem = plan.problem {
            // Refused before it runs, naming the fault: run, it would fail at the fault (or go
            // on ignoring a field), with a message about a call the test never made.
            return ExplorationOutcome(
                plan: plan, error: APIMisuseError.invalidConfiguration("ExplorationPlan." + problem),
                faultsFired: Array(repeating: false, count: plan.faults.count),
                duration: .zero, targets: [], targetTimes: [:], artifacts: nil, linkMTU: nil)
        }
        let bridge = MockBLEBridge(configuration: plan.configuration)
        await bridge.plan(plan.faults)
        var thrown: (any Error)?
        let run = ExplorationRun(bridge: bridge, plan: plan)
        do {
            // A body on the main actor runs in a run whose body is on the main actor: a run waits
            // for the main queue only then (a nonisolated wrapper would hide the body's isolation,
            // and time would move while the body's main-actor work, or a `Task {}` it started
            // there, was still to run: a seed's run then depended on the threads).
            if let isolation = body.isolation, ObjectIdentifier(isolation) == ObjectIdentifier(MainActor.shared) {
                try await bridge.run(timeLimit: timeLimit, stallPatience: stallPatience) { @MainActor in
                    try await body(run)
                }
            } else {
                try await bridge.run(timeLimit: timeLimit, stallPatience: stallPatience) { try await body(run) }
            }
        } catch {
            thrown = error
        }
        let summary = await bridge.explorationSummary(collectingTargets: keeping.targets)
        let finish = await bridge.finish()
        if thrown == nil, failsOnLeftovers, !finish.isClean { thrown = ExplorationFailure("leftovers: \(finish)") }
        let artifacts =
            keeping.artifacts && thrown != nil
            ? await bridge.runArtifacts(title: "exploration seed \(plan.seed)") : nil
        return ExplorationOutcome(
            plan: plan, error: thrown, faultsFired: summary.fired, duration: summary.duration, targets: summary.targets,
            targetTimes: summary.targetTimes, artifacts: artifacts, linkMTU: summary.linkMTU)
    }

    /// Throws an ``ExplorationFailure`` with `message` unless `condition` holds: how an
    /// explored body says it failed.
    public static func require(
        _ condition: Bool, _ message: @autoclosure () -> String = "requirement failed"
    ) throws {
        if !condition { throw ExplorationFailure(message()) }
    }
}

/// One run of an exploration, as its body sees it.
public struct ExplorationRun: Sendable {
    /// The run's bridge (also ``MockBLEBridge/current`` inside the body).
    public let bridge: MockBLEBridge
    /// The run's seed, conditions and faults.
    public let plan: ExplorationPlan
}

/// The error ``Exploration/require(_:_:)`` throws.
public struct ExplorationFailure: Error, Hashable, Sendable, CustomStringConvertible {
    /// What failed.
    public var message: String

    /// Creates the error.
    public init(_ message: String) {
        self.message = message
    }

    public var description: String { message }
}

/// How one run of an exploration ended.
public struct ExplorationOutcome: Sendable {
    /// The run's plan.
    public var plan: ExplorationPlan
    /// What the body threw (a ``MockBLEBridge/Stall`` when the run could not end), if it did.
    public var error: (any Error)?
    /// Whether each of the plan's faults took effect (in plan order): a fault with no target
    /// when its time came, one whose time came after the body ended, or an injected error
    /// whose operation never came did not.
    public var faultsFired: [Bool]
    /// The run's length in virtual time.
    public var duration: Duration
    /// The operations the run's centrals made, each kind on each characteristic once, in
    /// order: a calibration run's are what injected-error faults aim at. Collected by
    /// ``Exploration/replay(_:timeLimit:stallPatience:failsOnLeftovers:_:)`` and a calibration
    /// run; empty for the other runs of an exploration.
    public var targets: [PlannedFault.Target] = []
    /// When the run last made each of ``targets`` (a connection: when it was asked for), from
    /// its start: an injected error aimed at one is drawn before that instant.
    var targetTimes: [PlannedFault.Target: Duration] = [:]
    /// A failed run's timeline page and bridge log, kept by
    /// ``Exploration/replay(_:timeLimit:stallPatience:failsOnLeftovers:_:)`` and for each
    /// reported failure's minimal plan (``ExplorationFailureReport/artifacts``); `nil` for a
    /// run that passed and for the other runs of an exploration.
    public var artifacts: RunArtifacts?
    /// The largest ATT_MTU a link of the run negotiated, or `nil` when it made none: the plan's
    /// ``LinkConditions/mtu`` is an upper bound, which a manager's explicit preference (a
    /// `.fixed` ``MTUMode``, a scenario's `preferredMTU`) or a phone profile may keep it below.
    public var linkMTU: Int?

    /// Whether the run failed.
    public var failed: Bool { error != nil }

    /// How the run failed, to tell whether a simpler plan fails the same way: the error's
    /// type and its description with numbers set aside (times and lengths vary as a plan
    /// shrinks), or `nil` when it passed.
    public var signature: String? {
        guard let error else { return nil }
        if let signed = error as? any ExplorationSigned { return signed.explorationSignature }
        let words = String(describing: error).filter { !$0.isNumber }
        return "\(String(reflecting: type(of: error))): \(words)"
    }
}

/// An error that says itself what makes two failures the same (``ExplorationOutcome/signature``),
/// where its type and words would not.
protocol ExplorationSigned: Error {
    var explorationSignature: String { get }
}

extension MockBLEBridge.Stall: ExplorationSigned {
    /// The same reason: what waits, and since when, changes as a plan shrinks.
    var explorationSignature: String { "stall: \(reason)" }
}

extension ScenarioRunFailure: ExplorationSigned {
    /// The same first step failing the same way, numbers set aside.
    var explorationSignature: String {
        guard let first = failures.first else { return "scenario" }
        return "scenario step \(first.step) (\(first.op)): " + first.mismatches.joined().filter { !$0.isNumber }
    }
}

/// Where an exploration has got to, for a progress display.
public struct ExplorationProgress: Sendable, Hashable {
    /// A shrinking in progress.
    public struct Shrinking: Sendable, Hashable {
        /// The failing seed being shrunk.
        public var seed: UInt64
        /// Candidate plans run so far.
        public var runs: Int
        /// Faults left in the simplest failing plan.
        public var faults: Int
        /// The last simplification kept, in words.
        public var lastStep: String?

        /// Creates a shrinking's progress.
        public init(seed: UInt64, runs: Int, faults: Int, lastStep: String?) {
            self.seed = seed
            self.runs = runs
            self.faults = faults
            self.lastStep = lastStep
        }
    }

    /// Seeds run so far.
    public var seedsDone = 0
    /// Seeds to run in all.
    public var seedsPlanned: Int
    /// Failing seeds so far.
    public var failures = 0
    /// The shrinking under way, if any.
    public var shrinking: Shrinking?
    /// Whether the exploration has ended.
    public var isFinished = false

    /// Progress at the start of an exploration of `seedsPlanned` seeds.
    public init(seedsPlanned: Int) {
        self.seedsPlanned = seedsPlanned
    }
}

extension MockBLEBridge {
    /// Schedules an exploration's faults, times counted from now.
    func plan(_ faults: [PlannedFault]) {
        world.plan(faults)
    }

    /// Which planned faults fired, the virtual time now, and (when asked) the operations the
    /// centrals made.
    func explorationSummary(collectingTargets: Bool) -> (
        fired: [Bool], duration: Duration, targets: [PlannedFault.Target],
        targetTimes: [PlannedFault.Target: Duration], linkMTU: Int?
    ) {
        let times = collectingTargets ? world.explorationTargetTimes : [:]
        return (world.plannedFaultsFired, world.now.offset, times.keys.sorted(), times, world.largestLinkMTU)
    }
}
