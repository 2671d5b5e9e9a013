/// A Bluetooth device address (BD_ADDR), written most significant byte first as
/// `F1:E2:D3:C4:B5:A6`; HCI carries the six bytes least significant first.
public struct BluetoothAddress: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The six bytes, most significant first (as written).
    public var bytes: [UInt8]

    /// An address from its six bytes, most significant first.
    public init?(bytes: [UInt8]) {
        guard bytes.count == 6 else { return nil }
        self.bytes = bytes
    }

    /// An address from the six bytes HCI carries, least significant first.
    init(hciBytes: some Sequence<UInt8>) {
        bytes = Array(hciBytes.reversed())
    }

    /// Parses `F1:E2:D3:C4:B5:A6` (colons or dashes, any case); `nil` when it is not one.
    public init?(string: String) {
        let parts = string.split(whereSeparator: { $0 == ":" || $0 == "-" })
        guard parts.count == 6 else { return nil }
        var bytes: [UInt8] = []
        for part in parts {
            guard part.count == 2, let byte = UInt8(part, radix: 16) else { return nil }
            bytes.append(byte)
        }
        self.bytes = bytes
    }

    public var description: String { bytes.map { hex($0) }.joined(separator: ":") }

    public static func < (lhs: BluetoothAddress, rhs: BluetoothAddress) -> Bool {
        lhs.bytes.lexicographicallyPrecedes(rhs.bytes)
    }
}
