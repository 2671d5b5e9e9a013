import BLECore
import BLEMockKit
import Foundation
import Testing
import Transport

/// Messaging over links whose transmit queues fill and drain in virtual time.
@Suite("Messaging over realistic links", .timeLimit(.minutes(10)))
struct RealisticMessagingTests {
    /// A realistic bridge (jitter-free, 30 ms connection events, 4 packets per event), a manual
    /// peripheral publishing the message characteristic with a notification queue of
    /// `updateCapacity`, and a central at ATT_MTU 23 with a write queue of `writeCapacity`.
    static func rig(writeCapacity: Int = 3, updateCapacity: Int = 3) async throws -> (
        bridge: MockBLEBridge, peripheral: MockPeripheralManager, characteristic: LocalCharacteristic,
        central: MockCentralManager, remote: RemoteCharacteristic
    ) {
        let bridge = MockBLEBridge(configuration: .init(seed: 8, timing: LinkTiming(jitter: .zero)))
        let (peripheral, characteristic) = try await MessagingFixture.commandPeripheral(
            on: bridge, updateQueue: .realistic(capacity: updateCapacity))
        let central = MockCentralManager(
            configuration: .init(mtu: .fixed(23), writeWithoutResponseQueue: .realistic(capacity: writeCapacity)),
            bridge: bridge)
        try await central.scanForPeripherals(withServices: nil)
        await bridge.advance(by: .milliseconds(200))
        try await central.connect(peripheral.identifier)
        let remote = try await central.discoverAll(for: peripheral.identifier)[0]
        try await central.setNotifyValue(true, for: remote)
        return (bridge, peripheral, characteristic, central, remote)
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test("A packet dropped by a full write queue is detected by reassembly, never delivered corrupt")
    func droppedPacketIsDetected() async throws {
        let rig = try await Self.rig(writeCapacity: 3)
        // Inside a run the channel's own task (which reads the peripheral's events) runs before
        // time moves on, so the test need not wait for it.
        let (reported, delivered) = try await rig.bridge.run {
            let channel = await PeripheralMessageChannel(
                peripheral: rig.peripheral, characteristic: rig.characteristic,
                configuration: TransportConfiguration(partialMessageTimeout: .seconds(2)), clock: rig.bridge.clock)
            let messages = channel.messages()
            let failures = channel.failures()
            // A careless sender: fragments a 100-byte message into 7 packets and writes them
            // all without checking canSendWriteWithoutResponse; the queue holds 3.
            let packets = try Fragmenter.packets(
                for: MessagingFixture.message(size: 100), maxPacketLength: 20, id: 1)
            #expect(packets.count == 7)
            for packet in packets {
                try await rig.central.writeValue(Data(packet), for: rig.remote, type: .withoutResponse)
            }
            let dropped = await rig.bridge.log.filter {
                $0.kind == .write && $0.detail == "dropped: transmit queue full"
            }
            #expect(dropped.count == 4)
            // The 3 queued packets reach the peripheral at the next connection event; 2 s
            // later the partial message expires.
            await rig.bridge.advance(by: .seconds(3))
            let reported = await failures.next(1)
            await channel.close()
            return (reported, await messages.next(1))
        }
        #expect(reported == [.expired(messageID: 1, from: rig.central.identifier, receivedPackets: 3, packetCount: 7)])
        #expect(delivered.isEmpty)
    }
}

/// Found by an adversarial probe of the channels.
extension RealisticMessagingTests {
    /// Two sends at once over a write queue of one: each packet's check for room and its write
    /// are one step (the channel actor is reentrant between them), so no packet is dropped and
    /// both messages arrive. Both sends used to see room for one packet, write, and lose the
    /// second write, while both returned success.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(
        "Concurrent sends over a write queue that holds one packet lose nothing and deliver every message",
        arguments: [2, 4])
    func concurrentSendsOverAQueueOfOneDeliverEveryMessage(senders: Int) async throws {
        let rig = try await Self.rig(writeCapacity: 1)
        let delivered = try await rig.bridge.run {
            let receiver = await PeripheralMessageChannel(
                peripheral: rig.peripheral, characteristic: rig.characteristic, clock: rig.bridge.clock)
            let sender = await CentralMessageChannel(
                central: rig.central, characteristic: rig.remote, clock: rig.bridge.clock)
            let messages = receiver.messages()
            try await withThrowingTaskGroup(of: Void.self) { group in
                for salt in 0..<senders {
                    group.addTask { try await sender.send(MessagingFixture.message(size: 100, salt: UInt8(salt))) }
                }
                try await group.waitForAll()
            }
            let delivered = await messages.next(senders)
            await sender.close()
            await receiver.close()
            return delivered
        }
        #expect(
            Set(delivered.map(\.bytes))
                == Set((0..<senders).map { MessagingFixture.message(size: 100, salt: UInt8($0)) }))
        let dropped = await rig.bridge.log.filter { $0.kind == .write && $0.detail == "dropped: transmit queue full" }
        #expect(dropped.isEmpty)
    }

    /// More sends at once than the peer holds partial messages (16 by default): each channel
    /// keeps at most that many messages in flight, the others waiting their turn, so all
    /// arrive. Packets went round-robin and the peer refused the 17th message
    /// (`tooManyPartialMessages`), while every send returned success.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test("More concurrent sends than the peer's partial messages deliver every message, both ways")
    func moreConcurrentSendsThanPartialMessagesDeliverEveryMessage() async throws {
        let rig = try await Self.rig(writeCapacity: 1, updateCapacity: 1)
        let count = 20
        let sent = (0..<count).map { MessagingFixture.message(size: 100, salt: UInt8($0)) }
        let (toPeripheral, toCentral, failures) = try await rig.bridge.run {
            let peripheralSide = await PeripheralMessageChannel(
                peripheral: rig.peripheral, characteristic: rig.characteristic, clock: rig.bridge.clock)
            let centralSide = await CentralMessageChannel(
                central: rig.central, characteristic: rig.remote, clock: rig.bridge.clock)
            let (fromCentral, fromPeripheral) = (peripheralSide.messages(), centralSide.messages())
            try await withThrowingTaskGroup(of: Void.self) { group in
                for message in sent {
                    group.addTask { try await centralSide.send(message) }
                    group.addTask { try await peripheralSide.send(message, to: rig.central.identifier) }
                }
                try await group.waitForAll()
            }
            let received = (await fromCentral.next(count).map(\.bytes), await fromPeripheral.next(count))
            await centralSide.close()
            await peripheralSide.close()
            let failures = await peripheralSide.failures().remaining() + centralSide.failures().remaining()
            return (received.0, received.1, failures)
        }
        #expect(Set(toPeripheral) == Set(sent) && toPeripheral.count == count)
        #expect(Set(toCentral) == Set(sent) && toCentral.count == count)
        #expect(failures.isEmpty)
    }

    /// A new channel after a reconnect numbers its messages from the first id again; the
    /// peer's channel forgets the ids of the old session's messages when the link goes down
    /// (and, on the peripheral, when the central unsubscribes or subscribes), so the new
    /// session's first message is delivered. It used to be ignored as a late packet of the old
    /// message with the same id, for the partial-message timeout, with nothing reported.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test("A new channel after a reconnect has its first message delivered, in both directions")
    func aNewChannelAfterAReconnectIsHeard() async throws {
        let rig = try await Self.rig()
        let (fromCentral, fromPeripheral) = try await rig.bridge.run {
            let peripheralSide = await PeripheralMessageChannel(
                peripheral: rig.peripheral, characteristic: rig.characteristic, clock: rig.bridge.clock)
            let toPeripheral = peripheralSide.messages()
            var centralSide = await CentralMessageChannel(
                central: rig.central, characteristic: rig.remote, clock: rig.bridge.clock)
            var toCentral = centralSide.messages()
            try await centralSide.send([1, 2, 3])
            try await peripheralSide.send([1, 2, 3], to: rig.central.identifier)
            var fromCentral = await toPeripheral.next(1).map(\.bytes)
            var fromPeripheral = await toCentral.next(1)
            await centralSide.close()
            try await rig.central.cancelPeripheralConnection(rig.peripheral.identifier)
            try await rig.central.connect(rig.peripheral.identifier)
            let remote = try await rig.central.discoverAll(for: rig.peripheral.identifier)[0]
            try await rig.central.setNotifyValue(true, for: remote)
            centralSide = await CentralMessageChannel(
                central: rig.central, characteristic: remote, clock: rig.bridge.clock)
            toCentral = centralSide.messages()
            try await centralSide.send([4, 5, 6])
            try await peripheralSide.send([4, 5, 6], to: rig.central.identifier)
            fromCentral += await toPeripheral.next(1).map(\.bytes)
            fromPeripheral += await toCentral.next(1)
            await centralSide.close()
            await peripheralSide.close()
            return (fromCentral, fromPeripheral)
        }
        #expect(fromCentral == [[1, 2, 3], [4, 5, 6]])
        #expect(fromPeripheral == [[1, 2, 3], [4, 5, 6]])
    }

    /// A send whose task is cancelled stops before its next packet with `CancellationError`
    /// (it used to go on to the end and report success while the queue had room).
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test("A cancelled send stops with CancellationError, on either side")
    func aCancelledSendStops() async throws {
        let rig = try await Self.rig(writeCapacity: 100, updateCapacity: 100)
        let outcomes = try await rig.bridge.run { () -> [Bool] in
            let peripheralSide = await PeripheralMessageChannel(
                peripheral: rig.peripheral, characteristic: rig.characteristic, clock: rig.bridge.clock)
            let centralSide = await CentralMessageChannel(
                central: rig.central, characteristic: rig.remote, clock: rig.bridge.clock)
            let central = rig.central.identifier
            // Child tasks (they run in the run's scope), each cancelled before it sends.
            let outcomes = await withTaskGroup(of: (Int, Bool).self) { group -> [Bool] in
                group.addTask {
                    withUnsafeCurrentTask { $0?.cancel() }
                    do {
                        try await centralSide.send(MessagingFixture.message(size: 1_000))
                        return (0, false)
                    } catch {
                        return (0, error is CancellationError)
                    }
                }
                group.addTask {
                    withUnsafeCurrentTask { $0?.cancel() }
                    do {
                        try await peripheralSide.send(MessagingFixture.message(size: 1_000), to: central)
                        return (1, false)
                    } catch {
                        return (1, error is CancellationError)
                    }
                }
                var outcomes = [false, false]
                for await (side, cancelled) in group { outcomes[side] = cancelled }
                return outcomes
            }
            await centralSide.close()
            await peripheralSide.close()
            return outcomes
        }
        #expect(outcomes == [true, true])
        let sent = await rig.bridge.log.filter { $0.kind == .write || $0.kind == .notification }
        #expect(sent.isEmpty)
    }
}
