import BLECBM
import BLECore
import BLEMockKit
import Testing

/// A Swift Testing trait that installs the process-wide ``SimulatedSystem`` for a test and
/// uninstalls it when the test ends: CoreBluetooth-shaped managers that the code under test
/// creates anywhere (its own dispatch queues, delegate callbacks, `Task {}`) run on it.
///
/// ```swift
/// @Suite(.serialized, .simulatedSystem(.realistic(seed: 3), time: .virtual))
/// struct CompanionAppTests {
///     @Test func theAppFindsTheWatch() async throws {
///         let bridge = try #require(SimulatedSystem.current).bridge
///         try await bridge.run {
///             let app = CompanionApp()          // creates its manager in queue.async
///             try await bridge.waitForApp { app.watchFound }
///         }
///     }
/// }
/// ```
///
/// The system is process-wide, as CoreBluetooth is: tests using it cannot run in parallel with
/// each other, so tests with this trait take turns, in whatever suites they are: when another's
/// system is installed, a test waits until that test has ended (its own time limit still
/// applies). Tests in the same process that create CoreBluetooth-shaped managers outside any
/// bridge would join it. A test that can have a bridge of its own (`.mockBridge`) does not need
/// it and stays parallel. If a system installed otherwise (CoreBluetoothMock's statics, or
/// `SimulatedSystem.install`, which nothing uninstalls for sure) is installed when the test
/// starts, the trait records an issue naming who installed it, and the test does not run. When
/// the test fails, an issue also lists the operations its app started that were still waiting
/// (a connection attempt to a peripheral out of range: CoreBluetooth's never time out), the
/// calls it made that got no callback, as with CoreBluetooth (``SimulatedSystem/unansweredCalls``;
/// an operation still waiting when the app let go of its manager, or a connection attempt when
/// it let go of the peripheral, is one), and what may explain the wait, as a stall report
/// says it (a scan or a connection attempt for a peripheral out of range, say), with the system's
/// seed, if there were any: the callback the test waited for may be one of theirs (a test cancelled, by `Test.cancel()` or
/// its time limit, with no issue recorded before, is not told). With `time: .virtual`, run the test's
/// body in the system bridge's `run { }`, as above: outside it virtual time stands still, and a
/// failed test whose system's time never moved is told so first.
///
/// A test that tears the system down midway (`CBMCentralManagerMock.tearDownSimulation()`) keeps
/// its turn: a fresh system CoreBluetoothMock's statics install after that is still the test's,
/// uninstalled when the test ends, and the next test's turn starts only then.
///
/// As a suite trait it applies to each test of the suite. One system per test: a test that
/// needs another configuration or time than its suite's goes in a suite without the trait (a
/// test with the trait of its own inside a suite with it does not run: an issue says the
/// system is installed already, by that test).
public struct SimulatedSystemTrait: TestTrait, SuiteTrait, TestScoping {
    /// The bridge's configuration.
    public var configuration: MockBLEBridge.Configuration
    /// How virtual time moves.
    public var time: SimulatedSystem.Time
    /// The state managers start in.
    public var initialState: CBMManagerState

    /// Creates the trait.
    public init(
        configuration: MockBLEBridge.Configuration = .fast, time: SimulatedSystem.Time = .wallClock,
        initialState: CBMManagerState = .poweredOn
    ) {
        self.configuration = configuration
        self.time = time
        self.initialState = initialState
    }

    /// A suite's trait applies to each of its tests.
    public var isRecursive: Bool { true }

    public func provideScope(
        for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
    ) async throws {
        // A suite trait is also asked to scope the suite itself: its tests get their own systems.
        guard testCase != nil || !test.isSuite else { return try await function() }
        let turn = SimulatedSystem.Turn(holder: "the test \(test.name)", othersWait: true)
        let system: SimulatedSystem
        do {
            system = try await SimulatedSystem.installTakingTurns(
                configuration, time: time, initialState: initialState, installedBy: "the test \(test.name)",
                turn: turn)
        } catch is CancellationError {
            throw CancellationError()
        } catch {
            Issue.record(
                error, Comment(rawValue: "the simulated system could not be installed"),
                sourceLocation: test.sourceLocation)
            return
        }
        // (Also a system CoreBluetoothMock's statics installed after the test tore its own down.)
        defer { turn.end() }
        let failed = LockedValue(false)
        do {
            try await SimulatedSystem.$scopeTurn.withValue(turn) {
                try await Self.watching(failed, test: test, testCase: testCase, function)
            }
        } catch {
            // The error fails the test, unless it is the test's cancellation (`Test.cancel()`, its
            // time limit), which the testing library reports as such.
            if failed.value || !Task.isCancelled {
                await Self.recordFailureNote(of: turn.system ?? system, at: test.sourceLocation)
            }
            throw error
        }
        if failed.value { await Self.recordFailureNote(of: turn.system ?? system, at: test.sourceLocation) }
    }

    /// Runs `function`, setting `failed` when an issue recorded in it fails the test.
    private static func watching(
        _ failed: LockedValue<Bool>, test: Test, testCase: Test.Case?, _ function: @Sendable () async throws -> Void
    ) async throws {
        #if compiler(>=6.2)
            let watch = IssueHandlingTrait.compactMapIssues { issue in
                if issue.isFailure { failed.value = true }
                return issue
            }
            try await withoutActuallyEscaping(function) { function in
                try await watch.provideScope(for: test, testCase: testCase, performing: function)
            }
        #else
            try await function()
        #endif
    }

    /// For a test that failed: records the operations its app started that were still waiting
    /// and the calls it made that got no callback, if any (the callback the test waited for may
    /// be one of theirs).
    private static func recordFailureNote(of system: SimulatedSystem, at sourceLocation: SourceLocation) async {
        if let note = await system.failureNote() {
            Issue.record(Comment(rawValue: note), sourceLocation: sourceLocation)
        }
    }
}

extension Trait where Self == SimulatedSystemTrait {
    /// The process-wide simulated system, fast, with time following the wall clock.
    public static var simulatedSystem: Self { SimulatedSystemTrait() }

    /// The process-wide simulated system with this configuration and time:
    /// `.simulatedSystem(.realistic(seed: 3), time: .virtual)`.
    public static func simulatedSystem(
        _ configuration: MockBLEBridge.Configuration, time: SimulatedSystem.Time = .wallClock,
        initialState: CBMManagerState = .poweredOn
    ) -> Self {
        SimulatedSystemTrait(configuration: configuration, time: time, initialState: initialState)
    }
}
