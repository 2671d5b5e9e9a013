import Foundation
import Testing

@testable import Transport

@Suite("Reassembler", .timeLimit(.minutes(10)))
struct ReassemblerTests {
    typealias TestReassembler = Reassembler<String, TestInstant>

    static func at(_ seconds: Int) -> TestInstant { TestInstant.zero.advanced(by: .seconds(seconds)) }

    @Test("Interleaved messages on one link and on several links each complete intact")
    func interleaving() throws {
        var reassembler = TestReassembler()
        var generator = SplitMix64(seed: 5)
        let streams: [(link: String, id: UInt16, message: [UInt8])] = [
            ("a", 1, generator.bytes(300)), ("a", 2, generator.bytes(450)),
            ("b", 1, generator.bytes(301)), ("c", 1, generator.bytes(17)),
        ]
        var queues = try streams.map { try Fragmenter.packets(for: $0.message, maxPacketLength: 23, id: $0.id) }
        var delivered: [String: [UInt8]] = [:]
        while queues.contains(where: { !$0.isEmpty }) {
            for index in queues.indices where !queues[index].isEmpty {
                let packet = queues[index].removeLast()
                if let message = try reassembler.receive(packet, from: streams[index].link, at: .zero) {
                    delivered["\(streams[index].link)\(streams[index].id)"] = message
                }
            }
        }
        #expect(
            delivered == [
                "a1": streams[0].message, "a2": streams[1].message,
                "b1": streams[2].message, "c1": streams[3].message,
            ])
        #expect(reassembler.partialMessageCount == 0)
    }

    @Test("The maximum number of concurrent partial messages across links is enforced exactly")
    func maximumPartialMessages() throws {
        var reassembler = TestReassembler(configuration: .init(maximumPartialMessages: 2))
        let message = [UInt8](repeating: 3, count: 50)
        let first = try Fragmenter.packets(for: message, maxPacketLength: 20, id: 1)
        #expect(try reassembler.receive(first[0], from: "a", at: .zero) == nil)
        #expect(try reassembler.receive(first[0], from: "b", at: .zero) == nil)
        #expect(throws: TransportError.tooManyPartialMessages(limit: 2)) {
            try reassembler.receive(first[0], from: "c", at: .zero)
        }
        // The rejected packet disturbed nothing: both partial messages still complete.
        for link in ["a", "b"] {
            var result: [UInt8]?
            for packet in first.dropFirst() { result = try reassembler.receive(packet, from: link, at: .zero) }
            #expect(result == message)
        }
        #expect(try reassembler.receive(first[0], from: "c", at: .zero) == nil)
    }

    @Test("A partial message expires after the timeout measured from its last packet")
    func expiryByPassedInInstant() throws {
        var reassembler = TestReassembler(configuration: .init(partialMessageTimeout: .seconds(30)))
        let packets = try Fragmenter.packets(for: [UInt8](repeating: 9, count: 100), maxPacketLength: 20, id: 77)
        #expect(try reassembler.receive(packets[0], from: "a", at: Self.at(0)) == nil)
        #expect(try reassembler.receive(packets[1], from: "a", at: Self.at(20)) == nil)
        #expect(reassembler.expire(now: Self.at(49)).isEmpty)
        let expired = reassembler.expire(now: Self.at(50))
        #expect(
            expired == [.init(link: "a", messageID: 77, receivedPackets: 2, packetCount: 7, lastActivity: Self.at(20))])
        #expect(reassembler.partialMessageCount == 0)
        // Its late packets are ignored while its id is remembered.
        #expect(try reassembler.receive(packets[2], from: "a", at: Self.at(60)) == nil)
        #expect(reassembler.partialMessageCount == 0)
    }

    @Test("A finished message's id is remembered until exactly the timeout after it finished, not a moment longer")
    func aRememberedIdIsForgottenAtItsDeadline() throws {
        let packets = try Fragmenter.packets(for: [UInt8](repeating: 5, count: 8), maxPacketLength: 20, id: 5)
        for (late, ignored) in [(Duration.seconds(30) - .nanoseconds(1), true), (.seconds(30), false)] {
            var reassembler = TestReassembler(configuration: .init(partialMessageTimeout: .seconds(30)))
            #expect(try reassembler.receive(packets[0], from: "a", at: .zero) == [UInt8](repeating: 5, count: 8))
            // The same packet again: a duplicate while the id is remembered, a new message after.
            let again = try reassembler.receive(packets[0], from: "a", at: TestInstant.zero.advanced(by: late))
            #expect((again == nil) == ignored, "at \(late)")
        }
    }

    @Test("A partial message's deadline is exact whichever way expiry runs: by expire(now:) or by a packet")
    func expiryAtExactlyTheDeadline() throws {
        let stale = try Fragmenter.packets(for: [UInt8](repeating: 1, count: 100), maxPacketLength: 20, id: 1)
        let fresh = try Fragmenter.packets(for: [UInt8](repeating: 2, count: 8), maxPacketLength: 20, id: 2)
        for (now, expires) in [(Duration.seconds(30) - .nanoseconds(1), false), (.seconds(30), true)] {
            var byTimer = TestReassembler(configuration: .init(partialMessageTimeout: .seconds(30)))
            #expect(try byTimer.receive(stale[0], from: "a", at: .zero) == nil)
            #expect(byTimer.expire(now: TestInstant.zero.advanced(by: now)).count == (expires ? 1 : 0))
            var byPacket = TestReassembler(
                configuration: .init(maximumPartialMessages: 1, partialMessageTimeout: .seconds(30)))
            #expect(try byPacket.receive(stale[0], from: "a", at: .zero) == nil)
            let received = Result { try byPacket.receive(fresh[0], from: "b", at: TestInstant.zero.advanced(by: now)) }
            if expires {
                #expect(try received.get() == [UInt8](repeating: 2, count: 8))
            } else {
                #expect(throws: TransportError.tooManyPartialMessages(limit: 1)) { try received.get() }
            }
        }
    }

    @Test("Receiving a packet drops stale partial messages of other links")
    func expiryDuringReceive() throws {
        var reassembler = TestReassembler(configuration: .init(maximumPartialMessages: 1))
        let stale = try Fragmenter.packets(for: [UInt8](repeating: 1, count: 100), maxPacketLength: 20, id: 1)
        let fresh = try Fragmenter.packets(for: [UInt8](repeating: 2, count: 8), maxPacketLength: 20, id: 2)
        #expect(try reassembler.receive(stale[3], from: "a", at: Self.at(0)) == nil)
        #expect(throws: TransportError.tooManyPartialMessages(limit: 1)) {
            try reassembler.receive(fresh[0], from: "b", at: Self.at(29))
        }
        #expect(try reassembler.receive(fresh[0], from: "b", at: Self.at(30)) == [UInt8](repeating: 2, count: 8))
        #expect(reassembler.expire(now: Self.at(1_000)).isEmpty)
    }

    @Test("Expiry works with ContinuousClock instants without sleeping")
    func continuousClockInstants() throws {
        var reassembler = Reassembler<Int, ContinuousClock.Instant>()
        let start = ContinuousClock.Instant.now
        let packets = try Fragmenter.packets(for: [1, 2, 3, 4, 5, 6, 7, 8, 9], maxPacketLength: 20, id: 3)
        #expect(try reassembler.receive(packets[1], from: 0, at: start) == nil)
        #expect(reassembler.expire(now: start + .seconds(29)).isEmpty)
        #expect(reassembler.expire(now: start + .seconds(30)).map(\.messageID) == [3])
    }

    @Test("A duplicate after completion is ignored only while its id is remembered")
    func rememberedIds() throws {
        var reassembler = TestReassembler(configuration: .init(maximumRememberedMessages: 2))
        let messages = try (1...3).map { try Fragmenter.packets(for: [UInt8($0)], maxPacketLength: 20, id: UInt16($0)) }
        for packets in messages { #expect(try reassembler.receive(packets[0], from: "a", at: .zero) != nil) }
        // Ids 2 and 3 are remembered; id 1 was forgotten as the oldest.
        #expect(try reassembler.receive(messages[2][0], from: "a", at: .zero) == nil)
        #expect(try reassembler.receive(messages[0][0], from: "a", at: .zero) == [1])
        // After the timeout, remembered ids are forgotten too.
        #expect(try reassembler.receive(messages[2][0], from: "a", at: Self.at(30)) == [3])
    }

    @Test("Discarding a link's partial messages leaves other links alone")
    func discardLink() throws {
        var reassembler = TestReassembler()
        let packets = try Fragmenter.packets(for: [UInt8](repeating: 0, count: 40), maxPacketLength: 20, id: 1)
        _ = try reassembler.receive(packets[0], from: "a", at: .zero)
        _ = try reassembler.receive(packets[0], from: "b", at: .zero)
        #expect(reassembler.discardPartialMessages(for: "a") == 1)
        #expect(reassembler.partialMessageCount == 1)
        #expect(try reassembler.receive(packets[1], from: "b", at: .zero) == nil)
        #expect(try reassembler.receive(packets[2], from: "b", at: .zero) == [UInt8](repeating: 0, count: 40))
    }

    @Test("Data packets reassemble into the message as bytes or as Data")
    func dataConveniences() throws {
        var reassembler = TestReassembler()
        let message = Data((0..<500).map { UInt8($0 % 251) })
        var delivered: Data?
        for packet in try Fragmenter.dataPackets(for: message, maxPacketLength: 182, id: 12) {
            delivered = try reassembler.receiveData(packet, from: "a", at: .zero) ?? delivered
        }
        #expect(delivered == message)
        let packets = try Fragmenter.dataPackets(for: message, maxPacketLength: 514, id: 13)
        #expect(try reassembler.receive(packets[0], from: "a", at: .zero) == Array(message))
    }

    @Test("The configured maximum message length is enforced at exactly its value")
    func maximumMessageLength() throws {
        var reassembler = TestReassembler(configuration: .init(maximumMessageLength: 64))
        let fits = try Fragmenter.packets(for: [UInt8](repeating: 1, count: 64), maxPacketLength: 244, id: 1)
        #expect(try reassembler.receive(fits[0], from: "a", at: .zero)?.count == 64)
        let over = try Fragmenter.packets(for: [UInt8](repeating: 1, count: 65), maxPacketLength: 244, id: 2)
        #expect(throws: TransportError.declaredLengthTooLarge(messageID: 2, declaredLength: 65, limit: 64)) {
            try reassembler.receive(over[0], from: "a", at: .zero)
        }
    }

    /// A new session on a link (a new sender after a reconnect) numbers its messages from the
    /// first id again: once the owner forgets the link's remembered ids, the first message of
    /// the session is delivered instead of being ignored as a late packet of an old message.
    @Test("Forgetting a link's remembered ids lets a new session's message with an old id through")
    func forgettingALinksRememberedIds() throws {
        var reassembler = TestReassembler()
        let old = try Fragmenter.packets(for: [1, 2, 3], maxPacketLength: 20, id: 0)
        let new = try Fragmenter.packets(for: [4, 5, 6], maxPacketLength: 20, id: 0)
        #expect(try reassembler.receive(old[0], from: "a", at: Self.at(0)) == [1, 2, 3])
        #expect(try reassembler.receive(old[0], from: "b", at: Self.at(0)) == [1, 2, 3])
        #expect(try reassembler.receive(new[0], from: "a", at: Self.at(1)) == nil)
        reassembler.forgetRemembered(for: "a")
        #expect(try reassembler.receive(new[0], from: "a", at: Self.at(1)) == [4, 5, 6])
        // Another link's ids are still remembered.
        #expect(try reassembler.receive(new[0], from: "b", at: Self.at(1)) == nil)
    }

    /// A peer reusing one id, each message after the last one's memory expired: the memory of
    /// finished ids stays at one entry (its order list grew by one a message, for ever).
    @Test("Remembered ids stay bounded when a peer reuses an id after each expiry")
    func rememberedIdsStayBoundedWhenAnIdIsReused() throws {
        var reassembler = TestReassembler(configuration: .init(partialMessageTimeout: .seconds(1)))
        let packet = try Fragmenter.packets(for: [9], maxPacketLength: 20, id: 0)[0]
        for second in 0..<5_000 {
            #expect(try reassembler.receive(packet, from: "a", at: Self.at(2 * second)) == [9])
        }
        #expect(reassembler.remembered.count == 1)
        #expect(reassembler.rememberedOrder.count - reassembler.rememberedHead <= 1)
        #expect(reassembler.rememberedOrder.count <= 128)
    }
}
