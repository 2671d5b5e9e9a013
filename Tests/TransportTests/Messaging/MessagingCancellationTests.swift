import BLECore
import BLEMockKit
import Foundation
import Testing
import Transport

/// A send waiting for room in a full queue returns `CancellationError` when its task is
/// cancelled, and the channel goes on working.
@Suite("Messaging: cancelling a waiting send", .timeLimit(.minutes(10)))
struct MessagingCancellationTests {
    /// A fast bridge whose queues hold one packet each and drain only when the simulation
    /// runs: a send of several packets waits for room until something drives it.
    static func channels() async throws -> (
        MockBLEBridge, CentralMessageChannel<VirtualClock>, PeripheralMessageChannel<VirtualClock>, UUID
    ) {
        let bridge = MockBLEBridge()
        let (peripheral, characteristic) = try await MessagingFixture.commandPeripheral(
            on: bridge, updateQueue: .realistic(capacity: 1))
        let central = MockCentralManager(
            configuration: .init(mtu: .fixed(23), writeWithoutResponseQueue: .realistic(capacity: 1)), bridge: bridge)
        try await central.scanForPeripherals(withServices: nil)
        try await central.connect(peripheral.identifier)
        let remote = try await central.discoverAll(for: peripheral.identifier)[0]
        try await central.setNotifyValue(true, for: remote)
        return (
            bridge, await CentralMessageChannel(central: central, characteristic: remote, clock: bridge.clock),
            await PeripheralMessageChannel(
                peripheral: peripheral, characteristic: characteristic, clock: bridge.clock),
            central.identifier
        )
    }

    @Test("A central's send waiting for readyToSendWriteWithoutResponse ends with CancellationError")
    func centralSend() async throws {
        let (bridge, central, peripheral, _) = try await Self.channels()
        let send = Task { try await central.send(MessagingFixture.message(size: 100)) }
        // One packet fills the queue; the send then waits for room.
        await bridge.waitUntil { $0.log.contains { $0.kind == .write } }
        send.cancel()
        await #expect(throws: CancellationError.self) { try await send.value }
        // The channel still sends once the queue drains.
        await bridge.run()
        var received = peripheral.messages().makeAsyncIterator()
        let small = MessagingFixture.message(size: 8, salt: 1)
        try await central.send(small)
        await bridge.run()
        #expect(await received.next()?.bytes == small)
    }

    @Test("A peripheral's send waiting for readyToUpdateSubscribers ends with CancellationError")
    func peripheralSend() async throws {
        let (bridge, _, peripheral, centralID) = try await Self.channels()
        let send = Task { try await peripheral.send(MessagingFixture.message(size: 100), to: centralID) }
        await bridge.waitUntil { $0.log.contains { $0.kind == .notification } }
        send.cancel()
        await #expect(throws: CancellationError.self) { try await send.value }
    }
}
