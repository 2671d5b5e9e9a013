import BLECore
import BLEMockKit
import Foundation

/// A watch-style file transfer, device and app, for exploration tests.
///
/// The protocol: the app subscribes to `status`, writes `start` (`[0x02, session]`) to
/// `control` with response, streams the file to `data` with writes without response, then
/// commits (`[0x01, session, length (4 bytes), sum (4 bytes)]`) with response. The device
/// answers a commit with a receipt by notification on `status`: `[0x00 or 0x01 (bad), session,
/// length (4), sum (4)]` padded to 40 bytes, sent as a length-prefixed stream cut into
/// notifications as long as the link carries.
enum FileTransferRig {
    static let service: BluetoothUUID = "FA00"
    static let data: BluetoothUUID = "FA01"
    static let control: BluetoothUUID = "FA02"
    static let status: BluetoothUUID = "FA03"
    static let receiptLength = 40

    static var gattService: GATTService {
        GATTService(
            uuid: service,
            characteristics: [
                GATTCharacteristic(uuid: data, properties: .writeWithoutResponse, permissions: .writeable),
                GATTCharacteristic(uuid: control, properties: .write, permissions: .writeable),
                GATTCharacteristic(uuid: status, properties: .notify, permissions: []),
            ])
    }

    /// The bugs an app can be planted with.
    struct Bugs: OptionSet, Sendable {
        let rawValue: Int
        /// Chunks of 182 bytes, as if every link had ATT_MTU 185.
        static let chunkAssumesMTU185 = Bugs(rawValue: 1 << 0)
        /// Writes without waiting for `canSendWriteWithoutResponse`.
        static let ignoresCanSend = Bugs(rawValue: 1 << 1)
        /// Gives up when the link drops mid-transfer instead of reconnecting.
        static let noReconnect = Bugs(rawValue: 1 << 2)
        /// Takes the first notification of the receipt as the whole receipt.
        static let receiptInOneNotification = Bugs(rawValue: 1 << 3)
        /// Subscribes to `status` after the commit that makes the device send the receipt.
        static let subscribesAfterCommit = Bugs(rawValue: 1 << 4)
        /// Ignores the error of its one commit write, and takes the file as delivered once the
        /// commit is sent, without the receipt.
        static let ignoresCommitError = Bugs(rawValue: 1 << 5)
    }

    /// A file of `count` bytes.
    static func file(_ count: Int) -> Data {
        Data((0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) })
    }

    static func sum(_ data: Data) -> UInt32 {
        data.reduce(UInt32(0)) { $0 &+ UInt32($1) }
    }

    static func littleEndian(_ value: UInt32) -> [UInt8] {
        (0..<4).map { UInt8(truncatingIfNeeded: value >> (8 * $0)) }
    }

    static func readUInt32(_ bytes: Data, at offset: Int) -> UInt32 {
        (0..<4).reduce(UInt32(0)) { $0 | UInt32(bytes[bytes.startIndex + offset + $1]) << (8 * $1) }
    }

    /// One transfer: a device on the bridge, an app with `bugs` uploading `file`; throws when
    /// the device did not get the file, or the app gave up.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    static func transfer(_ file: Data, bugs: Bugs, bridge: MockBLEBridge) async throws {
        let device = try await FileTransferWatch.start(bridge: bridge)
        let app = FileTransferApp(central: MockCentralManager(bridge: bridge), clock: bridge.clock, bugs: bugs)
        let session = try await app.upload(file)
        let stored = await device.stored(session: session)
        try Exploration.require(
            stored == file, "the device stored \(stored?.count ?? 0) bytes, not the \(file.count) sent")
    }
}

/// The watch: collects what is written to `data` between a start and a commit, and answers a
/// commit with a receipt.
actor FileTransferWatch {
    let peripheral: MockPeripheralManager
    let statusCharacteristic: LocalCharacteristic
    private var buffer = Data()
    private var session: UInt8 = 0
    /// The files committed, by session.
    private var committed: [UInt8: Data] = [:]

    init(peripheral: MockPeripheralManager, status: LocalCharacteristic) {
        self.peripheral = peripheral
        self.statusCharacteristic = status
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    static func start(bridge: MockBLEBridge) async throws -> FileTransferWatch {
        var configuration = MockPeripheralManager.Configuration()
        configuration.requestHandling = .manual
        let peripheral = MockPeripheralManager(configuration: configuration, bridge: bridge)
        let events = peripheral.events()
        _ = await peripheral.waitForPoweredOn()
        let local = try await peripheral.add(FileTransferRig.gattService)
        let status = local.characteristics.first { $0.uuid == FileTransferRig.status }!
        try await peripheral.startAdvertising(
            AdvertisementData(localName: "Watch", serviceUUIDs: [FileTransferRig.service]))
        let device = FileTransferWatch(peripheral: peripheral, status: status)
        bridge.task { await device.serve(events) }
        return device
    }

    /// What was committed in `session`, if it was.
    func stored(session: UInt8) -> Data? { committed[session] }

    func serve(_ events: AsyncStream<PeripheralEvent>) async {
        var iterator = events.makeAsyncIterator()
        while let event = await iterator.next(isolation: self) {
            guard case .writeRequests(let batch) = event, let first = batch.first else { continue }
            let value = first.value ?? Data()
            switch first.characteristic.uuid {
            case FileTransferRig.data:
                buffer += value
            case FileTransferRig.control:
                try? await peripheral.respond(to: first, withResult: .success)
                if value.first == 0x02, value.count >= 2 {
                    buffer = Data()
                    session = value[value.startIndex + 1]
                } else if value.first == 0x01, value.count >= 10 {
                    await commit(value, &iterator)
                }
            default:
                break
            }
        }
    }

    private func commit(_ command: Data, _ iterator: inout AsyncStream<PeripheralEvent>.Iterator) async {
        let length = FileTransferRig.readUInt32(command, at: 2)
        let sum = FileTransferRig.readUInt32(command, at: 6)
        let good =
            command[command.startIndex + 1] == session && Int(length) == buffer.count
            && sum == FileTransferRig.sum(buffer)
        if good { committed[session] = buffer }
        var receipt = [good ? 0x00 : 0x01, session] + FileTransferRig.littleEndian(UInt32(buffer.count))
        receipt += FileTransferRig.littleEndian(FileTransferRig.sum(buffer))
        receipt += [UInt8](repeating: 0xEE, count: FileTransferRig.receiptLength - receipt.count)
        let stream = Data([UInt8(receipt.count)] + receipt)
        // Cut as long as the subscribed central's link carries (the shortest, if several).
        let centrals = await peripheral.subscribedCentrals(for: statusCharacteristic)
        guard let length = centrals.map(\.maximumUpdateValueLength).min(), length > 0 else { return }
        var offset = 0
        while offset < stream.count {
            let end = min(offset + length, stream.count)
            do {
                while try await !peripheral.updateValue(stream[offset..<end], for: statusCharacteristic) {
                    // The queue is full: wait for room (other events meanwhile are dropped; the
                    // app is waiting for this receipt).
                    while let event = await iterator.next(isolation: self) {
                        if case .readyToUpdateSubscribers = event { break }
                    }
                }
            } catch {
                return  // nobody subscribed any more: the app will retry
            }
            offset = end
        }
    }
}

/// The app: uploads a file to the watch, retrying after anything goes wrong, with the
/// planted bugs it was given.
actor FileTransferApp: CentralEventReader {
    let central: MockCentralManager
    let clock: VirtualClock
    let bugs: FileTransferRig.Bugs
    var events: AsyncStream<CentralEvent>.Iterator
    private var session: UInt8 = 0
    private var peripheral: UUID?
    /// The error of the commit write that ``FileTransferRig/Bugs/ignoresCommitError`` ignored.
    private(set) var ignoredCommitError: (any Error)?
    static let maximumAttempts = 25
    /// How long one attempt may take before the app gives it up (a request the device never
    /// answers leaves the link up: only the app's own timeout ends the wait).
    static let attemptTimeout = Duration.seconds(120)

    init(central: MockCentralManager, clock: VirtualClock, bugs: FileTransferRig.Bugs) {
        self.central = central
        self.clock = clock
        self.bugs = bugs
        events = central.events().makeAsyncIterator()
    }

    private struct TimedOut: Error, CustomStringConvertible {
        var description: String { "an attempt timed out" }
    }

    /// Runs `operation`, cancelling it when `limit` of the clock's time passes first.
    private func withTimeout(_ limit: Duration, _ operation: @escaping @Sendable () async throws -> Void)
        async throws
    {
        let clock = clock
        try await withThrowingTaskGroup(of: Bool.self) { group in
            group.addTask {
                try await operation()
                return true
            }
            group.addTask {
                try await clock.sleep(for: limit)
                return false
            }
            defer { group.cancelAll() }
            guard try await group.next() == true else { throw TimedOut() }
        }
    }

    /// Uploads `file`; returns the session the device stored it in.
    func upload(_ file: Data) async throws -> UInt8 {
        var lastError: (any Error)?
        for _ in 0..<Self.maximumAttempts {
            session &+= 1
            do {
                try await withTimeout(Self.attemptTimeout) { try await self.attempt(file) }
                return session
            } catch is TimedOut {
                // The cancelled attempt ended the event stream it was reading: start another.
                events = central.events().makeAsyncIterator()
                if let peripheral { try? await central.cancelPeripheralConnection(peripheral) }
                lastError = TimedOut()
                if bugs.contains(.noReconnect) {
                    throw ExplorationFailure("the link dropped mid-transfer and the app gave up")
                }
            } catch let error as ExplorationFailure {
                throw error
            } catch {
                lastError = error
                // The planted bug: an ATT error is retried, a lost link is not.
                if bugs.contains(.noReconnect), !(error is ATTError) {
                    throw ExplorationFailure("the link dropped mid-transfer and the app gave up")
                }
            }
        }
        throw ExplorationFailure(
            "no upload after \(Self.maximumAttempts) attempts; the last failed: \(lastError.map { "\($0)" } ?? "-")")
    }

    private struct LinkLost: Error, CustomStringConvertible {
        var description: String { "the link was lost" }
    }
    private struct BadReceipt: Error, CustomStringConvertible {
        var description: String { "the device refused the file" }
    }

    private func attempt(_ file: Data) async throws {
        while await central.state != .poweredOn {
            if case .stateChanged(.poweredOn) = try await nextEvent() { break }
        }
        let peripheral = try await find()
        self.peripheral = peripheral
        if await !central.isConnected(peripheral) { try await central.connect(peripheral, timeout: .seconds(5)) }
        do {
            try await send(file, to: peripheral)
        } catch {
            try? await central.cancelPeripheralConnection(peripheral)
            throw error
        }
    }

    private func find() async throws -> UUID {
        try await central.scanForPeripherals(withServices: [FileTransferRig.service])
        while true {
            switch try await nextEvent() {
            case .discovered(let found):
                await central.stopScan()
                return found.identifier
            case .stateChanged(let state) where state != .poweredOn: throw LinkLost()
            default: continue
            }
        }
    }

    private func send(_ file: Data, to peripheral: UUID) async throws {
        let characteristics = try await central.discoverAll(for: peripheral)
        guard let data = characteristics.first(where: { $0.uuid == FileTransferRig.data }),
            let control = characteristics.first(where: { $0.uuid == FileTransferRig.control }),
            let status = characteristics.first(where: { $0.uuid == FileTransferRig.status })
        else { throw ExplorationFailure("the device's characteristics are missing") }
        if !bugs.contains(.subscribesAfterCommit) { try await central.setNotifyValue(true, for: status) }
        try await central.writeValue(Data([0x02, session]), for: control, type: .withResponse)
        let chunk =
            bugs.contains(.chunkAssumesMTU185)
            ? 182 : try await central.maximumWriteValueLength(for: peripheral, type: .withoutResponse)
        var offset = 0
        while offset < file.count {
            if !bugs.contains(.ignoresCanSend) {
                while await !central.canSendWriteWithoutResponse(to: peripheral) {
                    try await awaitEvent(on: peripheral) {
                        if case .readyToSendWriteWithoutResponse = $0 { true } else { false }
                    }
                }
            }
            let end = min(offset + chunk, file.count)
            try await central.writeValue(file[offset..<end], for: data, type: .withoutResponse)
            offset = end
        }
        let commit =
            [0x01, session] + FileTransferRig.littleEndian(UInt32(file.count))
            + FileTransferRig.littleEndian(FileTransferRig.sum(file))
        if bugs.contains(.ignoresCommitError) {
            do {
                try await central.writeValue(Data(commit), for: control, type: .withResponse)
            } catch {
                ignoredCommitError = error
            }
            return
        }
        try await central.writeValue(Data(commit), for: control, type: .withResponse)
        if bugs.contains(.subscribesAfterCommit) { try await central.setNotifyValue(true, for: status) }
        let receipt = try await receipt(from: status, peripheral: peripheral)
        guard receipt.count >= 2, receipt[receipt.startIndex] == 0x00 else { throw BadReceipt() }
    }

    /// Reads the receipt of this session from the notifications on `status`.
    private func receipt(from status: RemoteCharacteristic, peripheral: UUID) async throws -> Data {
        var stream = Data()
        while true {
            var value = Data()
            try await awaitEvent(on: peripheral) {
                guard case .valueUpdated(let characteristic, let bytes) = $0, characteristic == status else {
                    return false
                }
                value = bytes
                return true
            }
            if bugs.contains(.receiptInOneNotification) {
                guard value.count == FileTransferRig.receiptLength + 1 else {
                    throw ExplorationFailure(
                        "the receipt is \(value.count) bytes, not \(FileTransferRig.receiptLength + 1)")
                }
                return value.dropFirst()
            }
            stream += value
            guard let total = stream.first, stream.count >= 1 + Int(total) else { continue }
            let receipt = stream.dropFirst().prefix(Int(total))
            // A receipt of an earlier session (its commit's answer was lost) is not ours.
            if receipt.count >= 2, receipt[receipt.startIndex + 1] == session { return Data(receipt) }
            stream = Data()
        }
    }

    /// Waits for an event `matches` accepts; throws if the link to `peripheral` drops or the
    /// central powers off meanwhile.
    private func awaitEvent(on peripheral: UUID, _ matches: (CentralEvent) -> Bool) async throws {
        while true {
            let event = try await nextEvent()
            if matches(event) { return }
            switch event {
            case .disconnected(let remote, _) where remote.identifier == peripheral:
                // An old link's disconnection is no news while a new one is up.
                if await !central.isConnected(peripheral) { throw LinkLost() }
            case .stateChanged(let state) where state != .poweredOn:
                throw LinkLost()
            default:
                continue
            }
        }
    }
}

/// An app actor that reads its central's events through one iterator it keeps.
protocol CentralEventReader: Actor {
    var events: AsyncStream<CentralEvent>.Iterator { get set }
}

extension CentralEventReader {
    /// The next event; throws `CancellationError` when the stream has ended (cancelled).
    func nextEvent() async throws -> CentralEvent {
        // (An iterator in an actor's property cannot be advanced in place across a suspension;
        // its copies share the stream.)
        var iterator = events
        guard let event = await iterator.next(isolation: self) else { throw CancellationError() }
        events = iterator
        return event
    }
}
