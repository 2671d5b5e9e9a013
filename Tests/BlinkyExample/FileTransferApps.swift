// swift-format-ignore-file: AlwaysUseLowerCamelCase
// (These names mirror CoreBluetooth's API.)

import Foundation

// A file transfer as a smartwatch companion app does it, in plain CoreBluetooth delegate style:
// the phone streams a file to the watch with writes without response, as fast as the link takes
// them (`canSendWriteWithoutResponse`, `peripheralIsReady(toSendWriteWithoutResponse:)`), in
// chunks of `maximumWriteValueLength(for: .withoutResponse)`; the watch reassembles it and
// notifies how many bytes it holds and their checksum, as notifications the link takes
// (`updateValue` returning false, `peripheralManagerIsReady(toUpdateSubscribers:)`). Each app
// creates its manager on its own queue, in `queue.async`. Neither knows about the kit.

/// The transfer service.
enum TransferService {
    static let service = CBUUID(string: "8E410001-B5A3-F393-E0A9-E50E24DCCA9E")
    /// Written with response: `[1, size (UInt32, little-endian)]` starts a transfer; `[3]` asks
    /// where to resume it (after the link dropped).
    static let control = CBUUID(string: "8E410002-B5A3-F393-E0A9-E50E24DCCA9E")
    /// Written without response: the file's bytes, in order.
    static let data = CBUUID(string: "8E410003-B5A3-F393-E0A9-E50E24DCCA9E")
    /// Notified: `[2, bytes received (UInt32), checksum (UInt32)]` (progress, then completion);
    /// `[4, …]` the same, in answer to a resume request.
    static let progress = CBUUID(string: "8E410004-B5A3-F393-E0A9-E50E24DCCA9E")
    /// Notified, by a watch that echoes: each chunk as it arrived (a loopback check of the link).
    static let echo = CBUUID(string: "8E410005-B5A3-F393-E0A9-E50E24DCCA9E")

    /// The checksum both sides compute (Adler-32: order-sensitive, so a reordered or repeated
    /// chunk shows).
    static func checksum(_ bytes: some Sequence<UInt8>) -> UInt32 {
        var a: UInt32 = 1
        var b: UInt32 = 0
        for byte in bytes {
            a = (a + UInt32(byte)) % 65_521
            b = (b + a) % 65_521
        }
        return b << 16 | a
    }

    static func littleEndian(_ value: UInt32) -> [UInt8] {
        [UInt8(value & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value >> 16 & 0xFF), UInt8(value >> 24)]
    }

    static func uint32(_ bytes: Data, at offset: Int) -> UInt32? {
        guard bytes.count >= offset + 4 else { return nil }
        let start = bytes.startIndex + offset
        return (0..<4).reduce(UInt32(0)) { $0 | UInt32(bytes[start + $1]) << (8 * $1) }
    }
}

/// The watch: receives a file and reports progress every `progressEvery` bytes and at the end;
/// with `echoes`, it also notifies each chunk back as it arrives.
final class FileReceiverApp: NSObject, CBPeripheralManagerDelegate {
    private let queue = DispatchQueue(label: "transfer.watch")
    private let progressEvery: Int
    private let echoes: Bool
    private var manager: CBPeripheralManager?
    private var progress: CBMutableCharacteristic?
    private var echo: CBMutableCharacteristic?
    private var expected: Int?
    private var received: [UInt8] = []
    private var lastReported = 0
    private var unsent: [(Data, CBMutableCharacteristic)] = []
    private var chunkSizes: [Int] = []
    private var unexpected: [String] = []
    private var refused = 0
    private var unsubscribed: [CBUUID] = []

    init(progressEvery: Int, echoes: Bool = false) {
        self.progressEvery = progressEvery
        self.echoes = echoes
        super.init()
        queue.async {
            self.manager = CBPeripheralManager(delegate: self, queue: self.queue)
        }
    }

    /// Whether its manager exists yet.
    var hasManager: Bool { queue.sync { manager != nil } }

    /// The bytes received so far.
    var receivedBytes: [UInt8] { queue.sync { received } }

    /// The sizes of the writes that carried the file, in order.
    var receivedChunkSizes: [Int] { queue.sync { chunkSizes } }

    /// What the watch saw that a transfer should never show.
    var problems: [String] { queue.sync { unexpected } }

    /// The characteristics a central unsubscribed from (or whose link dropped), in order.
    var unsubscriptions: [CBUUID] { queue.sync { unsubscribed } }

    /// How many times `updateValue` said the notification queue was full.
    var refusedUpdates: Int { queue.sync { refused } }

    func peripheralManagerDidUpdateState(_ peripheral: CBPeripheralManager) {
        guard peripheral.state == .poweredOn else { return }
        let control = CBMutableCharacteristic(
            type: TransferService.control, properties: [.write], value: nil, permissions: [.writeable])
        let data = CBMutableCharacteristic(
            type: TransferService.data, properties: [.writeWithoutResponse], value: nil, permissions: [.writeable])
        let progress = CBMutableCharacteristic(
            type: TransferService.progress, properties: [.notify], value: nil, permissions: [.readable])
        let echo = CBMutableCharacteristic(
            type: TransferService.echo, properties: [.notify], value: nil, permissions: [.readable])
        let service = CBMutableService(type: TransferService.service, primary: true)
        service.characteristics = [control, data, progress] + (echoes ? [echo] : [])
        self.progress = progress
        self.echo = echo
        peripheral.add(service)
    }

    func peripheralManager(_ peripheral: CBPeripheralManager, didAdd service: CBService, error: Error?) {
        guard error == nil else { return unexpected.append("add failed: \(String(describing: error))") }
        peripheral.startAdvertising([
            CBAdvertisementDataLocalNameKey: "Watch", CBAdvertisementDataServiceUUIDsKey: [TransferService.service],
        ])
    }

    func peripheralManager(_ peripheral: CBPeripheralManager, didReceiveWrite requests: [CBATTRequest]) {
        var respondTo: CBATTRequest?
        for request in requests {
            let value = request.value ?? Data()
            switch request.characteristic.uuid {
            case TransferService.control:
                respondTo = respondTo ?? request
                if value == Data([3]) {
                    report(kind: 4)
                    continue
                }
                guard value.first == 1, let size = TransferService.uint32(value, at: 1) else {
                    unexpected.append("bad control write \(Array(value))")
                    continue
                }
                expected = Int(size)
                received = []
                chunkSizes = []
                lastReported = 0
            case TransferService.data:
                guard let expected, received.count + value.count <= expected else {
                    unexpected.append("data beyond the file (\(received.count) + \(value.count))")
                    continue
                }
                received.append(contentsOf: value)
                chunkSizes.append(value.count)
                if echoes, let echo { send(value, on: echo) }
                if received.count == expected || received.count - lastReported >= progressEvery {
                    lastReported = received.count
                    report()
                }
            default:
                unexpected.append("write to \(request.characteristic.uuid)")
            }
        }
        if let respondTo { peripheral.respond(to: respondTo, withResult: .success) }
    }

    func peripheralManagerIsReady(toUpdateSubscribers peripheral: CBPeripheralManager) {
        let waiting = unsent
        unsent = []
        for (value, characteristic) in waiting { send(value, on: characteristic) }
    }

    func peripheralManager(
        _ peripheral: CBPeripheralManager, central: CBCentral, didUnsubscribeFrom characteristic: CBCharacteristic
    ) {
        unsubscribed.append(characteristic.uuid)
        // What waited for room was for the link that is gone.
        unsent.removeAll { $0.1.uuid == characteristic.uuid }
    }

    private func report(kind: UInt8 = 2) {
        guard let progress else { return }
        let count = UInt32(received.count)
        send(
            Data(
                [kind] + TransferService.littleEndian(count)
                    + TransferService.littleEndian(TransferService.checksum(received))), on: progress)
    }

    /// Notifies `value`, or keeps it for when the queue has room again (in order).
    private func send(_ value: Data, on characteristic: CBMutableCharacteristic) {
        guard let manager else { return }
        if !unsent.isEmpty {
            unsent.append((value, characteristic))
        } else if !manager.updateValue(value, for: characteristic, onSubscribedCentrals: nil) {
            refused += 1
            unsent.append((value, characteristic))
        }
    }
}

/// The phone: finds the watch, subscribes to progress, starts the transfer, streams the file
/// with writes without response while the link takes them, and finishes when the watch reports
/// every byte.
final class FileSenderApp: NSObject, CBCentralManagerDelegate, CBPeripheralDelegate {
    private let queue = DispatchQueue(label: "transfer.phone")
    private let file: [UInt8]
    private var central: CBCentralManager?
    private var watch: CBPeripheral?
    private var control: CBCharacteristic?
    private var data: CBCharacteristic?
    private var sent = 0
    private var readyCallbacks = 0
    private var reports: [(count: UInt32, checksum: UInt32)] = []
    private var echoed: [UInt8] = []
    private var subscribing = 0
    private var unexpected: [String] = []
    private var writeLength = 0
    private var started = false
    private var resuming = false
    private var drops = 0
    private var resumedAt: [Int] = []
    private let handlesPowerCycles: Bool

    /// An app that sends `file`; with `handlesPowerCycles`, one that also starts over from the
    /// scan when Bluetooth comes back on (no link survived Bluetooth's turning off), which the
    /// plain app does not: it keeps the watch it had, never connects it again, and ignores it
    /// when its scan finds it again.
    init(file: [UInt8], handlesPowerCycles: Bool = false) {
        self.file = file
        self.handlesPowerCycles = handlesPowerCycles
        super.init()
        queue.async {
            self.central = CBCentralManager(delegate: self, queue: self.queue)
        }
    }

    /// Whether its manager exists yet.
    var hasManager: Bool { queue.sync { central != nil } }

    /// Whether the watch reported the whole file.
    var isFinished: Bool { queue.sync { reports.last?.count == UInt32(file.count) } }

    /// The watch's reports, in order: bytes received and their checksum.
    var progressReports: [(count: UInt32, checksum: UInt32)] { queue.sync { reports } }

    /// The watch's identifier, once discovered.
    var watchIdentifier: UUID? { queue.sync { watch?.identifier } }

    /// How many times the link dropped.
    var dropCount: Int { queue.sync { drops } }

    /// Where the transfer resumed after each drop (the watch's count).
    var resumedOffsets: [Int] { queue.sync { resumedAt } }

    /// The bytes the watch echoed, in order.
    var echoedBytes: [UInt8] { queue.sync { echoed } }

    /// How many times the link said it could take writes without response again.
    var readyCount: Int { queue.sync { readyCallbacks } }

    /// The chunk length the app used (`maximumWriteValueLength(for: .withoutResponse)`).
    var chunkLength: Int { queue.sync { writeLength } }

    /// What the phone saw that a transfer should never show.
    var problems: [String] { queue.sync { unexpected } }

    func centralManagerDidUpdateState(_ central: CBCentralManager) {
        guard central.state == .poweredOn else { return }
        if handlesPowerCycles, watch != nil {
            // Bluetooth was off: no link survived, nor the attributes discovered over it. The
            // transfer resumes from where the watch got to once the app has found it again.
            drops += 1
            watch = nil
            control = nil
            data = nil
            writeLength = 0
            subscribing = 0
            resuming = false
        }
        central.scanForPeripherals(withServices: [TransferService.service], options: nil)
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
        peripheral.discoverServices([TransferService.service])
    }

    func centralManager(_ central: CBCentralManager, didFailToConnect peripheral: CBPeripheral, error: Error?) {
        unexpected.append("failed to connect: \(String(describing: error))")
    }

    func centralManager(
        _ central: CBCentralManager, didDisconnectPeripheral peripheral: CBPeripheral, error: Error?
    ) {
        guard error != nil else { return unexpected.append("disconnected without an error") }
        // The link dropped: its attributes are gone. Connect again (CoreBluetooth keeps trying
        // until the watch is back); the transfer resumes where the watch says it got to.
        drops += 1
        control = nil
        data = nil
        writeLength = 0
        subscribing = 0
        central.connect(peripheral, options: nil)
    }

    func peripheral(_ peripheral: CBPeripheral, didDiscoverServices error: Error?) {
        guard let service = peripheral.services?.first else { return unexpected.append("no service") }
        peripheral.discoverCharacteristics(nil, for: service)
    }

    func peripheral(_ peripheral: CBPeripheral, didDiscoverCharacteristicsFor service: CBService, error: Error?) {
        for characteristic in service.characteristics ?? [] {
            switch characteristic.uuid {
            case TransferService.control: control = characteristic
            case TransferService.data: data = characteristic
            case TransferService.progress, TransferService.echo:
                subscribing += 1
                peripheral.setNotifyValue(true, for: characteristic)
            default: break
            }
        }
    }

    func peripheral(
        _ peripheral: CBPeripheral, didUpdateNotificationStateFor characteristic: CBCharacteristic, error: Error?
    ) {
        guard characteristic.isNotifying, let control else { return unexpected.append("not notifying") }
        // The transfer starts once every subscription is on.
        subscribing -= 1
        guard subscribing == 0 else { return }
        if started {
            resuming = true
            return peripheral.writeValue(Data([3]), for: control, type: .withResponse)
        }
        // (Started once the watch answers: a start still pending when the link drops gets no
        // answer, and is sent again after reconnecting.)
        let start = Data([1] + TransferService.littleEndian(UInt32(file.count)))
        peripheral.writeValue(start, for: control, type: .withResponse)
    }

    func peripheral(_ peripheral: CBPeripheral, didWriteValueFor characteristic: CBCharacteristic, error: Error?) {
        guard error == nil else { return unexpected.append("control refused: \(String(describing: error))") }
        writeLength = peripheral.maximumWriteValueLength(for: .withoutResponse)
        if !resuming {
            started = true
            stream(peripheral)
        }
    }

    func peripheralIsReady(toSendWriteWithoutResponse peripheral: CBPeripheral) {
        readyCallbacks += 1
        stream(peripheral)
    }

    func peripheral(_ peripheral: CBPeripheral, didUpdateValueFor characteristic: CBCharacteristic, error: Error?) {
        if characteristic.uuid == TransferService.echo {
            return echoed.append(contentsOf: characteristic.value ?? Data())
        }
        guard characteristic.uuid == TransferService.progress, let value = characteristic.value,
            value.first == 2 || value.first == 4, let count = TransferService.uint32(value, at: 1),
            let checksum = TransferService.uint32(value, at: 5)
        else { return unexpected.append("bad progress \(String(describing: characteristic.value))") }
        guard value.first == 4 else { return reports.append((count, checksum)) }
        guard resuming else { return unexpected.append("a resume point nobody asked for") }
        resuming = false
        sent = Int(count)
        resumedAt.append(sent)
        if sent == file.count { reports.append((count, checksum)) }
        stream(peripheral)
    }

    /// Sends chunks while the link takes them.
    private func stream(_ peripheral: CBPeripheral) {
        guard let data, writeLength > 0, !resuming else { return }
        while sent < file.count, peripheral.canSendWriteWithoutResponse {
            let end = min(sent + writeLength, file.count)
            peripheral.writeValue(Data(file[sent..<end]), for: data, type: .withoutResponse)
            sent = end
        }
    }
}
