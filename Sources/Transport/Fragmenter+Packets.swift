#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

extension Fragmenter {
    /// Fragments `message` into an array of packets, in sequence order.
    ///
    /// Each packet is allocated once at its final size and written in place.
    ///
    /// - Parameters:
    ///   - message: The message bytes.
    ///   - maxPacketLength: The characteristic's maximum write or update length, at least
    ///     ``minimumPacketLength``.
    ///   - id: The message id, fresh from the link's ``MessageIDAllocator``.
    ///   - maximumMessageLength: The configured limit. Defaults to 1 MiB.
    /// - Returns: The packets; each is at most `maxPacketLength` bytes.
    /// - Throws: ``TransportError`` if the packet length or message length is invalid.
    public static func packets(
        for message: UnsafeRawBufferPointer,
        maxPacketLength: Int,
        id: UInt16,
        maximumMessageLength: Int = TransportConfiguration.defaultMaximumMessageLength
    ) throws(TransportError) -> [[UInt8]] {
        let layout = try Layout(
            messageLength: message.count, maxPacketLength: maxPacketLength,
            maximumMessageLength: maximumMessageLength, checksum: checksum(id: id, message: message))
        var packets: [[UInt8]] = []
        packets.reserveCapacity(layout.packetCount)
        for sequence in 0..<layout.packetCount {
            let start = sequence * layout.payloadLength
            let length = min(layout.payloadLength, layout.frameLength - start) + headerLength
            packets.append(
                [UInt8](unsafeUninitializedCapacity: length) { buffer, initialized in
                    initialized = layout.writePacket(
                        sequence, id: id, message: message, to: UnsafeMutableRawPointer(buffer.baseAddress!))
                })
        }
        return packets
    }

    /// Fragments `message` into an array of packets, in sequence order.
    ///
    /// See ``packets(for:maxPacketLength:id:maximumMessageLength:)-(UnsafeRawBufferPointer,_,_,_)``.
    public static func packets(
        for message: [UInt8],
        maxPacketLength: Int,
        id: UInt16,
        maximumMessageLength: Int = TransportConfiguration.defaultMaximumMessageLength
    ) throws(TransportError) -> [[UInt8]] {
        try withBytes(of: message) { (bytes) throws(TransportError) in
            try packets(
                for: bytes, maxPacketLength: maxPacketLength, id: id, maximumMessageLength: maximumMessageLength)
        }
    }

    /// Fragments `message` into `Data` packets, in sequence order, ready for
    /// `writeValue(_:for:type:)` or `updateValue(_:for:onSubscribedCentrals:)`.
    ///
    /// Prefer the `[UInt8]` or visitor forms on hot paths; this one allocates a `Data`
    /// per packet.
    public static func dataPackets(
        for message: Data,
        maxPacketLength: Int,
        id: UInt16,
        maximumMessageLength: Int = TransportConfiguration.defaultMaximumMessageLength
    ) throws(TransportError) -> [Data] {
        try withBytes(of: message) { (bytes) throws(TransportError) in
            var result: [Data] = []
            let layout = try Layout(
                messageLength: bytes.count, maxPacketLength: maxPacketLength,
                maximumMessageLength: maximumMessageLength, checksum: checksum(id: id, message: bytes))
            result.reserveCapacity(layout.packetCount)
            for sequence in 0..<layout.packetCount {
                let start = sequence * layout.payloadLength
                let length = min(layout.payloadLength, layout.frameLength - start) + headerLength
                var packet = Data(count: length)
                packet.withUnsafeMutableBytes { buffer in
                    _ = layout.writePacket(sequence, id: id, message: bytes, to: buffer.baseAddress!)
                }
                result.append(packet)
            }
            return result
        }
    }
}

/// Runs `body` on the contiguous bytes of `bytes`, preserving `body`'s typed error.
func withBytes<Bytes: ContiguousBytes, Result>(
    of bytes: Bytes, _ body: (UnsafeRawBufferPointer) throws(TransportError) -> Result
) throws(TransportError) -> Result {
    let outcome: Swift.Result<Result, TransportError> = bytes.withUnsafeBytes { raw in
        do throws(TransportError) { return .success(try body(raw)) } catch { return .failure(error) }
    }
    return try outcome.get()
}
