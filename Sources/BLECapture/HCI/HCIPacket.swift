/// One HCI packet of a capture (Bluetooth Core Specification, Vol 4, Part E, 5.4).
public enum HCIPacket: Sendable, Hashable {
    /// Which way a data packet went.
    public enum Direction: String, Sendable, Hashable {
        /// From the host to its controller (sent over the air by this device).
        case hostToController
        /// From the controller to its host (received over the air by this device).
        case controllerToHost
    }

    /// A command from the host: its opcode (OGF << 10 | OCF) and parameters.
    case command(opcode: UInt16, parameters: [UInt8])
    /// An event from the controller: its code and parameters.
    case event(code: UInt8, parameters: [UInt8])
    /// A fragment of ACL data, and which way it went.
    case acl(ACLFragment, Direction)
    /// Synchronous (SCO) or isochronous (ISO) data, which carries no ATT.
    case audio
    /// A Linux monitor record that is not a packet (a controller added or opened, a note, a
    /// log line); the payload is its monitor opcode.
    case monitorNote(UInt16)

    /// The HCI UART (H4) packet type indicators.
    public enum PacketType: UInt8, Sendable {
        /// An HCI command.
        case command = 0x01
        /// ACL data.
        case acl = 0x02
        /// Synchronous (SCO) data.
        case sco = 0x03
        /// An HCI event.
        case event = 0x04
        /// Isochronous data.
        case iso = 0x05
    }

    /// Decodes a record's bytes as the datalink frames them.
    ///
    /// - Throws: ``HCIDecodingError`` — an empty record, an unknown packet type, a packet
    ///   shorter than its header or its declared length, or a datalink this reader does not
    ///   decode (``BTSnoopDatalink/isSupported``).
    public static func decode(_ record: BTSnoopRecord, datalink: BTSnoopDatalink) throws(HCIDecodingError) -> HCIPacket
    {
        let data = record.data[...]
        switch datalink {
        case .h4:
            guard let first = data.first else { throw .empty }
            guard let type = PacketType(rawValue: first) else { throw .unknownPacketType(first) }
            return try decode(type, data.dropFirst(), received: record.isReceived)
        case .h1:
            guard !data.isEmpty else { throw .empty }
            let type: PacketType = record.isCommandOrEvent ? (record.isReceived ? .event : .command) : .acl
            return try decode(type, data, received: record.isReceived)
        case .linuxMonitor:
            let opcode = UInt16(truncatingIfNeeded: record.flags)
            switch opcode {
            case 2: return try decode(.command, data, received: false)
            case 3: return try decode(.event, data, received: true)
            case 4, 5: return try decode(.acl, data, received: opcode == 5)
            case 6, 7, 18, 19: return .audio
            default: return .monitorNote(opcode)
            }
        case .bscp, .h5, .other:
            throw .unsupportedDatalink(datalink)
        }
    }

    /// Decodes a packet of a known type (without an H4 type byte).
    static func decode(_ type: PacketType, _ data: ArraySlice<UInt8>, received: Bool) throws(HCIDecodingError)
        -> HCIPacket
    {
        var reader = ByteReader(data)
        let headerLength: Int
        switch type {
        case .command: headerLength = 3
        case .event: headerLength = 2
        case .acl: headerLength = 4
        case .sco, .iso: return .audio
        }
        guard reader.remaining >= headerLength else {
            throw .truncated(what: "\(type) header", needed: headerLength, available: reader.remaining)
        }
        // The header fits, so these reads cannot fail.
        let header = (try? reader.bytes(headerLength)).map(Array.init) ?? []
        let declared =
            headerLength == 2
            ? Int(header[1]) : headerLength == 3 ? Int(header[2]) : Int(header[2]) | Int(header[3]) << 8
        guard declared == reader.remaining else {
            throw .lengthMismatch(what: "\(type) packet", declared: declared, actual: reader.remaining)
        }
        let body = Array(reader.rest())
        switch type {
        case .command:
            return .command(opcode: UInt16(header[0]) | UInt16(header[1]) << 8, parameters: body)
        case .event:
            return .event(code: header[0], parameters: body)
        default:
            let field = UInt16(header[0]) | UInt16(header[1]) << 8
            let fragment = ACLFragment(
                handle: field & 0x0FFF, boundary: ACLFragment.Boundary(rawValue: UInt8(field >> 12 & 0x3))!,
                broadcast: UInt8(field >> 14 & 0x3), data: body)
            return .acl(fragment, received ? .controllerToHost : .hostToController)
        }
    }
}

/// Why a record is not an HCI packet this reader understands.
public enum HCIDecodingError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The record has no bytes.
    case empty
    /// The H4 packet type byte is not command, ACL, SCO, event or ISO.
    case unknownPacketType(UInt8)
    /// The packet ends inside its header.
    case truncated(what: String, needed: Int, available: Int)
    /// The packet's length field disagrees with its size.
    case lengthMismatch(what: String, declared: Int, actual: Int)
    /// The datalink frames packets in a way this reader does not decode.
    case unsupportedDatalink(BTSnoopDatalink)

    public var description: String {
        switch self {
        case .empty: "an empty record"
        case .unknownPacketType(let type): "an unknown HCI packet type 0x\(hex(type))"
        case .truncated(let what, let needed, let available):
            "a \(what) cut short (\(available) of \(needed) bytes)"
        case .lengthMismatch(let what, let declared, let actual):
            "\(what) whose length field says \(declared) bytes but which has \(actual)"
        case .unsupportedDatalink(let datalink):
            "datalink \(datalink), which this reader does not decode (use H1, H4 or the Linux monitor format)"
        }
    }
}

/// `value` as upper-case hexadecimal, zero-padded to `width` digits.
func hex<T: BinaryInteger>(_ value: T, width: Int = MemoryLayout<T>.size * 2) -> String {
    let digits = String(value, radix: 16, uppercase: true)
    return String(repeating: "0", count: max(0, width - digits.count)) + digits
}
