// swift-format-ignore-file: AlwaysUseLowerCamelCase
// (These names mirror CoreBluetooth's API.)

import BLECBM
import BLECore
import BLEMockKit
import Foundation

// A hybrid smartwatch's companion app, written as an iOS team writes it against CoreBluetooth
// for background use: a central manager with a restore identifier, a connect that never times
// out to wait for the watch to come back in range, a subscription to the watch's status, and
// state restoration (`willRestoreState` sets the restored peripheral's delegate; on `poweredOn`
// the app rediscovers only what the restored peripheral lacks).

/// The watch's GATT database, as the companion app knows it.
enum WatchProfile {
    static let service = CBMUUID(string: "FEE0")
    static let status = CBMUUID(string: "FEE1")
    static let control = CBMUUID(string: "FEE2")
}

/// The companion app. Its delegate callbacks run on its queue (the main queue, or its own serial
/// queue); what it heard is kept under a lock so a test reads it from anywhere.
final class WatchCompanionApp: NSObject, CBMCentralManagerDelegate, CBMPeripheralDelegate, @unchecked Sendable {
    // @unchecked Sendable: `manager` is set once in `init`; `watch` and `control` are only
    // touched on `queue`; `heard` is only touched with `lock` held.
    private(set) var manager: CBMCentralManager!
    /// The queue the delegate callbacks run on (the main queue for `nil`).
    let queue: DispatchQueue?
    /// The watch's identifier, as the app persists it (in `UserDefaults`, on a device).
    let knownWatch: UUID?
    private var watch: CBMPeripheral?
    private var control: CBMCharacteristic?
    private let lock = NSLock()
    private var heard: [String] = []

    /// Creates the app (as a launch or a relaunch does): its manager, with `restoreIdentifier`
    /// (none for `nil`).
    init(restoreIdentifier: String?, queue: DispatchQueue? = nil, knownWatch: UUID? = nil) {
        self.queue = queue
        self.knownWatch = knownWatch
        super.init()
        let options = restoreIdentifier.map { [CBMCentralManagerOptionRestoreIdentifierKey: $0] as [String: Any] }
        manager = CBMCentralManager(delegate: self, queue: queue, options: options)
    }

    /// What the app heard, oldest first.
    var calls: [String] {
        lock.lock()
        defer { lock.unlock() }
        return heard
    }

    /// Whether the app heard `call`.
    func heard(_ call: String) -> Bool { calls.contains(call) }

    /// Whether the app heard a call starting with `prefix`.
    func heard(startingWith prefix: String) -> Bool { calls.contains { $0.hasPrefix(prefix) } }

    private func note(_ call: String) {
        lock.lock()
        heard.append(call)
        lock.unlock()
    }

    /// The watch object the app holds, read on the app's queue.
    var watchPeripheral: CBMPeripheral? { onQueue { watch } }

    /// Runs `body` on the app's queue (as the app's own code would), returning its result. (The
    /// tests call it on the main actor: for an app on the main queue, that is its queue.)
    func onQueue<T>(_ body: () -> T) -> T {
        if let queue { return queue.sync(execute: body) }
        return body()
    }

    /// The user sends a command to the watch (a write with response on the control point).
    func send(_ command: [UInt8]) {
        onQueue {
            guard let watch, let control else { return note("send: not ready") }
            watch.writeValue(Data(command), for: control, type: .withResponse)
        }
    }

    // MARK: CBMCentralManagerDelegate

    func centralManager(_ central: CBMCentralManager, willRestoreState dict: [String: Any]) {
        let peripherals = dict[CBMCentralManagerRestoredStatePeripheralsKey] as? [CBMPeripheral] ?? []
        for peripheral in peripherals {
            peripheral.delegate = self
            watch = peripheral
            let characteristics = peripheral.services?.flatMap { $0.characteristics ?? [] } ?? []
            control = characteristics.first { $0.uuid == WatchProfile.control }
            note(
                "restored \(peripheral.state) services=\(peripheral.services?.count ?? 0) "
                    + "notifying=\(characteristics.filter(\.isNotifying).map(\.uuid.uuidString))")
        }
        if peripherals.isEmpty { note("restored nothing") }
        if let services = dict[CBMCentralManagerRestoredStateScanServicesKey] as? [CBMUUID] {
            note("restored scan \(services.map(\.uuidString))")
        }
    }

    func centralManagerDidUpdateState(_ central: CBMCentralManager) {
        note("state \(central.state)")
        guard central.state == .poweredOn else { return }
        if let watch {
            switch watch.state {
            case .connected: rediscoverWhatIsMissing(on: watch)
            // The connect the system kept still stands: the app waits for its `didConnect`.
            case .connecting: break
            default: central.connect(watch)
            }
        } else if let knownWatch,
            let retrieved = central.retrievePeripherals(withIdentifiers: [knownWatch]).first
        {
            // Not restored (another restore identifier, a force quit): the app connects again.
            watch = retrieved
            retrieved.delegate = self
            note("retrieved \(retrieved.state)")
            central.connect(retrieved)
        } else {
            central.scanForPeripherals(withServices: [WatchProfile.service])
        }
    }

    func centralManager(
        _ central: CBMCentralManager, didDiscover peripheral: CBMPeripheral, advertisementData: [String: Any],
        rssi RSSI: NSNumber
    ) {
        guard watch == nil else { return }
        watch = peripheral
        peripheral.delegate = self
        central.stopScan()
        central.connect(peripheral)
    }

    func centralManager(_ central: CBMCentralManager, didConnect peripheral: CBMPeripheral) {
        note("connected")
        rediscoverWhatIsMissing(on: peripheral)
    }

    func centralManager(_ central: CBMCentralManager, didFailToConnect peripheral: CBMPeripheral, error: (any Error)?) {
        note("failed to connect \((error as? CBMError)?.code.rawValue ?? -1)")
        central.connect(peripheral)
    }

    func centralManager(
        _ central: CBMCentralManager, didDisconnectPeripheral peripheral: CBMPeripheral, error: (any Error)?
    ) {
        note("disconnected")
        control = nil
        // The usual way to wait for the watch to come back: a connect that never times out.
        central.connect(peripheral)
    }

    /// Discovers what the peripheral lacks: nothing when it was restored with its service, its
    /// characteristics and its subscription.
    private func rediscoverWhatIsMissing(on peripheral: CBMPeripheral) {
        guard let service = peripheral.services?.first(where: { $0.uuid == WatchProfile.service }) else {
            note("discovering services")
            return peripheral.discoverServices([WatchProfile.service])
        }
        guard let characteristics = service.characteristics, !characteristics.isEmpty else {
            note("discovering characteristics")
            return peripheral.discoverCharacteristics([WatchProfile.status, WatchProfile.control], for: service)
        }
        subscribe(peripheral, characteristics)
    }

    private func subscribe(_ peripheral: CBMPeripheral, _ characteristics: [CBMCharacteristic]) {
        control = characteristics.first { $0.uuid == WatchProfile.control }
        guard let status = characteristics.first(where: { $0.uuid == WatchProfile.status }) else { return }
        if status.isNotifying {
            note("ready")
        } else {
            peripheral.setNotifyValue(true, for: status)
        }
    }

    // MARK: CBMPeripheralDelegate

    func peripheral(_ peripheral: CBMPeripheral, didDiscoverServices error: (any Error)?) {
        rediscoverWhatIsMissing(on: peripheral)
    }

    func peripheral(
        _ peripheral: CBMPeripheral, didDiscoverCharacteristicsFor service: CBMService, error: (any Error)?
    ) {
        subscribe(peripheral, service.characteristics ?? [])
    }

    func peripheral(
        _ peripheral: CBMPeripheral, didUpdateNotificationStateFor characteristic: CBMCharacteristic,
        error: (any Error)?
    ) {
        note("notifying \(characteristic.isNotifying)")
        if characteristic.isNotifying { note("ready") }
    }

    func peripheral(
        _ peripheral: CBMPeripheral, didUpdateValueFor characteristic: CBMCharacteristic, error: (any Error)?
    ) {
        note("value \(Array(characteristic.value ?? Data()))")
    }

    func peripheral(
        _ peripheral: CBMPeripheral, didWriteValueFor characteristic: CBMCharacteristic, error: (any Error)?
    ) {
        note("wrote \((error as? CBMATTError)?.code.rawValue ?? (error == nil ? 0 : -1))")
    }
}

/// The watch (a simulated device): a status it notifies, a control point it takes writes on.
enum SimulatedWatch {
    static let status = BluetoothUUID("FEE1")
    static let control = BluetoothUUID("FEE2")

    /// Publishes the watch's service on `bridge` and starts advertising; returns the watch and
    /// its status characteristic.
    static func make(on bridge: MockBLEBridge, proximity: Proximity? = nil) async throws
        -> (MockPeripheralManager, LocalCharacteristic)
    {
        let watch = MockPeripheralManager(configuration: .init(name: "Watch"), bridge: bridge)
        if let proximity { await watch.simulateProximityChange(proximity) }
        let local = try await watch.add(
            GATTService(
                uuid: "FEE0",
                characteristics: [
                    GATTCharacteristic(uuid: status, properties: .notify, permissions: .readable),
                    GATTCharacteristic(uuid: control, properties: .write, permissions: .writeable),
                ]))
        try await watch.startAdvertising(AdvertisementData(localName: "Watch", serviceUUIDs: ["FEE0"]))
        return (watch, local.characteristics[0])
    }
}
