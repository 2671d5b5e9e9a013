import BLECBM
import BLECore
import BLEMockKit
import XCTest

extension XCTestCase {
    /// Installs the process-wide ``SimulatedSystem`` for this test and uninstalls it when the
    /// test ends: CoreBluetooth-shaped managers the code under test creates anywhere (its own
    /// dispatch queues, delegate callbacks, `Task {}`) run on it.
    ///
    /// ```swift
    /// override func setUpWithError() throws {
    ///     try installSimulatedSystem()
    /// }
    ///
    /// func testTheAppFindsTheWatch() {
    ///     let found = expectation(description: "found")
    ///     let app = CompanionApp(onWatchFound: { found.fulfill() })   // creates its manager itself
    ///     wait(for: [found], timeout: 2)
    /// }
    /// ```
    ///
    /// With the default ``SimulatedSystem/Time/wallClock`` time, `wait(for:timeout:)` on the
    /// main thread works as with real Bluetooth or CoreBluetoothMock: callbacks keep arriving on
    /// the main queue (or the app's queue) while the test waits, and a timeout means wall-clock
    /// seconds of simulation. Nothing reports a stall on the wall clock: an app that waits for
    /// ever (for the `didConnect` of a peripheral out of range, say: CoreBluetooth's connection
    /// attempts never time out) fails the test when its expectation times out. When the test
    /// fails, a failure also lists the operations its app started that were still waiting
    /// then (that connection attempt), the calls it made that got no callback, as with
    /// CoreBluetooth, with their managers (``SimulatedSystem/unansweredCalls``; an operation
    /// still waiting when the app let go of its manager, or a connection attempt when it let go
    /// of the peripheral, is one: a scan started before the manager was powered on is the usual
    /// reason a discovery never came), and what may explain the wait, as a stall report says it
    /// (a scan or a connection attempt for a peripheral out of range, say), with the system's
    /// seed. With
    /// ``SimulatedSystem/Time/virtual`` time, run the test's body in `system.bridge.run { }`:
    /// outside it virtual time stands still, and a failed test whose system's time never moved is
    /// told so first.
    ///
    /// A test that tears the system down midway (`CBMCentralManagerMock.tearDownSimulation()`)
    /// and then simulates again with CoreBluetoothMock's statics gets a fresh system that is still
    /// the test's: it is uninstalled when the test ends too, so the next test starts with none.
    ///
    /// XCTest runs one test of a class at a time, which the system needs (it is process-wide, as
    /// CoreBluetooth is): do not turn on parallel execution of such classes in one process
    /// (`swift test --parallel` runs each test in a process of its own, which is fine).
    ///
    /// - Parameters:
    ///   - configuration: The bridge's configuration (fast by default).
    ///   - time: How virtual time moves (the wall clock by default).
    ///   - initialState: The state managers start in.
    ///   - file: Where a failure about the test's unanswered calls points (the caller, by default).
    ///   - line: The line it points to.
    /// - Returns: The system (its `bridge` has the log and `finish()`).
    /// - Throws: ``SimulatedSystem/InstallError`` when a system is installed already.
    @discardableResult
    public func installSimulatedSystem(
        _ configuration: MockBLEBridge.Configuration = .fast, time: SimulatedSystem.Time = .wallClock,
        initialState: CBMManagerState = .poweredOn, file: StaticString = #filePath, line: UInt = #line
    ) throws -> SimulatedSystem {
        let turn = SimulatedSystem.Turn(holder: "the XCTest \(name)", othersWait: false)
        let system = try SimulatedSystem.install(
            configuration, time: time, initialState: initialState, installedBy: "the XCTest \(name)", turn: turn)
        let failed = LockedValue(false)
        // (Teardown blocks run last added first: this one after the next.)
        addTeardownBlock { @Sendable in
            // A test that failed (an expectation that timed out, say) hears of the operations its
            // app started that were still waiting and the calls it made that got no callback:
            // the callback it waited for may be one of theirs.
            if failed.value, let note = await (turn.system ?? system).failureNote() {
                XCTFail(note, file: file, line: line)
            }
            // (Also a system CoreBluetoothMock's statics installed after the test tore its own down.)
            turn.end()
        }
        addTeardownBlock { [weak self] in
            if (self?.testRun?.totalFailureCount ?? 0) > 0 { failed.value = true }
        }
        return system
    }
}
