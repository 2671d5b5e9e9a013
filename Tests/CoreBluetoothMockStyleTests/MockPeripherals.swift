// swift-format-ignore-file
// (Kept as such definitions are written for CoreBluetoothMock.)
// Mock definitions written in CoreBluetoothMock's style (its builder, spec delegate and
// attribute mocks). The only change from a CoreBluetoothMock project is the import.
import BLECBM
import Foundation

extension CBMUUID {
    static let nordicBlinkyService = CBMUUID(string: "00001523-1212-EFDE-1523-785FEABCD123")
    static let buttonCharacteristic = CBMUUID(string: "00001524-1212-EFDE-1523-785FEABCD123")
    static let ledCharacteristic = CBMUUID(string: "00001525-1212-EFDE-1523-785FEABCD123")

    static let heartRateService = CBMUUID(string: "180D")
    static let heartRateMeasurement = CBMUUID(string: "2A37")
    static let bodySensorLocation = CBMUUID(string: "2A38")

    static let beaconService = CBMUUID(string: "FEAA")
}

extension CBMCharacteristicMock {
    static let buttonCharacteristic = CBMCharacteristicMock(
        type: .buttonCharacteristic,
        properties: [.notify, .read],
        descriptors: CBMClientCharacteristicConfigurationDescriptorMock()
    )
    static let ledCharacteristic = CBMCharacteristicMock(
        type: .ledCharacteristic,
        properties: [.write, .read]
    )
    static let heartRateMeasurement = CBMCharacteristicMock(
        type: .heartRateMeasurement,
        properties: [.notify],
        descriptors: CBMCCCDescriptorMock()
    )
    static let bodySensorLocation = CBMCharacteristicMock(
        type: .bodySensorLocation,
        properties: [.read]
    )
}

extension CBMServiceMock {
    static let blinkyService = CBMServiceMock(
        type: .nordicBlinkyService, primary: true,
        characteristics: .buttonCharacteristic, .ledCharacteristic
    )
    static let heartRateService = CBMServiceMock(
        type: .heartRateService, primary: true,
        characteristics: .heartRateMeasurement, .bodySensorLocation
    )
}

/// Answers the Blinky's requests: the LED and the button as the delegate keeps them.
class BlinkyDelegate: CBMPeripheralSpecDelegate {
    private let lock = NSLock()
    private var ledEnabled = false
    private var buttonPressed = true
    /// How many times a spec with this delegate was reset, by any test.
    static var resets: Int {
        resetLock.lock()
        defer { resetLock.unlock() }
        return resetCount
    }
    private static let resetLock = NSLock()
    private static var resetCount = 0

    func reset() {
        lock.lock()
        ledEnabled = false
        lock.unlock()
        BlinkyDelegate.resetLock.lock()
        BlinkyDelegate.resetCount += 1
        BlinkyDelegate.resetLock.unlock()
    }

    func peripheral(_ peripheral: CBMPeripheralSpec,
                    didReceiveReadRequestFor characteristic: CBMCharacteristicMock) -> Result<Data, Error> {
        lock.lock()
        defer { lock.unlock() }
        if characteristic.uuid == .ledCharacteristic {
            return .success(Data([ledEnabled ? 0x01 : 0x00]))
        }
        return .success(Data([buttonPressed ? 0x01 : 0x00]))
    }

    func peripheral(_ peripheral: CBMPeripheralSpec,
                    didReceiveWriteRequestFor characteristic: CBMCharacteristicMock,
                    data: Data) -> Result<Void, Error> {
        guard characteristic.uuid == .ledCharacteristic, data.count == 1 else {
            return .failure(CBMATTError(.invalidAttributeValueLength))
        }
        lock.lock()
        ledEnabled = data[0] == 0x01
        lock.unlock()
        return .success(())
    }
}

/// Answers the heart-rate monitor's reads: the sensor is on the chest.
class HeartRateDelegate: CBMPeripheralSpecDelegate {
    func peripheral(_ peripheral: CBMPeripheralSpec,
                    didReceiveReadRequestFor characteristic: CBMCharacteristicMock) -> Result<Data, Error> {
        if characteristic.uuid == .bodySensorLocation {
            return .success(Data([0x01]))
        }
        return .failure(CBMATTError(.readNotPermitted))
    }
}

let blinky = CBMPeripheralSpec
    .simulatePeripheral(proximity: .near)
    .advertising(
        advertisementData: [
            CBMAdvertisementDataLocalNameKey: "nRF Blinky",
            CBMAdvertisementDataServiceUUIDsKey: [CBMUUID.nordicBlinkyService],
            CBMAdvertisementDataIsConnectable: true as NSNumber,
        ],
        withInterval: 0.250,
        alsoWhenConnected: false)
    .connectable(
        name: "nRF Blinky",
        services: [.blinkyService],
        delegate: BlinkyDelegate(),
        connectionInterval: 0.150,
        mtu: 23)
    .build()

let heartRateMonitor = CBMPeripheralSpec
    .simulatePeripheral(proximity: .far)
    .advertising(
        advertisementData: [
            CBMAdvertisementDataLocalNameKey: "Heart Rate",
            CBMAdvertisementDataServiceUUIDsKey: [CBMUUID.heartRateService],
        ],
        withInterval: 0.100)
    .connectable(
        name: "Polar H10",
        services: [.heartRateService],
        delegate: HeartRateDelegate(),
        mtu: 185)
    .allowForRetrieval()
    .build()

/// A beacon with two advertising sets, the first after a delay.
let beacon = CBMPeripheralSpec
    .simulatePeripheral(proximity: .immediate)
    .advertising(
        advertisementData: [
            CBMAdvertisementDataLocalNameKey: "Beacon",
            CBMAdvertisementDataServiceUUIDsKey: [CBMUUID.beaconService],
            CBMAdvertisementDataIsConnectable: false as NSNumber,
        ],
        withInterval: 1.0,
        delay: 2.0)
    .advertising(
        advertisementData: [
            CBMAdvertisementDataServiceDataKey: [CBMUUID.beaconService: Data([0x10, 0x20])],
            CBMAdvertisementDataIsConnectable: false as NSNumber,
        ],
        withInterval: 5.0)
    .build()

/// Names CoreBluetoothMock's typealias files use for connection options and PSMs.
let connectOptions: [String: Any] = [
    CBMConnectPeripheralOptionStartDelayKey: 0 as NSNumber,
    CBMConnectPeripheralOptionRequiresANCS: false as NSNumber,
    CBMConnectPeripheralOptionEnableAutoReconnect: false as NSNumber,
]
let examplePSM: CBML2CAPPSM = 0x0080
