/// The capture file formats ``CaptureImporter`` reads.
///
/// The content decides: a btsnoop file starts with its identification pattern, and a
/// PacketLogger file (which has no header) is one whose first record reads whole. A file's
/// extension only decides which format's error a file that is neither gets.
public enum CaptureFormat: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// btsnoop (``BTSnoopFile``): Android's `btsnoop_hci.log`, `btmon -w`, bumble's snooper.
    case btsnoop
    /// Apple's PacketLogger (``PacketLoggerFile``): `.pklg` files from a Mac's PacketLogger
    /// and the Bluetooth log of an iOS sysdiagnose.
    case packetLogger

    /// The format a file extension names (any case, without the dot): `pklg` for
    /// PacketLogger, `btsnoop` and `cfa` for btsnoop; `nil` for any other.
    public init?(fileExtension: String) {
        switch fileExtension.lowercased() {
        case "pklg": self = .packetLogger
        case "btsnoop", "cfa": self = .btsnoop
        default: return nil
        }
    }

    /// The format of a capture's bytes: btsnoop when they start with `btsnoop\0`,
    /// PacketLogger when their first record reads whole (``PacketLoggerFile/isPacketLogger(_:)``),
    /// otherwise `nil`.
    public init?(detecting bytes: [UInt8]) {
        if bytes.starts(with: BTSnoopFile.identification) {
            self = .btsnoop
        } else if PacketLoggerFile.isPacketLogger(bytes) {
            self = .packetLogger
        } else {
            return nil
        }
    }

    public var description: String {
        switch self {
        case .btsnoop: "btsnoop"
        case .packetLogger: "PacketLogger"
        }
    }
}
