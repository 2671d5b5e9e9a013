import Testing
import Transport

/// Drop-each-packet checks over ``TransportVerifier/dropSizes`` (every size 0…200, every
/// 37th size to 2,000, three random sizes up to 4,096 bytes) and flip-each-byte checks
/// over ``TransportVerifier/flipSizes`` (every size 0…200, every 61st size to 2,000, one
/// random large size), at every packet length of the matrix. Every byte of every packet
/// is flipped, one at a time.
@Suite("Lost and corrupted packets never deliver a message", .timeLimit(.minutes(10)))
struct CorruptionVerifierTests {
    @Test(
        "Dropping any single packet leaves the message incomplete until it expires",
        arguments: TransportVerifier.packetLengths)
    func dropEachPacket(maxPacketLength: Int) throws {
        for size in TransportVerifier.dropSizes {
            let message = TransportVerifier.message(size: size)
            let packets = try Fragmenter.packets(for: message, maxPacketLength: maxPacketLength, id: 42)
            for dropped in packets.indices {
                var reassembler = TransportVerifier.TestReassembler()
                for (index, packet) in packets.enumerated() where index != dropped {
                    let result = try reassembler.receive(packet, from: 5, at: .zero)
                    #expect(result == nil, "size \(size) at \(maxPacketLength), dropped \(dropped)")
                }
                #expect(reassembler.partialMessageCount == (packets.count > 1 ? 1 : 0))
                let expired = reassembler.expire(now: TestInstant.zero.advanced(by: .seconds(30)))
                #expect(expired.map(\.messageID) == (packets.count > 1 ? [42] : []))
                #expect(reassembler.partialMessageCount == 0)
            }
        }
    }

    @Test(
        "Flipping any single byte of any packet is rejected or never completes",
        arguments: TransportVerifier.packetLengths)
    func flipEachByte(maxPacketLength: Int) throws {
        for size in TransportVerifier.flipSizes {
            let message = TransportVerifier.message(size: size)
            var packets = try Fragmenter.packets(for: message, maxPacketLength: maxPacketLength, id: 0x1234)
            for packetIndex in packets.indices {
                for byteIndex in packets[packetIndex].indices {
                    packets[packetIndex][byteIndex] ^= 0xFF
                    var reassembler = TransportVerifier.TestReassembler()
                    for packet in packets {
                        do {
                            if let delivered = try reassembler.receive(packet, from: 0, at: .zero) {
                                Issue.record(
                                    """
                                    size \(size) at \(maxPacketLength): flipping byte \(byteIndex) of packet \
                                    \(packetIndex) delivered \(delivered == message ? "the message" : "wrong bytes")
                                    """)
                            }
                        } catch {
                            // A typed rejection is the expected outcome; keep feeding.
                        }
                    }
                    packets[packetIndex][byteIndex] ^= 0xFF
                }
            }
        }
    }
}
