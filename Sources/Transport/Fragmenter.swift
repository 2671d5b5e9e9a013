/// Splits messages into packets that fit one BLE write or notification.
///
/// ## Wire format
///
/// A message of `L` bytes becomes a *frame* of `F = L + 8` bytes: a 4-byte big-endian
/// length, the message, and a big-endian CRC-32C (``CRC32C``) checksum:
///
/// | frame offset  | size | field                                   |
/// | ------------- | ---- | --------------------------------------- |
/// | 0             | 4    | message length `L`, UInt32 big-endian   |
/// | 4             | L    | message bytes                           |
/// | 4 + L         | 4    | checksum, UInt32 big-endian             |
///
/// The checksum is the CRC-32C of the 2-byte big-endian message id followed by the
/// message bytes (``checksum(id:message:)``). Covering the id means a corrupted id cannot
/// deliver an intact message under another id; the length is checked structurally
/// (every packet's length must agree with it).
///
/// With a maximum packet length `M` (at least ``minimumPacketLength``, 20), each packet
/// carries `P = M − 4` frame bytes, so the frame needs `N = ⌈F / P⌉` packets. Packet `k`
/// (`0 ≤ k < N`) is:
///
/// | packet offset | size | field                                            |
/// | ------------- | ---- | ------------------------------------------------ |
/// | 0             | 2    | message id, UInt16 big-endian                    |
/// | 2             | 2    | sequence index `k`, UInt16 big-endian            |
/// | 4             | n    | frame bytes `k·P ..< k·P + n`                    |
///
/// where `n = P` for every packet but the last, and `n = F − (N − 1)·P` (1 through `P`)
/// for the last. The header is exactly ``headerLength`` (4) bytes; packet 0 starts with
/// the length, the last packet ends with the CRC. When the whole frame fits one packet,
/// the single packet is `F + 4` bytes long, shorter than `M`.
///
/// ## Limits
///
/// The 16-bit sequence index allows ``maximumPacketCount`` (65,536) packets, so a message
/// may be at most `65,536 × (M − 4) − 8` bytes (``maximumMessageLength(forMaxPacketLength:)``):
/// 1,048,568 bytes at `M = 20`, 15,728,632 bytes at `M = 244`. The configured
/// ``TransportConfiguration/maximumMessageLength`` (1 MiB by default) applies too; the
/// smaller limit wins and exceeding it throws a ``TransportError``.
///
/// ## Message ids
///
/// Give every message on a link direction a fresh id from one ``MessageIDAllocator``
/// (or ``SharedMessageIDAllocator`` when several tasks send on the link).
public enum Fragmenter {
    /// Bytes of header in every packet: 2 of message id, 2 of sequence index.
    public static let headerLength = 4

    /// Bytes of frame overhead per message: the 4-byte length and the 4-byte CRC-32C.
    public static let frameOverhead = 8

    /// The smallest supported maximum packet length: ATT_MTU 23 minus the 3-byte ATT
    /// header, the payload of one write or notification on a minimum-MTU link.
    public static let minimumPacketLength = 20

    /// The most packets one message can use: the 16-bit sequence index space.
    public static let maximumPacketCount = 65_536

    /// The checksum carried in a message's trailer: the CRC-32C of `id` (2 bytes,
    /// big-endian) followed by `message`.
    public static func checksum(id: UInt16, message: UnsafeRawBufferPointer) -> UInt32 {
        let idChecksum = withUnsafeBytes(of: id.bigEndian) { CRC32C.checksum($0) }
        return CRC32C.checksum(message, continuing: idChecksum)
    }

    /// The longest message the 16-bit sequence index allows at `maxPacketLength`:
    /// `65,536 × (maxPacketLength − 4) − 8`, or 0 below ``minimumPacketLength``.
    public static func maximumMessageLength(forMaxPacketLength maxPacketLength: Int) -> Int {
        guard maxPacketLength >= minimumPacketLength else { return 0 }
        let (product, overflow) = maximumPacketCount.multipliedReportingOverflow(
            by: maxPacketLength - headerLength)
        return overflow ? Int.max : product - frameOverhead
    }

    /// The number of packets a message of `messageLength` bytes needs.
    ///
    /// - Throws: ``TransportError`` when the packet length is below the minimum or the
    ///   message exceeds either limit.
    public static func packetCount(
        forMessageLength messageLength: Int,
        maxPacketLength: Int,
        maximumMessageLength: Int = TransportConfiguration.defaultMaximumMessageLength
    ) throws(TransportError) -> Int {
        try Layout(
            messageLength: messageLength, maxPacketLength: maxPacketLength,
            maximumMessageLength: maximumMessageLength, checksum: 0
        ).packetCount
    }

    /// Fragments `message`, handing each packet to `body` in sequence order.
    ///
    /// Every packet is written into one reusable buffer of at most `maxPacketLength`
    /// bytes; the buffer passed to `body` is only valid during that call, so copy it (or
    /// write it to the characteristic) before returning.
    ///
    /// - Parameters:
    ///   - message: The message bytes.
    ///   - maxPacketLength: The characteristic's maximum write or update length, at least
    ///     ``minimumPacketLength``.
    ///   - id: The message id, fresh from the link's ``MessageIDAllocator``.
    ///   - maximumMessageLength: The configured limit. Defaults to 1 MiB.
    ///   - body: Receives each packet.
    /// - Throws: A ``TransportError`` before any packet is produced if the packet length
    ///   or message length is invalid, or whatever `body` throws (which stops
    ///   fragmentation).
    public static func fragment(
        _ message: UnsafeRawBufferPointer,
        maxPacketLength: Int,
        id: UInt16,
        maximumMessageLength: Int = TransportConfiguration.defaultMaximumMessageLength,
        body: (UnsafeRawBufferPointer) throws -> Void
    ) throws {
        let layout = try Layout(
            messageLength: message.count, maxPacketLength: maxPacketLength,
            maximumMessageLength: maximumMessageLength, checksum: checksum(id: id, message: message))
        let capacity = min(maxPacketLength, layout.frameLength + headerLength)
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: capacity, alignment: 8)
        defer { buffer.deallocate() }
        for sequence in 0..<layout.packetCount {
            let count = layout.writePacket(sequence, id: id, message: message, to: buffer.baseAddress!)
            try body(UnsafeRawBufferPointer(rebasing: buffer[0..<count]))
        }
    }

    /// Fragments `message`, handing each packet to `body` in sequence order.
    ///
    /// See ``fragment(_:maxPacketLength:id:maximumMessageLength:body:)-(UnsafeRawBufferPointer,_,_,_,_)``.
    public static func fragment(
        _ message: [UInt8],
        maxPacketLength: Int,
        id: UInt16,
        maximumMessageLength: Int = TransportConfiguration.defaultMaximumMessageLength,
        body: (UnsafeRawBufferPointer) throws -> Void
    ) throws {
        try message.withUnsafeBytes { bytes in
            try fragment(
                bytes, maxPacketLength: maxPacketLength, id: id,
                maximumMessageLength: maximumMessageLength, body: body)
        }
    }
}
