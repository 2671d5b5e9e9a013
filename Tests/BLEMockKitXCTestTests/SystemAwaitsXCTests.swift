import BLECBM
import BLEMockKit
import BLEMockKitXCTest
import XCTest

/// An `async` XCTest that awaits the simulated system's bridge while its app keeps calling from
/// its own queue, then reads the app's queue-confined state with `queue.sync`, as such tests do.
final class SystemAwaitsXCTests: XCTestCase {
    private let identifier = UUID(uuidString: "7A1E0000-0000-0000-0000-00000000E101")!

    /// Each `await` on the bridge goes on off the app's queue (before, about a third went on on
    /// the thread applying the app's reads, inside the app's queue, where `queue.sync` onto it
    /// traps), and the app's reads go on meanwhile.
    func testAwaitsOnTheSystemsBridgeGoOnOffTheAppsQueue() async throws {
        let system = try installSimulatedSystem()
        CBMCentralManagerMock.simulatePeripherals([probeSensor("Sensor", identifier: identifier)])
        let appQueue = DispatchQueue(label: "probe.app")
        let onAppQueue = DispatchSpecificKey<Bool>()
        appQueue.setSpecific(key: onAppQueue, value: true)
        let app = ProbeCentralApp(target: "Sensor")
        let reading = ReadLoop()
        let firstRead = expectation(description: "the app read the sensor")
        // Once connected, the app reads again as each read comes back, until told to stop.
        app.onRead = { _ in
            if reading.count() == 1 { firstRead.fulfill() }
            guard reading.goesOn, let peripheral = app.peripheral,
                let characteristic = peripheral.services?.first?.characteristics?.first
            else { return }
            peripheral.readValue(for: characteristic)
        }
        appQueue.async { app.start(queue: appQueue) }
        await fulfillment(of: [firstRead], timeout: 10)
        // Awaits until the app has read 100 times more (thousands of awaits, each racing the
        // app's reads for the bridge).
        var awaits = 0
        var reads = 1
        while reads < 101 {
            awaits += 1
            _ = await system.bridge.now
            if DispatchQueue.getSpecific(key: onAppQueue) == true {
                XCTFail("await \(awaits) went on on the app's queue")
                break
            }
            // Safe only off the app's queue (dispatch stops a sync onto the queue it runs on).
            reads = appQueue.sync { reading.reads }
        }
        reading.stop()
        XCTAssertGreaterThanOrEqual(reads, 101)
        XCTAssertGreaterThan(awaits, 100)
        CBMCentralManagerMock.tearDownSimulation()
    }
}

/// A count of an app's reads and whether it reads on.
private final class ReadLoop: @unchecked Sendable {
    // @unchecked Sendable: `storedReads` and `stopped` are only touched with `lock` held.
    private let lock = NSLock()
    private var storedReads = 0
    private var stopped = false

    /// Counts a read; returns the count.
    func count() -> Int {
        lock.withLock {
            storedReads += 1
            return storedReads
        }
    }
    var reads: Int { lock.withLock { storedReads } }
    var goesOn: Bool { lock.withLock { !stopped } }
    func stop() { lock.withLock { stopped = true } }
}

/// A `waitUntil` on the simulated system's bridge that goes on longer than its patience with
/// time following the wall clock: reported once while the wait goes on, until its task is
/// cancelled.
final class SystemWaitReportXCTests: XCTestCase {
    /// A system on the wall clock, reporting waits after 0.3 s, uninstalled as the test ends.
    private func installSystem(_ configuration: MockBLEBridge.Configuration) throws -> SimulatedSystem {
        let turn = SimulatedSystem.Turn(holder: "the XCTest \(name)", othersWait: false)
        let system = try SimulatedSystem.install(
            configuration, time: .wallClock, initialState: .poweredOn, installedBy: "SystemWaitReportXCTests",
            turn: turn, waitPatience: .milliseconds(300))
        addTeardownBlock { turn.end() }
        return system
    }

    /// The first wait report of `system`, once there is one (within 10 s).
    private func firstReport(of system: SimulatedSystem) throws -> String {
        let reported = XCTNSPredicateExpectation(
            predicate: NSPredicate { _, _ in !system.waitReports.isEmpty }, object: nil)
        wait(for: [reported], timeout: 10)
        return try XCTUnwrap(system.waitReports.first)
    }

    func testAWaitThatGoesOnPastItsPatienceIsReportedOnceAndGoesOn() throws {
        let system = try installSystem(.realistic(seed: 5))
        let bridge = system.bridge
        XCTAssertEqual(system.waitReports, [])
        let ended = expectation(description: "the wait ended")
        let waiting = Task {
            await bridge.waitUntil { _ in false }
            ended.fulfill()
        }
        let report = try firstReport(of: system)
        XCTAssertTrue(
            report.hasPrefix(
                "a bridge.waitUntil { … } on the simulated system (installed by SystemWaitReportXCTests; seed 5) has "
                    + "waited 0."),
            report)
        XCTAssertTrue(
            report.contains(" s of wall time (since ")
                && report.contains(") and its condition still does not hold. With time "),
            report)
        XCTAssertTrue(report.contains("No operation is waiting in the simulation. Bound the wait"), report)
        // Once per wait, and the wait goes on (the driver looks at the waits every 0.3 s).
        ended.isInverted = true
        wait(for: [ended], timeout: 1)
        XCTAssertEqual(system.waitReports.count, 1)
        let cancelled = expectation(description: "the cancelled wait ended")
        Task {
            await waiting.value
            cancelled.fulfill()
        }
        waiting.cancel()
        wait(for: [cancelled], timeout: 10)
    }

    /// (It waited for ever without a word.)
    func testAWaitForAppThatGoesOnPastItsPatienceIsReportedWithWhereItWasCalled() throws {
        let system = try installSystem(.fast)
        let bridge = system.bridge
        let line = #line + 1
        let waiting = Task { try await bridge.waitForApp { false } }
        let report = try firstReport(of: system)
        XCTAssertTrue(
            report.hasPrefix(
                "a bridge.waitForApp { … } at BLEMockKitXCTestTests/SystemAwaitsXCTests.swift:\(line) on the "
                    + "simulated system (installed by SystemWaitReportXCTests; seed 0) has waited 0."),
            report)
        let cancelled = expectation(description: "the cancelled wait ended")
        Task {
            _ = try? await waiting.value
            cancelled.fulfill()
        }
        waiting.cancel()
        wait(for: [cancelled], timeout: 10)
        XCTAssertEqual(system.waitReports.count, 1)
    }
}

/// A `waitUntil` on the simulated system's bridge still suspended as the system is uninstalled:
/// its time has stopped, so nothing but cancelling its task ends it, and the uninstall says so.
final class SystemUninstallWaitReportXCTests: XCTestCase {
    func testUninstallingTheSystemReportsTheWaitsItLeavesSuspended() throws {
        let turn = SimulatedSystem.Turn(holder: "the XCTest \(name)", othersWait: false)
        let system = try SimulatedSystem.install(
            .realistic(seed: 8), time: .wallClock, initialState: .poweredOn, installedBy: "SystemUninstallXCTests",
            turn: turn)
        addTeardownBlock { turn.end() }
        let bridge = system.bridge
        let waits = (0..<2).map { _ in Task { await bridge.waitUntil { _ in false } } }
        let suspended = XCTNSPredicateExpectation(
            predicate: NSPredicate { _, _ in bridge.suspendedWaits == 2 }, object: nil)
        wait(for: [suspended], timeout: 10)
        XCTAssertEqual(system.waitReports, [])
        system.uninstall()
        XCTAssertEqual(
            system.waitReports,
            [
                "the simulated system (installed by SystemUninstallXCTests; seed 8) was uninstalled while 2 "
                    + "bridge.waitUntil { … } calls on its bridge still waited. Its time has stopped and its managers "
                    + "are invalid, so they end only if their tasks are cancelled. Await or cancel such waits before "
                    + "the system is uninstalled (in the test, before tearDown)."
            ])
        // Said once: uninstalling again does nothing.
        system.uninstall()
        XCTAssertEqual(system.waitReports.count, 1)
        let ended = expectation(description: "the cancelled waits ended")
        ended.expectedFulfillmentCount = 2
        for wait in waits {
            Task {
                await wait.value
                ended.fulfill()
            }
            wait.cancel()
        }
        wait(for: [ended], timeout: 10)
        XCTAssertEqual(bridge.suspendedWaits, 0)
    }

    func testASystemUninstalledWithNoWaitSuspendedReportsNothing() throws {
        let turn = SimulatedSystem.Turn(holder: "the XCTest \(name)", othersWait: false)
        let system = try SimulatedSystem.install(
            .fast, time: .virtual, initialState: .poweredOn, installedBy: "SystemUninstallXCTests", turn: turn)
        addTeardownBlock { turn.end() }
        let bridge = system.bridge
        let satisfied = expectation(description: "a wait whose condition held ended")
        Task {
            await bridge.waitUntil { _ in true }
            satisfied.fulfill()
        }
        wait(for: [satisfied], timeout: 10)
        system.uninstall()
        XCTAssertEqual(system.waitReports, [])
    }
}
