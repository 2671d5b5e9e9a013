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
/// same way. With several seeds, every issue recorded during a seed's run names that seed
/// and how to rerun only it (`BLEMOCKKIT_SEED=17 swift test --filter name`; the variable
/// narrows any test with this trait to that seed).
///
/// As a suite trait it applies to every test of the suite.
public struct MockBridgeTrait: TestTrait, SuiteTrait, TestScoping {
    /// What each test runs with.
    public var plan: BridgeTestPlan

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
        let seeds: [UInt64]
        do {
            seeds = try plan.seedsToRun(environment: ProcessInfo.processInfo.environment)
        } catch {
            Issue.record(Comment(rawValue: "\(error)"))
            return
        }
        guard #available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *) else {
            Issue.record("the mock bridge trait needs macOS 15, iOS 18, tvOS 18, watchOS 11 or visionOS 2")
            return
        }
        let name = test.name.hasSuffix("()") ? String(test.name.dropLast(2)) : test.name
        let several = seeds.count > 1
        let plan = plan
        // The body runs once per seed inside each bridge's scope, whose task group has
        // finished with it before the scope returns.
        try await withoutActuallyEscaping(function) { function in
            for seed in seeds {
                let note = Comment(
                    rawValue: "bridge seed \(seed); rerun only it: \(BridgeTestPlan.seedVariable)=\(seed) "
                        + "swift test --filter \(name)")
                try await Self.annotating(several ? note : nil, test: test, testCase: testCase) {
                    let outcome = await plan.run(seed: seed, function)
                    if let error = outcome.error {
                        Issue.record(error, Comment(rawValue: "the test threw on bridge seed \(seed)"))
                    }
                    if !outcome.finish.isClean {
                        Issue.record(
                            Comment(rawValue: "finish() found leftovers on bridge seed \(seed):\n\(outcome.finish)"))
                    }
                }
            }
        }
    }

    /// Runs `body`, adding `note` to every issue recorded in it.
    private static func annotating(
        _ note: Comment?, test: Test, testCase: Test.Case?, _ body: @escaping @Sendable () async throws -> Void
    ) async throws {
        #if compiler(>=6.2)
            if let note {
                let annotate = IssueHandlingTrait.compactMapIssues { issue in
                    var issue = issue
                    issue.comments.append(note)
                    return issue
                }
                return try await annotate.provideScope(for: test, testCase: testCase, performing: body)
            }
        #endif
        try await body()
    }
}

extension Trait where Self == MockBridgeTrait {
    /// A fast bridge (seed 0): nothing takes time.
    public static var mockBridge: Self { MockBridgeTrait(plan: BridgeTestPlan()) }

    /// A bridge with this configuration, e.g. `.mockBridge(.realistic(seed: 7))`.
    public static func mockBridge(_ configuration: MockBLEBridge.Configuration, timeLimit: Duration = .seconds(3_600))
        -> Self
    {
        MockBridgeTrait(plan: BridgeTestPlan(configuration: configuration, timeLimit: timeLimit))
    }

    /// One run for each of `count` seeds (`first`, `first + 1`, …), each on a fresh bridge with
    /// `timing` (realistic by default): `.mockBridge(seedCount: 100)`.
    public static func mockBridge(
        seedCount count: Int, from first: UInt64 = 0, timing: LinkTiming = .realistic,
        timeLimit: Duration = .seconds(3_600)
    ) -> Self {
        let seeds = (0..<UInt64(max(count, 0))).map { first &+ $0 }
        return mockBridge(seeds: seeds, timing: timing, timeLimit: timeLimit)
    }

    /// One run per seed, each on a fresh bridge with `timing` (realistic by default):
    /// `.mockBridge(seeds: [3, 17, 42])`.
    public static func mockBridge(
        seeds: [UInt64], timing: LinkTiming = .realistic, timeLimit: Duration = .seconds(3_600)
    ) -> Self {
        MockBridgeTrait(
            plan: BridgeTestPlan(
                configuration: MockBLEBridge.Configuration(timing: timing), seeds: seeds, timeLimit: timeLimit))
    }
}
