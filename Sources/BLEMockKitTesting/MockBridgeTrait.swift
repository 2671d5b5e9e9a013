import BLECBM
import BLECore
import BLEMockKit
import Testing

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A Swift Testing trait that runs a test on a mock bridge: fast by default, realistic with a
/// seed, or once per seed of a list (`.mockBridge(seeds: [3, 17])`, `.mockBridge(seedCount: 100)`).
///
/// ```swift
/// @Test(.mockBridge(.realistic(seed: 7)))
/// func readsTheBatteryLevel() async throws {
///     let sensor = MockPeripheralManager()   // joins the test's bridge
///     let central = MockCentralManager()     // so does this
///     …
/// }
/// ```
///
/// For each seed the trait makes a fresh bridge and runs the test body in its
/// ``MockBLEBridge/run(timeLimit:stallPatience:_:)`` scope: virtual time drives itself, and
/// managers created without a bridge join it. The body reaches it as
/// ``MockBLEBridge/current`` (a task-local, so parallel tests never share one). Afterwards
/// the trait calls ``MockBLEBridge/finish()`` and records an issue, with the seed, when
/// something was left over; a run that cannot end (``MockBLEBridge/Stall``) is recorded the
/// same way, as is an error the body throws (a failed `#require` is not: the testing library
/// recorded its issue already). With several seeds, every issue recorded during a seed's run
/// names that seed and how to rerun only it (`BLEMOCKKIT_SEED=17 swift test --filter name`;
/// the variable narrows any test with this trait to that seed; a value that is not a seed is
/// recorded as an issue, and so is a plan with no seed, such as `seeds: []` or `seedCount: 0`:
/// the body does not run then). When a seed's run fails, an issue also lists the calls the app
/// made through the CoreBluetooth-shaped API that got no callback, as with CoreBluetooth (a
/// scan before the manager was powered on, a read the link's drop ended), if there were any:
/// the callback the test waited for may be one of theirs. Once a seed's run has ended, the
/// `CBMCentralManagerMock` peripheral objects on its bridge hold their delegates weakly, so a
/// CoreBluetoothMock-style app that is its peripheral's delegate goes with the test rather than
/// keeping itself and the bridge alive.
///
/// A test cancelled while a seed runs (`Test.cancel()`, its time limit) ends there: the trait
/// runs no other seed, records neither the cancellation nor what the run left over, and throws
/// the cancellation on, so the testing library reports the test cancelled (with its time
/// limit's issue, for that one).
///
/// A stalled run cancels the body, as does the test's cancellation, and the trait waits for the
/// body to end before the test does (a trait cannot leave the test's body running). A body
/// waiting on something cancellation does not end (a continuation that only a callback that
/// never came would resume) is given 10 s; then the trait stops the test process with a
/// message saying so. Wait with
/// ``MockBLEBridge/waitForApp(pausingSimulation:isolation:fileID:line:_:)`` instead, or end
/// such a wait from `withTaskCancellationHandler`.
///
/// Issues recorded inside delegate callbacks (an `#expect` in `centralManager(_:didConnect:)`)
/// run on the app's queue, outside the test's task: Swift Testing does not attribute them to
/// the test, or name the seed. Note what the callback saw, and check it in the test's body.
///
/// The body the trait runs is not on the main actor, even for a `@MainActor` test: the run
/// waits for the callbacks a manager queued on the main queue, not for the main actor's own
/// work as it does for `bridge.run { @MainActor in … }`. For an app
/// on the main actor (a `@MainActor` class wrapping CoreBluetooth's delegates in Swift
/// concurrency), run it in `bridge.run { @MainActor in … }` in a test without the trait.
///
/// As a suite trait it applies to every test of the suite. A test's own `.mockBridge` (or a
/// nested suite's) takes the place of an outer suite's: only the innermost one runs the test.
public struct MockBridgeTrait: TestTrait, SuiteTrait, TestScoping {
    /// What each test runs with.
    public var plan: BridgeTestPlan

    /// This trait's identity (its copies share it): tells it apart from the test's other bridge
    /// traits.
    private let identity = Identity()

    /// A `seedCount:` above ``maximumSeedCount`` the trait was made with: it records an issue
    /// saying so, and the body does not run.
    fileprivate var refusedSeedCount: Int?

    /// The most seeds `.mockBridge(seedCount:)` runs (``Exploration/maximumSeedCount``: each is
    /// listed before the first runs).
    public static let maximumSeedCount = Exploration.maximumSeedCount

    /// Creates the trait from a plan.
    public init(plan: BridgeTestPlan) {
        self.plan = plan
    }

    /// A suite's trait applies to each of its tests.
    public var isRecursive: Bool { true }

    public func provideScope(
        for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
    ) async throws {
        // A suite trait is also asked to scope the suite itself: its tests get their own runs.
        guard testCase != nil || !test.isSuite else { return try await function() }
        // Only the last of the test's bridge traits (its own, after its suites') runs it; the
        // others are asked first, outermost first, and pass it on.
        let bridgeTraits = test.traits.compactMap { $0 as? MockBridgeTrait }
        if bridgeTraits.contains(where: { $0.identity === identity }), bridgeTraits.last?.identity !== identity {
            return try await function()
        }
        if let refusedSeedCount {
            Issue.record(
                Comment(
                    rawValue: "mockBridge(seedCount: \(refusedSeedCount)) is more seeds than a trait runs: give at "
                        + "most \(Self.maximumSeedCount) (from: picks where they start)"),
                sourceLocation: test.sourceLocation)
            return
        }
        let seeds: [UInt64]
        do {
            seeds = try plan.seedsToRun(environment: ProcessInfo.processInfo.environment)
        } catch {
            Issue.record(Comment(rawValue: "\(error)"), sourceLocation: test.sourceLocation)
            return
        }
        guard #available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *) else {
            Issue.record(
                "the mock bridge trait needs macOS 15, iOS 18, tvOS 18, watchOS 11 or visionOS 2",
                sourceLocation: test.sourceLocation)
            return
        }
        let name = Self.name(of: test)
        // Each case of a parameterized test has files of its own: the cases share the test's
        // name and seeds, and would write over each other's.
        let title = testCase?.isParameterized == true ? "\(name)-case-\(identity.nextCase(of: test.id))" : name
        let several = seeds.count > 1
        let plan = plan
        let folder = failureFolder ?? ProcessInfo.processInfo.environment[RunArtifacts.folderVariable]
        // The body runs once per seed inside each bridge's scope, whose task group has
        // finished with it before the scope returns.
        try await withoutActuallyEscaping(function) { function in
            for seed in seeds {
                let note = Comment(
                    rawValue: "bridge seed \(seed); rerun only it: \(BridgeTestPlan.seedVariable)=\(seed) "
                        + "swift test --filter \(name)")
                let run = SeedRun(fileNames: RunArtifacts.fileNames(title: title, seed: seed))
                let ended = BodyEnd()
                try await Self.watching(run, note: several ? note : nil, test: test, testCase: testCase) {
                    let outcome = await plan.run(seed: seed) {
                        defer { ended.mark() }
                        try await function()
                    }
                    run.keep(outcome.bridge, unansweredCalls: outcome.unansweredCallsNote)
                    // The test is over on this bridge: CoreBluetoothMock-style apps it made go with it.
                    TestEnd.release(outcome.bridge)
                    // A body the run never started (the test cancelled first, or an argument refused) has none
                    // to wait for.
                    if outcome.bodyNeverStarted { ended.mark() }
                    if let error = outcome.error {
                        switch Thrown(error, testCancelled: Task.isCancelled) {
                        case .failure:
                            Issue.record(
                                error, Comment(rawValue: "the test threw on bridge seed \(seed)"),
                                sourceLocation: test.sourceLocation)
                        case .alreadyRecorded:
                            break
                        case .testCancelled:
                            // The testing library reports the test cancelled; what the run
                            // left over is what cancelling it left.
                            run.endTest(with: error)
                            return
                        }
                    }
                    if !outcome.finish.isClean {
                        Issue.record(
                            Comment(rawValue: "finish() found leftovers on bridge seed \(seed):\n\(outcome.finish)"),
                            sourceLocation: test.sourceLocation)
                    }
                    if !outcome.isClean { _ = run.fail(because: nil) }
                }
                // A stalled run, or the test's cancellation, cancelled the body; it must have ended
                // before this scope may return (the body is the test's, and cannot be left running).
                if await !ended.wait(upTo: .seconds(10)) { Self.stop(name, seed: seed, at: test.sourceLocation) }
                if run.failed, let bridge = run.bridge {
                    // The callback a failed test waited for may be one of the calls that got none.
                    if let unansweredCalls = run.unansweredCalls {
                        Issue.record(Comment(rawValue: unansweredCalls), sourceLocation: test.sourceLocation)
                    }
                    Self.record(
                        await bridge.runArtifacts(title: title, failures: run.failures), folder: folder,
                        at: test.sourceLocation)
                }
                // A cancelled test runs no other seed.
                if let cancellation = run.cancellation { throw cancellation }
            }
        }
    }

    /// Stops the process: a stalled or cancelled test's body did not end when cancelled, and a
    /// trait cannot return while the test's body runs (the testing library's closure would
    /// outlive its scope). Says why, and what to change, rather than trap without a word.
    static func stop(_ name: String, seed: UInt64, at sourceLocation: SourceLocation) -> Never {
        let message =
            "BLEMockKit: \(name) was cancelled on bridge seed \(seed) (by a stall: see the report above; or by "
            + "the test's own cancellation or time limit), and its body did not end when cancelled: it waits "
            + "on something cancellation does not end, such as a continuation that only a callback that "
            + "never came would resume. A test trait cannot leave a "
            + "test's body running, so the test process stops here. Make the wait end on cancellation "
            + "(wait with `bridge.waitForApp { … }`, or resume the continuation from a "
            + "`withTaskCancellationHandler`), or run the test with XCTest's `runOnMockBridge`, which can "
            + "leave such a body behind."
        Issue.record(Comment(rawValue: message), sourceLocation: sourceLocation)
        fatalError(message)
    }

    /// A test's name as `swift test --filter` and the files' names take it: without its
    /// parameter list (`uploads(seed:)` is `uploads`: the filter is a regular expression, in
    /// which `(seed:)` is a group, and a shell takes unquoted parentheses as syntax).
    static func name(of test: Test) -> String {
        String(test.name.prefix { $0 != "(" })
    }

    /// Where the files of a failed run are written, in addition to being attached to the test;
    /// `nil` (the default) writes them only where attachments are not available, or to the
    /// folder `BLEMOCKKIT_ARTIFACTS` names.
    public var failureFolder: String?

    /// This trait, also writing each failed run's timeline and log into `folder`:
    /// `.mockBridge(seedCount: 50).writingFailures(to: "/tmp/ble-failures")`.
    public func writingFailures(to folder: String) -> Self {
        var trait = self
        trait.failureFolder = folder
        return trait
    }

    /// Attaches a failed run's timeline and log to the test, and writes them into `folder`
    /// when one is given or attachments are not available, recording an issue that names
    /// the files (at `sourceLocation`, the test's).
    static func record(_ artifacts: RunArtifacts, folder: String?, at sourceLocation: SourceLocation) {
        #if compiler(>=6.2)
            for file in artifacts.files { Attachment.record(file.text, named: file.name) }
            guard let folder else { return }
        #else
            let folder = folder ?? RunArtifacts.folder(environment: ProcessInfo.processInfo.environment)
        #endif
        do {
            try artifacts.write(into: folder)
            Issue.record(
                Comment(
                    rawValue: "the timeline and bridge log of bridge seed \(artifacts.seed) are in \(folder): "
                        + artifacts.files.map(\.name).joined(separator: ", ")), sourceLocation: sourceLocation)
        } catch {
            Issue.record(
                error, Comment(rawValue: "could not write the timeline and log of bridge seed \(artifacts.seed)"),
                sourceLocation: sourceLocation)
        }
    }

    /// Runs `body`, adding `note` to every issue recorded in it and telling `run` of every
    /// issue that fails the test; the first one also says what the failed run leaves.
    private static func watching(
        _ run: SeedRun, note: Comment?, test: Test, testCase: Test.Case?,
        _ body: @escaping @Sendable () async throws -> Void
    ) async throws {
        #if compiler(>=6.2)
            let watch = IssueHandlingTrait.compactMapIssues { issue in
                var issue = issue
                if let note { issue.comments.append(note) }
                if issue.isFailure, run.fail(because: issue.description) {
                    let names = run.fileNames
                    issue.comments.append(
                        Comment(
                            rawValue: "the run's timeline and bridge log are attached to the test as "
                                + "\(names.timeline) and \(names.log) "
                                + "(swift test --attachments-path DIR saves them, into a folder that exists: "
                                + "mkdir -p DIR first)"))
                }
                return issue
            }
            return try await watch.provideScope(for: test, testCase: testCase, performing: body)
        #else
            try await body()
        #endif
    }
}

/// A bridge trait's identity (see ``MockBridgeTrait``): an object, compared by reference. It
/// also numbers the cases of each parameterized test the trait runs, in the order they start.
private final class Identity: @unchecked Sendable {
    // @unchecked Sendable: `cases` is only read and written with `lock` held.
    private let lock = Lock()
    private var cases: [Test.ID: Int] = [:]

    /// The number of the case of `test` starting now: 1 for its first, then 2, 3, …
    func nextCase(of test: Test.ID) -> Int {
        lock.withLock {
            cases[test, default: 0] += 1
            return cases[test, default: 0]
        }
    }
}

/// What an error a seed's body threw means for the test.
enum Thrown: Equatable {
    /// The test failed with it: the trait records it as an issue naming the seed.
    case failure
    /// A failed `#require` (`ExpectationFailedError`): the testing library recorded its issue
    /// already, so the trait records no other.
    case alreadyRecorded
    /// The test was cancelled (`Test.cancel()`, its time limit), and the run with it: the trait
    /// runs no other seed and throws the error on, for the testing library to report the test
    /// cancelled (or, for another error, to record it).
    case testCancelled

    /// What `error` means, `testCancelled` saying whether the test's task was cancelled.
    init(_ error: any Error, testCancelled: Bool) {
        if testCancelled {
            self = .testCancelled
        } else {
            self = error is ExpectationFailedError ? .alreadyRecorded : .failure
        }
    }
}

/// What the trait knows of one seed's run while it goes: whether an issue failed it, and its
/// bridge once it has ended. Issues may be recorded on any thread, so a lock guards both.
private final class SeedRun: @unchecked Sendable {
    // Why `@unchecked Sendable` is safe: `state` is read and written only under `lock`;
    // `fileNames` is a constant.
    private let lock = Lock()
    private var state:
        (
            failed: Bool, failures: [String], bridge: MockBLEBridge?, unansweredCalls: String?,
            cancellation: (any Error)?
        ) = (false, [], nil, nil, nil)
    /// The names the run's files will have (they are made only when the run fails).
    let fileNames: (timeline: String, log: String)

    init(fileNames: (timeline: String, log: String)) {
        self.fileNames = fileNames
    }

    /// Whether a failing issue was recorded during the run, or the run was not clean.
    var failed: Bool { lock.withLock { state.failed } }
    /// The run's bridge, once it has ended.
    var bridge: MockBLEBridge? { lock.withLock { state.bridge } }

    /// The failing issues, in words, in the order they were recorded.
    var failures: [String] { lock.withLock { state.failures } }

    /// Notes a failing issue, or that the run was not clean (`nil`); `true` for the first.
    func fail(because issue: String?) -> Bool {
        lock.withLock {
            defer { state.failed = true }
            if let issue { state.failures.append(issue) }
            return !state.failed
        }
    }

    /// The calls the run's app made that got no callback, in words, if any (and no stall named them).
    var unansweredCalls: String? { lock.withLock { state.unansweredCalls } }

    /// What the body threw when the test was cancelled, to throw on (the test ends there).
    var cancellation: (any Error)? { lock.withLock { state.cancellation } }

    /// Notes that the test was cancelled during the run, which threw `error`.
    func endTest(with error: any Error) {
        lock.withLock { state.cancellation = error }
    }

    /// Keeps the ended run's bridge, and what it says of the calls its app made that got no callback.
    func keep(_ bridge: MockBLEBridge, unansweredCalls: String?) {
        lock.withLock {
            state.bridge = bridge
            state.unansweredCalls = unansweredCalls
        }
    }
}

extension Trait where Self == MockBridgeTrait {
    /// A fast bridge (seed 0): nothing takes time.
    public static var mockBridge: Self { MockBridgeTrait(plan: BridgeTestPlan()) }

    /// A bridge with this configuration, e.g. `.mockBridge(.realistic(seed: 7))`; a run stops
    /// at `timeLimit` of virtual time, and reports a stall after `stallPatience` of wall time
    /// without outside work (see ``BridgeTestPlan/stallPatience``).
    public static func mockBridge(
        _ configuration: MockBLEBridge.Configuration, timeLimit: Duration = .seconds(3_600),
        stallPatience: Duration = .seconds(1)
    ) -> Self {
        MockBridgeTrait(
            plan: BridgeTestPlan(configuration: configuration, timeLimit: timeLimit, stallPatience: stallPatience))
    }

    /// One run for each of `count` seeds (`first`, `first + 1`, …), each on a fresh bridge with
    /// `timing` (realistic by default): `.mockBridge(seedCount: 100)`. A count below 1, or above
    /// ``maximumSeedCount``, runs nothing: the trait records an issue (for the first,
    /// ``BridgeTestPlan/EmptyPlan``) and the body does not run.
    /// `timeLimit` and `stallPatience` are each run's (see ``BridgeTestPlan``): a test of a hang
    /// over many seeds runs faster with a short patience.
    public static func mockBridge(
        seedCount count: Int, from first: UInt64 = 0, timing: LinkTiming = .realistic,
        timeLimit: Duration = .seconds(3_600), stallPatience: Duration = .seconds(1)
    ) -> Self {
        guard count <= MockBridgeTrait.maximumSeedCount else {
            var refused = mockBridge(seeds: [], timing: timing, timeLimit: timeLimit, stallPatience: stallPatience)
            refused.refusedSeedCount = count
            return refused
        }
        let seeds = (0..<UInt64(max(count, 0))).map { first &+ $0 }
        return mockBridge(seeds: seeds, timing: timing, timeLimit: timeLimit, stallPatience: stallPatience)
    }

    /// One run per seed, each on a fresh bridge with `timing` (realistic by default):
    /// `.mockBridge(seeds: [3, 17, 42])`. An empty list runs nothing: the trait records an
    /// issue (``BridgeTestPlan/EmptyPlan``) and the body does not run. `timeLimit` and
    /// `stallPatience` are each run's (see ``BridgeTestPlan``).
    public static func mockBridge(
        seeds: [UInt64], timing: LinkTiming = .realistic, timeLimit: Duration = .seconds(3_600),
        stallPatience: Duration = .seconds(1)
    ) -> Self {
        MockBridgeTrait(
            plan: BridgeTestPlan(
                configuration: MockBLEBridge.Configuration(timing: timing), seeds: seeds, timeLimit: timeLimit,
                stallPatience: stallPatience))
    }
}

/// When a test's body has ended (returned or thrown), for a trait that must not return before
/// (it waits once, so there is one waiter at the most).
final class BodyEnd: @unchecked Sendable {
    // @unchecked Sendable: `ended` and `waiter` are only read and written with `lock` held;
    // the continuation is resumed after it is released.
    private let lock = Lock()
    private var ended = false
    private var waiter: CheckedContinuation<Void, Never>?

    /// Notes that the body has ended.
    func mark() {
        lock.withLock { () -> CheckedContinuation<Void, Never>? in
            ended = true
            return takeWaiter()
        }?.resume()
    }

    /// Whether the body has ended, waiting up to `limit` of wall-clock time for it (a cancelled
    /// body that honours cancellation ends within moments), whether or not the caller is
    /// cancelled: a cancelled test's body must have ended before its trait returns too.
    func wait(upTo limit: Duration) async -> Bool {
        if lock.withLock({ ended }) { return true }
        // A task of its own, which does not inherit the caller's cancellation.
        return await Task { await self.waitUncancelled(upTo: limit) }.value
    }

    /// ``wait(upTo:)`` in a task that is not cancelled.
    private func waitUncancelled(upTo limit: Duration) async -> Bool {
        await withTaskGroup(of: Bool.self) { group in
            group.addTask {
                await self.untilEnded()
                return true
            }
            group.addTask {
                try? await Task.sleep(for: limit)
                return false
            }
            let first = await group.next() ?? false
            group.cancelAll()
            return first
        }
    }

    /// Returns once the body has ended, or the calling task is cancelled.
    private func untilEnded() async {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let now = lock.withLock { () -> Bool in
                    if ended || Task.isCancelled { return true }
                    waiter = continuation
                    return false
                }
                if now { continuation.resume() }
            }
        } onCancel: {
            lock.withLock { takeWaiter() }?.resume()
        }
    }

    /// With the lock held: the waiter, if any, which is then gone.
    private func takeWaiter() -> CheckedContinuation<Void, Never>? {
        defer { waiter = nil }
        return waiter
    }
}
