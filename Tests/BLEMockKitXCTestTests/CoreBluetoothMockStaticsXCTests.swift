import BLECBM
import BLEMockKit
import XCTest

/// A button device in CoreBluetoothMock's style: it advertises every 50 ms, and its button
/// characteristic notifies.
let buttonCharacteristic = CBMCharacteristicMock(
    type: CBMUUID(string: "00001524-1212-EFDE-1523-785FEABCD123"), properties: [.notify, .read],
    descriptors: CBMClientCharacteristicConfigurationDescriptorMock())

final class ButtonDelegate: CBMPeripheralSpecDelegate {
    func peripheral(_ peripheral: CBMPeripheralSpec, didReceiveReadRequestFor characteristic: CBMCharacteristicMock)
        -> Result<Data, any Error>
    { .success(Data([0])) }
}

let buttonDevice =
    CBMPeripheralSpec
    .simulatePeripheral(proximity: .immediate)
    .advertising(
        advertisementData: [
            CBMAdvertisementDataLocalNameKey: "Button",
            CBMAdvertisementDataServiceUUIDsKey: [CBMUUID(string: "00001523-1212-EFDE-1523-785FEABCD123")],
            CBMAdvertisementDataIsConnectable: true as NSNumber,
        ], withInterval: 0.05
    )
    .connectable(
        name: "Button",
        services: [
            CBMServiceMock(
                type: CBMUUID(string: "00001523-1212-EFDE-1523-785FEABCD123"), primary: true,
                characteristics: buttonCharacteristic)
        ], delegate: ButtonDelegate()
    )
    .build()

/// A beacon that starts advertising 0.8 s after it is put on the air.
let lateBeacon =
    CBMPeripheralSpec
    .simulatePeripheral(proximity: .near)
    .advertising(advertisementData: [CBMAdvertisementDataLocalNameKey: "Late"], withInterval: 0.1, delay: 0.8)
    .build()

/// XCTest as CoreBluetoothMock's users write it: the statics in `setUpWithError` and
/// `tearDownWithError`, synchronous test methods that wait on the main thread with
/// `wait(for:timeout:)`, and `simulate…` calls from delegate callbacks and notification handlers.
/// No bridge, no `async`: the statics install the process-wide simulated system themselves.
final class CoreBluetoothMockStaticsXCTests: XCTestCase {
    override func setUpWithError() throws {
        CBMCentralManagerMock.simulatePeripherals([buttonDevice, lateBeacon])
        CBMCentralManagerMock.simulateInitialState(.poweredOn)
    }

    override func tearDownWithError() throws {
        CBMCentralManagerMock.tearDownSimulation()
        XCTAssertNil(SimulatedSystem.current)
    }

    func testTheStaticsInstallTheSystemAndWaitingOnTheMainThreadDeliversCallbacks() {
        let system = SimulatedSystem.current
        XCTAssertNotNil(system)
        XCTAssertEqual(system?.time, .wallClock)
        XCTAssertTrue(system?.installedBy.hasPrefix("CBMCentralManagerMock.") == true)

        let poweredOn = XCTestExpectation(description: "powered on")
        let found = XCTestExpectation(description: "button found")
        var callbacksOnMain = true
        let delegate = CBMCentralManagerDelegateProxy()
        delegate.didUpdateState = { manager in
            callbacksOnMain = callbacksOnMain && Thread.isMainThread
            if manager.state == .poweredOn { poweredOn.fulfill() }
        }
        delegate.didDiscoverPeripheral = { _, _, advertisementData, _ in
            callbacksOnMain = callbacksOnMain && Thread.isMainThread
            if advertisementData[CBMAdvertisementDataLocalNameKey] as? String == "Button" { found.fulfill() }
        }
        let manager = CBMCentralManagerMock(delegate: delegate, queue: nil)
        wait(for: [poweredOn], timeout: 2)
        manager.scanForPeripherals(withServices: nil)
        wait(for: [found], timeout: 2)
        manager.stopScan()
        XCTAssertTrue(callbacksOnMain)
    }

    func testSimulateCallsWorkFromDelegateCallbacksAndNotificationHandlers() {
        let pressed = Notification.Name("button pressed")
        let disconnected = XCTestExpectation(description: "disconnected")
        let delegate = CBMCentralManagerDelegateProxy()
        let peripheralDelegate = CBMPeripheralDelegateProxy()
        delegate.didUpdateState = { manager in
            if manager.state == .poweredOn { manager.scanForPeripherals(withServices: nil) }
        }
        delegate.didDiscoverPeripheral = { manager, peripheral, advertisementData, _ in
            guard advertisementData[CBMAdvertisementDataLocalNameKey] as? String == "Button" else { return }
            manager.stopScan()
            peripheral.delegate = peripheralDelegate
            manager.connect(peripheral)
        }
        delegate.didConnect = { _, peripheral in peripheral.discoverServices(nil) }
        peripheralDelegate.didDiscoverServices = { peripheral, _ in
            peripheral.discoverCharacteristics(nil, for: peripheral.services![0])
        }
        peripheralDelegate.didDiscoverCharacteristics = { peripheral, service, _ in
            peripheral.setNotifyValue(true, for: service.characteristics![0])
        }
        // From a delegate callback: the button is pressed.
        peripheralDelegate.didUpdateNotificationState = { _, characteristic, _ in
            if characteristic.isNotifying { buttonDevice.simulateValueUpdate(Data([1]), for: buttonCharacteristic) }
        }
        peripheralDelegate.didUpdateCharacteristicValue = { _, characteristic, _ in
            if characteristic.value == Data([1]) { NotificationCenter.default.post(name: pressed, object: nil) }
        }
        // From a notification handler on the main operation queue: the device goes away.
        let observer = NotificationCenter.default.addObserver(forName: pressed, object: nil, queue: .main) { _ in
            buttonDevice.simulateDisconnection(withError: CBMError(.connectionTimeout))
        }
        defer { NotificationCenter.default.removeObserver(observer) }
        var reported: Int?
        delegate.didDisconnect = { _, _, _, _, error in
            reported = (error as NSError?)?.code
            disconnected.fulfill()
        }
        let manager = CBMCentralManagerMock(delegate: delegate, queue: nil)
        wait(for: [disconnected], timeout: 5)
        XCTAssertEqual(reported, CBMError.Code.connectionTimeout.rawValue)
        _ = manager
    }

    func testTimeFollowsTheWallClockSoNothingFoundWithinATimeoutMeansThatLong() {
        let poweredOn = XCTestExpectation(description: "powered on")
        let notYet = XCTestExpectation(description: "the late beacon is not heard yet")
        notYet.isInverted = true
        let found = XCTestExpectation(description: "the late beacon is heard")
        var foundAt: ContinuousClock.Instant?
        let clock = ContinuousClock()
        let start = clock.now
        let delegate = CBMCentralManagerDelegateProxy()
        delegate.didUpdateState = { manager in if manager.state == .poweredOn { poweredOn.fulfill() } }
        delegate.didDiscoverPeripheral = { _, _, advertisementData, _ in
            guard advertisementData[CBMAdvertisementDataLocalNameKey] as? String == "Late", foundAt == nil else {
                return
            }
            foundAt = clock.now
            notYet.fulfill()
            found.fulfill()
        }
        let manager = CBMCentralManagerMock(delegate: delegate, queue: nil)
        wait(for: [poweredOn], timeout: 1)
        manager.scanForPeripherals(withServices: nil)
        // The beacon starts 0.8 s after setUp put it on the air: nothing within 0.4 s...
        wait(for: [notYet], timeout: 0.4)
        // ...and then it is heard, no earlier than 0.8 s of wall-clock time after setUp.
        wait(for: [found], timeout: 3)
        XCTAssertGreaterThanOrEqual(foundAt.map { start.duration(to: $0) } ?? .zero, .milliseconds(700))
    }

    /// `tearDownSimulation()` from a delegate callback ends the simulation as from the test
    /// (in a callback the current bridge is the system's, which used to make it do nothing).
    func testTearingDownFromADelegateCallbackUninstallsTheSystem() throws {
        let system = try XCTUnwrap(SimulatedSystem.current)
        let unknown = XCTestExpectation(description: "unknown")
        let delegate = CBMCentralManagerDelegateProxy()
        delegate.didUpdateState = { manager in
            switch manager.state {
            case .poweredOn: CBMCentralManagerMock.tearDownSimulation()
            case .unknown: unknown.fulfill()
            default: break
            }
        }
        let manager = CBMCentralManagerMock(delegate: delegate, queue: nil)
        wait(for: [unknown], timeout: 2)
        XCTAssertFalse(system.isInstalled)
        XCTAssertNil(SimulatedSystem.current)
        XCTAssertEqual(manager.state, .unknown)
    }
}

/// Resetting CoreBluetoothMock's statics in a `tearDown`, after the simulation was torn down,
/// leaves no simulation installed for the next test (reading them, or setting them to `nil`,
/// used to install one).
final class CoreBluetoothMockStaticsResetXCTests: XCTestCase {
    func testReadingOrClearingTheStaticsWithNoSimulationInstallsNone() {
        CBMCentralManagerMock.tearDownSimulation()
        XCTAssertNil(SimulatedSystem.current)
        CBMCentralManagerMock.simulateStateRestoration = nil
        CBMCentralManagerMock.simulateFeaturesSupport = nil
        XCTAssertNil(CBMCentralManagerMock.simulateStateRestoration)
        XCTAssertNil(CBMCentralManagerMock.simulateFeaturesSupport)
        XCTAssertNil(SimulatedSystem.current)
        // Setting one installs the simulation it needs, as every other static does.
        CBMCentralManagerMock.simulateFeaturesSupport = { _ in false }
        XCTAssertNotNil(SimulatedSystem.current)
        XCTAssertEqual(CBMCentralManagerMock.simulateFeaturesSupport?(.extendedScanAndConnect), false)
        CBMCentralManagerMock.tearDownSimulation()
        XCTAssertNil(SimulatedSystem.current)
    }
}
