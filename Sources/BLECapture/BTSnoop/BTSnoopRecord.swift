/// One packet record of a ``BTSnoopFile``.
public struct BTSnoopRecord: Sendable, Hashable {
    /// Microseconds from 1 January of year 0 to 1 January 2000, the offset btsnoop
    /// timestamps are usually anchored with.
    public static let epoch2000: Int64 = 0x00E0_3AB4_4A67_6000

    /// The record's position in the file, from 0.
    public var index: Int
    /// How long the packet was.
    public var originalLength: Int
    /// The packet flags: bit 0 is the direction (1 received by the host), bit 1 marks a
    /// command or event (0 data). With the Linux monitor datalink, the upper 16 bits hold the
    /// controller index and the lower 16 the monitor opcode instead.
    public var flags: UInt32
    /// How many packets were lost since the capture began, as the writer counted them.
    public var cumulativeDrops: UInt32
    /// When the packet was seen, in microseconds since midnight, 1 January of year 0.
    public var timestamp: Int64
    /// The packet bytes the record kept.
    public var data: [UInt8]

    /// Creates a record.
    public init(
        index: Int, originalLength: Int, flags: UInt32, cumulativeDrops: UInt32, timestamp: Int64, data: [UInt8]
    ) {
        self.index = index
        self.originalLength = originalLength
        self.flags = flags
        self.cumulativeDrops = cumulativeDrops
        self.timestamp = timestamp
        self.data = data
    }

    /// Whether the record kept fewer bytes than the packet had (a filtered or snapped capture).
    public var isTruncated: Bool { data.count < originalLength }

    /// Whether the host received the packet (controller to host); `false` when it sent it.
    public var isReceived: Bool { flags & 0x01 != 0 }

    /// Whether the flags mark a command or event rather than data.
    public var isCommandOrEvent: Bool { flags & 0x02 != 0 }
}

/// The datalink type of a btsnoop file: how each record's bytes frame an HCI packet.
public enum BTSnoopDatalink: Sendable, Hashable, CustomStringConvertible {
    /// 1001, un-encapsulated HCI (H1): no packet type byte; the record flags tell commands,
    /// events and data apart.
    case h1
    /// 1002, HCI UART (H4): each packet starts with its type byte (1 command, 2 ACL data,
    /// 3 SCO, 4 event, 5 ISO).
    case h4
    /// 1003, HCI BSCP.
    case bscp
    /// 1004, HCI Serial (H5, three-wire UART).
    case h5
    /// 2001, the Linux monitor (btmon): the flags carry an opcode per packet.
    case linuxMonitor
    /// Any other value.
    case other(UInt32)

    /// The type from its code.
    public init(rawValue: UInt32) {
        switch rawValue {
        case 1001: self = .h1
        case 1002: self = .h4
        case 1003: self = .bscp
        case 1004: self = .h5
        case 2001: self = .linuxMonitor
        default: self = .other(rawValue)
        }
    }

    /// The type's code.
    public var rawValue: UInt32 {
        switch self {
        case .h1: 1001
        case .h4: 1002
        case .bscp: 1003
        case .h5: 1004
        case .linuxMonitor: 2001
        case .other(let value): value
        }
    }

    /// Whether ``HCIPacket`` can decode this datalink's records.
    public var isSupported: Bool {
        switch self {
        case .h1, .h4, .linuxMonitor: true
        case .bscp, .h5, .other: false
        }
    }

    public var description: String {
        switch self {
        case .h1: "1001 (un-encapsulated HCI, H1)"
        case .h4: "1002 (HCI UART, H4)"
        case .bscp: "1003 (HCI BSCP)"
        case .h5: "1004 (HCI Serial, H5)"
        case .linuxMonitor: "2001 (Linux monitor)"
        case .other(let value): "\(value) (unassigned)"
        }
    }
}
