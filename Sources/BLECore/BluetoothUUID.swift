#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A Bluetooth attribute UUID in its 16-, 32- or 128-bit form, the kit's counterpart of
/// CoreBluetooth's `CBUUID`.
///
/// Every UUID is stored as its full 128-bit value. A 16-bit UUID `XXXX` stands for
/// `0000XXXX-0000-1000-8000-00805F9B34FB` and a 32-bit UUID `XXXXXXXX` for
/// `XXXXXXXX-0000-1000-8000-00805F9B34FB` (the Bluetooth base UUID, Core Specification
/// Vol 3, Part B, 2.5.1), so the short and long spellings of one UUID are equal and hash
/// alike:
///
/// ```swift
/// let heartRate: BluetoothUUID = "180D"
/// let expanded = try BluetoothUUID(string: "0000180d-0000-1000-8000-00805f9b34fb")
/// assert(heartRate == expanded)
/// assert(expanded.uuidString == "180D")
/// ```
///
/// Parsing from a string throws ``ParseError`` naming the input. String literals are for
/// tests and constants: an unparseable literal stops the program with a message naming
/// it, as `CBUUID(string:)` does.
public struct BluetoothUUID: Hashable, Sendable, Comparable {
    /// The first eight bytes of the 128-bit value, big-endian.
    public let high: UInt64
    /// The last eight bytes of the 128-bit value, big-endian.
    public let low: UInt64

    /// The low half of the Bluetooth base UUID (`8000-00805F9B34FB`).
    static let baseLow: UInt64 = 0x8000_0080_5F9B_34FB
    /// The lower 32 bits of the high half of the base UUID (`0000-1000`).
    static let baseHighSuffix: UInt64 = 0x0000_1000

    /// Creates a UUID from its 128-bit value, given as two big-endian halves.
    public init(high: UInt64, low: UInt64) {
        self.high = high
        self.low = low
    }

    /// Creates a 16-bit UUID such as `0x180D` (Heart Rate), expanded with the base UUID.
    public init(_ value: UInt16) {
        self.init(UInt32(value))
    }

    /// Creates a 32-bit UUID, expanded with the base UUID.
    public init(_ value: UInt32) {
        self.init(high: UInt64(value) << 32 | Self.baseHighSuffix, low: Self.baseLow)
    }

    /// Creates a UUID from a Foundation `UUID` (always the 128-bit form; it is shown in
    /// its short form if it lies in the Bluetooth base range).
    public init(_ uuid: UUID) {
        let u = uuid.uuid
        let bytes = [
            u.0, u.1, u.2, u.3, u.4, u.5, u.6, u.7, u.8, u.9, u.10, u.11, u.12, u.13, u.14, u.15,
        ]
        self.init(bigEndian128: bytes[...])
    }

    /// Creates a UUID from its big-endian bytes: 2 (16-bit), 4 (32-bit) or 16 (128-bit),
    /// as in `CBUUID.data`.
    ///
    /// - Throws: ``ParseError`` with reason ``ParseError/Reason/invalidByteCount(_:)`` for
    ///   any other length.
    public init(bytes: some Collection<UInt8>) throws(ParseError) {
        let array = Array(bytes)
        switch array.count {
        case 2: self.init(UInt16(array[0]) << 8 | UInt16(array[1]))
        case 4: self.init(array.reduce(UInt32(0)) { $0 << 8 | UInt32($1) })
        case 16: self.init(bigEndian128: array[...])
        default:
            let hex = array.map { Self.hexPair($0) }.joined()
            throw ParseError(input: "0x" + hex, reason: .invalidByteCount(array.count))
        }
    }

    init(bigEndian128 bytes: ArraySlice<UInt8>) {
        var high: UInt64 = 0
        var low: UInt64 = 0
        for (index, byte) in bytes.enumerated() {
            if index < 8 { high = high << 8 | UInt64(byte) } else { low = low << 8 | UInt64(byte) }
        }
        self.init(high: high, low: low)
    }

    /// The width of the shortest form of a UUID.
    public enum Width: Int, Sendable, Hashable, CaseIterable {
        /// A 16-bit UUID assigned by the Bluetooth SIG, such as `180D`.
        case bits16 = 16
        /// A 32-bit UUID assigned by the Bluetooth SIG.
        case bits32 = 32
        /// A full 128-bit UUID, usually a vendor's own.
        case bits128 = 128
    }

    /// The shortest form this UUID can be written in.
    public var width: Width {
        guard low == Self.baseLow, high & 0xFFFF_FFFF == Self.baseHighSuffix else { return .bits128 }
        return high >> 48 == 0 ? .bits16 : .bits32
    }

    /// The 16-bit value, if this UUID has a 16-bit form.
    public var value16: UInt16? {
        width == .bits16 ? UInt16(truncatingIfNeeded: high >> 32) : nil
    }

    /// The 32-bit value, if this UUID has a 16- or 32-bit form.
    public var value32: UInt32? {
        width == .bits128 ? nil : UInt32(truncatingIfNeeded: high >> 32)
    }

    /// The big-endian bytes of the shortest form: 2, 4 or 16 bytes, as `CBUUID.data`.
    public var bytes: [UInt8] {
        switch width {
        case .bits16: return Self.bigEndianBytes(high >> 32, count: 2)
        case .bits32: return Self.bigEndianBytes(high >> 32, count: 4)
        case .bits128: return Self.bigEndianBytes(high, count: 8) + Self.bigEndianBytes(low, count: 8)
        }
    }

    /// The full 128-bit value as a Foundation `UUID`.
    public var uuid: UUID {
        let b = Self.bigEndianBytes(high, count: 8) + Self.bigEndianBytes(low, count: 8)
        return UUID(
            uuid: (
                b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13],
                b[14], b[15]
            ))
    }

    /// The canonical string: the shortest form in uppercase hexadecimal — four digits for a
    /// 16-bit UUID (`"180D"`), eight for a 32-bit one, and the hyphenated 36-character form
    /// otherwise — matching `CBUUID.uuidString`.
    public var uuidString: String {
        switch width {
        case .bits16: return Self.hex(high >> 32, digits: 4)
        case .bits32: return Self.hex(high >> 32, digits: 8)
        case .bits128: return fullString
        }
    }

    /// The full 128-bit form in uppercase, hyphenated, whatever the shortest form is.
    public var fullString: String {
        let h = Self.hex(high, digits: 16)
        let l = Self.hex(low, digits: 16)
        return "\(h.prefix(8))-\(h.dropFirst(8).prefix(4))-\(h.suffix(4))-\(l.prefix(4))-\(l.suffix(12))"
    }

    public static func < (lhs: BluetoothUUID, rhs: BluetoothUUID) -> Bool {
        (lhs.high, lhs.low) < (rhs.high, rhs.low)
    }

    static func bigEndianBytes(_ value: UInt64, count: Int) -> [UInt8] {
        (0..<count).map { UInt8(truncatingIfNeeded: value >> (8 * UInt64(count - 1 - $0))) }
    }

    /// `value` in uppercase hexadecimal, zero-padded to at least `digits` digits.
    static func hex(_ value: UInt64, digits: Int) -> String {
        let count = max(digits, (64 - value.leadingZeroBitCount + 3) / 4)
        return String(unsafeUninitializedCapacity: count) { buffer in
            for index in 0..<count {
                let nibble = UInt8(truncatingIfNeeded: value >> UInt64(4 * (count - 1 - index))) & 0xF
                buffer[index] = nibble < 10 ? 0x30 + nibble : 0x37 + nibble
            }
            return count
        }
    }

    static func hexPair(_ byte: UInt8) -> String { hex(UInt64(byte), digits: 2) }
}

extension BluetoothUUID: CustomStringConvertible, CustomDebugStringConvertible {
    /// The canonical string, as ``uuidString``.
    public var description: String { uuidString }
    /// The canonical string with its width, e.g. `BluetoothUUID(180D)`.
    public var debugDescription: String { "BluetoothUUID(\(uuidString))" }
}
