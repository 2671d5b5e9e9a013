import BLECore
import BLEMockKit
import Foundation
import Testing
import Transport

@Suite("Messages from a central to a peripheral", .timeLimit(.minutes(10)))
struct CentralToPeripheralMessagingTests {
    @Test(
        "Messages of every size arrive intact and in order, in packets of at most ATT_MTU − 3",
        arguments: [23, 185, 517], [WriteType.withoutResponse, .withResponse])
    func roundTrip(mtu: Int, writeType: WriteType) async throws {
        let fixture = try await MessagingFixture()
        let (central, remote) = try await fixture.connectCentral(mtu: mtu)
        let receiver = await fixture.peripheralChannel()
        let sender = await fixture.centralChannel(central, remote, writeType: writeType)
        let sent = MessagingFixture.sizes.enumerated().map { MessagingFixture.message(size: $1, salt: UInt8($0)) }
        for message in sent {
            try await sender.send(message)
        }
        let received = await receiver.messages().next(sent.count)
        #expect(received.map(\.bytes) == sent)
        #expect(received.allSatisfy { $0.central == central.identifier })

        let writes = await fixture.bridge.log.filter { $0.kind == .write }
        let packetLength = min(mtu - 3, 512)  // an attribute value holds at most 512 bytes
        let expectedPackets = try sent.reduce(0) {
            $0 + (try Fragmenter.packetCount(forMessageLength: $1.count, maxPacketLength: packetLength))
        }
        #expect(writes.count == expectedPackets)
        #expect(writes.allSatisfy { ($0.value?.count ?? .max) <= packetLength && $0.writeType == writeType })
        #expect(await fixture.bridge.log.contains { $0.kind == .truncated } == false)

        await receiver.close()
        await sender.close()
        #expect(await receiver.failures().remaining().isEmpty)
    }

    @Test("A Data message arrives as the same bytes")
    func dataOverload() async throws {
        let fixture = try await MessagingFixture()
        let (central, remote) = try await fixture.connectCentral(mtu: 23)
        let receiver = await fixture.peripheralChannel()
        let sender = await fixture.centralChannel(central, remote)
        try await sender.send(Data("hello, peripheral".utf8))
        #expect(await receiver.messages().next(1).map(\.bytes) == [Array("hello, peripheral".utf8)])
    }

    @Test("Two tasks sending on one channel interleave under distinct ids and both messages arrive intact")
    func interleavedSends() async throws {
        let fixture = try await MessagingFixture()
        let (central, remote) = try await fixture.connectCentral(mtu: 23)
        let receiver = await fixture.peripheralChannel()
        let sender = await fixture.centralChannel(central, remote)
        let first = MessagingFixture.message(size: 2_000, salt: 1)
        let second = MessagingFixture.message(size: 3_000, salt: 2)
        async let one: Void = sender.send(first)
        async let two: Void = sender.send(second)
        _ = try await (one, two)
        let received = await receiver.messages().next(2).map(\.bytes)
        #expect(Set(received) == [first, second])
        let ids = Set(
            await fixture.bridge.log.filter { $0.kind == .write }.compactMap { entry in
                entry.value.map { UInt16($0[$0.startIndex]) << 8 | UInt16($0[$0.startIndex + 1]) }
            })
        #expect(ids.count == 2)
    }

    @Test("Two centrals' messages are reassembled separately and attributed to their senders")
    func twoCentrals() async throws {
        let fixture = try await MessagingFixture()
        let (alice, aliceRemote) = try await fixture.connectCentral(mtu: 23)
        let (bob, bobRemote) = try await fixture.connectCentral(mtu: 185)
        let receiver = await fixture.peripheralChannel()
        let fromAlice = await fixture.centralChannel(alice, aliceRemote)
        let fromBob = await fixture.centralChannel(bob, bobRemote, writeType: .withResponse)
        let aliceMessage = MessagingFixture.message(size: 1_500, salt: 3)
        let bobMessage = MessagingFixture.message(size: 1_500, salt: 4)
        async let one: Void = fromAlice.send(aliceMessage)
        async let two: Void = fromBob.send(bobMessage)
        _ = try await (one, two)
        let received = await receiver.messages().next(2)
        #expect(
            Set(received) == [
                ReceivedMessage(central: alice.identifier, bytes: aliceMessage),
                ReceivedMessage(central: bob.identifier, bytes: bobMessage),
            ])
    }

    @Test("A peripheral channel on a write-without-response-only characteristic never answers")
    func writeWithoutResponseOnly() async throws {
        let fixture = try await MessagingFixture(properties: [.writeWithoutResponse, .notify])
        let (central, remote) = try await fixture.connectCentral(mtu: 23)
        let receiver = await fixture.peripheralChannel()
        let sender = await fixture.centralChannel(central, remote)
        try await sender.send(MessagingFixture.message(size: 100))
        #expect(await receiver.messages().next(1).map(\.bytes) == [MessagingFixture.message(size: 100)])
        #expect(await fixture.bridge.log.contains { $0.kind == .response } == false)
    }
}
