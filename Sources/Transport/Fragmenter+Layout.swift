extension Fragmenter {
    /// The validated packet layout of one message (see ``Fragmenter`` for the format).
    struct Layout {
        /// `L`, the message length.
        let messageLength: Int
        /// `P`, frame bytes per packet (`maxPacketLength − 4`).
        let payloadLength: Int
        /// `N`, the number of packets.
        let packetCount: Int
        /// The CRC-32C of the message.
        let checksum: UInt32

        /// `F = L + 8`, the frame length.
        var frameLength: Int { messageLength + Fragmenter.frameOverhead }

        init(
            messageLength: Int, maxPacketLength: Int, maximumMessageLength: Int, checksum: UInt32
        ) throws(TransportError) {
            guard maxPacketLength >= Fragmenter.minimumPacketLength else {
                throw .packetLengthBelowMinimum(
                    maxPacketLength: maxPacketLength, minimum: Fragmenter.minimumPacketLength)
            }
            let limit = TransportConfiguration(maximumMessageLength: maximumMessageLength).effectiveMaximumMessageLength
            guard messageLength <= limit else {
                throw .messageTooLarge(length: messageLength, limit: limit)
            }
            let sequenceLimit = Fragmenter.maximumMessageLength(forMaxPacketLength: maxPacketLength)
            guard messageLength <= sequenceLimit else {
                throw .messageTooLargeForPacketLength(
                    length: messageLength, maxPacketLength: maxPacketLength, limit: sequenceLimit)
            }
            self.messageLength = messageLength
            let frameLength = messageLength + Fragmenter.frameOverhead
            // A packet never carries more than the whole frame: a larger limit (up to Int.max)
            // makes one packet, without overflowing the count below.
            self.payloadLength = min(maxPacketLength - Fragmenter.headerLength, frameLength)
            self.packetCount = (frameLength + payloadLength - 1) / payloadLength
            self.checksum = checksum
        }

        /// Writes packet `sequence` to `destination` and returns its length.
        ///
        /// `destination` must have room for `min(P, F) + 4` bytes.
        @inline(__always)
        func writePacket(
            _ sequence: Int, id: UInt16, message: UnsafeRawBufferPointer,
            to destination: UnsafeMutableRawPointer
        ) -> Int {
            destination.storeBytes(of: id.bigEndian, toByteOffset: 0, as: UInt16.self)
            destination.storeBytes(of: UInt16(truncatingIfNeeded: sequence).bigEndian, toByteOffset: 2, as: UInt16.self)
            let start = sequence * payloadLength
            let count = min(payloadLength, frameLength - start)
            copyFrame(from: start, count: count, message: message, to: destination + Fragmenter.headerLength)
            return count + Fragmenter.headerLength
        }

        /// Copies frame bytes `start ..< start + count` to `destination`.
        @inline(__always)
        func copyFrame(
            from start: Int, count: Int, message: UnsafeRawBufferPointer,
            to destination: UnsafeMutableRawPointer
        ) {
            var offset = start
            let end = start + count
            var out = destination
            let messageEnd = 4 + messageLength
            while offset < min(end, 4) {
                let byte = UInt8(truncatingIfNeeded: UInt32(messageLength) >> (24 - 8 * offset))
                out.storeBytes(of: byte, as: UInt8.self)
                out += 1
                offset += 1
            }
            if offset < end, offset < messageEnd {
                let chunkEnd = min(end, messageEnd)
                out.copyMemory(from: message.baseAddress! + (offset - 4), byteCount: chunkEnd - offset)
                out += chunkEnd - offset
                offset = chunkEnd
            }
            while offset < end {
                let byte = UInt8(truncatingIfNeeded: checksum >> (24 - 8 * (offset - messageEnd)))
                out.storeBytes(of: byte, as: UInt8.self)
                out += 1
                offset += 1
            }
        }
    }
}
