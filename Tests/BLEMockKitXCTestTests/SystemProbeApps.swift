import BLECBM
import BLEMockKit
import Foundation

/// The service and characteristic the probe apps and specs share.
enum ProbeService {
    static let service = CBMUUID(string: "7A1E0001-0000-1000-8000-00805F9B34FB")
    static let value = CBMUUID(string: "7A1E0002-0000-1000-8000-00805F9B34FB")
}

/// A sensor spec's delegate: every read of its characteristic answers `value`.
final class ProbeSensorDelegate: CBMPeripheralSpecDelegate {
    let value: Data
    init(value: Data) { self.value = value }

    func peripheral(_ peripheral: CBMPeripheralSpec, didReceiveReadRequestFor characteristic: CBMCharacteristicMock)
        -> Result<Data, any Error>
    { .success(value) }
}

/// A CoreBluetoothMock-style sensor: advertises its name and the probe service at `interval`,
/// and answers reads of its characteristic with `value`.
func probeSensor(
    _ name: String, identifier: UUID, proximity: CBMProximity = .immediate, interval: TimeInterval = 0.05,
    value: Data = Data([0x2A]), retrievable: Bool = false
) -> CBMPeripheralSpec {
    let characteristic = CBMCharacteristicMock(type: ProbeService.value, properties: [.read])
    var builder = CBMPeripheralSpec.simulatePeripheral(identifier: identifier, proximity: proximity)
        .advertising(
            advertisementData: [
                CBMAdvertisementDataLocalNameKey: name,
                CBMAdvertisementDataServiceUUIDsKey: [ProbeService.service],
                CBMAdvertisementDataIsConnectable: true as NSNumber,
            ], withInterval: interval
        )
        .connectable(
            name: name,
            services: [CBMServiceMock(type: ProbeService.service, primary: true, characteristics: characteristic)],
            delegate: ProbeSensorDelegate(value: value))
    if retrievable { builder = builder.allowForRetrieval() }
    return builder.build()
}

/// A central app in plain delegate style: once powered on it scans for the probe service,
/// connects to the first peripheral advertising `target`, discovers, and reads the
/// characteristic. Its manager is made by ``start(queue:)``, wherever the test calls it.
final class ProbeCentralApp: NSObject, CBMCentralManagerDelegate, CBMPeripheralDelegate, @unchecked Sendable {
    // @unchecked Sendable: the stored state is only touched with `lock` held; the callbacks
    // hand out copies.
    private let lock = NSLock()
    private var storedManager: CBMCentralManager?
    private var storedPeripheral: CBMPeripheral?
    private var storedEvents: [String] = []
    private var storedThreads: [String] = []
    let target: String
    /// Called (on the manager's queue) with the value read.
    var onRead: (@Sendable (Data) -> Void)?
    /// Called (on the manager's queue) with each state.
    var onState: (@Sendable (CBMManagerState) -> Void)?

    init(target: String) { self.target = target }

    /// Creates the app's manager, here and now, calling back on `queue`.
    func start(queue: DispatchQueue? = nil) {
        let manager = CBMCentralManager(delegate: self, queue: queue)
        lock.withLock { storedManager = manager }
    }

    var manager: CBMCentralManager? { lock.withLock { storedManager } }
    /// The peripheral it connected to, once discovered.
    var peripheral: CBMPeripheral? { lock.withLock { storedPeripheral } }
    var events: [String] { lock.withLock { storedEvents } }

    private func note(_ event: String) { lock.withLock { storedEvents.append(event) } }

    func centralManagerDidUpdateState(_ central: CBMCentralManager) {
        note("state \(central.state.rawValue)")
        onState?(central.state)
        guard central.state == .poweredOn else { return }
        central.scanForPeripherals(withServices: [ProbeService.service])
    }

    func centralManager(
        _ central: CBMCentralManager, didDiscover peripheral: CBMPeripheral, advertisementData: [String: Any],
        rssi: NSNumber
    ) {
        guard advertisementData[CBMAdvertisementDataLocalNameKey] as? String == target else { return }
        let first = lock.withLock { () -> Bool in
            guard storedPeripheral == nil else { return false }
            storedPeripheral = peripheral
            return true
        }
        guard first else { return }
        note("discovered \(target)")
        central.stopScan()
        peripheral.delegate = self
        central.connect(peripheral)
    }

    func centralManager(_ central: CBMCentralManager, didConnect peripheral: CBMPeripheral) {
        note("connected")
        peripheral.discoverServices([ProbeService.service])
    }

    func centralManager(_ central: CBMCentralManager, didFailToConnect peripheral: CBMPeripheral, error: (any Error)?) {
        note("failed to connect")
    }

    func peripheral(_ peripheral: CBMPeripheral, didDiscoverServices error: (any Error)?) {
        guard let service = peripheral.services?.first(where: { $0.uuid == ProbeService.service }) else { return }
        peripheral.discoverCharacteristics([ProbeService.value], for: service)
    }

    func peripheral(_ peripheral: CBMPeripheral, didDiscoverCharacteristicsFor service: CBMService, error: (any Error)?)
    {
        guard let characteristic = service.characteristics?.first else { return }
        peripheral.readValue(for: characteristic)
    }

    func peripheral(
        _ peripheral: CBMPeripheral, didUpdateValueFor characteristic: CBMCharacteristic, error: (any Error)?
    ) {
        guard let value = characteristic.value else { return }
        note("read \(value.map { String(format: "%02X", $0) }.joined())")
        onRead?(value)
    }
}

/// A peripheral app in plain delegate style: once powered on it publishes the probe service
/// with a static value and advertises `name`. Its manager is made by ``start(queue:)``.
final class ProbePeripheralApp: NSObject, CBMPeripheralManagerDelegate, @unchecked Sendable {
    // @unchecked Sendable: the stored state is only touched with `lock` held.
    private let lock = NSLock()
    private var storedManager: CBMPeripheralManager?
    private var storedEvents: [String] = []
    let name: String
    let value: Data

    init(name: String, value: Data) {
        self.name = name
        self.value = value
    }

    func start(queue: DispatchQueue? = nil) {
        let manager = CBMPeripheralManager(delegate: self, queue: queue)
        lock.withLock { storedManager = manager }
    }

    var manager: CBMPeripheralManager? { lock.withLock { storedManager } }
    var events: [String] { lock.withLock { storedEvents } }

    private func note(_ event: String) { lock.withLock { storedEvents.append(event) } }

    func peripheralManagerDidUpdateState(_ peripheral: CBMPeripheralManager) {
        note("state \(peripheral.state.rawValue)")
        guard peripheral.state == .poweredOn else { return }
        let characteristic = CBMMutableCharacteristic(
            type: ProbeService.value, properties: [.read], value: value, permissions: [.readable])
        let service = CBMMutableService(type: ProbeService.service, primary: true)
        service.characteristics = [characteristic]
        peripheral.add(service)
    }

    func peripheralManager(_ peripheral: CBMPeripheralManager, didAdd service: CBMService, error: (any Error)?) {
        note("added")
        peripheral.startAdvertising([
            CBMAdvertisementDataLocalNameKey: name, CBMAdvertisementDataServiceUUIDsKey: [ProbeService.service],
        ])
    }

    func peripheralManagerDidStartAdvertising(_ peripheral: CBMPeripheralManager, error: (any Error)?) {
        note(error == nil ? "advertising" : "advertising failed")
    }
}
