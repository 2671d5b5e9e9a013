// swift-format-ignore-file: AlwaysUseLowerCamelCase
// (These names mirror CoreBluetooth's API.)

import BLECBM
import BLECore
import Foundation

@testable import BlinkyExample

// A smartwatch companion app as an iOS team writes it, in CoreBluetooth delegate style (BLECBM's
// names), on the main queue or a queue of its own, and the watch it talks to (a
// CBMPeripheralManager app). The upload resumes where the watch says it got to after a lost
// link. One planted bug at a time (`ExploreBug`) shows whether exploration finds what real apps
// get wrong.

/// The watch's file service: a resumable upload.
enum ExploreWatchService {
    static let service = CBMUUID(string: "7A1C0001-0000-4000-8000-00805F9B34FB")
    /// Written with response: `[1, size (UInt32 LE)]` begins the upload, or resumes it when the
    /// watch already holds part of a file of that size; `[2]` commits it.
    static let control = CBMUUID(string: "7A1C0002-0000-4000-8000-00805F9B34FB")
    /// Written without response: the file's bytes, in order.
    static let data = CBMUUID(string: "7A1C0003-0000-4000-8000-00805F9B34FB")
    /// Notified: `[0xA0, bytes held (UInt32 LE)]` after a begin (where to go on from) and each
    /// time another 1,000 bytes have arrived; `[0xD0, bytes held, checksum (UInt32 LE)]` after a
    /// commit.
    static let status = CBMUUID(string: "7A1C0004-0000-4000-8000-00805F9B34FB")

    /// The file: 4 KiB.
    static let file: [UInt8] = (0..<4_096).map { UInt8(truncatingIfNeeded: $0 &* 13 &+ 5) }
    /// How often the watch says how much it holds.
    static let ackEvery = 1_000
}

/// The bugs the companion can be built with, one at a time.
enum ExploreBug: String, Sendable, CaseIterable {
    /// Writes every chunk in one loop, never looking at `canSendWriteWithoutResponse`: writes
    /// beyond the link's queue are lost.
    case ignoresBackpressure
    /// Subscribes on the first connection only, as if the subscription survived a reconnect.
    case noResubscribe
    /// Cuts the file into 182-byte chunks, as if every link had ATT_MTU 185.
    case assumesMTU185
    /// Resumes from byte 0 after a lost link, not from where the watch says it got to.
    case resumesFromZero
    /// Does nothing when a connection attempt fails.
    case noRetryOnFailedConnect
    /// Takes a notification that arrives while a write with response waits for its answer as
    /// impossible (a protocol violation), and gives up.
    case notificationBeforeWriteResponseIsImpossible
}

/// The phone: the companion app.
final class ExploreCompanionApp: NSObject, CBMCentralManagerDelegate, CBMPeripheralDelegate, @unchecked Sendable {
    // @unchecked Sendable: the app's state is only touched on `queue` (its callbacks arrive
    // there); what the test reads is copied under `lock`.
    enum Phase: String, Sendable { case idle, subscribing, beginning, streaming, committing, done, failed }

    /// What the test reads.
    struct Snapshot: Sendable {
        var phase: Phase = .idle
        var problems: [String] = []
        var connections = 0
        var drops = 0
        var failedConnects = 0
        var resumedFrom: [Int] = []
        var history: [String] = []
    }

    let queue: DispatchQueue
    let bug: ExploreBug?
    let file: [UInt8]
    private let lock = NSLock()
    private var published = Snapshot()
    private var manager: CBMCentralManager!
    private var watch: CBMPeripheral?
    private var control: CBMCharacteristic?
    private var data: CBMCharacteristic?
    private var status: CBMCharacteristic?
    private var state = Snapshot()
    private var chunk = 0
    private var sent = 0
    private var subscribedOnce = false
    private var writeOutstanding = false
    /// Where the watch said to go on from, after the begin of this link.
    private var resumeOffset: Int?
    private var beginAnswered = false
    private var retries = 0

    /// Creates the app; `queue` nil means the main queue, as `CBCentralManager(delegate:queue:)`.
    init(bug: ExploreBug? = nil, queue: DispatchQueue?, file: [UInt8] = ExploreWatchService.file) {
        self.bug = bug
        self.queue = queue ?? .main
        self.file = file
        super.init()
        let made = CBMCentralManager(delegate: self, queue: queue)
        // (On the main queue the app is made on the main thread, as apps are.)
        if let queue { queue.sync { manager = made } } else { manager = made }
    }

    var snapshot: Snapshot { lock.withLock { published } }
    var isSettled: Bool { let phase = snapshot.phase; return phase == .done || phase == .failed }

    private func publish() {
        let copy = state
        lock.withLock { published = copy }
    }

    private func note(_ event: String) {
        state.history.append(event)
        publish()
    }

    private func fail(_ problem: String) {
        state.problems.append(problem)
        state.phase = .failed
        publish()
    }

    private var finished: Bool { state.phase == .done || state.phase == .failed }

    // MARK: Central

    func centralManagerDidUpdateState(_ central: CBMCentralManager) {
        note("state \(central.state.rawValue)")
        guard central.state == .poweredOn else {
            // Below poweredOn every peripheral object is invalid: start over once it is back.
            watch = nil
            forgetAttributes()
            if !finished { state.phase = .idle }
            return publish()
        }
        guard !finished else { return }
        central.scanForPeripherals(withServices: [ExploreWatchService.service])
    }

    func centralManager(
        _ central: CBMCentralManager, didDiscover peripheral: CBMPeripheral, advertisementData: [String: Any],
        rssi RSSI: NSNumber
    ) {
        guard watch == nil else { return }
        central.stopScan()
        watch = peripheral
        peripheral.delegate = self
        central.connect(peripheral)
    }

    func centralManager(_ central: CBMCentralManager, didConnect peripheral: CBMPeripheral) {
        state.connections += 1
        note("connected")
        retries = 0
        peripheral.discoverServices([ExploreWatchService.service])
    }

    func centralManager(_ central: CBMCentralManager, didFailToConnect peripheral: CBMPeripheral, error: (any Error)?) {
        state.failedConnects += 1
        note("failed to connect: \(String(describing: error))")
        guard bug != .noRetryOnFailedConnect else { return }
        central.connect(peripheral)
    }

    func centralManager(
        _ central: CBMCentralManager, didDisconnectPeripheral peripheral: CBMPeripheral, error: (any Error)?
    ) {
        state.drops += 1
        note("disconnected: \(String(describing: error))")
        forgetAttributes()
        guard !finished else { return }
        state.phase = .idle
        publish()
        // A pending connection: CoreBluetooth makes it when the watch is back.
        central.connect(peripheral)
    }

    private func forgetAttributes() {
        control = nil
        data = nil
        status = nil
        writeOutstanding = false
        resumeOffset = nil
        beginAnswered = false
    }

    private func startOver(_ peripheral: CBMPeripheral) {
        // A new link, from the discovery on.
        manager.cancelPeripheralConnection(peripheral)
    }

    // MARK: Peripheral

    func peripheral(_ peripheral: CBMPeripheral, didDiscoverServices error: (any Error)?) {
        guard error == nil, let service = peripheral.services?.first(where: { $0.uuid == ExploreWatchService.service })
        else { return startOver(peripheral) }
        peripheral.discoverCharacteristics(nil, for: service)
    }

    func peripheral(
        _ peripheral: CBMPeripheral, didDiscoverCharacteristicsFor service: CBMService, error: (any Error)?
    ) {
        guard error == nil else { return startOver(peripheral) }
        for characteristic in service.characteristics ?? [] {
            switch characteristic.uuid {
            case ExploreWatchService.control: control = characteristic
            case ExploreWatchService.data: data = characteristic
            case ExploreWatchService.status: status = characteristic
            default: break
            }
        }
        guard let status, control != nil, data != nil else { return fail("the watch lacks a characteristic") }
        if bug == .noResubscribe && subscribedOnce {
            // Bug: "we subscribed already".
            return begin(peripheral)
        }
        state.phase = .subscribing
        publish()
        peripheral.setNotifyValue(true, for: status)
    }

    func peripheral(
        _ peripheral: CBMPeripheral, didUpdateNotificationStateFor characteristic: CBMCharacteristic,
        error: (any Error)?
    ) {
        guard state.phase == .subscribing else { return }
        guard error == nil, characteristic.isNotifying else {
            retries += 1
            guard retries < 4 else { return startOver(peripheral) }
            return peripheral.setNotifyValue(true, for: characteristic)
        }
        subscribedOnce = true
        retries = 0
        begin(peripheral)
    }

    private func begin(_ peripheral: CBMPeripheral) {
        guard let control else { return }
        state.phase = .beginning
        publish()
        resumeOffset = nil
        beginAnswered = false
        chunk =
            bug == .assumesMTU185 ? 182 : peripheral.maximumWriteValueLength(for: .withoutResponse)
        writeOutstanding = true
        peripheral.writeValue(
            Data([1] + TransferService.littleEndian(UInt32(file.count))), for: control, type: .withResponse)
    }

    func peripheral(
        _ peripheral: CBMPeripheral, didWriteValueFor characteristic: CBMCharacteristic, error: (any Error)?
    ) {
        writeOutstanding = false
        if let error {
            note("write failed: \(error)")
            retries += 1
            guard retries < 4 else { return startOver(peripheral) }
            switch state.phase {
            case .beginning: return begin(peripheral)
            case .committing: return commit(peripheral)
            default: return
            }
        }
        switch state.phase {
        case .beginning:
            beginAnswered = true
            startStreamingIfReady(peripheral)
        case .committing:
            break  // the watch's 0xD0 says how it went
        default:
            note("write answered while \(state.phase)")
        }
    }

    private func startStreamingIfReady(_ peripheral: CBMPeripheral) {
        guard state.phase == .beginning, beginAnswered, let offset = resumeOffset else { return }
        let from = bug == .resumesFromZero ? 0 : offset
        state.resumedFrom.append(from)
        sent = from
        state.phase = .streaming
        publish()
        stream(peripheral)
    }

    func peripheralIsReady(toSendWriteWithoutResponse peripheral: CBMPeripheral) {
        guard state.phase == .streaming else { return }
        stream(peripheral)
    }

    private func stream(_ peripheral: CBMPeripheral) {
        guard let data, chunk > 0 else { return }
        while sent < file.count, bug == .ignoresBackpressure || peripheral.canSendWriteWithoutResponse {
            let end = min(sent + chunk, file.count)
            peripheral.writeValue(Data(file[sent..<end]), for: data, type: .withoutResponse)
            sent = end
        }
        if sent == file.count { commit(peripheral) }
    }

    private func commit(_ peripheral: CBMPeripheral) {
        guard let control else { return }
        state.phase = .committing
        publish()
        writeOutstanding = true
        peripheral.writeValue(Data([2]), for: control, type: .withResponse)
    }

    func peripheral(
        _ peripheral: CBMPeripheral, didUpdateValueFor characteristic: CBMCharacteristic, error: (any Error)?
    ) {
        guard characteristic.uuid == ExploreWatchService.status, let value = characteristic.value,
            let count = TransferService.uint32(value, at: 1)
        else { return note("odd notification") }
        if bug == .notificationBeforeWriteResponseIsImpossible, writeOutstanding {
            return fail(
                "protocol violation: a notification (0x\(String(value[0], radix: 16))) before the write response, while \(state.phase)"
            )
        }
        switch value.first {
        case 0xA0:
            guard state.phase == .beginning else { return }  // progress while streaming
            resumeOffset = Int(count)
            startStreamingIfReady(peripheral)
        case 0xD0:
            guard state.phase == .committing, let checksum = TransferService.uint32(value, at: 5) else { return }
            guard Int(count) == file.count, checksum == TransferService.checksum(file) else {
                return fail("the watch holds \(count) of \(file.count) bytes (checksum \(checksum))")
            }
            state.phase = .done
            publish()
        default:
            note("odd notification")
        }
    }
}

/// The watch: a CBMPeripheralManager app on its own queue that keeps what it got across lost
/// links, says where to go on from, and checks the file on commit.
final class ExploreWatchApp: NSObject, CBMPeripheralManagerDelegate, @unchecked Sendable {
    // @unchecked Sendable: state only touched on `queue`; the test reads it with `queue.sync`.
    let queue = DispatchQueue(label: "explore.watch")
    private var manager: CBMPeripheralManager!
    private var status: CBMMutableCharacteristic?
    private var expected: Int?
    private var received: [UInt8] = []
    private var unsent: [Data] = []
    private var issues: [String] = []

    override init() {
        super.init()
        let made = CBMPeripheralManager(delegate: self, queue: queue)
        queue.sync { manager = made }
    }

    var receivedBytes: [UInt8] { queue.sync { received } }
    var problems: [String] { queue.sync { issues } }

    func peripheralManagerDidUpdateState(_ peripheral: CBMPeripheralManager) {
        guard peripheral.state == .poweredOn else { return }
        let control = CBMMutableCharacteristic(
            type: ExploreWatchService.control, properties: [.write], value: nil, permissions: [.writeable])
        let data = CBMMutableCharacteristic(
            type: ExploreWatchService.data, properties: [.writeWithoutResponse], value: nil, permissions: [.writeable])
        let status = CBMMutableCharacteristic(
            type: ExploreWatchService.status, properties: [.notify], value: nil, permissions: [.readable])
        let service = CBMMutableService(type: ExploreWatchService.service, primary: true)
        service.characteristics = [control, data, status]
        self.status = status
        peripheral.add(service)
    }

    func peripheralManager(_ peripheral: CBMPeripheralManager, didAdd service: CBMService, error: (any Error)?) {
        guard error == nil else { return issues.append("add failed \(String(describing: error))") }
        peripheral.startAdvertising([
            CBMAdvertisementDataLocalNameKey: "Watch",
            CBMAdvertisementDataServiceUUIDsKey: [ExploreWatchService.service],
        ])
    }

    func peripheralManager(_ peripheral: CBMPeripheralManager, didReceiveWrite requests: [CBMATTRequest]) {
        var answer: CBMATTRequest?
        var after: [Data] = []
        for request in requests {
            let value = request.value ?? Data()
            switch request.characteristic.uuid {
            case ExploreWatchService.control:
                answer = answer ?? request
                if value.first == 1, let size = TransferService.uint32(value, at: 1) {
                    if expected != Int(size) {
                        expected = Int(size)
                        received = []
                    }
                    after.append(Data([0xA0] + TransferService.littleEndian(UInt32(received.count))))
                } else if value == Data([2]) {
                    after.append(
                        Data(
                            [0xD0] + TransferService.littleEndian(UInt32(received.count))
                                + TransferService.littleEndian(TransferService.checksum(received))))
                } else {
                    issues.append("bad control \(Array(value))")
                }
            case ExploreWatchService.data:
                guard let expected, received.count + value.count <= expected else {
                    issues.append("data beyond the file (\(received.count) + \(value.count))")
                    continue
                }
                let before = received.count / ExploreWatchService.ackEvery
                received.append(contentsOf: value)
                if received.count / ExploreWatchService.ackEvery > before {
                    send(Data([0xA0] + TransferService.littleEndian(UInt32(received.count))))
                }
            default:
                issues.append("write to \(request.characteristic.uuid)")
            }
        }
        // The answer first, then what it leads to.
        if let answer { peripheral.respond(to: answer, withResult: .success) }
        for value in after { send(value) }
    }

    func peripheralManager(
        _ peripheral: CBMPeripheralManager, central: CBMCentral, didUnsubscribeFrom characteristic: CBMCharacteristic
    ) {
        unsent = []  // for a link that is gone
    }

    func peripheralManagerIsReady(toUpdateSubscribers peripheral: CBMPeripheralManager) {
        let waiting = unsent
        unsent = []
        for value in waiting { send(value) }
    }

    private func send(_ value: Data) {
        guard let manager, let status else { return }
        if !unsent.isEmpty || !manager.updateValue(value, for: status, onSubscribedCentrals: nil) {
            unsent.append(value)
        }
    }
}
