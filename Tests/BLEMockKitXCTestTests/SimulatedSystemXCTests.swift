import BLECBM
import BLEMockKit
import BLEMockKitXCTest
import XCTest

@testable import BlinkyExample

/// The process-wide simulated system with apps that create their managers on their own queues,
/// inside `queue.async`, where no test's bridge is visible: they join the installed system.
final class SimulatedSystemXCTests: XCTestCase {
    func testAppsThatCreateTheirManagersInQueueAsyncJoinTheInstalledSystem() throws {
        let system = try installSimulatedSystem(.realistic(seed: 3))
        let finished = XCTestExpectation(description: "the companion read the version")
        let watch = WatchPeripheralApp()
        let companion = WatchCompanionApp(commandCount: 3) { finished.fulfill() }
        wait(for: [finished], timeout: 10)
        XCTAssertEqual(companion.notifiedStatuses, [1, 2, 3])
        XCTAssertEqual(companion.firmwareVersion, Data([2, 7]))
        XCTAssertEqual(watch.receivedCommands, [1, 2, 3])
        XCTAssertTrue(system.isInstalled)
    }

    func testASecondInstallIsRefusedWithTheErrorNamingWhoInstalledTheFirst() throws {
        try installSimulatedSystem()
        XCTAssertThrowsError(try SimulatedSystem.install(installedBy: "the second test")) { error in
            let installError = error as? SimulatedSystem.InstallError
            XCTAssertEqual(installError?.requestedBy, "the second test")
            XCTAssertTrue(installError?.installedBy.contains(self.name) == true)
            XCTAssertTrue("\(error)".contains(".serialized"))
        }
    }

    /// The classic mistake (a scan as soon as the manager is made, before it is powered on),
    /// on the system: the ignored calls are listed in order with their managers (one the app
    /// let go of too), and a failed test's report says so; with nothing ignored there is no
    /// report.
    func testTheCallsAnAppMadeThatWereIgnoredAreListedWithTheirManager() throws {
        let system = try installSimulatedSystem()
        let delegate = CBMCentralManagerDelegateProxy()
        let manager = CBMCentralManager(delegate: delegate, queue: nil)
        XCTAssertNil(system.unansweredCallsNote)
        manager.scanForPeripherals(withServices: nil)
        let central = try XCTUnwrap(manager.simulatedCentral).identifier.uuidString.prefix(8)
        weak var releasedManager: CBMPeripheralManager?
        let released = try { () throws -> String in
            let peripheralManager = CBMPeripheralManager(delegate: nil, queue: nil)
            releasedManager = peripheralManager
            peripheralManager.add(CBMMutableService(type: CBMUUID(string: "180F"), primary: true))
            return try String(XCTUnwrap(peripheralManager.simulatedPeripheral).identifier.uuidString.prefix(8))
        }()
        XCTAssertNil(releasedManager)
        let lines = [
            "CBMCentralManager \(central), ignored: scanForPeripherals: the manager is not powered on",
            "CBMPeripheralManager \(released), ignored: add: the peripheral manager is not powered on (unknown)",
        ]
        XCTAssertEqual(system.unansweredCalls, lines)
        XCTAssertEqual(
            system.unansweredCallsNote,
            "calls the app made on the simulated system that got no callback, as with CoreBluetooth:\n"
                + "- \(lines[0])\n- \(lines[1])")
    }

    /// A peripheral connected when the system is uninstalled is disconnected with it (its
    /// manager hears `unknown`, as below powered on), not left `connected`; a cancel on it is
    /// then ignored and noted.
    func testUninstallingDisconnectsTheManagersPeripherals() throws {
        let system = try SimulatedSystem.install(installedBy: name)
        addTeardownBlock { system.uninstall() }  // (the test uninstalls it; this if it fails first)
        let spec = CBMPeripheralSpec.simulatePeripheral(proximity: .near)
            .advertising(
                advertisementData: [CBMAdvertisementDataServiceUUIDsKey: [CBMUUID(string: "180F")]],
                withInterval: 0.1
            )
            .connectable(
                name: "Battery",
                services: [CBMServiceMock(type: CBMUUID(string: "180F"), primary: true, characteristics: [])],
                delegate: nil
            )
            .build()
        CBMCentralManagerMock.simulatePeripherals([spec])
        let connected = XCTestExpectation(description: "connected")
        let unknown = XCTestExpectation(description: "unknown")
        let delegate = CBMCentralManagerDelegateProxy()
        var found: CBMPeripheral?
        delegate.didUpdateState = { manager in
            switch manager.state {
            case .poweredOn: manager.scanForPeripherals(withServices: nil)
            case .unknown: unknown.fulfill()
            default: break
            }
        }
        delegate.didDiscoverPeripheral = { manager, peripheral, _, _ in
            guard found == nil else { return }
            found = peripheral
            manager.stopScan()
            manager.connect(peripheral)
        }
        delegate.didConnect = { _, _ in connected.fulfill() }
        let manager = CBMCentralManager(delegate: delegate, queue: nil)
        wait(for: [connected], timeout: 5)
        let peripheral = try XCTUnwrap(found)
        XCTAssertEqual(peripheral.state, .connected)
        system.uninstall()
        wait(for: [unknown], timeout: 2)
        XCTAssertEqual(peripheral.state, .disconnected)
        manager.cancelPeripheralConnection(peripheral)
        XCTAssertEqual(peripheral.state, .disconnected)
        XCTAssertEqual(manager.apiMisuses.last?.hasPrefix("cancelPeripheralConnection"), true)
    }

    func testUninstallingInvalidatesTheManagersOnTheSystem() throws {
        let system = try SimulatedSystem.install(installedBy: name)
        let poweredOn = XCTestExpectation(description: "powered on")
        let unknown = XCTestExpectation(description: "unknown")
        let delegate = CBMCentralManagerDelegateProxy()
        delegate.didUpdateState = { manager in
            switch manager.state {
            case .poweredOn: poweredOn.fulfill()
            case .unknown: unknown.fulfill()
            default: break
            }
        }
        let manager = CBMCentralManager(delegate: delegate, queue: nil)
        wait(for: [poweredOn], timeout: 2)
        system.uninstall()
        XCTAssertNil(SimulatedSystem.current)
        XCTAssertFalse(system.isInstalled)
        wait(for: [unknown], timeout: 2)
        XCTAssertEqual(manager.state, .unknown)
        manager.scanForPeripherals(withServices: nil)
        XCTAssertFalse(manager.isScanning)
        XCTAssertEqual(manager.apiMisuses.last?.hasPrefix("scanForPeripherals"), true)
        system.uninstall()  // a second uninstall changes nothing
    }

    /// Installed on a bridge of the test's, the system's managers join that bridge (apps that
    /// make theirs in `queue.async` too), its time is the bridge's, a second install is refused,
    /// and uninstalling leaves the managers invalid and the bridge the test's.
    func testASystemInstalledOnTheTestsBridgeBringsTheAppsToThatBridge() async throws {
        guard #available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *) else {
            throw XCTSkip("runs need task executors (macOS 15)")
        }
        let bridge = MockBLEBridge(configuration: .realistic(seed: 11))
        let system = try SimulatedSystem.install(on: bridge, installedBy: name)
        addTeardownBlock { system.uninstall() }
        XCTAssertTrue(system.bridge === bridge)
        XCTAssertEqual(system.time, .virtual)
        XCTAssertTrue(SimulatedSystem.current === system)
        XCTAssertThrowsError(try SimulatedSystem.install(on: MockBLEBridge(), installedBy: "a second")) { error in
            XCTAssertEqual((error as? SimulatedSystem.InstallError)?.requestedBy, "a second")
            XCTAssertTrue("\(error)".contains("parallelism: 1"), "\(error)")
        }
        let (statuses, stateAfter) = try await bridge.run { () -> ([UInt8], CBMManagerState?) in
            let watch = WatchPeripheralApp()
            let companion = WatchCompanionApp(commandCount: 2)
            try await bridge.waitForApp(pausingSimulation: true) { watch.hasManager && companion.hasManager }
            try await bridge.waitForApp { companion.firmwareVersion != nil }
            system.uninstall()
            return (companion.notifiedStatuses, companion.managerState)
        }
        XCTAssertEqual(statuses, [1, 2])
        XCTAssertNil(SimulatedSystem.current)
        XCTAssertEqual(stateAfter, .unknown)
        // It all happened on the test's bridge, in its virtual time.
        let now = await bridge.now
        XCTAssertGreaterThan(now.offset, .zero)
        let log = await bridge.log
        XCTAssertTrue(log.contains { $0.kind == .connected })
    }

    /// The same app, the same seed: the same bridge log, byte for byte, on every run, though the
    /// two apps call in from their own queues at the same virtual instants.
    func testAnAppOfBothRolesOnItsOwnQueuesGivesTheSameLogOnEveryRunOfASeed() async throws {
        guard #available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *) else {
            throw XCTSkip("runs need task executors (macOS 15)")
        }
        for configuration in [MockBLEBridge.Configuration(seed: 9), .realistic(seed: 9)] {
            var logs = Set<String>()
            for _ in 0..<100 {
                logs.insert(try await Self.runBothRoles(configuration))
            }
            let mode = configuration.timing.isInstant ? "fast" : "realistic"
            if logs.count > 1 {
                let all = logs.sorted().map { $0.split(separator: "\n") }
                let line = Array(zip(all[0], all[1])).firstIndex { $0 != $1 } ?? min(all[0].count, all[1].count)
                XCTFail("\(mode) mode: \(logs.count) different logs; the first two differ at line \(line + 1)")
            }
            XCTAssertTrue(logs.first?.contains("write") == true)
        }
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    static func runBothRoles(_ configuration: MockBLEBridge.Configuration) async throws -> String {
        let system = try SimulatedSystem.install(configuration, time: .virtual, installedBy: "runBothRoles")
        defer { system.uninstall() }
        let bridge = system.bridge
        try await bridge.run {
            let watch = WatchPeripheralApp()
            let companion = WatchCompanionApp(commandCount: 4)
            // The apps create their managers on their own queues: time starts once they have.
            try await bridge.waitForApp(pausingSimulation: true) { watch.hasManager && companion.hasManager }
            try await bridge.waitForApp { companion.firmwareVersion != nil }
        }
        return await bridge.log.map { "\($0)" }.joined(separator: "\n")
    }
}
