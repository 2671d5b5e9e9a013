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
