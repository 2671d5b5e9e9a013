// swift-format-ignore-file: AlwaysUseLowerCamelCase
// (These names mirror CoreBluetooth's API.)

import Foundation

// A hybrid smartwatch and its phone companion, written as such teams write CoreBluetooth code:
// delegate style, each app with a serial queue of its own on which it creates its manager (in
// `queue.async`) and keeps its state. The companion connects with a timeout of its own (a
// `DispatchWorkItem` on its queue, as CoreBluetooth's connection attempts never time out),
// reconnects by identifier, reads RSSI, streams a file with writes without response paced by
// `canSendWriteWithoutResponse`, and takes notifications. The watch is a peripheral-manager app.
// Neither knows about the kit: they compile against CoreBluetooth's names.

/// The hybrid watch's service and characteristics.
enum HybridWatchService {
    static let service = CBUUID(string: "5A7E0001-9C2B-4F1A-8D3E-6B0F1C2D3E4F")
    /// Steps and alerts, notified.
    static let activity = CBUUID(string: "5A7E0002-9C2B-4F1A-8D3E-6B0F1C2D3E4F")
    /// File data (watch faces), written without response.
    static let file = CBUUID(string: "5A7E0003-9C2B-4F1A-8D3E-6B0F1C2D3E4F")
    /// The firmware version, static.
    static let firmware = CBUUID(string: "5A7E0004-9C2B-4F1A-8D3E-6B0F1C2D3E4F")
}

/// The phone companion (central).
final class HybridWatchCompanion: NSObject, CBCentralManagerDelegate, CBPeripheralDelegate {
    /// The app's Bluetooth queue: its state is read and written only there.
    let queue = DispatchQueue(label: "companion.bluetooth")
    private let connectTimeout: TimeInterval
    private var central: CBCentralManager?
    private var watch: CBPeripheral?
    private var watchIdentifier: UUID?
    private var pendingTimeout: DispatchWorkItem?
    private var fileCharacteristic: CBCharacteristic?
    private var activityCharacteristic: CBCharacteristic?
    private var outgoing: [UInt8] = []
    private var journal = AppJournal()

    /// What happened, in order (on `queue`).
    var events: [String] { journal.events }
    /// The activity values notified, in order (on `queue`).
    private(set) var activity: [Data] = []
    /// The last RSSI read (on `queue`).
    private(set) var lastRSSI: Int?
    /// How many times a write without response waited for `peripheralIsReady` (on `queue`).
    private(set) var pausesForReadiness = 0
    /// The length of each write without response sent (on `queue`).
    private(set) var chunkLengths: [Int] = []

    /// Starts the app: its manager is made on its queue.
    init(connectTimeout: TimeInterval = 5) {
        self.connectTimeout = connectTimeout
        super.init()
        queue.async {
            self.central = CBCentralManager(delegate: self, queue: self.queue)
        }
    }

    /// Runs `body` on the app's queue once `event` has happened `times` times (at once if it has).
    func when(_ event: String, times: Int = 1, _ body: @escaping () -> Void) {
        queue.async { self.journal.when(event, times: times, body)?() }
    }

    private func note(_ event: String) {
        for body in journal.note(event) { body() }
    }

    // MARK: What the user (or the rest of the app) asks

    /// Looks for a watch and connects to the first found.
    func findWatch() {
        queue.async {
            guard let central = self.central, central.state == .poweredOn else { return self.note("not powered on") }
            central.scanForPeripherals(withServices: [HybridWatchService.service], options: nil)
        }
    }

    /// Connects to the watch it knew, by identifier (after a disconnection, or a relaunch).
    func reconnect(to identifier: UUID? = nil) {
        queue.async {
            guard let central = self.central, let identifier = identifier ?? self.watchIdentifier else { return }
            guard let watch = central.retrievePeripherals(withIdentifiers: [identifier]).first else {
                return self.note("not retrieved")
            }
            self.note("retrieved")
            self.connect(watch)
        }
    }

    func readRSSI() { queue.async { self.watch?.readRSSI() } }

    /// Sends `file` to the watch in writes without response, as fast as the link takes them.
    func send(file: [UInt8]) {
        queue.async {
            self.outgoing = file
            self.sendMore()
        }
    }

    /// Cancels the connection to the watch.
    func disconnect() {
        queue.async {
            guard let watch = self.watch else { return }
            self.central?.cancelPeripheralConnection(watch)
        }
    }

    /// The longest write without response the link takes now.
    var maximumWriteWithoutResponse: Int? {
        queue.sync { watch?.maximumWriteValueLength(for: .withoutResponse) }
    }

    var managerState: CBManagerState? { queue.sync { central?.state } }

    // MARK: Connecting, with a timeout of the app's own

    private func connect(_ peripheral: CBPeripheral) {
        watch = peripheral
        watchIdentifier = peripheral.identifier
        peripheral.delegate = self
        central?.connect(peripheral, options: nil)
        let timeout = DispatchWorkItem { [weak self] in self?.connectionTimedOut() }
        pendingTimeout = timeout
        queue.asyncAfter(deadline: .now() + connectTimeout, execute: timeout)
    }

    private func connectionTimedOut() {
        pendingTimeout = nil
        guard let watch, watch.state != .connected else { return }
        note("connect timed out")
        central?.cancelPeripheralConnection(watch)
    }

    // MARK: CBCentralManagerDelegate

    func centralManagerDidUpdateState(_ central: CBCentralManager) {
        switch central.state {
        case .poweredOn:
            note("powered on")
            // Back from Bluetooth off: the old objects are gone; find the watch again by identifier.
            if watchIdentifier != nil, watch == nil { reconnect() }
        case .poweredOff:
            note("powered off")
            // The peripheral objects are invalid now, and no callback ends their operations.
            pendingTimeout?.cancel()
            pendingTimeout = nil
            watch = nil
            fileCharacteristic = nil
            activityCharacteristic = nil
            outgoing = []
        default:
            note("state \(central.state.rawValue)")
        }
    }

    func centralManager(
        _ central: CBCentralManager, didDiscover peripheral: CBPeripheral, advertisementData: [String: Any],
        rssi RSSI: NSNumber
    ) {
        guard watch == nil else { return }
        central.stopScan()
        note("discovered")
        connect(peripheral)
    }

    func centralManager(_ central: CBCentralManager, didConnect peripheral: CBPeripheral) {
        pendingTimeout?.cancel()
        pendingTimeout = nil
        note("connected")
        peripheral.discoverServices([HybridWatchService.service])
    }

    func centralManager(_ central: CBCentralManager, didFailToConnect peripheral: CBPeripheral, error: Error?) {
        pendingTimeout?.cancel()
        pendingTimeout = nil
        note("failed to connect")
    }

    func centralManager(_ central: CBCentralManager, didDisconnectPeripheral peripheral: CBPeripheral, error: Error?) {
        fileCharacteristic = nil
        activityCharacteristic = nil
        note(error == nil ? "disconnected" : "disconnected with error \((error! as NSError).code)")
    }

    // MARK: CBPeripheralDelegate

    func peripheral(_ peripheral: CBPeripheral, didDiscoverServices error: Error?) {
        guard let service = peripheral.services?.first(where: { $0.uuid == HybridWatchService.service }) else { return }
        peripheral.discoverCharacteristics(nil, for: service)
    }

    func peripheral(_ peripheral: CBPeripheral, didDiscoverCharacteristicsFor service: CBService, error: Error?) {
        for characteristic in service.characteristics ?? [] {
            switch characteristic.uuid {
            case HybridWatchService.activity:
                activityCharacteristic = characteristic
                peripheral.setNotifyValue(true, for: characteristic)
            case HybridWatchService.file: fileCharacteristic = characteristic
            default: break
            }
        }
    }

    func peripheral(
        _ peripheral: CBPeripheral, didUpdateNotificationStateFor characteristic: CBCharacteristic, error: Error?
    ) {
        if characteristic.isNotifying { note("ready") }
    }

    func peripheral(_ peripheral: CBPeripheral, didUpdateValueFor characteristic: CBCharacteristic, error: Error?) {
        guard characteristic.uuid == HybridWatchService.activity, let value = characteristic.value else { return }
        activity.append(value)
        note("activity \(activity.count)")
    }

    func peripheral(_ peripheral: CBPeripheral, didReadRSSI RSSI: NSNumber, error: Error?) {
        guard error == nil else { return note("rssi failed") }
        lastRSSI = RSSI.intValue
        note("rssi")
    }

    func peripheralIsReady(toSendWriteWithoutResponse peripheral: CBPeripheral) {
        sendMore()
    }

    private func sendMore() {
        guard let watch, let fileCharacteristic, !outgoing.isEmpty else { return }
        let chunk = watch.maximumWriteValueLength(for: .withoutResponse)
        while !outgoing.isEmpty {
            guard watch.canSendWriteWithoutResponse else {
                pausesForReadiness += 1
                return
            }
            let part = outgoing.prefix(chunk)
            watch.writeValue(Data(part), for: fileCharacteristic, type: .withoutResponse)
            chunkLengths.append(part.count)
            outgoing.removeFirst(part.count)
        }
        note("file sent")
    }
}

/// The watch (peripheral): publishes its service, advertises, collects file data, and notifies
/// activity on request.
final class HybridWatch: NSObject, CBPeripheralManagerDelegate {
    let queue = DispatchQueue(label: "watch.bluetooth")
    private var manager: CBPeripheralManager?
    private var activityCharacteristic: CBMutableCharacteristic?
    private var toNotify: [Data] = []
    private var journal = AppJournal()
    /// What happened, in order (on `queue`).
    var events: [String] { journal.events }
    /// The file bytes received, in order (on `queue`).
    private(set) var received: [UInt8] = []
    /// How many updates waited for `peripheralManagerIsReady` (on `queue`).
    private(set) var pausesForReadiness = 0

    override init() {
        super.init()
        queue.async {
            self.manager = CBPeripheralManager(delegate: self, queue: self.queue)
        }
    }

    /// Runs `body` on the watch's queue once `event` has happened `times` times (at once if it has).
    func when(_ event: String, times: Int = 1, _ body: @escaping () -> Void) {
        queue.async { self.journal.when(event, times: times, body)?() }
    }

    private func note(_ event: String) {
        for body in journal.note(event) { body() }
    }

    /// Notifies `count` activity values (a big-endian sequence number each), as fast as the
    /// link takes them.
    func notifyActivity(count: Int) {
        queue.async {
            self.toNotify += (0..<count).map { Data([UInt8($0 >> 8), UInt8($0 & 0xFF)]) }
            self.notifyMore()
        }
    }

    func peripheralManagerDidUpdateState(_ peripheral: CBPeripheralManager) {
        guard peripheral.state == .poweredOn else { return note("state \(peripheral.state.rawValue)") }
        let activity = CBMutableCharacteristic(
            type: HybridWatchService.activity, properties: [.notify], value: nil, permissions: [.readable])
        let file = CBMutableCharacteristic(
            type: HybridWatchService.file, properties: [.writeWithoutResponse], value: nil,
            permissions: [.writeable])
        let firmware = CBMutableCharacteristic(
            type: HybridWatchService.firmware, properties: [.read], value: Data([3, 1]), permissions: [.readable])
        let service = CBMutableService(type: HybridWatchService.service, primary: true)
        service.characteristics = [activity, file, firmware]
        activityCharacteristic = activity
        peripheral.add(service)
    }

    func peripheralManager(_ peripheral: CBPeripheralManager, didAdd service: CBService, error: Error?) {
        guard error == nil else { return note("add failed") }
        peripheral.startAdvertising([
            CBAdvertisementDataLocalNameKey: "Hybrid", CBAdvertisementDataServiceUUIDsKey: [HybridWatchService.service],
        ])
    }

    func peripheralManagerDidStartAdvertising(_ peripheral: CBPeripheralManager, error: Error?) {
        note(error == nil ? "advertising" : "advertising failed")
    }

    func peripheralManager(
        _ peripheral: CBPeripheralManager, central: CBCentral, didSubscribeTo characteristic: CBCharacteristic
    ) {
        note("subscribed")
    }

    func peripheralManager(_ peripheral: CBPeripheralManager, didReceiveWrite requests: [CBATTRequest]) {
        for request in requests { received += request.value ?? Data() }
        note("received \(received.count)")
    }

    func peripheralManagerIsReady(toUpdateSubscribers peripheral: CBPeripheralManager) {
        notifyMore()
    }

    private func notifyMore() {
        guard let manager, let activityCharacteristic else { return }
        while let value = toNotify.first {
            guard manager.updateValue(value, for: activityCharacteristic, onSubscribedCentrals: nil) else {
                pausesForReadiness += 1
                return
            }
            toNotify.removeFirst()
        }
    }
}

/// What an app noted happening, in order, and the bodies waiting for an event to have happened
/// a number of times (used on the app's queue only).
struct AppJournal {
    private(set) var events: [String] = []
    private var observers: [(event: String, times: Int, body: () -> Void)] = []

    /// Notes `event`; returns the bodies now due, to run in order.
    mutating func note(_ event: String) -> [() -> Void] {
        events.append(event)
        guard observers.contains(where: { $0.event == event }) else { return [] }
        let count = events.filter { $0 == event }.count
        let due = observers.filter { $0.event == event && $0.times <= count }
        observers.removeAll { $0.event == event && $0.times <= count }
        return due.map(\.body)
    }

    /// Keeps `body` until `event` has happened `times` times; returns it instead when it has.
    mutating func when(_ event: String, times: Int, _ body: @escaping () -> Void) -> (() -> Void)? {
        if events.filter({ $0 == event }).count >= times { return body }
        observers.append((event, times, body))
        return nil
    }
}
