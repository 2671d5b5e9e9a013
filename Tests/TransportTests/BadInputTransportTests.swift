import Testing
import Transport

/// Bad input to every Transport entry point: each yields its exact `TransportError`, and a
/// message in progress on the same link still completes afterwards (state intact).
@Suite("Transport bad input", .timeLimit(.minutes(10)))
struct BadInputTransportTests {
    /// One invalid call to the fragmenter and the error it must throw.
    struct FragmenterCase: Sendable, CustomTestStringConvertible {
        let name: String
        let messageLength: Int
        let maxPacketLength: Int
        let maximumMessageLength: Int
        let error: TransportError

        var testDescription: String { name }
    }

    static let fragmenterCases: [FragmenterCase] = [
        FragmenterCase(
            name: "a packet length below 20", messageLength: 10, maxPacketLength: 19, maximumMessageLength: 100,
            error: .packetLengthBelowMinimum(maxPacketLength: 19, minimum: 20)),
        FragmenterCase(
            name: "a negative packet length", messageLength: 10, maxPacketLength: -1, maximumMessageLength: 100,
            error: .packetLengthBelowMinimum(maxPacketLength: -1, minimum: 20)),
        FragmenterCase(
            name: "the most negative packet length", messageLength: 0, maxPacketLength: .min,
            maximumMessageLength: 100, error: .packetLengthBelowMinimum(maxPacketLength: .min, minimum: 20)),
        FragmenterCase(
            name: "a message over the limit", messageLength: 101, maxPacketLength: 20, maximumMessageLength: 100,
            error: .messageTooLarge(length: 101, limit: 100)),
        FragmenterCase(
            name: "a negative limit, taken as 0", messageLength: 1, maxPacketLength: 20, maximumMessageLength: -5,
            error: .messageTooLarge(length: 1, limit: 0)),
        FragmenterCase(
            name: "a limit beyond the 32-bit length field, taken as 2^32 - 1", messageLength: 5_000_000_000,
            maxPacketLength: 1_000_000, maximumMessageLength: .max,
            error: .messageTooLarge(length: 5_000_000_000, limit: 4_294_967_295)),
        FragmenterCase(
            name: "a message needing more than 65,536 packets", messageLength: 1_048_569, maxPacketLength: 20,
            maximumMessageLength: 2_000_000,
            error: .messageTooLargeForPacketLength(length: 1_048_569, maxPacketLength: 20, limit: 1_048_568)),
    ]

    @Test("The fragmenter refuses bad lengths with the exact error", arguments: fragmenterCases)
    func fragmenter(_ bad: FragmenterCase) {
        #expect(throws: bad.error) {
            try Fragmenter.packetCount(
                forMessageLength: bad.messageLength, maxPacketLength: bad.maxPacketLength,
                maximumMessageLength: bad.maximumMessageLength)
        }
        #expect(!bad.error.description.isEmpty)
    }

    /// One bad packet and the error the reassembler must throw for it.
    struct PacketCase: Sendable, CustomTestStringConvertible {
        let name: String
        let configuration: TransportConfiguration
        let packet: [UInt8]
        let error: TransportError

        var testDescription: String { name }
    }

    static func packet(id: UInt16, sequence: UInt16, _ payload: [UInt8]) -> [UInt8] {
        [UInt8(id >> 8), UInt8(id & 0xFF), UInt8(sequence >> 8), UInt8(sequence & 0xFF)] + payload
    }

    static let packetCases: [PacketCase] = [
        PacketCase(
            name: "an empty packet", configuration: .init(), packet: [],
            error: .packetShorterThanHeader(length: 0, headerLength: 4)),
        PacketCase(
            name: "a first packet declaring 4 GiB − 1 bytes", configuration: .init(),
            packet: packet(id: 9, sequence: 0, [0xFF, 0xFF, 0xFF, 0xFF] + [UInt8](repeating: 0, count: 12)),
            error: .declaredLengthTooLarge(messageID: 9, declaredLength: 4_294_967_295, limit: 1_048_576)),
        PacketCase(
            name: "a sequence index beyond any allowed message", configuration: .init(maximumMessageLength: 100),
            packet: packet(id: 9, sequence: 60_000, [1, 2, 3]),
            error: .sequenceOutOfRange(messageID: 9, sequence: 60_000, packetCount: 7)),
        PacketCase(
            name: "a first packet longer than its declared frame", configuration: .init(),
            packet: packet(id: 9, sequence: 0, [0, 0, 0, 1] + [UInt8](repeating: 7, count: 12)),
            error: .inconsistentPacketLength(messageID: 9, sequence: 0, payloadLength: 16, expected: 9)),
    ]

    @Test(
        "The reassembler rejects a bad packet with the exact error and keeps the other messages", arguments: packetCases
    )
    func reassembler(_ bad: PacketCase) throws {
        var reassembler = Reassembler<Int, TestInstant>(configuration: bad.configuration)
        let message = (0..<50).map { UInt8($0) }
        let packets = try Fragmenter.packets(for: message, maxPacketLength: 20, id: 1)
        #expect(try reassembler.receive(packets[0], from: 0, at: .zero) == nil)
        #expect(throws: bad.error) { try reassembler.receive(bad.packet, from: 0, at: .zero) }
        #expect(reassembler.partialMessageCount == 1)
        var completed: [UInt8]?
        for packet in packets.dropFirst() {
            completed = try reassembler.receive(packet, from: 0, at: .zero)
        }
        #expect(completed == message)
        #expect(reassembler.partialMessageCount == 0)
    }

    @Test("The largest configured message length is clamped to what the length field can declare")
    func clampedLimit() throws {
        // Buffering a late packet computed the limit plus the frame overhead, which overflowed.
        var reassembler = Reassembler<Int, TestInstant>(configuration: .init(maximumMessageLength: .max))
        #expect(try reassembler.receive(Self.packet(id: 3, sequence: 65_535, [1]), from: 0, at: .zero) == nil)
        #expect(reassembler.partialMessageCount == 1)
        #expect(
            throws: TransportError.declaredLengthExceedsSequenceSpace(
                messageID: 3, declaredLength: 4_294_967_295, payloadLength: 16)
        ) {
            var reassembler = Reassembler<Int, TestInstant>(configuration: .init(maximumMessageLength: .max))
            _ = try reassembler.receive(
                Self.packet(id: 3, sequence: 0, [0xFF, 0xFF, 0xFF, 0xFF] + [UInt8](repeating: 0, count: 12)),
                from: 0, at: .zero)
        }
    }

    /// A timeout of zero or less, or one past what a clock's `Duration` holds, is clamped:
    /// zero expired every message of two packets before its second arrived, and a deadline of
    /// `.seconds(Int64.max)` trapped a channel's timer on `ContinuousClock`.
    @Test(
        "The partial-message timeout is clamped to 1 ms...100 years",
        arguments: [Duration.zero, .seconds(-1), .seconds(Int64.max)])
    func clampedTimeout(_ timeout: Duration) throws {
        let configuration = TransportConfiguration(partialMessageTimeout: timeout)
        var reassembler = Reassembler<Int, TestInstant>(configuration: configuration)
        let message = [UInt8](repeating: 7, count: 40)
        var delivered: [UInt8]?
        for packet in try Fragmenter.packets(for: message, maxPacketLength: 20, id: 1) {
            delivered = try reassembler.receive(packet, from: 0, at: .zero) ?? delivered
        }
        #expect(delivered == message)
        // A partial message expires at the clamped timeout, to the millisecond.
        let bound = timeout > .zero ? TransportConfiguration.partialMessageTimeoutRange.upperBound : .milliseconds(1)
        _ = try reassembler.receive(Fragmenter.packets(for: message, maxPacketLength: 20, id: 2)[0], from: 0, at: .zero)
        #expect(reassembler.expire(now: TestInstant(offset: bound - .milliseconds(1))).isEmpty)
        #expect(reassembler.expire(now: TestInstant(offset: bound)).count == 1)
    }
}
