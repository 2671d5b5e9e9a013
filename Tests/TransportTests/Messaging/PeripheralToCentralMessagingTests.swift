import BLECore
import BLEMockKit
import Foundation
import Testing
import Transport

@Suite("Messages from a peripheral to its centrals", .timeLimit(.minutes(10)))
struct PeripheralToCentralMessagingTests {
    @Test(
        "Messages of every size reach the addressed central only, intact and in order",
        arguments: [23, 185, 517])
    func roundTripToOneOfTwoCentrals(mtu: Int) async throws {
        let fixture = try await MessagingFixture()
        let (alice, aliceRemote) = try await fixture.connectCentral(mtu: mtu)
        let (bob, bobRemote) = try await fixture.connectCentral(mtu: 23)
        let sender = await fixture.peripheralChannel()
        let atAlice = await fixture.centralChannel(alice, aliceRemote)
        let atBob = await fixture.centralChannel(bob, bobRemote)
        let forAlice = MessagingFixture.sizes.enumerated().map { MessagingFixture.message(size: $1, salt: UInt8($0)) }
        let forBob = [MessagingFixture.message(size: 300, salt: 9), MessagingFixture.message(size: 5, salt: 10)]
        for (index, message) in forAlice.enumerated() {
            try await sender.send(message, to: alice.identifier)
            if index < forBob.count { try await sender.send(forBob[index], to: bob.identifier) }
        }
        #expect(await atAlice.messages().next(forAlice.count) == forAlice)
        #expect(await atBob.messages().next(forBob.count) == forBob)

        let log = await fixture.bridge.log
        let toAlice = log.filter { $0.kind == .notification && $0.central == alice.identifier }
        let toBob = log.filter { $0.kind == .notification && $0.central == bob.identifier }
        let aliceLength = min(mtu - 3, 512)
        #expect(toAlice.allSatisfy { ($0.value?.count ?? .max) <= aliceLength })
        #expect(toBob.allSatisfy { ($0.value?.count ?? .max) <= 20 })
        let expectedToAlice = try forAlice.reduce(0) {
            $0 + (try Fragmenter.packetCount(forMessageLength: $1.count, maxPacketLength: aliceLength))
        }
        #expect(toAlice.count == expectedToAlice)
        #expect(log.contains { $0.kind == .truncated } == false)

        await atAlice.close()
        await atBob.close()
        #expect(await atAlice.messages().remaining().isEmpty)
        #expect(await atBob.messages().remaining().isEmpty)
        #expect(await atAlice.failures().remaining().isEmpty)
        #expect(await atBob.failures().remaining().isEmpty)
    }

    @Test("Two tasks sending to one central interleave under distinct ids and both messages arrive intact")
    func interleavedSends() async throws {
        let fixture = try await MessagingFixture()
        let (central, remote) = try await fixture.connectCentral(mtu: 23)
        let sender = await fixture.peripheralChannel()
        let receiver = await fixture.centralChannel(central, remote)
        let first = MessagingFixture.message(size: 2_500, salt: 5)
        let second = MessagingFixture.message(size: 1_200, salt: 6)
        async let one: Void = sender.send(first, to: central.identifier)
        async let two: Void = sender.send(Data(second), to: central.identifier)
        _ = try await (one, two)
        #expect(Set(await receiver.messages().next(2)) == [first, second])
        let ids = Set(
            await fixture.bridge.log.filter { $0.kind == .notification }.compactMap { entry in
                entry.value.map { UInt16($0[$0.startIndex]) << 8 | UInt16($0[$0.startIndex + 1]) }
            })
        #expect(ids.count == 2)
    }

    @Test("Sending to a central that is not subscribed throws notSubscribed")
    func notSubscribed() async throws {
        let fixture = try await MessagingFixture()
        let (central, remote) = try await fixture.connectCentral(mtu: 23)
        try await central.setNotifyValue(false, for: remote)
        let sender = await fixture.peripheralChannel()
        await #expect(throws: MessageChannelError.notSubscribed(central: central.identifier)) {
            try await sender.send([1, 2, 3], to: central.identifier)
        }
    }

    @Test("A message too long for the configuration is refused before any packet is sent")
    func messageTooLarge() async throws {
        let fixture = try await MessagingFixture()
        let (central, _) = try await fixture.connectCentral(mtu: 23)
        let sender = await fixture.peripheralChannel(configuration: TransportConfiguration(maximumMessageLength: 100))
        await #expect(throws: TransportError.messageTooLarge(length: 101, limit: 100)) {
            try await sender.send(MessagingFixture.message(size: 101), to: central.identifier)
        }
        #expect(await fixture.bridge.log.contains { $0.kind == .notification } == false)
    }
}
