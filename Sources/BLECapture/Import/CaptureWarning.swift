/// Something an import skipped or adjusted: the outputs hold only what the capture showed
/// for certain, and each warning says what was left out and why. `mockble import` prints
/// them on standard error.
public struct CaptureWarning: Sendable, Hashable, CustomStringConvertible {
    /// What kind of thing was skipped or adjusted.
    public enum Kind: Sendable, Hashable {
        /// The file itself was damaged or unusual (a truncated last record, a little-endian header).
        case file(BTSnoopFile.Problem)
        /// A PacketLogger file could not be read past a record (cut short, or a length no
        /// record has); the records before it were imported.
        case packetLoggerFile(PacketLoggerError)
        /// `count` PacketLogger records of one kind hold no HCI packet (Apple's log, note,
        /// power and configuration records, LMP data) and were skipped; one warning per kind.
        case skippedRecords(PacketLoggerRecord.Kind, count: Int)
        /// A record is not an HCI packet this reader understands (an unknown packet type, a
        /// length that does not add up); it was skipped.
        case undecodableRecord(HCIDecodingError)
        /// A followed event was too short to read.
        case undecodableEvent(HCIDecodingError)
        /// A record kept fewer bytes than its packet had (a filtered or snapped capture).
        case truncatedPacket(kept: Int, original: Int)
        /// The writer counted packets it lost (cumulative drops rose by `count`).
        case packetsDropped(count: Int)
        /// ACL fragments did not add up to L2CAP frames (fragments lost mid-PDU).
        case fragmentsLost(L2CAPReassembler.Problem)
        /// `frames` L2CAP frames went `direction` on `channel`, which is neither ATT's fixed
        /// channel (0x0004) nor the signalling or Security Manager channel, and were skipped:
        /// an Enhanced ATT bearer (`spsm` 0x0027) or another channel a protocol opened (with
        /// the SPSM, when the capture showed the channel open). One warning per connection,
        /// channel and direction.
        case otherChannel(UInt16, direction: HCIPacket.Direction, spsm: UInt16?, frames: Int)
        /// A frame on the ATT channel is not an ATT PDU.
        case undecodableATT(ATTDecodingError)
        /// The followed link was encrypted and `hiddenPackets` of its data packets could not
        /// be read as ATT (the capture kept them encrypted or cut short).
        case encryptedTraffic(hiddenPackets: Int)
        /// A connection to another device was not followed.
        case otherConnection(peer: BluetoothAddress, handle: UInt16)
        /// A later connection to the followed device was not followed (only the first is imported).
        case laterConnection(peer: BluetoothAddress, handle: UInt16)
        /// ACL data on a handle no connection event announced (the capture began mid-connection).
        case unknownHandle(UInt16)
        /// `packets` ACL data packets came on a connection's handle after the capture showed the
        /// connection end (Disconnection Complete), before any new connection took the handle.
        case dataAfterDisconnection(handle: UInt16, packets: Int)
        /// A request got no response in the capture.
        case unansweredRequest(opcode: UInt8)
        /// A response answered no request the capture showed.
        case unexpectedResponse(opcode: UInt8)
        /// The peripheral sent its own requests (acting as a GATT client too); they are not replayed.
        case peripheralRequests(count: Int)
        /// An operation the capture showed that the scenario cannot replay.
        case notReplayed(String)
        /// Something in the profile differs from the capture, or could not be known from it.
        case profileAdjusted(String)
    }

    /// What kind of thing happened.
    public var kind: Kind
    /// The 1-based packet number (as Wireshark counts frames) it concerns, if one.
    public var packet: Int?

    /// Creates a warning.
    public init(_ kind: Kind, packet: Int? = nil) {
        self.kind = kind
        self.packet = packet
    }

    public var description: String {
        let location = packet.map { "packet \($0): " } ?? ""
        return location + message
    }

    /// Whether the warning is of damage to the file or its records (not of something the
    /// capture held that the import skipped): what can make a connection disappear.
    var isDamage: Bool {
        switch kind {
        case .file, .packetLoggerFile, .undecodableRecord, .undecodableEvent, .truncatedPacket, .packetsDropped,
            .fragmentsLost:
            true
        default: false
        }
    }

    /// What happened and what the import did about it.
    public var message: String {
        switch kind {
        case .file(let problem): problem.description
        case .packetLoggerFile(let error): "\(error); the records before it were imported"
        case .skippedRecords(let kind, let count):
            "skipped \(count) PacketLogger record\(count == 1 ? "" : "s") of type \(kind), which hold\(count == 1 ? "s" : "") "
                + "no HCI packet"
        case .undecodableRecord(let error): "skipped \(error)"
        case .undecodableEvent(let error): "skipped \(error)"
        case .truncatedPacket(let kept, let original):
            "the capture kept \(kept) of the packet's \(original) bytes; the packet was skipped"
        case .packetsDropped(let count):
            "the capture lost \(count) packet(s) here; frames in progress were dropped"
        case .fragmentsLost(let problem): problem.description + "; it was skipped"
        case .otherChannel(let channel, let direction, let spsm, let frames):
            "skipped \(frames) L2CAP frame\(frames == 1 ? "" : "s") \(direction.label) on channel 0x\(hex(channel))"
                + (spsm == 0x0027
                    ? ", an Enhanced ATT (EATT) bearer (SPSM 0x0027): ATT over EATT is not imported, so operations "
                        + "on it are missing from the scenario"
                    : (spsm.map { ", an LE credit-based channel for SPSM 0x\(hex($0))" } ?? "")
                        + "; only ATT on its fixed channel (0x0004) is imported")
        case .undecodableATT(let error): "skipped \(error)"
        case .encryptedTraffic(let hidden):
            "the link is encrypted and \(hidden) of its data packets could not be read as ATT (the capture "
                + "holds them encrypted or cut short); operations in them are missing from the scenario"
        case .otherConnection(let peer, let handle):
            "skipped the connection to \(peer) (handle 0x\(hex(handle))); import it with --peer \(peer)"
        case .laterConnection(let peer, let handle):
            "skipped a later connection to \(peer) (handle 0x\(hex(handle))); only the first connection to a "
                + "device is imported"
        case .unknownHandle(let handle):
            "skipped ACL data on handle 0x\(hex(handle)), which no connection event in the capture announced "
                + "(the capture began after the connection was made)"
        case .dataAfterDisconnection(let handle, let packets):
            "skipped \(packets) ACL data packet\(packets == 1 ? "" : "s") on handle 0x\(hex(handle)) that came after "
                + "its connection ended (Disconnection Complete)"
        case .unansweredRequest(let opcode):
            "an ATT request (opcode 0x\(hex(opcode))) got no response in the capture; it was skipped"
        case .unexpectedResponse(let opcode):
            "an ATT response (opcode 0x\(hex(opcode))) answered no request in the capture; it was skipped"
        case .peripheralRequests(let count):
            "the peripheral sent \(count) ATT request(s) of its own (as a GATT client); they are not replayed"
        case .notReplayed(let what): what
        case .profileAdjusted(let what): what
        }
    }
}
