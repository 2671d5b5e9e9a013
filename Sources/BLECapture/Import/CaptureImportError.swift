import BLEMockKit

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Why a capture could not be imported at all (`mockble import` exits with status 2).
public enum CaptureImportError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The file does not exist.
    case missingFile(String)
    /// The file exists but could not be read.
    case unreadableFile(String)
    /// The bytes are not a usable btsnoop file (``BTSnoopError/notBTSnoop`` when they are not
    /// a PacketLogger file either).
    case notACapture(BTSnoopError)
    /// The bytes are not a usable PacketLogger file, and the caller said they should be one
    /// (a `.pklg` file, or ``CaptureFormat/packetLogger``).
    case unreadablePacketLogger(PacketLoggerError)
    /// The file's datalink frames packets in a way this reader does not decode.
    case unsupportedDatalink(BTSnoopDatalink)
    /// A `--peer` value is not a Bluetooth address.
    case invalidPeerAddress(String)
    /// The capture has no LE connection; `advertisers` lists the devices it heard advertising.
    case noConnection(advertisers: [BluetoothAddress])
    /// The capture has ACL data on connection handles (`handles`) but no connection event for
    /// any of them: it began after the connection came up (a rolling snoop log, say), so which
    /// device was at the other end, and the link's start, are not in it.
    case connectionStartNotCaptured(handles: [UInt16])
    /// No connection of the capture goes to the requested peer; `connected` lists those that do exist.
    case peerNotFound(BluetoothAddress, connected: [BluetoothAddress])
    /// Nothing could be imported for the reason `error` gives, from a file that is damaged:
    /// `damage` lists what was wrong with it (each naming its record), which may be why (a
    /// record whose length was damaged hides the connection event after it, say).
    indirect case damagedCapture(CaptureImportError, damage: [CaptureWarning])
    /// The importer produced a document the fixture format rejects (a bug in the importer).
    case invalidOutput(FixtureError)
    /// An output file or its directory could not be written; the payload is its path.
    case unwritableOutput(String)

    public var description: String {
        switch self {
        case .missingFile(let path): "no such file: \(path)"
        case .unreadableFile(let path): "cannot read \(path) (\(Self.whyUnreadable(path)))"
        case .notACapture(.notBTSnoop):
            "not a btsnoop file (it does not start with \"btsnoop\\0\") nor a PacketLogger file (its records "
                + "do not read in either byte order); save the capture in btsnoop format (e.g. Android's "
                + "btsnoop_hci.log or btmon -w) or from PacketLogger as a .pklg file"
        case .notACapture(let error): error.description
        case .unreadablePacketLogger(let error): "not a usable PacketLogger capture: \(error)"
        case .unsupportedDatalink(let datalink):
            "the capture's datalink is \(datalink), which this importer does not decode; "
                + "save it as H4 (1002), H1 (1001) or the Linux monitor format (2001)"
        case .invalidPeerAddress(let text):
            "\"\(text)\" is not a Bluetooth address; write it as six hex bytes, e.g. F1:E2:D3:C4:B5:A6"
        case .noConnection(let advertisers):
            "the capture has no LE connection, so there is no GATT traffic to import"
                + (advertisers.isEmpty
                    ? "" : " (it heard " + advertisers.map(\.description).joined(separator: ", ") + " advertising)")
                + "; capture a connection to the device"
        case .connectionStartNotCaptured(let handles):
            "the capture has data on connection handle"
                + (handles.count == 1 ? " " : "s ")
                + handles.map { "0x\(hex($0))" }.joined(separator: ", ")
                + " but no LE connection event for "
                + (handles.count == 1 ? "it" : "them")
                + ": it began after the connection came up; start capturing before connecting (on Android, "
                + "turn the HCI snoop log on, then toggle Bluetooth) so the connection's start is in it"
        case .peerNotFound(let peer, let connected):
            "the capture has no connection to \(peer)"
                + (connected.isEmpty
                    ? "" : "; it has connections to " + connected.map(\.description).joined(separator: ", "))
        case .damagedCapture(let error, let damage):
            "\(error); the file is damaged, which may be why: "
                + damage.prefix(5).map(\.description).joined(separator: "; ")
                + (damage.count > 5 ? "; and \(damage.count - 5) more" : "")
        case .invalidOutput(let error): "the importer wrote an invalid document (please report this): \(error)"
        case .unwritableOutput(let path): "cannot write \(path) (check the directory and its permissions)"
        }
    }
}

extension CaptureImportError {
    /// Why a file that exists could not be read, as the message says it: a folder, a device or
    /// pipe, or a file the permissions keep closed.
    static func whyUnreadable(_ path: String) -> String {
        guard FileManager.default.fileExists(atPath: path) else { return "check its permissions" }
        switch UnreadableFile(path: path) {
        case .folder: return "it is a folder; give the capture file in it"
        case .notARegularFile: return "it is not a regular file; give a capture file"
        case .notReadable: return "check its permissions"
        }
    }
}
