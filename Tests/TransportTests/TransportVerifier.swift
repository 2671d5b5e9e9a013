import Testing
import Transport

/// Drives a fragment-then-reassemble round trip in the style of swift-nio's
/// `ByteToMessageDecoderVerifier`: one message, one packet length, packets fed in a
/// given order, and checks that exactly the expected packet completes the message.
enum TransportVerifier {
    typealias TestReassembler = Reassembler<Int, TestInstant>

    /// The maximum packet lengths of the matrix: ATT_MTU 23, 26, 185, 247 and 517.
    static let packetLengths = [20, 23, 182, 244, 514]

    /// Every size from 0 to 2,000 bytes plus the large random sizes.
    static let allSizes = Array(0...2_000) + largeSizes

    /// The dense subset for the drop-each-packet check (quadratic in the size): every
    /// size 0…200, every 37th size from 201 to 2,000, and the large random sizes.
    static let dropSizes = Array(0...200) + Array(stride(from: 201, through: 2_000, by: 37)) + largeSizes

    /// The subset for the flip-each-byte check (quadratic in the size, with a full
    /// reassembly per flipped byte): every size 0…200, every 61st size from 201 to 2,000,
    /// and the smallest large random size.
    static let flipSizes = Array(0...200) + Array(stride(from: 201, through: 2_000, by: 61)) + [largeSizes.min()!]

    /// Three sizes between 2,001 and 4,096 bytes from SplitMix64 seed 2024.
    static let largeSizes: [Int] = {
        var generator = SplitMix64(seed: 2_024)
        return (0..<3).map { _ in 2_001 + Int(generator.next() % 2_096) }
    }()

    /// A deterministic message of `size` bytes; the seed is derived from the size.
    static func message(size: Int) -> [UInt8] {
        var generator = SplitMix64(seed: UInt64(size))
        return generator.bytes(size)
    }

    /// Fragments `message` and checks every packet's length and header.
    static func packets(for message: [UInt8], maxPacketLength: Int, id: UInt16) throws -> [[UInt8]] {
        let packets = try Fragmenter.packets(for: message, maxPacketLength: maxPacketLength, id: id)
        #expect(packets.count == (message.count + 8 + maxPacketLength - 5) / (maxPacketLength - 4))
        for (sequence, packet) in packets.enumerated() {
            #expect(packet.count <= maxPacketLength)
            #expect(packet.count > Fragmenter.headerLength)
            #expect(packet[0] == UInt8(id >> 8) && packet[1] == UInt8(id & 0xFF))
            #expect(Int(packet[2]) << 8 | Int(packet[3]) == sequence)
        }
        let payload = packets.reduce(0) { $0 + $1.count - Fragmenter.headerLength }
        #expect(payload == message.count + Fragmenter.frameOverhead)
        return packets
    }

    /// Feeds `order` (indices into `packets`) to a fresh reassembler and expects the
    /// message to complete exactly at feed position `completesAt`, and nothing to be left
    /// over afterwards.
    static func expectRoundTrip(
        _ message: [UInt8], packets: [[UInt8]], order: [Int], completesAt: Int,
        context: String, sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        var reassembler = TestReassembler()
        for (position, index) in order.enumerated() {
            let result = try reassembler.receive(packets[index], from: 1, at: .zero)
            if position == completesAt {
                #expect(result == message, "\(context): message not delivered", sourceLocation: sourceLocation)
            } else if result != nil {
                Issue.record("\(context): delivered at feed position \(position)", sourceLocation: sourceLocation)
            }
        }
        #expect(reassembler.partialMessageCount == 0, "\(context)", sourceLocation: sourceLocation)
    }

    /// A SplitMix64 shuffle of `0 ..< count`, seeded by `seed`.
    static func shuffledOrder(_ count: Int, seed: UInt64) -> [Int] {
        var generator = SplitMix64(seed: seed)
        return Array(0..<count).shuffled(using: &generator)
    }
}
