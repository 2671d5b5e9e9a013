import Testing
import Transport

/// Every rejection, with the exact error, built from hand-made packets.
@Suite("Reassembler rejections", .timeLimit(.minutes(10)))
struct ReassemblerErrorTests {
    typealias TestReassembler = Reassembler<Int, TestInstant>

    /// A packet with the given header and payload.
    static func packet(id: UInt16, sequence: UInt16, _ payload: [UInt8]) -> [UInt8] {
        [UInt8(id >> 8), UInt8(id & 0xFF), UInt8(sequence >> 8), UInt8(sequence & 0xFF)] + payload
    }

    /// The big-endian length field followed by `count - 4` filler bytes.
    static func firstPayload(length: Int, count: Int) -> [UInt8] {
        [UInt8(length >> 24), UInt8((length >> 16) & 0xFF), UInt8((length >> 8) & 0xFF), UInt8(length & 0xFF)]
            + [UInt8](repeating: 0x55, count: count - 4)
    }

    static func expect(
        _ error: TransportError, configuration: TransportConfiguration = .init(), packets: [[UInt8]],
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        var reassembler = TestReassembler(configuration: configuration)
        #expect(throws: error, sourceLocation: sourceLocation) {
            for packet in packets {
                _ = try reassembler.receive(packet, from: 0, at: .zero)
            }
        }
        #expect(reassembler.partialMessageCount == 0, sourceLocation: sourceLocation)
    }

    @Test("A packet shorter than the header is rejected")
    func shorterThanHeader() {
        Self.expect(.packetShorterThanHeader(length: 3, headerLength: 4), packets: [[0, 1, 0]])
        Self.expect(.packetShorterThanHeader(length: 0, headerLength: 4), packets: [[]])
    }

    @Test("Truncated packets are rejected: empty payload, no length field, short first packet")
    func truncated() {
        Self.expect(
            .truncatedPacket(messageID: 5, sequence: 1, payloadLength: 0, minimum: 1),
            packets: [Self.packet(id: 5, sequence: 1, [])])
        Self.expect(
            .truncatedPacket(messageID: 5, sequence: 0, payloadLength: 2, minimum: 4),
            packets: [Self.packet(id: 5, sequence: 0, [0, 0])])
        Self.expect(
            .truncatedPacket(messageID: 5, sequence: 0, payloadLength: 10, minimum: 16),
            packets: [Self.packet(id: 5, sequence: 0, Self.firstPayload(length: 100, count: 10))])
    }

    @Test("A declared length over the configured maximum is rejected")
    func declaredTooLarge() {
        Self.expect(
            .declaredLengthTooLarge(messageID: 9, declaredLength: 1_001, limit: 1_000),
            configuration: .init(maximumMessageLength: 1_000),
            packets: [Self.packet(id: 9, sequence: 0, Self.firstPayload(length: 1_001, count: 16))])
    }

    @Test("A declared length needing more than 65,536 packets is rejected")
    func declaredBeyondSequenceSpace() {
        Self.expect(
            .declaredLengthExceedsSequenceSpace(messageID: 9, declaredLength: 1_048_569, payloadLength: 16),
            configuration: .init(maximumMessageLength: 2_000_000),
            packets: [Self.packet(id: 9, sequence: 0, Self.firstPayload(length: 1_048_569, count: 16))])
    }

    @Test("A sequence index at or beyond the packet count is rejected, before or after packet 0")
    func sequenceOutOfRange() {
        let first = Self.packet(id: 2, sequence: 0, Self.firstPayload(length: 100, count: 16))
        Self.expect(
            .sequenceOutOfRange(messageID: 2, sequence: 7, packetCount: 7),
            packets: [first, Self.packet(id: 2, sequence: 7, [UInt8](repeating: 0, count: 16))])
        Self.expect(
            .sequenceOutOfRange(messageID: 2, sequence: 7, packetCount: 7),
            packets: [Self.packet(id: 2, sequence: 7, [UInt8](repeating: 0, count: 16)), first])
        // Before packet 0, 32-byte messages allow at most ⌈40 / 16⌉ = 3 packets.
        Self.expect(
            .sequenceOutOfRange(messageID: 2, sequence: 3, packetCount: 3),
            configuration: .init(maximumMessageLength: 32),
            packets: [Self.packet(id: 2, sequence: 3, [1])])
    }

    @Test("Packet lengths disagreeing with packet 0 are rejected")
    func inconsistentLengths() {
        let first = Self.packet(id: 4, sequence: 0, Self.firstPayload(length: 100, count: 16))
        Self.expect(
            .inconsistentPacketLength(messageID: 4, sequence: 1, payloadLength: 15, expected: 16),
            packets: [first, Self.packet(id: 4, sequence: 1, [UInt8](repeating: 0, count: 15))])
        // 108 frame bytes in packets of 16: the last (6) carries 12.
        Self.expect(
            .inconsistentPacketLength(messageID: 4, sequence: 6, payloadLength: 16, expected: 12),
            packets: [first, Self.packet(id: 4, sequence: 6, [UInt8](repeating: 0, count: 16))])
        Self.expect(
            .inconsistentPacketLength(messageID: 4, sequence: 0, payloadLength: 13, expected: 12),
            packets: [Self.packet(id: 4, sequence: 0, Self.firstPayload(length: 4, count: 13))])
    }

    @Test("A duplicate sequence index with different bytes is rejected, before or after packet 0")
    func conflictingDuplicates() {
        let first = Self.packet(id: 6, sequence: 0, Self.firstPayload(length: 100, count: 16))
        let one = Self.packet(id: 6, sequence: 1, [UInt8](repeating: 1, count: 16))
        let other = Self.packet(id: 6, sequence: 1, [UInt8](repeating: 2, count: 16))
        Self.expect(.conflictingDuplicate(messageID: 6, sequence: 1), packets: [first, one, other])
        Self.expect(.conflictingDuplicate(messageID: 6, sequence: 1), packets: [one, other])
        var changedFirst = first
        changedFirst[19] ^= 1
        Self.expect(.conflictingDuplicate(messageID: 6, sequence: 0), packets: [first, changedFirst])
    }

    @Test("Bytes buffered before packet 0 beyond the largest allowed frame are rejected")
    func bufferedBytes() {
        Self.expect(
            .bufferedBytesExceedLimit(messageID: 8, bufferedBytes: 60, limit: 40),
            configuration: .init(maximumMessageLength: 32),
            packets: [
                Self.packet(id: 8, sequence: 1, [UInt8](repeating: 0, count: 30)),
                Self.packet(id: 8, sequence: 2, [UInt8](repeating: 0, count: 30)),
            ])
    }

    @Test("A corrupted message byte is a checksum mismatch carrying both checksums")
    func checksumMismatch() throws {
        let message = Array("hello, transport".utf8)
        var packets = try Fragmenter.packets(for: message, maxPacketLength: 20, id: 11)
        packets[1][6] ^= 0x20
        var corrupted = message
        corrupted[14] ^= 0x20
        let expected = message.withUnsafeBytes { Fragmenter.checksum(id: 11, message: $0) }
        let computed = corrupted.withUnsafeBytes { Fragmenter.checksum(id: 11, message: $0) }
        Self.expect(.checksumMismatch(messageID: 11, expected: expected, computed: computed), packets: packets)
    }

    @Test("After a message fails, its later packets are ignored and other messages are undisturbed")
    func failedMessageIsDroppedWhole() throws {
        var reassembler = TestReassembler()
        let bad = try Fragmenter.packets(for: [UInt8](repeating: 1, count: 60), maxPacketLength: 20, id: 1)
        let good = try Fragmenter.packets(for: [UInt8](repeating: 2, count: 60), maxPacketLength: 20, id: 2)
        #expect(try reassembler.receive(good[0], from: 0, at: .zero) == nil)
        #expect(try reassembler.receive(bad[0], from: 0, at: .zero) == nil)
        #expect(throws: TransportError.conflictingDuplicate(messageID: 1, sequence: 0)) {
            try reassembler.receive(Array(bad[0].prefix(19)) + [0], from: 0, at: .zero)
        }
        for packet in bad.dropFirst() {
            #expect(try reassembler.receive(packet, from: 0, at: .zero) == nil)
        }
        #expect(reassembler.partialMessageCount == 1)
        var delivered: [UInt8]?
        for packet in good.dropFirst() {
            delivered = try reassembler.receive(packet, from: 0, at: .zero) ?? delivered
        }
        #expect(delivered == [UInt8](repeating: 2, count: 60))
    }
}
