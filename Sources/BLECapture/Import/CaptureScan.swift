import BLECore

/// An ATT PDU of a followed connection, with when and which way it went.
struct TimedPDU: Sendable, Hashable {
    /// The record's timestamp, in microseconds.
    var time: Int64
    /// The 1-based packet number of the record that completed it.
    var packet: Int
    /// Whether the central sent it (else the peripheral did).
    var fromCentral: Bool
    var pdu: ATTPDU
}

/// One LE connection as the capture shows it.
struct ConnectionLog: Sendable {
    /// The controller it went through (a Linux monitor capture's controller index; else 0).
    var controller: UInt16 = 0
    var handle: UInt16
    var peer: BluetoothAddress
    var isLocalCentral: Bool
    /// When the connection completed, in microseconds.
    var start: Int64
    /// The connection intervals it ran at (units of 1.25 ms), each from when the controller
    /// reported it (the connection's completion, then each parameter update), in order.
    var intervals: [(time: Int64, units: UInt16)] = []
    /// When and why it ended, if the capture shows it.
    var end: Int64?
    var disconnectReason: UInt8?
    /// For a recording: the CoreBluetooth error the app saw the link end with, when the
    /// replay's `fault` step is to give it (not `connectionTimeout`, which `disconnectReason`
    /// 0x08 stands for, nor `peripheralDisconnected`, which the peripheral's own disconnection gives).
    var disconnectError: CoreBluetoothError.Code?
    /// Whether the capturing host asked for the disconnection.
    var disconnectedLocally = false
    var isEncrypted = false
    var pdus: [TimedPDU] = []
    /// Warnings about this connection's data.
    var warnings: [CaptureWarning] = []
    /// Data packets that could not be read while the link was encrypted.
    var hiddenWhileEncrypted = 0

    /// An L2CAP channel identifier as the frames on it go: a CID names a channel at the device
    /// that allocated it, so the same number can name two channels, one each way.
    struct Channel: Hashable, Sendable {
        var direction: HCIPacket.Direction
        var cid: UInt16
    }

    /// The SPSM of each LE credit-based channel the signalling channel was seen opening.
    var channelSPSMs: [Channel: UInt16] = [:]
    /// The SPSM of each credit-based connection request not yet answered, by the way the
    /// request went and its identifier.
    var pendingChannelRequests: [HCIPacket.Direction: [UInt8: UInt16]] = [:]
    /// Frames on channels other than ATT's, the signalling channel and the Security Manager's:
    /// the first one's packet, and how many.
    var otherChannelFrames: [Channel: (packet: Int, count: Int)] = [:]

    /// The interval (units of 1.25 ms) the connection carried most of its ATT PDUs at (the later
    /// one of a tie; the last one when it carried none), if the capture reported one.
    var busiestInterval: UInt16? {
        guard !intervals.isEmpty else { return nil }
        var carried = [Int](repeating: 0, count: intervals.count)
        var segment = 0
        for pdu in pdus {
            while segment + 1 < intervals.count, intervals[segment + 1].time <= pdu.time { segment += 1 }
            carried[segment] += 1
        }
        let busiest = carried.indices.max { (carried[$0], $0) < (carried[$1], $1) }!
        return intervals[busiest].units
    }

    /// Whether a packet that went `direction` was sent by the central.
    func isFromCentral(_ direction: HCIPacket.Direction) -> Bool {
        (direction == .hostToController) == isLocalCentral
    }
}

/// What the advertising reports of one device showed.
struct AdvertisingLog: Sendable {
    var advertisement = AdvertisementData()
    var rssi: Int?
    var problems: [AdvertisingDataParser.Problem] = []
}

/// One pass over a capture's records: the LE connections with their ATT PDUs, what each
/// advertiser sent, and what could not be read.
struct CaptureScan: Sendable {
    var connections: [ConnectionLog] = []
    var advertising: [BluetoothAddress: AdvertisingLog] = [:]
    /// Warnings not tied to one connection.
    var warnings: [CaptureWarning] = []

    /// A connection handle on one controller: a Linux monitor capture holds the packets of
    /// every controller of the machine, each numbering its connections on its own.
    struct Link: Hashable, Sendable, Comparable {
        var controller: UInt16
        var handle: UInt16

        static func < (left: Link, right: Link) -> Bool {
            (left.controller, left.handle) < (right.controller, right.handle)
        }
    }

    private var open: [Link: Int] = [:]
    /// A reassembler per controller (the reassembler keys frames by handle alone).
    private var reassemblers: [UInt16: L2CAPReassembler] = [:]
    private var drops: UInt32 = 0
    private var unknownHandles: Set<Link> = []
    /// Connections the capture saw end, by link, until a new connection takes the link: the
    /// ACL data that still came on it (the first packet, and how many).
    private var ended: [Link: (connection: Int, packet: Int?, count: Int)] = [:]

    /// The connection handles ACL data went on with no connection event announcing them (the
    /// capture began after those connections did), in order.
    var handlesWithoutConnectionEvent: [UInt16] { Array(Set(unknownHandles.map(\.handle))).sorted() }

    init(_ file: BTSnoopFile) {
        warnings = file.problems.map { CaptureWarning(.file($0)) }
        for record in file.records {
            read(
                ScanRecord(record, datalink: file.datalink),
                decoded: Result { () throws(HCIDecodingError) in
                    try HCIPacket.decode(record, datalink: file.datalink)
                })
        }
        finish()
    }

    init(_ file: PacketLoggerFile) {
        var skipped: [(kind: PacketLoggerRecord.Kind, count: Int)] = []
        for record in file.records {
            let decoded: HCIPacket?
            do throws(HCIDecodingError) {
                decoded = try HCIPacket.decode(record)
            } catch {
                read(ScanRecord(record), decoded: .failure(error))
                continue
            }
            guard let decoded else {
                if let index = skipped.firstIndex(where: { $0.kind == record.kind }) {
                    skipped[index].count += 1
                } else {
                    skipped.append((record.kind, 1))
                }
                continue
            }
            read(ScanRecord(record), decoded: .success(decoded))
        }
        if let tail = file.unreadableTail {
            warnings.append(CaptureWarning(.packetLoggerFile(tail), packet: tail.recordIndex.map { $0 + 1 }))
        }
        warnings += skipped.map { CaptureWarning(.skippedRecords($0.kind, count: $0.count)) }
        finish()
    }

    /// Drops the fragments of frames the capture never completed.
    private mutating func finish() {
        abandonAll(packet: nil)
        for index in connections.indices {
            let channels = connections[index].otherChannelFrames.sorted { $0.value.packet < $1.value.packet }
            for (channel, frames) in channels {
                connections[index].warnings.append(
                    CaptureWarning(
                        .otherChannel(
                            channel.cid, direction: channel.direction, spsm: connections[index].channelSPSMs[channel],
                            frames: frames.count), packet: frames.packet))
            }
        }
        for link in ended.keys.sorted() { closeEnded(link) }
    }

    /// Warns of the data that came on `link` after its connection ended, if any did.
    private mutating func closeEnded(_ link: Link) {
        guard let end = ended.removeValue(forKey: link), end.count > 0 else { return }
        connections[end.connection].warnings.append(
            CaptureWarning(.dataAfterDisconnection(handle: link.handle, packets: end.count), packet: end.packet))
    }

    /// Drops every controller's open frames, warning of each.
    private mutating func abandonAll(packet: Int?) {
        for controller in reassemblers.keys.sorted() {
            for problem in reassemblers[controller]!.abandon() {
                warn(
                    .fragmentsLost(problem), link: Link(controller: controller, handle: problem.handle), packet: packet)
            }
        }
    }

    private mutating func read(_ record: ScanRecord, decoded result: Result<HCIPacket, HCIDecodingError>) {
        let packet = record.packet
        if record.drops > drops {
            warnings.append(CaptureWarning(.packetsDropped(count: Int(record.drops - drops)), packet: packet))
            drops = record.drops
            abandonAll(packet: packet)
        }
        let decoded: HCIPacket
        switch result {
        case .success(let value):
            decoded = value
        case .failure(let error):
            if record.isTruncated {
                truncated(record, link: nil)
            } else {
                warnings.append(CaptureWarning(.undecodableRecord(error), packet: packet))
            }
            return
        }
        switch decoded {
        case .command(let opcode, let parameters):
            // HCI_Disconnect: the capturing host ends a connection.
            if opcode == 0x0406, parameters.count >= 2 {
                let handle = (UInt16(parameters[0]) | UInt16(parameters[1]) << 8) & 0x0FFF
                if let index = open[Link(controller: record.controller, handle: handle)] {
                    connections[index].disconnectedLocally = true
                }
            }
        case .event(let code, let parameters):
            event(code: code, parameters: parameters, record: record)
        case .acl(let fragment, let direction):
            if record.isTruncated {
                truncated(record, link: Link(controller: record.controller, handle: fragment.handle))
                return
            }
            data(fragment, direction: direction, record: record)
        case .audio, .monitorNote:
            break
        }
    }

    private mutating func event(code: UInt8, parameters: [UInt8], record: ScanRecord) {
        let packet = record.packet
        let event: HCIEvent
        do throws(HCIDecodingError) {
            event = try HCIEvent.decode(code: code, parameters: parameters)
        } catch {
            warnings.append(CaptureWarning(.undecodableEvent(error), packet: packet))
            return
        }
        switch event {
        case .leConnectionComplete(let connection) where connection.status == 0:
            let link = Link(controller: record.controller, handle: connection.handle)
            closeEnded(link)
            open[link] = connections.count
            connections.append(
                ConnectionLog(
                    controller: record.controller, handle: connection.handle, peer: connection.peerAddress,
                    isLocalCentral: connection.isLocalCentral,
                    start: record.time, intervals: [(record.time, connection.interval)]))
        case .leConnectionUpdateComplete(let status, let handle, let interval) where status == 0:
            if let index = open[Link(controller: record.controller, handle: handle)] {
                connections[index].intervals.append((record.time, interval))
            }
        case .leAdvertisingReports(let reports):
            for report in reports {
                var log = advertising[report.address] ?? AdvertisingLog()
                if let problem = AdvertisingDataParser.merge(report.data, into: &log.advertisement) {
                    log.problems.append(problem)
                }
                if !report.isScanResponse { log.advertisement.isConnectable = report.isConnectable }
                if let rssi = report.rssi { log.rssi = rssi }
                advertising[report.address] = log
            }
        case .disconnectionComplete(let status, let handle, let reason) where status == 0:
            let link = Link(controller: record.controller, handle: handle)
            guard let index = open.removeValue(forKey: link) else { return }
            ended[link] = (index, nil, 0)
            connections[index].end = record.time
            connections[index].disconnectReason = reason
            for problem in reassemblers[record.controller]?.abandon(handle: handle) ?? [] {
                connections[index].warnings.append(CaptureWarning(.fragmentsLost(problem), packet: packet))
            }
        case .encryptionChange(let status, let handle, let isEnabled) where status == 0:
            if let index = open[Link(controller: record.controller, handle: handle)] {
                connections[index].isEncrypted = isEnabled
            }
        default:
            break
        }
    }

    private mutating func data(_ fragment: ACLFragment, direction: HCIPacket.Direction, record: ScanRecord) {
        let packet = record.packet
        let link = Link(controller: record.controller, handle: fragment.handle)
        guard let index = open[link] else {
            if var end = ended[link] {
                end.packet = end.packet ?? packet
                end.count += 1
                ended[link] = end
            } else if unknownHandles.insert(link).inserted {
                warnings.append(CaptureWarning(.unknownHandle(fragment.handle), packet: packet))
            }
            return
        }
        for output in reassemblers[record.controller, default: L2CAPReassembler()].append(
            fragment, direction: direction)
        {
            switch output {
            case .problem(let problem):
                if connections[index].isEncrypted {
                    connections[index].hiddenWhileEncrypted += 1
                } else {
                    connections[index].warnings.append(CaptureWarning(.fragmentsLost(problem), packet: packet))
                }
            case .frame(let frame) where frame.channel == L2CAPFrame.attChannel:
                do throws(ATTDecodingError) {
                    let pdu = try ATTPDU(bytes: frame.payload)
                    connections[index].pdus.append(
                        TimedPDU(
                            time: record.time, packet: packet,
                            fromCentral: connections[index].isFromCentral(direction), pdu: pdu))
                } catch {
                    if connections[index].isEncrypted {
                        connections[index].hiddenWhileEncrypted += 1
                    } else {
                        connections[index].warnings.append(CaptureWarning(.undecodableATT(error), packet: packet))
                    }
                }
            case .frame(let frame) where frame.channel == L2CAPFrame.leSignalingChannel:
                connections[index].readSignalling(frame.payload, direction: direction)
            case .frame(let frame) where frame.channel == L2CAPFrame.securityManagerChannel:
                break
            case .frame(let frame):
                let channel = ConnectionLog.Channel(direction: direction, cid: frame.channel)
                connections[index].otherChannelFrames[channel, default: (packet, 0)].count += 1
            }
        }
    }

    /// A record that kept only part of its packet.
    private mutating func truncated(_ record: ScanRecord, link: Link?) {
        let warning = CaptureWarning(
            .truncatedPacket(kept: record.kept, original: record.original), packet: record.packet)
        guard let link, let index = open[link] else {
            warnings.append(warning)
            return
        }
        if connections[index].isEncrypted {
            connections[index].hiddenWhileEncrypted += 1
        } else {
            connections[index].warnings.append(warning)
        }
    }

    private mutating func warn(_ kind: CaptureWarning.Kind, link: Link, packet: Int?) {
        if let index = open[link]
            ?? connections.lastIndex(where: { $0.controller == link.controller && $0.handle == link.handle })
        {
            connections[index].warnings.append(CaptureWarning(kind, packet: packet))
        } else {
            warnings.append(CaptureWarning(kind, packet: packet))
        }
    }
}

extension L2CAPReassembler.Problem {
    /// The connection handle the problem is on.
    var handle: UInt16 {
        switch self {
        case .continuationWithoutStart(let handle, _, _), .interrupted(let handle, _, _, _),
            .overrun(let handle, _, _, _), .abandoned(let handle, _, _, _):
            handle
        }
    }
}

extension ConnectionLog {
    /// Notes the channels an LE signalling command opens (Bluetooth Core Specification, Vol 3,
    /// Part A, 4.22 to 4.26): the LE credit-based and credit-based connection requests give the
    /// SPSM and the requester's CIDs, their responses the responder's.
    mutating func readSignalling(_ payload: [UInt8], direction: HCIPacket.Direction) {
        guard payload.count >= 4 else { return }
        let code = payload[0]
        let identifier = payload[1]
        let data = Array(payload.dropFirst(4))
        func word(_ offset: Int) -> UInt16? {
            offset + 1 < data.count ? UInt16(data[offset]) | UInt16(data[offset + 1]) << 8 : nil
        }
        // A CID a command carries is where its sender receives: frames on it go the other way.
        let towardSender: HCIPacket.Direction = direction == .hostToController ? .controllerToHost : .hostToController
        func open(_ cid: UInt16?, spsm: UInt16) {
            guard let cid, cid != 0 else { return }
            channelSPSMs[Channel(direction: towardSender, cid: cid)] = spsm
        }
        switch code {
        case 0x14:  // LE Credit Based Connection Request: SPSM, source CID, MTU, MPS, credits
            guard let spsm = word(0) else { return }
            pendingChannelRequests[direction, default: [:]][identifier] = spsm
            open(word(2), spsm: spsm)
        case 0x17:  // Credit Based Connection Request: SPSM, MTU, MPS, credits, source CIDs
            guard let spsm = word(0) else { return }
            pendingChannelRequests[direction, default: [:]][identifier] = spsm
            for offset in stride(from: 8, to: data.count, by: 2) { open(word(offset), spsm: spsm) }
        case 0x15:  // LE Credit Based Connection Response: destination CID, MTU, MPS, credits, result
            guard let spsm = pendingChannelRequests[towardSender]?.removeValue(forKey: identifier) else { return }
            open(word(0), spsm: spsm)
        case 0x18:  // Credit Based Connection Response: MTU, MPS, credits, result, destination CIDs
            guard let spsm = pendingChannelRequests[towardSender]?.removeValue(forKey: identifier) else { return }
            for offset in stride(from: 8, to: data.count, by: 2) { open(word(offset), spsm: spsm) }
        default:
            break
        }
    }
}
