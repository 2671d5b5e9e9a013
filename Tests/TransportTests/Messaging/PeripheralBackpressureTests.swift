import BLECore
import BLEMockKit
import Foundation
import Testing
import Transport

/// A peripheral's sends when its update queue fills: `updateValue` returns `false`, the
/// channel waits for `readyToUpdateSubscribers` and sends the same packet again; an
/// unsubscription or a cancellation while it waits ends the send. On a realistic bridge with
/// an update queue of two packets, inside the bridge's run (time drives itself).
@Suite("Message channel backpressure: the peripheral's update queue", .timeLimit(.minutes(10)))
struct PeripheralBackpressureTests {
    /// The log detail of an update the full queue refused.
    static let refusal = "transmit queue full: updateValue returned false"

    /// A realistic bridge's peripheral (update queue of 2) and a central at ATT_MTU 23,
    /// subscribed, with a channel at each end.
    static func channels(on bridge: MockBLEBridge) async throws -> (
        CentralMessageChannel<VirtualClock>, PeripheralMessageChannel<VirtualClock>, MockCentralManager,
        RemoteCharacteristic
    ) {
        let channels = try await MessagingFixture.connectedChannels(
            on: bridge, updateQueue: .realistic(capacity: 2), central: .init(mtu: .fixed(23)))
        return (channels.central, channels.peripheral, channels.manager, channels.remote)
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test("A send waits for readiness each time updateValue returns false, and every packet arrives once, in order")
    func sendWaitsForReadiness() async throws {
        let bridge = MockBLEBridge(configuration: .realistic(seed: 4))
        let message = MessagingFixture.message(size: 1_000, salt: 3)
        let received = try await bridge.run {
            let (central, peripheral, manager, _) = try await Self.channels(on: bridge)
            var messages = central.messages().makeAsyncIterator()
            try await peripheral.send(message, to: manager.identifier)
            let received = await messages.next()
            await central.close()
            await peripheral.close()
            return received
        }
        #expect(received == message)
        let log = await bridge.log
        // ⌈(1,000 + 8) / 16⌉ packets of 20 bytes at ATT_MTU 23, each notified exactly once.
        #expect(log.filter { $0.kind == .notification && $0.error == nil && $0.detail == nil }.count == 63)
        let refusals = log.filter { $0.kind == .notification && $0.detail == Self.refusal }
        #expect(refusals.count >= 20, "the queue of two filled again and again: \(refusals.count) refusals")
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test("A central unsubscribing while a send waits for readiness ends the send with notSubscribed")
    func unsubscribingEndsAWaitingSend() async throws {
        let bridge = MockBLEBridge(configuration: .realistic(seed: 5))
        let (error, sentAfter) = try await bridge.run {
            let (central, peripheral, manager, remote) = try await Self.channels(on: bridge)
            let send = bridge.task {
                try await peripheral.send(MessagingFixture.message(size: 4_000), to: manager.identifier)
            }
            await bridge.waitUntil { bridge in bridge.log.contains { $0.detail == Self.refusal } }
            try await manager.setNotifyValue(false, for: remote)
            let error = await #expect(throws: MessageChannelError.notSubscribed(central: manager.identifier)) {
                try await send.value
            }
            let sent = await bridge.log.filter { $0.kind == .notification }.count
            await bridge.advance(by: .seconds(2))
            let sentAfter = await bridge.log.filter { $0.kind == .notification }.count - sent
            await central.close()
            await peripheral.close()
            return (error, sentAfter)
        }
        #expect(error != nil)
        #expect(sentAfter == 0, "the ended send kept sending \(sentAfter) packets")
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test("Cancelling a send that waits for readiness ends it with CancellationError and sends nothing more")
    func cancellingEndsAWaitingSend() async throws {
        let bridge = MockBLEBridge(configuration: .realistic(seed: 6))
        let (cancelled, sentAfter, later) = try await bridge.run {
            let (central, peripheral, manager, _) = try await Self.channels(on: bridge)
            var messages = central.messages().makeAsyncIterator()
            let send = bridge.task {
                try await peripheral.send(MessagingFixture.message(size: 4_000), to: manager.identifier)
            }
            await bridge.waitUntil { bridge in bridge.log.contains { $0.detail == Self.refusal } }
            send.cancel()
            var cancelled = false
            do { try await send.value } catch is CancellationError { cancelled = true }
            let sent = await bridge.log.filter { $0.kind == .notification && $0.detail == nil }.count
            await bridge.advance(by: .seconds(2))
            let sentAfter = await bridge.log.filter { $0.kind == .notification && $0.detail == nil }.count - sent
            // The channel is still usable: the next message goes through whole.
            let next = MessagingFixture.message(size: 100, salt: 9)
            try await peripheral.send(next, to: manager.identifier)
            let later = await messages.next()
            await central.close()
            await peripheral.close()
            return (cancelled, sentAfter, later == next)
        }
        #expect(cancelled)
        // Packets already accepted by updateValue may still cross; none is sent after.
        #expect(sentAfter <= 2, "the cancelled send kept sending: \(sentAfter) packets")
        #expect(later)
    }
}
