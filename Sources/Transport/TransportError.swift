/// Why ``Fragmenter`` refused a message or ``Reassembler`` rejected a packet.
///
/// Every case carries the values involved, and ``description`` says what went wrong and
/// how to fix it. Nothing in this module traps on bad input: malformed, truncated,
/// inconsistent or corrupted packets all surface as one of these cases.
///
/// When ``Reassembler`` throws a case that names a `messageID`, it has dropped that whole
/// message and remembers the id for ``TransportConfiguration/partialMessageTimeout``, so
/// the message's later packets are ignored (`receive` returns `nil`). Other messages and
/// other links are not affected.
public enum TransportError: Error, Equatable, Hashable, Sendable, CustomStringConvertible {
    /// The maximum packet length is below ``Fragmenter/minimumPacketLength`` (20 bytes,
    /// the payload of the minimum ATT_MTU of 23).
    case packetLengthBelowMinimum(maxPacketLength: Int, minimum: Int)

    /// The message is longer than the configured maximum message length.
    case messageTooLarge(length: Int, limit: Int)

    /// The message needs more than 65,536 packets at this packet length.
    case messageTooLargeForPacketLength(length: Int, maxPacketLength: Int, limit: Int)

    /// The packet is shorter than the 4-byte header.
    case packetShorterThanHeader(length: Int, headerLength: Int)

    /// The packet's payload is too short to be part of a valid message: an empty payload,
    /// a first packet without its 4-byte length field, or a non-final first packet whose
    /// payload is below the 16 bytes that the minimum packet length carries.
    case truncatedPacket(messageID: UInt16, sequence: UInt16, payloadLength: Int, minimum: Int)

    /// The first packet declares a message longer than the configured maximum.
    case declaredLengthTooLarge(messageID: UInt16, declaredLength: Int, limit: Int)

    /// The first packet declares a message that would need more than 65,536 packets of
    /// its payload length.
    case declaredLengthExceedsSequenceSpace(messageID: UInt16, declaredLength: Int, payloadLength: Int)

    /// The packet's sequence index is not below the message's packet count.
    case sequenceOutOfRange(messageID: UInt16, sequence: UInt16, packetCount: Int)

    /// The packet's payload length disagrees with the layout the first packet implies.
    case inconsistentPacketLength(messageID: UInt16, sequence: UInt16, payloadLength: Int, expected: Int)

    /// A packet repeats a sequence index already received, but with different bytes.
    case conflictingDuplicate(messageID: UInt16, sequence: UInt16)

    /// Packets buffered before the first packet arrived exceed what any allowed message
    /// can carry.
    case bufferedBytesExceedLimit(messageID: UInt16, bufferedBytes: Int, limit: Int)

    /// The reassembled message (with its id) does not match its CRC-32C trailer.
    case checksumMismatch(messageID: UInt16, expected: UInt32, computed: UInt32)

    /// Starting another partial message would exceed the configured maximum number of
    /// concurrent partial messages across all links.
    case tooManyPartialMessages(limit: Int)

    /// Every one of the 65,536 message ids is still in use.
    case messageIDsExhausted(inUse: Int)

    /// What went wrong and how to fix it.
    public var description: String {
        switch self {
        case .packetLengthBelowMinimum(let length, let minimum):
            return "Maximum packet length \(length) is below the minimum of \(minimum) bytes "
                + "(ATT_MTU 23 minus 3). Pass the characteristic's maximum write or update "
                + "length, which is at least \(minimum) on every BLE link."
        case .messageTooLarge(let length, let limit):
            return "Message of \(length) bytes exceeds the configured maximum of \(limit) bytes. "
                + "Split the message, or raise maximumMessageLength on both sender and receiver."
        case .messageTooLargeForPacketLength(let length, let packetLength, let limit):
            return "Message of \(length) bytes needs more than 65536 packets at maximum packet "
                + "length \(packetLength); the limit there is \(limit) bytes. Negotiate a larger "
                + "MTU or split the message."
        case .packetShorterThanHeader(let length, let header):
            return "Packet of \(length) bytes is shorter than the \(header)-byte header. "
                + "Feed whole packets exactly as the sender's fragmenter produced them."
        case .truncatedPacket(let id, let seq, let payload, let minimum):
            return "Packet \(seq) of message \(id) carries \(payload) payload bytes, fewer than "
                + "the \(minimum) it needs; the packet was truncated. The message was dropped; "
                + "resend it whole."
        case .declaredLengthTooLarge(let id, let declared, let limit):
            return "Message \(id) declares \(declared) bytes, more than the configured maximum "
                + "of \(limit) bytes. The message was dropped; raise maximumMessageLength if "
                + "the sender is trusted, or have it send smaller messages."
        case .declaredLengthExceedsSequenceSpace(let id, let declared, let payload):
            return "Message \(id) declares \(declared) bytes, which needs more than 65536 "
                + "packets of \(payload) payload bytes. The message was dropped; the first "
                + "packet is corrupt or the sender ignores the 16-bit sequence limit."
        case .sequenceOutOfRange(let id, let seq, let count):
            return "Packet \(seq) of message \(id) is out of range: the message has at most "
                + "\(count) packets. The message was dropped; check that the sender does not "
                + "reuse message id \(id) while the message is in flight."
        case .inconsistentPacketLength(let id, let seq, let payload, let expected):
            return "Packet \(seq) of message \(id) carries \(payload) payload bytes but the "
                + "first packet implies \(expected). The message was dropped; the sender must "
                + "use one maximum packet length per message and must not reuse in-flight ids."
        case .conflictingDuplicate(let id, let seq):
            return "Packet \(seq) of message \(id) arrived again with different bytes. The "
                + "message was dropped; identical duplicates are fine, but an id must not be "
                + "reused while its message is in flight."
        case .bufferedBytesExceedLimit(let id, let buffered, let limit):
            return "Message \(id) buffered \(buffered) bytes before its first packet arrived, "
                + "more than the \(limit) bytes an allowed message can carry. The message was "
                + "dropped; raise maximumMessageLength or check for a misbehaving sender."
        case .checksumMismatch(let id, let expected, let computed):
            return "Message \(id) failed its CRC-32C check: trailer says "
                + "0x\(hex(expected)) but the bytes give 0x\(hex(computed)). The message "
                + "was corrupted in transit and was dropped; resend it."
        case .tooManyPartialMessages(let limit):
            return "Cannot start another partial message: \(limit) are already in progress "
                + "across all links. Wait for them to complete or expire (call expire(now:)), "
                + "or raise maximumPartialMessages."
        case .messageIDsExhausted(let inUse):
            return "All \(inUse) message ids are in use. Release the ids of completed or "
                + "abandoned messages before allocating more."
        }
    }
}

private func hex(_ value: UInt32) -> String {
    let digits = String(value, radix: 16, uppercase: true)
    return String(repeating: "0", count: 8 - digits.count) + digits
}
