/// Reads fixed-width integers and byte runs from the front of a byte buffer, in either byte
/// order; every read checks the length first, so a short buffer is an error, never a trap.
struct ByteReader {
    /// A read that needed more bytes than were left.
    struct Shortfall: Error, Hashable, Sendable {
        /// How many bytes the read needed.
        var needed: Int
        /// How many were left.
        var available: Int
    }

    private let bytes: ArraySlice<UInt8>
    private(set) var position: Int

    /// A reader over `bytes`, starting at their first byte.
    init(_ bytes: ArraySlice<UInt8>) {
        self.bytes = bytes
        position = bytes.startIndex
    }

    /// A reader over `bytes`.
    init(_ bytes: [UInt8]) {
        self.init(bytes[...])
    }

    /// How many bytes are left.
    var remaining: Int { bytes.endIndex - position }

    /// Whether every byte was read.
    var isAtEnd: Bool { remaining == 0 }

    /// The next `count` bytes.
    mutating func bytes(_ count: Int) throws(Shortfall) -> ArraySlice<UInt8> {
        guard count >= 0, count <= remaining else { throw Shortfall(needed: count, available: remaining) }
        defer { position += count }
        return bytes[position..<position + count]
    }

    /// Everything left.
    mutating func rest() -> ArraySlice<UInt8> {
        defer { position = bytes.endIndex }
        return bytes[position...]
    }

    /// One byte.
    mutating func uint8() throws(Shortfall) -> UInt8 {
        try bytes(1).first!
    }

    /// A 16-bit little-endian integer (HCI, L2CAP and ATT fields).
    mutating func uint16() throws(Shortfall) -> UInt16 {
        UInt16(try littleEndian(2))
    }

    /// A 24-bit little-endian integer.
    mutating func uint24() throws(Shortfall) -> UInt32 {
        UInt32(try littleEndian(3))
    }

    /// A 32-bit integer in the given order.
    mutating func uint32(bigEndian: Bool) throws(Shortfall) -> UInt32 {
        UInt32(truncatingIfNeeded: bigEndian ? try self.bigEndian(4) : try littleEndian(4))
    }

    /// A 64-bit integer in the given order.
    mutating func uint64(bigEndian: Bool) throws(Shortfall) -> UInt64 {
        bigEndian ? try self.bigEndian(8) : try littleEndian(8)
    }

    private mutating func littleEndian(_ width: Int) throws(Shortfall) -> UInt64 {
        var value: UInt64 = 0
        for (shift, byte) in try bytes(width).enumerated() { value |= UInt64(byte) << (8 * UInt64(shift)) }
        return value
    }

    private mutating func bigEndian(_ width: Int) throws(Shortfall) -> UInt64 {
        var value: UInt64 = 0
        for byte in try bytes(width) { value = value << 8 | UInt64(byte) }
        return value
    }
}
