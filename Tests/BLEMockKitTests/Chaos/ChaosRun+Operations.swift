import BLECore
import BLEMockKit
import Foundation
import Transport

extension ChaosRun {
    /// The operations a run draws from, each on a peer drawn at random.
    enum Operation: CaseIterable {
        case connect, cancel, scan, discover, read, write, writeBurst, subscribe, unsubscribe, notify
        case messageToPeripheral, messageToCentral, readRSSI, advance, fault, inject
    }

    /// The operations to draw from: connecting, subscribing and messages weigh more, so that
    /// most runs spend their time moving data over live links.
    static let weighted: [Operation] =
        Operation.allCases + [.connect, .connect, .discover, .subscribe, .subscribe, .notify, .writeBurst]
        + [.messageToPeripheral, .messageToPeripheral, .messageToPeripheral, .messageToCentral, .messageToCentral]
        + [.messageToCentral]

    /// Runs `count` random operations, checking each returns a typed result in bounded
    /// virtual time.
    func runOperations(count: Int) async {
        for _ in 0..<count {
            let index = random.int(in: 0..<peers.count)
            let operation = Self.weighted[random.int(in: 0..<Self.weighted.count)]
            let start = await bridge.now
            if Self.verbose {
                FileHandle.standardError.write(Data("chaos seed \(seed): \(start) \(operation) \(name(index))…\n".utf8))
            }
            var outcome: String
            do {
                outcome = try await perform(operation, on: index)
            } catch {
                outcome = "failed: \(error)"
                if !Self.isTyped(error) {
                    fail("\(operation) on \(name(index)) threw \(type(of: error)), not one of the kit's error types")
                }
            }
            let elapsed = start.duration(to: await bridge.now)
            steps.append("\(start) \(operation) \(name(index)): \(outcome)")
            if elapsed > Self.operationBound {
                fail("\(operation) on \(name(index)) took \(elapsed) of virtual time (bound \(Self.operationBound))")
            }
        }
    }

    /// Whether an error is one the kit documents: every failure must be typed.
    static func isTyped(_ error: any Error) -> Bool {
        error is ATTError || error is CoreBluetoothError || error is APIMisuseError || error is MessageChannelError
            || error is TransportError
    }

    /// Performs one operation and describes its outcome.
    func perform(_ operation: Operation, on index: Int) async throws -> String {
        let peer = peers[index]
        let id = peer.identifier
        switch operation {
        case .connect:
            try await central.connect(id, options: ConnectOptions(timeout: .seconds(2)))
            var outcome = "connected, " + (try await discover(index))
            if let remote = peers[index].remote[peer.notifying.uuid], coin() == 0 {
                let logIndex = await bridge.log.count
                try await central.setNotifyValue(true, for: remote)
                subscriptions[id] = logIndex
                outcome += ", subscribed"
            }
            return outcome
        case .cancel:
            try await central.cancelPeripheralConnection(id)
            return "cancelled"
        case .scan:
            try await central.scanForPeripherals(withServices: coin() == 0 ? nil : [Self.messageService])
            let duration = Duration.milliseconds(random.int(in: 0...1_500))
            await bridge.advance(by: duration)
            await central.stopScan()
            return "scanned for \(duration)"
        case .discover:
            return try await discover(index)
        case .read:
            let uuid = peer.isMessenger ? Self.staticCharacteristic : [Self.measurement, Self.bodyLocation][coin()]
            guard let remote = peer.remote[uuid] else { return "skipped: not discovered" }
            return "read \(try await central.readValue(for: remote).count) bytes"
        case .write:
            let uuid = peer.isMessenger ? Self.messageCharacteristic : Self.controlPoint
            guard let remote = peer.remote[uuid] else { return "skipped: not discovered" }
            try await central.writeValue(Data(bytes(1...24)), for: remote, type: .withResponse)
            return "written"
        case .writeBurst:
            let uuid = peer.isMessenger ? Self.messageCharacteristic : Self.controlPoint
            guard let remote = peer.remote[uuid] else { return "skipped: not discovered" }
            let count = random.int(in: 1...6)
            for _ in 0..<count {
                try await central.writeValue(Data(bytes(1...20)), for: remote, type: .withoutResponse)
            }
            return "\(count) writes without response"
        case .subscribe, .unsubscribe:
            guard let remote = peer.remote[peer.notifying.uuid] else { return "skipped: not discovered" }
            let logIndex = await bridge.log.count
            try await central.setNotifyValue(operation == .subscribe, for: remote)
            subscriptions[id] = operation == .subscribe ? logIndex : nil
            return operation == .subscribe ? "subscribed" : "unsubscribed"
        case .notify:
            return "queued: \(try await peer.manager.updateValue(Data(bytes(1...20)), for: peer.notifying))"
        case .messageToPeripheral:
            guard let channel = peer.centralChannel else { return "skipped: no channel" }
            return try await send(toPeripheral: true, index: index) { try await channel.send($0) }
        case .messageToCentral:
            guard let channel = peer.peripheralChannel else { return "skipped: not a messenger" }
            let central = central.identifier
            return try await send(toPeripheral: false, index: index) { try await channel.send($0, to: central) }
        case .readRSSI:
            return "RSSI \(try await central.readRSSI(for: id))"
        case .advance:
            let duration = Duration.milliseconds(random.int(in: 0...2_500))
            await bridge.advance(by: duration)
            return "advanced \(duration)"
        case .fault:
            return await scheduleFault(on: index)
        case .inject:
            return await inject(on: index)
        }
    }

    /// Discovers everything; a messenger's central channel is created on its first discovery.
    func discover(_ index: Int) async throws -> String {
        let found = try await central.discoverAll(for: peers[index].identifier)
        peers[index].remote = Dictionary(found.map { ($0.uuid, $0) }, uniquingKeysWith: { first, _ in first })
        if peers[index].isMessenger, peers[index].centralChannel == nil,
            let remote = peers[index].remote[Self.messageCharacteristic]
        {
            peers[index].centralChannel = await CentralMessageChannel(
                central: central, characteristic: remote, writeType: .withResponse, clock: bridge.clock)
        }
        return "\(found.count) characteristics"
    }

    /// Sends a fresh message, recording it and whether the send completed.
    func send(toPeripheral: Bool, index: Int, _ body: ([UInt8]) async throws -> Void) async throws -> String {
        let serial = sent.count
        let length = random.bool(probability: 0.1) ? random.int(in: 500...2_000) : random.int(in: 0...200)
        // The first bytes make every message unique: direction and serial.
        let message = [toPeripheral ? 0xC0 : 0x90, UInt8(serial >> 8), UInt8(serial & 0xFF)] + bytes(length...length)
        sent.append(
            SentMessage(
                bytes: message, toPeripheral: toPeripheral, peer: peers[index].identifier,
                logIndex: await bridge.log.count))
        try await body(message)
        sent[serial].completed = true
        return "message \(serial) of \(message.count) bytes sent"
    }

    /// Schedules a fault at a random virtual time soon, with its recovery after it where the
    /// fault is a lasting condition (power, range).
    func scheduleFault(on index: Int) async -> String {
        let peer = peers[index]
        let at = await bridge.now.advanced(by: .milliseconds(random.int(in: 0...1_500)))
        let recovery = at.advanced(by: .milliseconds(random.int(in: 1...3_000)))
        let fault: Fault
        var recovered: Fault?
        switch random.int(in: 0..<5) {
        case 0:
            let codes: [CoreBluetoothError.Code] = [.connectionTimeout, .peripheralDisconnected, .unknown]
            fault = .disconnect(
                central: central.identifier, peripheral: peer.identifier,
                error: CoreBluetoothError(codes[random.int(in: 0..<codes.count)]))
        case 1:
            fault = .reset(peripheral: peer.identifier)
        case 2:
            fault = .proximity(peripheral: peer.identifier, .outOfRange)
            recovered = .proximity(peripheral: peer.identifier, [.near, .far, .immediate][random.int(in: 0..<3)])
        case 3:
            fault = .centralState(central.identifier, [.poweredOff, .resetting][coin()])
            recovered = .centralState(central.identifier, .poweredOn)
        default:
            // Messengers keep their power: powering off removes the published services, and
            // the message channel is bound to its characteristic.
            guard !peer.isMessenger else { return await scheduleFault(on: index) }
            fault = .peripheralState(peer.identifier, .poweredOff)
            recovered = .peripheralState(peer.identifier, .poweredOn)
        }
        await bridge.schedule(fault, at: at)
        if let recovered { await bridge.schedule(recovered, at: recovery) }
        return "scheduled \(fault) at \(at)" + (recovered.map { ", \($0) at \(recovery)" } ?? "")
    }

    /// Installs an error injection on the central (or, for updateValue, the peripheral).
    func inject(on index: Int) async -> String {
        let operations: [ErrorInjection.Operation] = [
            .connect, .serviceDiscovery, .characteristicDiscovery, .descriptorDiscovery, .read, .write, .subscribe,
            .readRSSI, .updateValue,
        ]
        let operation = operations[random.int(in: 0..<operations.count)]
        let attCodes: [ATTError.Code] = [.readNotPermitted, .insufficientAuthentication, .unlikelyError]
        // ATT errors answer only ATT requests (an injection of one elsewhere is refused).
        let answeredByATT: Set<ErrorInjection.Operation> = [
            .serviceDiscovery, .characteristicDiscovery, .descriptorDiscovery, .read, .write, .subscribe,
        ]
        let failure: ErrorInjection.Failure =
            answeredByATT.contains(operation) && coin() == 0
            ? .att(attCodes[random.int(in: 0..<attCodes.count)])
            : .coreBluetooth([.connectionFailed, .unknown, .operationCancelled][random.int(in: 0..<3)])
        let frequency: ErrorInjection.Frequency = [.once, .times(2), .probability(0.25)][random.int(in: 0..<3)]
        let peripheral = coin() == 0 ? peers[index].identifier : nil
        let injection = ErrorInjection(operation, failure: failure, frequency: frequency, peripheral: peripheral)
        injections.insert(injection.description)
        if operation == .updateValue {
            await peers[index].manager.inject(injection)
        } else {
            await central.inject(injection)
        }
        return "injected \(injection)"
    }

    /// 0 or 1.
    func coin() -> Int { random.int(in: 0...1) }

    /// Random bytes, of a length in `lengths`.
    func bytes(_ lengths: ClosedRange<Int>) -> [UInt8] {
        (0..<random.int(in: lengths)).map { _ in UInt8(truncatingIfNeeded: random.next()) }
    }
}
