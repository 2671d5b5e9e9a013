import BLEMockKit
import XCTest

@testable import BLECBM

/// A system installed on a test's own bridge (`SimulatedSystem.install(on:)`, as an exploration
/// run does) leaves the bridge the test's when it is uninstalled: managers made on it explicitly
/// are live ones, and a system installed on it again is joined as the first was. A manager that
/// found the system through the process-wide slot just as it was uninstalled is invalid.
final class SystemOnATestsBridgeXCTests: XCTestCase {
    typealias StateCounter = SystemManagersAnywhereXCTests.PoweredOnCounter

    override func tearDown() {
        XCTAssertNil(SimulatedSystem.current, "the test left a system installed")
        if let system = SimulatedSystem.current { system.uninstall() }
    }

    func testManagersMadeExplicitlyOnATestsBridgeOnceItsSystemIsUninstalledArePoweredOn() throws {
        let bridge = MockBLEBridge()
        try SimulatedSystem.install(on: bridge, installedBy: name).uninstall()
        let poweredOn = expectation(description: "both powered on")
        poweredOn.expectedFulfillmentCount = 2
        let delegate = StateCounter { poweredOn.fulfill() }
        let queue = DispatchQueue(label: "app")
        let central = CBMCentralManager(bridge: bridge, delegate: delegate, queue: queue)
        let peripheral = CBMPeripheralManager(bridge: bridge, delegate: delegate, queue: queue)
        wait(for: [poweredOn], timeout: 5)
        XCTAssertEqual(central.state, .poweredOn)
        XCTAssertEqual(peripheral.state, .poweredOn)
        central.scanForPeripherals(withServices: nil)
        XCTAssertTrue(central.isScanning)
        XCTAssertEqual(central.apiMisuses, [])
    }

    func testASystemInstalledAgainOnATestsBridgeIsJoinedByManagersMadeOnAnAppsQueue() throws {
        let bridge = MockBLEBridge()
        try SimulatedSystem.install(on: bridge, installedBy: name).uninstall()
        let system = try SimulatedSystem.install(on: bridge, installedBy: name)
        addTeardownBlock { system.uninstall() }
        let poweredOn = expectation(description: "both powered on")
        poweredOn.expectedFulfillmentCount = 2
        let delegate = StateCounter { poweredOn.fulfill() }
        let queue = DispatchQueue(label: "app")
        let made = SystemManagersAnywhereXCTests.Made()
        queue.async {
            made.add(CBMCentralManager(delegate: delegate, queue: queue))
            made.add(CBMPeripheralManager(delegate: delegate, queue: queue))
        }
        wait(for: [poweredOn], timeout: 5)
        let central = try XCTUnwrap(made.all.first as? CBMCentralManager)
        XCTAssertTrue(central.bridge === bridge)
        XCTAssertEqual(central.state, .poweredOn)
    }

    /// The race an app's queue runs with the test's teardown, made deterministic: the manager
    /// found the system, then the system was uninstalled, then the manager joined. The bridge is
    /// the test's (so nothing marks it retired for good): the manager is invalid because the
    /// system it found is gone.
    func testAManagerThatFoundTheSystemAsItWasUninstalledIsInvalid() throws {
        let bridge = MockBLEBridge()
        let system = try SimulatedSystem.install(on: bridge, installedBy: name)
        let joined = try XCTUnwrap(BridgeScope.currentForManager)
        XCTAssertTrue(joined.system === system)
        system.uninstall()
        let unknown = expectation(description: "unknown")
        let app = ProbeCentralApp(target: "none")
        app.onState = { state in if state == .unknown { unknown.fulfill() } }
        let central = CBMCentralManager(
            joining: joined, delegate: app, queue: DispatchQueue(label: "app"), options: nil, configuration: nil)
        wait(for: [unknown], timeout: 5)
        XCTAssertEqual(central.state, .unknown)
        XCTAssertEqual(app.events, ["state 0"])
        central.scanForPeripherals(withServices: nil)
        XCTAssertFalse(central.isScanning)
        XCTAssertEqual(central.apiMisuses, ["scanForPeripherals: the manager is not powered on"])
    }
}
