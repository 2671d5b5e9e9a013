import BLECore
import BLEMockKit
import Foundation
import Testing
import Transport

@Suite("Message channel failures and closing", .timeLimit(.minutes(10)))
struct MessagingFailureTests {
    /// Expiry after 5 virtual seconds without a packet.
    static let configuration = TransportConfiguration(partialMessageTimeout: .seconds(5))

    /// Sends hand-made packets to every subscribed central, as a misbehaving peripheral would.
    static func notify(_ packets: [[UInt8]], from fixture: MessagingFixture) async throws {
        for packet in packets {
            #expect(try await fixture.peripheral.updateValue(Data(packet), for: fixture.characteristic))
        }
    }

    @Test("A corrupted packet is reported with the exact checksum mismatch and nothing corrupt is delivered")
    func corruptedPacket() async throws {
        let fixture = try await MessagingFixture()
        let (central, remote) = try await fixture.connectCentral(mtu: 23)
        let receiver = await fixture.centralChannel(central, remote)
        let original = MessagingFixture.message(size: 40, salt: 1)
        var packets = try Fragmenter.packets(for: original, maxPacketLength: 20, id: 7)
        packets[1][6] ^= 0x5A  // frame byte 16 + 2, which is message byte 14
        var corrupted = original
        corrupted[14] ^= 0x5A
        let good = MessagingFixture.message(size: 30, salt: 2)
        try await Self.notify(packets + Fragmenter.packets(for: good, maxPacketLength: 20, id: 8), from: fixture)

        let expected = MessageChannelFailure.rejected(
            .checksumMismatch(
                messageID: 7,
                expected: original.withUnsafeBytes { Fragmenter.checksum(id: 7, message: $0) },
                computed: corrupted.withUnsafeBytes { Fragmenter.checksum(id: 7, message: $0) }),
            from: fixture.peripheral.identifier)
        #expect(await receiver.failures().next(1) == [expected])
        #expect(await receiver.messages().next(1) == [good])
        await receiver.close()
        #expect(await receiver.messages().remaining().isEmpty)
        #expect(await receiver.failures().remaining().isEmpty)
    }

    @Test("A channel on the continuous clock with a timeout of Int64.max seconds waits for the rest of a message")
    func neverExpiringOnTheContinuousClock() async throws {
        // Its timer slept until now + timeout, past what the clock's Duration holds, and trapped.
        let fixture = try await MessagingFixture()
        let (central, remote) = try await fixture.connectCentral(mtu: 23)
        let receiver = await PeripheralMessageChannel(
            peripheral: fixture.peripheral, characteristic: fixture.characteristic,
            configuration: .init(partialMessageTimeout: .seconds(Int64.max)), clock: ContinuousClock())
        let message = MessagingFixture.message(size: 40, salt: 3)
        let packets = try Fragmenter.packets(for: message, maxPacketLength: 20, id: 0)
        try await central.writeValue(Data(packets[0]), for: remote, type: .withResponse)
        for packet in packets.dropFirst() {
            try await central.writeValue(Data(packet), for: remote, type: .withResponse)
        }
        #expect(await receiver.messages().next(1).map(\.bytes) == [message])
        await receiver.close()
    }

    @Test("A central's next channel after a reconnect is heard, though its last message was cut off")
    func reconnectAfterACutOffMessage() async throws {
        // The old session's partial message held id 0, which the new channel numbers its first
        // message with: that message was refused as a conflicting duplicate and lost.
        let fixture = try await MessagingFixture()
        let (central, remote) = try await fixture.connectCentral(mtu: 23)
        let receiver = await fixture.peripheralChannel()
        let cutOff = try Fragmenter.packets(for: MessagingFixture.message(size: 100), maxPacketLength: 20, id: 0)
        for packet in cutOff.prefix(3) { try await central.writeValue(Data(packet), for: remote, type: .withResponse) }
        let id = fixture.peripheral.identifier
        try await central.cancelPeripheralConnection(id)
        try await central.connect(id)
        try await central.discoverAll(for: id)
        let again = try await central.characteristic(MessagingFixture.characteristicUUID, of: id)
        try await central.setNotifyValue(true, for: again)
        let sender = await fixture.centralChannel(central, again)
        let message = MessagingFixture.message(size: 100, salt: 5)
        try await sender.send(message)
        // (The failure first: with the stale partial kept, the message never comes.)
        try #require(await receiver.failures().next(1) == [.discarded(from: central.identifier, partialMessages: 1)])
        #expect(await receiver.messages().next(1).map(\.bytes) == [message])
        await receiver.close()
        #expect(await receiver.failures().remaining().isEmpty)
    }

    @Test("A malformed packet is rejected with its TransportError and the channel keeps working")
    func malformedPacket() async throws {
        let fixture = try await MessagingFixture()
        let (central, remote) = try await fixture.connectCentral(mtu: 23)
        let receiver = await fixture.centralChannel(central, remote)
        try await Self.notify([[0x00, 0x01, 0x00]], from: fixture)
        try await Self.notify(Fragmenter.packets(for: [1, 2, 3], maxPacketLength: 20, id: 1), from: fixture)
        #expect(
            await receiver.failures().next(1) == [
                .rejected(.packetShorterThanHeader(length: 3, headerLength: 4), from: fixture.peripheral.identifier)
            ])
        #expect(await receiver.messages().next(1) == [[1, 2, 3]])
    }

    @Test("A message missing a packet is never delivered and is reported when it expires on the bridge's clock")
    func missingPacketExpires() async throws {
        let fixture = try await MessagingFixture()
        let (central, remote) = try await fixture.connectCentral(mtu: 23)
        let receiver = await fixture.centralChannel(central, remote, configuration: Self.configuration)
        var packets = try Fragmenter.packets(for: MessagingFixture.message(size: 100), maxPacketLength: 20, id: 9)
        #expect(packets.count == 7)
        packets.remove(at: 2)
        let good = MessagingFixture.message(size: 50, salt: 3)
        try await Self.notify(packets + Fragmenter.packets(for: good, maxPacketLength: 20, id: 10), from: fixture)
        #expect(await receiver.messages().next(1) == [good])  // every earlier packet has been handled
        #expect(await receiver.partialMessageCount == 1)

        await fixture.bridge.advance(by: .seconds(4))
        #expect(await receiver.partialMessageCount == 1)
        await fixture.bridge.advance(by: .seconds(2))
        #expect(
            await receiver.failures().next(1) == [
                .expired(messageID: 9, from: fixture.peripheral.identifier, receivedPackets: 6, packetCount: 7)
            ])
        #expect(await receiver.partialMessageCount == 0)
        await receiver.close()
        #expect(await receiver.messages().remaining().isEmpty)
        #expect(await receiver.failures().remaining().isEmpty)
    }

    @Test("A central's incomplete write is reported by the peripheral channel when it expires")
    func peripheralSideExpiry() async throws {
        let fixture = try await MessagingFixture()
        let (central, remote) = try await fixture.connectCentral(mtu: 23)
        let receiver = await fixture.peripheralChannel(configuration: Self.configuration)
        let packets = try Fragmenter.packets(for: MessagingFixture.message(size: 60), maxPacketLength: 20, id: 3)
        for packet in packets.dropLast() {
            try await central.writeValue(Data(packet), for: remote, type: .withResponse)
        }
        #expect(await receiver.partialMessageCount == 1)  // writes with response return once answered
        await fixture.bridge.advance(by: .seconds(6))
        #expect(
            await receiver.failures().next(1) == [
                .expired(
                    messageID: 3, from: central.identifier, receivedPackets: packets.count - 1,
                    packetCount: packets.count)
            ])
        await receiver.close()
        #expect(await receiver.messages().remaining().isEmpty)
    }

    @Test("A disconnect drops the peripheral's partial messages and reports them")
    func disconnectDiscards() async throws {
        let fixture = try await MessagingFixture()
        let (central, remote) = try await fixture.connectCentral(mtu: 23)
        let receiver = await fixture.centralChannel(central, remote)
        let packets = try Fragmenter.packets(for: MessagingFixture.message(size: 60), maxPacketLength: 20, id: 4)
        try await Self.notify(Array(packets.prefix(2)), from: fixture)
        await fixture.peripheral.simulateDisconnection(of: central.identifier)
        #expect(
            await receiver.failures().next(1) == [
                .discarded(from: fixture.peripheral.identifier, partialMessages: 1)
            ])
        await #expect(throws: CoreBluetoothError(.notConnected)) { try await receiver.send([1]) }
    }

    @Test("close() reports partial messages, finishes both streams of both channels and refuses sends")
    func closeFinishesStreams() async throws {
        let fixture = try await MessagingFixture()
        let (central, remote) = try await fixture.connectCentral(mtu: 23)
        let atCentral = await fixture.centralChannel(central, remote)
        let atPeripheral = await fixture.peripheralChannel()
        let packets = try Fragmenter.packets(for: MessagingFixture.message(size: 60), maxPacketLength: 20, id: 5)
        try await Self.notify([packets[0]], from: fixture)
        try await atCentral.send([9, 9])
        #expect(await atPeripheral.messages().next(1) == [ReceivedMessage(central: central.identifier, bytes: [9, 9])])
        #expect(await atCentral.partialMessageCount == 1)

        await atCentral.close()
        await atCentral.close()  // closing twice is harmless
        await atPeripheral.close()
        #expect(
            await atCentral.failures().remaining() == [
                .discarded(from: fixture.peripheral.identifier, partialMessages: 1)
            ])
        #expect(await atCentral.messages().remaining().isEmpty)
        #expect(await atPeripheral.messages().remaining().isEmpty)
        #expect(await atPeripheral.failures().remaining().isEmpty)
        await #expect(throws: MessageChannelError.closed) { try await atCentral.send([1]) }
        await #expect(throws: MessageChannelError.closed) {
            try await atPeripheral.send([1], to: central.identifier)
        }
    }
}
