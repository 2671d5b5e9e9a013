import Testing
import Transport

/// Every size from 0 to 2,000 bytes plus three random large sizes, at every packet length
/// of ``TransportVerifier/packetLengths``, fed in order, packet by packet through the
/// visitor, reversed, shuffled and duplicated.
@Suite("Round trips across the size and packet-length matrix", .timeLimit(.minutes(10)))
struct RoundTripVerifierTests {
    @Test("Messages fed in order complete at their last packet", arguments: TransportVerifier.packetLengths)
    func inOrder(maxPacketLength: Int) throws {
        for size in TransportVerifier.allSizes {
            let message = TransportVerifier.message(size: size)
            let packets = try TransportVerifier.packets(for: message, maxPacketLength: maxPacketLength, id: 7)
            try TransportVerifier.expectRoundTrip(
                message, packets: packets, order: Array(packets.indices), completesAt: packets.count - 1,
                context: "size \(size) at \(maxPacketLength)")
        }
    }

    @Test(
        "Packets streamed from the visitor straight into the reassembler complete the message",
        arguments: TransportVerifier.packetLengths)
    func streamedThroughVisitor(maxPacketLength: Int) throws {
        var reassembler = TransportVerifier.TestReassembler()
        for size in TransportVerifier.allSizes {
            let message = TransportVerifier.message(size: size)
            var delivered: [[UInt8]] = []
            var count = 0
            try Fragmenter.fragment(message, maxPacketLength: maxPacketLength, id: UInt16(size)) { packet in
                #expect(packet.count <= maxPacketLength)
                count += 1
                if let result = try reassembler.receive(packet, from: size % 3, at: .zero) {
                    delivered.append(result)
                }
            }
            #expect(delivered == [message], "size \(size) at \(maxPacketLength)")
            #expect(count == (size + 8 + maxPacketLength - 5) / (maxPacketLength - 4))
        }
        #expect(reassembler.partialMessageCount == 0)
    }

    @Test(
        "Messages fed in reverse, first packet last, complete at the first packet",
        arguments: TransportVerifier.packetLengths)
    func reversed(maxPacketLength: Int) throws {
        for size in TransportVerifier.allSizes {
            let message = TransportVerifier.message(size: size)
            let packets = try TransportVerifier.packets(for: message, maxPacketLength: maxPacketLength, id: 9)
            try TransportVerifier.expectRoundTrip(
                message, packets: packets, order: packets.indices.reversed(), completesAt: packets.count - 1,
                context: "size \(size) at \(maxPacketLength)")
        }
    }

    @Test("Messages fed in a shuffled order complete at their last packet", arguments: TransportVerifier.packetLengths)
    func shuffled(maxPacketLength: Int) throws {
        for size in TransportVerifier.allSizes {
            let message = TransportVerifier.message(size: size)
            let packets = try TransportVerifier.packets(for: message, maxPacketLength: maxPacketLength, id: 0xFFFF)
            let seed = UInt64(size * 1_000 + maxPacketLength)
            try TransportVerifier.expectRoundTrip(
                message, packets: packets, order: TransportVerifier.shuffledOrder(packets.count, seed: seed),
                completesAt: packets.count - 1, context: "size \(size) at \(maxPacketLength), seed \(seed)")
        }
    }

    @Test("Duplicated packets, before and after completion, are ignored", arguments: TransportVerifier.packetLengths)
    func duplicated(maxPacketLength: Int) throws {
        for size in TransportVerifier.allSizes {
            let message = TransportVerifier.message(size: size)
            let packets = try TransportVerifier.packets(for: message, maxPacketLength: maxPacketLength, id: 3)
            let seed = UInt64(size &* 7_919 &+ maxPacketLength)
            let shuffled = TransportVerifier.shuffledOrder(packets.count, seed: seed)
            // Each packet twice in a row, then the whole message again after completion.
            let order = shuffled.flatMap { [$0, $0] } + Array(packets.indices)
            try TransportVerifier.expectRoundTrip(
                message, packets: packets, order: order, completesAt: 2 * packets.count - 2,
                context: "size \(size) at \(maxPacketLength), seed \(seed)")
        }
    }
}
