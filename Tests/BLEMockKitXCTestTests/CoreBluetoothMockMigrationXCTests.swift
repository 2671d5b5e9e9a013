import BLECBM
import BLEMockKit
import XCTest

// An XCTest suite as a team wrote it for CoreBluetoothMock, moved by changing its import: the
// statics in `setUpWithError`, `tearDownSimulation()` in `tearDownWithError`, delegate-based app
// code, `wait(for:timeout:)` on the main thread.

/// The sensor's one characteristic: it notifies and can be read.
let migrationSensorValue = CBMCharacteristicMock(
    type: CBMUUID(string: "0000AA01-0000-1000-8000-00805F9B34FB"), properties: [.notify, .read],
    descriptors: CBMClientCharacteristicConfigurationDescriptorMock())

final class MigrationSensorDelegate: CBMPeripheralSpecDelegate {
    func peripheral(_ peripheral: CBMPeripheralSpec, didReceiveReadRequestFor characteristic: CBMCharacteristicMock)
        -> Result<Data, any Error>
    { .success(Data([0x2A])) }
}

/// A sensor that starts out of range; its links outlive its silence by half a second.
let migrationSensor =
    CBMPeripheralSpec
    .simulatePeripheral(proximity: .outOfRange)
    .advertising(
        advertisementData: [
            CBMAdvertisementDataLocalNameKey: "Sensor",
            CBMAdvertisementDataIsConnectable: true as NSNumber,
        ], withInterval: 0.05
    )
    .connectable(
        name: "Sensor",
        services: [
            CBMServiceMock(
                type: CBMUUID(string: "0000AA00-0000-1000-8000-00805F9B34FB"), primary: true,
                characteristics: migrationSensorValue)
        ], delegate: MigrationSensorDelegate(), supervisionTimeout: 0.5
    )
    .allowForRetrieval()
    .build()

final class CoreBluetoothMockMigrationXCTests: XCTestCase {
    override func setUpWithError() throws {
        // Written for CoreBluetoothMock, where a spec keeps its state across tests: each test
        // puts the sensor where it wants it, before the simulation starts.
        migrationSensor.simulateProximityChange(.immediate)
        CBMCentralManagerMock.simulatePeripherals([migrationSensor])
        CBMCentralManagerMock.simulateInitialState(.poweredOn)
    }

    override func tearDownWithError() throws {
        CBMCentralManagerMock.tearDownSimulation()
    }

    /// Connects a manager to the sensor (retrieved: it is known) and returns both.
    private func connectToTheSensor(
        _ delegate: CBMCentralManagerDelegateProxy, connected: XCTestExpectation
    ) -> (CBMCentralManager, CBMPeripheral)? {
        let poweredOn = XCTestExpectation(description: "powered on")
        delegate.didUpdateState = { manager in if manager.state == .poweredOn { poweredOn.fulfill() } }
        delegate.didConnect = { _, _ in connected.fulfill() }
        let manager = CBMCentralManagerMock(delegate: delegate, queue: nil)
        wait(for: [poweredOn], timeout: 2)
        guard let sensor = manager.retrievePeripherals(withIdentifiers: [migrationSensor.identifier]).first else {
            XCTFail("the sensor was not retrieved")
            return nil
        }
        manager.connect(sensor)
        wait(for: [connected], timeout: 3)
        return (manager, sensor)
    }

    func testASensorMovedOutOfRangeWhileConnectedDisconnectsWithATimeoutOnTheMainQueue() throws {
        let delegate = CBMCentralManagerDelegateProxy()
        let connected = XCTestExpectation(description: "connected")
        let disconnected = XCTestExpectation(description: "disconnected")
        var disconnection: (error: (any Error)?, onMain: Bool)?
        delegate.didDisconnect = { _, _, _, _, error in
            disconnection = (error, Thread.isMainThread)
            disconnected.fulfill()
        }
        let (manager, sensor) = try XCTUnwrap(connectToTheSensor(delegate, connected: connected))
        migrationSensor.simulateProximityChange(.outOfRange)
        wait(for: [disconnected], timeout: 3)
        XCTAssertEqual((disconnection?.error as? CBMError)?.code, .connectionTimeout)
        XCTAssertEqual(disconnection?.onMain, true)
        XCTAssertEqual(sensor.state, .disconnected)
        _ = manager
    }

    func testTheNextTestFindsTheSensorItBroughtBackIntoRange() throws {
        let delegate = CBMCentralManagerDelegateProxy()
        let connected = XCTestExpectation(description: "connected")
        let (manager, sensor) = try XCTUnwrap(connectToTheSensor(delegate, connected: connected))
        XCTAssertEqual(sensor.state, .connected)
        _ = manager
    }

    func testARestoredManagerGetsTheSensorAndItsScanBeforeItsState() throws {
        let serviceUUID = CBMUUID(string: "0000AA00-0000-1000-8000-00805F9B34FB")
        CBMCentralManagerMock.simulateStateRestoration = { identifier in
            identifier == "sensor-app"
                ? [
                    CBMCentralManagerRestoredStatePeripheralsKey: [migrationSensor],
                    CBMCentralManagerRestoredStateScanServicesKey: [serviceUUID],
                ] : nil
        }
        let delegate = CBMCentralManagerDelegateProxy()
        var events: [String] = []
        let connected = XCTestExpectation(description: "connected")
        delegate.willRestoreState = { manager, state in
            let peripherals = state[CBMCentralManagerRestoredStatePeripheralsKey] as? [CBMPeripheral] ?? []
            let services = state[CBMCentralManagerRestoredStateScanServicesKey] as? [CBMUUID] ?? []
            events.append(
                "restored \(peripherals.map(\.identifier) == [migrationSensor.identifier]) \(services) "
                    + "\(manager.isScanning) \(peripherals.first?.state == .connecting)")
        }
        delegate.didUpdateState = { manager in events.append("state \(manager.state.rawValue)") }
        delegate.didConnect = { _, peripheral in
            events.append("connected \(peripheral.identifier == migrationSensor.identifier)")
            connected.fulfill()
        }
        let manager = CBMCentralManagerMock(
            delegate: delegate, queue: nil, options: [CBMCentralManagerOptionRestoreIdentifierKey: "sensor-app"])
        wait(for: [connected], timeout: 3)
        XCTAssertEqual(
            events,
            [
                "restored true [\(serviceUUID)] true true", "state \(CBMManagerState.poweredOn.rawValue)",
                "connected true",
            ])
        _ = manager
    }

    /// The older waiting API: expectations made by the test case and `waitForExpectations` on
    /// the main thread, while the app's callbacks arrive on the main queue (a read, then a
    /// notification counted with `expectedFulfillmentCount`).
    @MainActor
    func testWaitForExpectationsOnTheMainThreadSeesCallbacksArriveOnTheMainQueue() throws {
        let delegate = CBMCentralManagerDelegateProxy()
        let (manager, sensor) = try XCTUnwrap(
            connectToTheSensor(delegate, connected: XCTestExpectation(description: "connected")))
        let peripheralDelegate = CBMPeripheralDelegateProxy()
        sensor.delegate = peripheralDelegate
        let discovered = expectation(description: "the sensor's characteristic is discovered")
        var characteristic: CBMCharacteristic?
        peripheralDelegate.didDiscoverServices = { peripheral, _ in
            guard let service = peripheral.services?.first else { return }
            peripheral.discoverCharacteristics(nil, for: service)
        }
        peripheralDelegate.didDiscoverCharacteristics = { _, service, _ in
            characteristic = service.characteristics?.first
            discovered.fulfill()
        }
        sensor.discoverServices(nil)
        waitForExpectations(timeout: 3)

        let values = expectation(description: "a read, then two notifications")
        values.expectedFulfillmentCount = 3
        var received: [Data] = []
        var onMain = true
        peripheralDelegate.didUpdateCharacteristicValue = { _, characteristic, _ in
            onMain = onMain && Thread.isMainThread
            received.append(characteristic.value ?? Data())
            values.fulfill()
        }
        let subscribed = expectation(description: "subscribed")
        peripheralDelegate.didUpdateNotificationState = { _, _, _ in subscribed.fulfill() }
        let value = try XCTUnwrap(characteristic)
        sensor.readValue(for: value)
        sensor.setNotifyValue(true, for: value)
        wait(for: [subscribed], timeout: 3)
        migrationSensor.simulateValueUpdate(Data([1]), for: migrationSensorValue)
        migrationSensor.simulateValueUpdate(Data([2]), for: migrationSensorValue)
        waitForExpectations(timeout: 3)
        XCTAssertEqual(received, [Data([0x2A]), Data([1]), Data([2])])
        XCTAssertTrue(onMain)
        _ = manager
    }
}
