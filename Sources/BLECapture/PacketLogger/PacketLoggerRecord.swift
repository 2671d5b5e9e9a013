/// One record of a ``PacketLoggerFile``: an HCI packet the host exchanged with its controller,
/// or one of Apple's own records (a log line, a note, a power or configuration change).
public struct PacketLoggerRecord: Sendable, Hashable {
    /// What a record holds, from its type byte.
    ///
    /// The HCI kinds carry the packet as the Bluetooth Core Specification lays it out (Vol 4,
    /// Part E, 5.4), without the H4 packet type byte: the kind says what the packet is and,
    /// for data, which way it went.
    public enum Kind: Sendable, Hashable, CustomStringConvertible {
        /// 0x00, an HCI command from the host.
        case hciCommand
        /// 0x01, an HCI event from the controller.
        case hciEvent
        /// 0x02, ACL data the host sent (host to controller).
        case aclSent
        /// 0x03, ACL data the host received (controller to host).
        case aclReceived
        /// 0x08, SCO data the host sent.
        case scoSent
        /// 0x09, SCO data the host received.
        case scoReceived
        /// 0x0A, Link Manager Protocol data sent.
        case lmpSent
        /// 0x0B, Link Manager Protocol data received.
        case lmpReceived
        /// 0xF7, a line of the system log.
        case syslog
        /// 0xF8, a kernel message.
        case kernel
        /// 0xF9, a kernel debug message.
        case kernelDebug
        /// 0xFA, an error message.
        case error
        /// 0xFB, a power state change.
        case power
        /// 0xFC, a note (text PacketLogger or the user added).
        case note
        /// 0xFD, a configuration record.
        case config
        /// 0xFE, a controller that appeared.
        case newController
        /// Any other type byte (newer versions of PacketLogger write more of Apple's own kinds).
        case other(UInt8)

        /// The kind of a type byte.
        public init(rawValue: UInt8) {
            switch rawValue {
            case 0x00: self = .hciCommand
            case 0x01: self = .hciEvent
            case 0x02: self = .aclSent
            case 0x03: self = .aclReceived
            case 0x08: self = .scoSent
            case 0x09: self = .scoReceived
            case 0x0A: self = .lmpSent
            case 0x0B: self = .lmpReceived
            case 0xF7: self = .syslog
            case 0xF8: self = .kernel
            case 0xF9: self = .kernelDebug
            case 0xFA: self = .error
            case 0xFB: self = .power
            case 0xFC: self = .note
            case 0xFD: self = .config
            case 0xFE: self = .newController
            default: self = .other(rawValue)
            }
        }

        /// The type byte.
        public var rawValue: UInt8 {
            switch self {
            case .hciCommand: 0x00
            case .hciEvent: 0x01
            case .aclSent: 0x02
            case .aclReceived: 0x03
            case .scoSent: 0x08
            case .scoReceived: 0x09
            case .lmpSent: 0x0A
            case .lmpReceived: 0x0B
            case .syslog: 0xF7
            case .kernel: 0xF8
            case .kernelDebug: 0xF9
            case .error: 0xFA
            case .power: 0xFB
            case .note: 0xFC
            case .config: 0xFD
            case .newController: 0xFE
            case .other(let value): value
            }
        }

        /// Whether the record holds an HCI packet (command, event, ACL or SCO data), which
        /// ``HCIPacket/decode(_:)`` reads; the other kinds are Apple's own records or LMP.
        public var isHCI: Bool {
            switch self {
            case .hciCommand, .hciEvent, .aclSent, .aclReceived, .scoSent, .scoReceived: true
            default: false
            }
        }

        /// The kind's name, without its type byte.
        public var name: String {
            switch self {
            case .hciCommand: "HCI command"
            case .hciEvent: "HCI event"
            case .aclSent: "ACL data sent"
            case .aclReceived: "ACL data received"
            case .scoSent: "SCO data sent"
            case .scoReceived: "SCO data received"
            case .lmpSent: "LMP sent"
            case .lmpReceived: "LMP received"
            case .syslog: "syslog"
            case .kernel: "kernel"
            case .kernelDebug: "kernel debug"
            case .error: "error"
            case .power: "power"
            case .note: "note"
            case .config: "config"
            case .newController: "new controller"
            case .other: "unknown"
            }
        }

        public var description: String { "0x\(hex(rawValue)) (\(name))" }
    }

    /// The record's position in the file, from 0; Apple's records count too, as Wireshark
    /// numbers them.
    public var index: Int
    /// What the record holds.
    public var kind: Kind
    /// When the record was written: whole seconds since 1 January 1970.
    public var seconds: UInt32
    /// When the record was written: microseconds past ``seconds``.
    public var microseconds: UInt32
    /// The packet (or Apple's record) bytes, after the type byte.
    public var data: [UInt8]

    /// Creates a record.
    public init(index: Int, kind: Kind, seconds: UInt32, microseconds: UInt32, data: [UInt8]) {
        self.index = index
        self.kind = kind
        self.seconds = seconds
        self.microseconds = microseconds
        self.data = data
    }

    /// When the record was written, in microseconds since 1 January 1970.
    public var timestamp: Int64 { Int64(seconds) * 1_000_000 + Int64(microseconds) }
}
