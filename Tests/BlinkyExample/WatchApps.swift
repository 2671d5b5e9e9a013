// swift-format-ignore-file: AlwaysUseLowerCamelCase
// (These names mirror CoreBluetooth's API.)

import Foundation

// Two apps written in plain CoreBluetooth delegate style, as many apps are: each creates its
// manager on a queue of its own, inside `queue.async`, and keeps its state on that queue. The
// watch app is the peripheral role (a hybrid watch's file-transfer service: a status it notifies,
// a command characteristic, a static firmware version); the companion app is the central role
// (finds the watch, subscribes to the status, sends commands, reads the version). Neither knows
// about the kit: they compile against CoreBluetooth's names through CoreBluetoothTypeAliases.swift.

/// The watch's service and characteristics.
enum WatchService {
    static let service = CBUUID(string: "8E400001-B5A3-F393-E0A9-E50E24DCCA9E")
    static let status = CBUUID(string: "8E400002-B5A3-F393-E0A9-E50E24DCCA9E")
    static let command = CBUUID(string: "8E400003-B5A3-F393-E0A9-E50E24DCCA9E")
    static let version = CBUUID(string: "8E400004-B5A3-F393-E0A9-E50E24DCCA9E")
}

/// The watch: publishes its service, advertises, counts the commands it receives and notifies
/// the count.
final class WatchPeripheralApp: NSObject, CBPeripheralManagerDelegate {
    private let queue = DispatchQueue(label: "watch.peripheral")
    private var manager: CBPeripheralManager?
    private var status: CBMutableCharacteristic?
    private var commands: [UInt8] = []
    private var pending: [Data] = []

    override init() {
        super.init()
        queue.async {
            self.manager = CBPeripheralManager(delegate: self, queue: self.queue)
        }
    }

    /// Whether its manager exists yet.
    var hasManager: Bool { queue.sync { manager != nil } }

    /// The commands received, in order.
    var receivedCommands: [UInt8] { queue.sync { commands } }

    func peripheralManagerDidUpdateState(_ peripheral: CBPeripheralManager) {
        guard peripheral.state == .poweredOn else { return }
        let status = CBMutableCharacteristic(
            type: WatchService.status, properties: [.read, .notify], value: nil, permissions: [.readable])
        let command = CBMutableCharacteristic(
            type: WatchService.command, properties: [.write], value: nil, permissions: [.writeable])
        let version = CBMutableCharacteristic(
            type: WatchService.version, properties: [.read], value: Data([2, 7]), permissions: [.readable])
        let service = CBMutableService(type: WatchService.service, primary: true)
        service.characteristics = [status, command, version]
        self.status = status
        peripheral.add(service)
    }

    func peripheralManager(_ peripheral: CBPeripheralManager, didAdd service: CBService, error: Error?) {
        guard error == nil else { return }
        peripheral.startAdvertising([
            CBAdvertisementDataLocalNameKey: "Watch", CBAdvertisementDataServiceUUIDsKey: [WatchService.service],
        ])
    }

    func peripheralManager(_ peripheral: CBPeripheralManager, didReceiveRead request: CBATTRequest) {
        request.value = Data([UInt8(commands.count)])
        peripheral.respond(to: request, withResult: .success)
    }

    func peripheralManager(_ peripheral: CBPeripheralManager, didReceiveWrite requests: [CBATTRequest]) {
        for request in requests {
            commands.append(request.value?.first ?? 0)
        }
        peripheral.respond(to: requests[0], withResult: .success)
        notify(Data([UInt8(commands.count)]))
    }

    func peripheralManagerIsReady(toUpdateSubscribers peripheral: CBPeripheralManager) {
        let waiting = pending
        pending = []
        for value in waiting { notify(value) }
    }

    private func notify(_ value: Data) {
        guard let manager, let status else { return }
        if !manager.updateValue(value, for: status, onSubscribedCentrals: nil) { pending.append(value) }
    }
}

/// The companion: finds the watch, subscribes to its status, sends `commandCount` commands (one
/// after each status notification), then reads the firmware version.
final class WatchCompanionApp: NSObject, CBCentralManagerDelegate, CBPeripheralDelegate {
    private let queue = DispatchQueue(label: "watch.companion")
    private let commandCount: Int
    private var central: CBCentralManager?
    private var watch: CBPeripheral?
    private var commandCharacteristic: CBCharacteristic?
    private var versionCharacteristic: CBCharacteristic?
    private var statuses: [UInt8] = []
    private var version: Data?
    private let onFinished: (() -> Void)?

    /// Creates the app, which starts on its own queue; `onFinished` runs there once the version
    /// is read.
    init(commandCount: Int, onFinished: (() -> Void)? = nil) {
        self.commandCount = commandCount
        self.onFinished = onFinished
        super.init()
        queue.async {
            self.central = CBCentralManager(delegate: self, queue: self.queue)
        }
    }

    /// Whether its manager exists yet.
    var hasManager: Bool { queue.sync { central != nil } }

    /// The statuses the watch notified, in order.
    var notifiedStatuses: [UInt8] { queue.sync { statuses } }

    /// The firmware version, once read.
    var firmwareVersion: Data? { queue.sync { version } }

    /// Its manager's state, once it has one.
    var managerState: CBManagerState? { queue.sync { central?.state } }

    func centralManagerDidUpdateState(_ central: CBCentralManager) {
        guard central.state == .poweredOn else { return }
        central.scanForPeripherals(withServices: [WatchService.service], options: nil)
    }

    func centralManager(
        _ central: CBCentralManager, didDiscover peripheral: CBPeripheral, advertisementData: [String: Any],
        rssi RSSI: NSNumber
    ) {
        guard watch == nil else { return }
        central.stopScan()
        watch = peripheral
        peripheral.delegate = self
        central.connect(peripheral, options: nil)
    }

    func centralManager(_ central: CBCentralManager, didConnect peripheral: CBPeripheral) {
        peripheral.discoverServices([WatchService.service])
    }

    func peripheral(_ peripheral: CBPeripheral, didDiscoverServices error: Error?) {
        guard let service = peripheral.services?.first else { return }
        peripheral.discoverCharacteristics(nil, for: service)
    }

    func peripheral(_ peripheral: CBPeripheral, didDiscoverCharacteristicsFor service: CBService, error: Error?) {
        for characteristic in service.characteristics ?? [] {
            switch characteristic.uuid {
            case WatchService.status: peripheral.setNotifyValue(true, for: characteristic)
            case WatchService.command: commandCharacteristic = characteristic
            case WatchService.version: versionCharacteristic = characteristic
            default: break
            }
        }
    }

    func peripheral(
        _ peripheral: CBPeripheral, didUpdateNotificationStateFor characteristic: CBCharacteristic, error: Error?
    ) {
        guard characteristic.isNotifying else { return }
        sendNextCommand(peripheral)
    }

    func peripheral(_ peripheral: CBPeripheral, didUpdateValueFor characteristic: CBCharacteristic, error: Error?) {
        switch characteristic.uuid {
        case WatchService.status:
            statuses.append(characteristic.value?.first ?? 0)
            if statuses.count < commandCount {
                sendNextCommand(peripheral)
            } else if let versionCharacteristic {
                peripheral.readValue(for: versionCharacteristic)
            }
        case WatchService.version:
            version = characteristic.value
            onFinished?()
        default:
            break
        }
    }

    private func sendNextCommand(_ peripheral: CBPeripheral) {
        guard let commandCharacteristic else { return }
        peripheral.writeValue(Data([UInt8(statuses.count + 1)]), for: commandCharacteristic, type: .withResponse)
    }
}
