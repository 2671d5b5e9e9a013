import Testing
import Transport

@Suite("Transport error messages", .timeLimit(.minutes(10)))
struct TransportErrorTests {
    static let cases: [(TransportError, [String])] = [
        (.packetLengthBelowMinimum(maxPacketLength: 19, minimum: 20), ["19", "minimum of 20", "ATT_MTU 23"]),
        (
            .messageTooLarge(length: 1_001, limit: 1_000),
            ["1001 bytes", "maximum of 1000", "raise maximumMessageLength"]
        ),
        (
            .messageTooLargeForPacketLength(length: 9, maxPacketLength: 20, limit: 8),
            ["65536 packets", "length 20", "8 bytes", "larger MTU"]
        ),
        (.packetShorterThanHeader(length: 3, headerLength: 4), ["3 bytes", "4-byte header", "whole packets"]),
        (
            .truncatedPacket(messageID: 5, sequence: 1, payloadLength: 0, minimum: 1),
            ["Packet 1 of message 5", "0 payload", "truncated"]
        ),
        (.declaredLengthTooLarge(messageID: 9, declaredLength: 70, limit: 64), ["Message 9", "70 bytes", "64 bytes"]),
        (
            .declaredLengthExceedsSequenceSpace(messageID: 9, declaredLength: 70, payloadLength: 16),
            ["Message 9", "70 bytes", "16 payload"]
        ),
        (
            .sequenceOutOfRange(messageID: 2, sequence: 7, packetCount: 7),
            ["Packet 7 of message 2", "at most 7 packets", "reuse message id 2"]
        ),
        (
            .inconsistentPacketLength(messageID: 4, sequence: 1, payloadLength: 15, expected: 16),
            ["Packet 1 of message 4", "15 payload", "implies 16"]
        ),
        (
            .conflictingDuplicate(messageID: 6, sequence: 1),
            ["Packet 1 of message 6", "different bytes", "must not be reused"]
        ),
        (.bufferedBytesExceedLimit(messageID: 8, bufferedBytes: 60, limit: 40), ["Message 8", "60 bytes", "40 bytes"]),
        (
            .checksumMismatch(messageID: 11, expected: 0xE306_9283, computed: 0x1),
            ["Message 11", "0xE3069283", "0x00000001", "resend"]
        ),
        (.tooManyPartialMessages(limit: 2), ["2 are already in progress", "expire(now:)", "maximumPartialMessages"]),
        (.messageIDsExhausted(inUse: 65_536), ["65536 message ids", "Release"]),
    ]

    @Test("Every error's message names the values involved and how to fix it", arguments: cases)
    func messagesNameValuesAndFixes(error: TransportError, fragments: [String]) {
        for fragment in fragments {
            #expect(error.description.contains(fragment), "\(error.description) lacks \(fragment)")
        }
    }

    @Test("The minimum packet length message reads in full as documented")
    func fullMessage() {
        #expect(
            TransportError.packetLengthBelowMinimum(maxPacketLength: 19, minimum: 20).description
                == "Maximum packet length 19 is below the minimum of 20 bytes (ATT_MTU 23 minus 3). Pass the "
                + "characteristic's maximum write or update length, which is at least 20 on every BLE link.")
    }
}
