extension PartialMessage {
    /// Buffers packet `sequence` (≥ 1) that arrived before packet 0.
    ///
    /// Without packet 0 the layout is unknown, but every allowed message satisfies
    /// `P ≥ 16` and `F ≤ maximumMessageLength + 8`, which bounds both the sequence index
    /// and the bytes buffered.
    mutating func bufferPending(
        _ sequence: Int, payload: UnsafeRawBufferPointer, maximumMessageLength: Int
    ) throws(TransportError) {
        let frameLimit = maximumMessageLength + Fragmenter.frameOverhead
        let packetLimit = min(
            (frameLimit + Self.minimumFirstPayload - 1) / Self.minimumFirstPayload,
            Fragmenter.maximumPacketCount)
        guard sequence < packetLimit else {
            throw .sequenceOutOfRange(messageID: id, sequence: UInt16(sequence), packetCount: packetLimit)
        }
        let word = sequence >> 6
        let bit = UInt64(1) << UInt64(sequence & 63)
        if word < pendingMask.count, pendingMask[word] & bit != 0 {
            let earlier = pending.first { $0.sequence == sequence }!
            let same = pendingBytes.withUnsafeBytes { stored in
                stored[earlier.start..<(earlier.start + earlier.count)].elementsEqual(payload)
            }
            guard same else { throw .conflictingDuplicate(messageID: id, sequence: UInt16(sequence)) }
            return
        }
        let buffered = pendingBytes.count + payload.count
        guard buffered <= frameLimit else {
            throw .bufferedBytesExceedLimit(messageID: id, bufferedBytes: buffered, limit: frameLimit)
        }
        if word >= pendingMask.count {
            pendingMask.append(contentsOf: repeatElement(0, count: word + 1 - pendingMask.count))
        }
        pendingMask[word] |= bit
        pending.append(PendingPacket(sequence: sequence, start: pendingBytes.count, count: payload.count))
        pendingBytes.append(contentsOf: payload)
    }

    /// Moves the packets buffered before packet 0 into place, validating each against
    /// the now-known layout.
    mutating func placePending() throws(TransportError) {
        let packets = pending
        let bytes = pendingBytes
        pending = []
        pendingBytes = []
        pendingMask = []
        var failure: TransportError?
        bytes.withUnsafeBytes { stored in
            for packet in packets {
                do throws(TransportError) {
                    try place(
                        packet.sequence,
                        payload: UnsafeRawBufferPointer(rebasing: stored[packet.start..<(packet.start + packet.count)]))
                } catch {
                    failure = error
                    return
                }
            }
        }
        if let failure { throw failure }
    }

    /// Verifies the CRC trailer and hands out the message, leaving this state empty.
    mutating func finish() throws(TransportError) -> [UInt8] {
        let length = declaredLength
        let (expected, computed) = storage.withUnsafeBytes { bytes in
            (
                UInt32(bigEndian: bytes.loadUnaligned(fromByteOffset: length, as: UInt32.self)),
                Fragmenter.checksum(id: id, message: UnsafeRawBufferPointer(rebasing: bytes[0..<length]))
            )
        }
        guard expected == computed else {
            throw .checksumMismatch(messageID: id, expected: expected, computed: computed)
        }
        var message = storage
        storage = []
        message.removeLast(4)
        return message
    }
}
