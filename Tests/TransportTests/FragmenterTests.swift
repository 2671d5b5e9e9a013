import Foundation
import Testing
import Transport

@Suite("Fragmenter", .timeLimit(.minutes(10)))
struct FragmenterTests {
    @Test("The header is 4 bytes: big-endian message id, then big-endian sequence index")
    func headerLayout() throws {
        #expect(Fragmenter.headerLength == 4)
        let packets = try Fragmenter.packets(for: [UInt8](repeating: 0xAB, count: 40), maxPacketLength: 20, id: 0x0102)
        #expect(packets.count == 3)
        #expect(packets.map(\.count) == [20, 20, 20])
        #expect(Array(packets[2][0..<4]) == [0x01, 0x02, 0x00, 0x02])
        // Packet 0 carries the big-endian length 40 right after the header.
        #expect(Array(packets[0][0..<8]) == [0x01, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 40])
    }

    @Test("The last packet ends with the big-endian CRC-32C of the id and the message")
    func trailer() throws {
        let message = Array("123456789".utf8)
        let packets = try Fragmenter.packets(for: message, maxPacketLength: 244, id: 7)
        #expect(packets.count == 1)
        let crc = message.withUnsafeBytes { Fragmenter.checksum(id: 7, message: $0) }
        #expect(crc == CRC32C.checksum([0, 7] + message))
        #expect(
            Array(packets[0].suffix(4)) == [
                UInt8(crc >> 24), UInt8((crc >> 16) & 0xFF), UInt8((crc >> 8) & 0xFF), UInt8(crc & 0xFF),
            ])
        #expect(packets[0].count == 4 + 4 + message.count + 4)
    }

    @Test("An empty message is one packet of header, length and checksum")
    func emptyMessage() throws {
        let packets = try Fragmenter.packets(for: [], maxPacketLength: 20, id: 1)
        #expect(packets.map(\.count) == [12])
    }

    @Test("The minimum packet length of 20 works and 19 is rejected with the exact error")
    func minimumPacketLength() throws {
        #expect(Fragmenter.minimumPacketLength == 20)
        #expect(try Fragmenter.packetCount(forMessageLength: 100, maxPacketLength: 20) == 7)
        #expect(throws: TransportError.packetLengthBelowMinimum(maxPacketLength: 19, minimum: 20)) {
            try Fragmenter.packets(for: [1, 2, 3], maxPacketLength: 19, id: 0)
        }
        #expect(throws: TransportError.packetLengthBelowMinimum(maxPacketLength: 0, minimum: 20)) {
            try Fragmenter.fragment([1, 2, 3], maxPacketLength: 0, id: 0) { _ in }
        }
    }

    @Test("The 16-bit sequence limits a message to 65,536 packets of payload minus 8 bytes")
    func sequenceSpaceLimit() throws {
        #expect(Fragmenter.maximumMessageLength(forMaxPacketLength: 20) == 1_048_568)
        #expect(Fragmenter.maximumMessageLength(forMaxPacketLength: 244) == 15_728_632)
        #expect(Fragmenter.maximumMessageLength(forMaxPacketLength: 19) == 0)
        #expect(
            try Fragmenter.packetCount(
                forMessageLength: 1_048_568, maxPacketLength: 20, maximumMessageLength: .max) == 65_536)
        #expect(
            throws: TransportError.messageTooLargeForPacketLength(
                length: 1_048_569, maxPacketLength: 20, limit: 1_048_568)
        ) {
            try Fragmenter.packetCount(forMessageLength: 1_048_569, maxPacketLength: 20, maximumMessageLength: .max)
        }
    }

    @Test("A message over the configured maximum is rejected with the exact error before any packet")
    func configuredMaximum() throws {
        var produced = 0
        #expect(throws: TransportError.messageTooLarge(length: 1_001, limit: 1_000)) {
            try Fragmenter.fragment(
                [UInt8](repeating: 0, count: 1_001), maxPacketLength: 244, id: 0, maximumMessageLength: 1_000
            ) { _ in produced += 1 }
        }
        #expect(produced == 0)
        #expect(throws: TransportError.messageTooLarge(length: 1_048_577, limit: 1_048_576)) {
            try Fragmenter.packetCount(forMessageLength: 1_048_577, maxPacketLength: 244)
        }
    }

    @Test("An error thrown by the visitor stops fragmentation and propagates")
    func visitorErrorPropagates() {
        struct Stop: Error {}
        var seen = 0
        #expect(throws: Stop.self) {
            try Fragmenter.fragment([UInt8](repeating: 1, count: 100), maxPacketLength: 20, id: 0) { _ in
                seen += 1
                if seen == 2 { throw Stop() }
            }
        }
        #expect(seen == 2)
    }

    @Test("The visitor, array and Data forms produce identical packets")
    func formsAgree() throws {
        var generator = SplitMix64(seed: 99)
        let message = generator.bytes(777)
        let arrays = try Fragmenter.packets(for: message, maxPacketLength: 23, id: 0xBEEF)
        var visited: [[UInt8]] = []
        try Fragmenter.fragment(message, maxPacketLength: 23, id: 0xBEEF) { visited.append(Array($0)) }
        let data = try Fragmenter.dataPackets(for: Data(message), maxPacketLength: 23, id: 0xBEEF)
        #expect(visited == arrays)
        #expect(data.map { Array($0) } == arrays)
    }

    /// A packet length beyond any frame (up to Int.max) makes one packet; the count used to
    /// overflow and trap.
    @Test("A maximum packet length up to Int.max gives one packet, without trapping")
    func anEnormousPacketLengthGivesOnePacket() throws {
        for length in [Int.max, Int.max - 3, Int.max / 2, 1 << 40] {
            #expect(try Fragmenter.packetCount(forMessageLength: 10, maxPacketLength: length) == 1)
            let packets = try Fragmenter.packets(for: Array(repeating: 7, count: 10), maxPacketLength: length, id: 3)
            #expect(packets.count == 1)
            #expect(packets[0].count == 10 + Fragmenter.frameOverhead + Fragmenter.headerLength)
        }
    }
}
