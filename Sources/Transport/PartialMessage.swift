/// The reassembly state of one message: a pure, non-generic state machine that
/// ``Reassembler`` keeps per link and message id.
///
/// Until packet 0 arrives the layout is unknown, so other packets are buffered in one
/// growing byte array (`pendingBytes`, indexed by `pending`). Once packet 0 arrives, the
/// message buffer is allocated at its final size (message plus 4-byte CRC trailer, that
/// is frame bytes `4 ..< F`) and every payload is copied straight into place; a bitset
/// records which sequence indices have arrived. The CRC is computed once, over the
/// finished buffer.
@usableFromInline
struct PartialMessage: Sendable {
    /// A packet buffered before packet 0: its payload is `pendingBytes[start ..< start + count]`.
    struct PendingPacket {
        var sequence: Int
        var start: Int
        var count: Int
    }

    /// Payload bytes the first packet of a multi-packet message must carry at least:
    /// the payload of a ``Fragmenter/minimumPacketLength`` packet.
    static let minimumFirstPayload = Fragmenter.minimumPacketLength - Fragmenter.headerLength

    let id: UInt16
    /// `L`, or -1 while packet 0 has not arrived.
    private(set) var declaredLength = -1
    /// `P`, frame bytes per non-final packet.
    private(set) var payloadLength = 0
    /// `N`, the number of packets (0 while unknown).
    private(set) var packetCount = 0
    /// Distinct packets placed into `storage` (buffered ones are counted once placed).
    private(set) var receivedCount = 0
    /// Bitset of received sequence indices.
    var received: [UInt64] = []
    /// Frame bytes `4 ..< F`: the message followed by its CRC trailer.
    var storage: [UInt8] = []
    /// Payloads of packets that arrived before packet 0, back to back.
    var pendingBytes: [UInt8] = []
    /// Where each buffered packet lies in `pendingBytes`.
    var pending: [PendingPacket] = []
    /// Bitset of buffered sequence indices.
    var pendingMask: [UInt64] = []

    @usableFromInline
    init(id: UInt16) {
        self.id = id
    }

    /// Distinct packets received so far, placed or buffered.
    var distinctPacketsReceived: Int { receivedCount + pending.count }

    /// Whether packet 0 has arrived and the layout is known.
    var isLaidOut: Bool { declaredLength >= 0 }

    /// Accepts one packet's payload and returns the message once it is complete and its
    /// checksum matches. An identical duplicate is ignored.
    @usableFromInline
    mutating func accept(
        sequence: UInt16, payload: UnsafeRawBufferPointer, maximumMessageLength: Int
    ) throws(TransportError) -> [UInt8]? {
        guard payload.count > 0 else {
            throw .truncatedPacket(messageID: id, sequence: sequence, payloadLength: 0, minimum: 1)
        }
        if isLaidOut {
            if sequence == 0 {
                try checkFirstDuplicate(payload)
            } else {
                try place(Int(sequence), payload: payload)
            }
        } else if sequence == 0 {
            try layOut(firstPayload: payload, maximumMessageLength: maximumMessageLength)
            try placePending()
        } else {
            try bufferPending(Int(sequence), payload: payload, maximumMessageLength: maximumMessageLength)
        }
        return isLaidOut && receivedCount == packetCount ? try finish() : nil
    }

    /// Reads the layout from packet 0, allocates the message buffer and copies the
    /// packet's message bytes into it.
    private mutating func layOut(
        firstPayload payload: UnsafeRawBufferPointer, maximumMessageLength: Int
    ) throws(TransportError) {
        let count = payload.count
        guard count >= 4 else {
            throw .truncatedPacket(messageID: id, sequence: 0, payloadLength: count, minimum: 4)
        }
        let length = Int(UInt32(bigEndian: payload.loadUnaligned(as: UInt32.self)))
        guard length <= maximumMessageLength else {
            throw .declaredLengthTooLarge(messageID: id, declaredLength: length, limit: maximumMessageLength)
        }
        let frameLength = length + Fragmenter.frameOverhead
        if count > frameLength {
            throw .inconsistentPacketLength(messageID: id, sequence: 0, payloadLength: count, expected: frameLength)
        } else if count < frameLength, count < Self.minimumFirstPayload {
            throw .truncatedPacket(
                messageID: id, sequence: 0, payloadLength: count, minimum: Self.minimumFirstPayload)
        }
        let packets = (frameLength + count - 1) / count
        guard packets <= Fragmenter.maximumPacketCount else {
            throw .declaredLengthExceedsSequenceSpace(messageID: id, declaredLength: length, payloadLength: count)
        }
        declaredLength = length
        payloadLength = count
        packetCount = packets
        receivedCount = 1
        received = [UInt64](repeating: 0, count: (packets + 63) / 64)
        received[0] = 1
        // Every byte is written by exactly one packet before the buffer is read.
        storage = [UInt8](unsafeUninitializedCapacity: length + 4) { _, initialized in
            initialized = length + 4
        }
        storage.withUnsafeMutableBytes { destination in
            destination.baseAddress!.copyMemory(from: payload.baseAddress! + 4, byteCount: count - 4)
        }
    }

    /// The expected payload length of packet `sequence` (`1 ..< N`).
    @inline(__always)
    private func expectedLength(of sequence: Int) -> Int {
        sequence < packetCount - 1
            ? payloadLength
            : declaredLength + Fragmenter.frameOverhead - (packetCount - 1) * payloadLength
    }

    /// Copies packet `sequence` (≥ 1) into place, or checks it against an earlier copy.
    mutating func place(_ sequence: Int, payload: UnsafeRawBufferPointer) throws(TransportError) {
        guard sequence < packetCount else {
            throw .sequenceOutOfRange(messageID: id, sequence: UInt16(sequence), packetCount: packetCount)
        }
        let expected = expectedLength(of: sequence)
        guard payload.count == expected else {
            throw .inconsistentPacketLength(
                messageID: id, sequence: UInt16(sequence), payloadLength: payload.count, expected: expected)
        }
        let offset = sequence * payloadLength - 4
        let word = sequence >> 6
        let bit = UInt64(1) << UInt64(sequence & 63)
        if received[word] & bit != 0 {
            let same = storage.withUnsafeBytes { stored in
                stored[offset..<(offset + expected)].elementsEqual(payload)
            }
            guard same else { throw .conflictingDuplicate(messageID: id, sequence: UInt16(sequence)) }
            return
        }
        received[word] |= bit
        receivedCount += 1
        storage.withUnsafeMutableBytes { destination in
            (destination.baseAddress! + offset).copyMemory(from: payload.baseAddress!, byteCount: expected)
        }
    }

    /// Checks a repeated packet 0 against the layout and the bytes already stored.
    private func checkFirstDuplicate(_ payload: UnsafeRawBufferPointer) throws(TransportError) {
        let expected = packetCount == 1 ? declaredLength + Fragmenter.frameOverhead : payloadLength
        let same =
            payload.count == expected
            && UInt32(bigEndian: payload.loadUnaligned(as: UInt32.self)) == UInt32(declaredLength)
            && storage.withUnsafeBytes { stored in
                stored[0..<(expected - 4)].elementsEqual(payload[4...])
            }
        guard same else { throw .conflictingDuplicate(messageID: id, sequence: 0) }
    }
}
