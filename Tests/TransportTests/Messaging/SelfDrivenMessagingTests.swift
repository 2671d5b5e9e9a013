import BLECore
import BLEMockKit
import Foundation
import Testing
import Transport

/// Message channels over realistic links, inside a bridge's run: the channels wait for
/// `readyToSendWriteWithoutResponse` and `readyToUpdateSubscribers` by themselves, and the
/// test never moves time.
@Suite("Messaging with time that drives itself", .timeLimit(.minutes(10)))
struct SelfDrivenMessagingTests {
    /// A realistic bridge, a manual peripheral publishing the message characteristic (update
    /// queue of 20) and a central at `mtu` (write queue of 20), connected and subscribed;
    /// both channels.
    static func channels(on bridge: MockBLEBridge, mtu: Int) async throws -> (
        CentralMessageChannel<VirtualClock>, PeripheralMessageChannel<VirtualClock>, UUID
    ) {
        let channels = try await MessagingFixture.connectedChannels(
            on: bridge, updateQueue: .realistic(capacity: 20),
            central: .init(mtu: .fixed(mtu), writeWithoutResponseQueue: .realistic(capacity: 20)))
        return (channels.central, channels.peripheral, channels.manager.identifier)
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(
        "64 KiB go to the peripheral and back at ATT_MTU 23 and 185 with no advance in the test", arguments: [23, 185])
    func sixtyFourKiBBothWays(mtu: Int) async throws {
        let bridge = MockBLEBridge(configuration: .realistic(seed: UInt64(mtu)))
        let message = MessagingFixture.message(size: 65_536)
        let (up, down) = try await bridge.run {
            let (central, peripheral, centralID) = try await Self.channels(on: bridge, mtu: mtu)
            var received = peripheral.messages().makeAsyncIterator()
            try await central.send(message)
            let up = await received.next()?.bytes
            var replies = central.messages().makeAsyncIterator()
            try await peripheral.send(message, to: centralID)
            let down = await replies.next()
            return (up, down)
        }
        #expect(up == message)
        #expect(down == message)
    }

    // The two realistic round trips that used to hang (a send waits for ready events nobody
    // drove), on 200 seeds each: jitter, MTU exchange and queue timings differ per seed. The
    // seeds run one after another: each run has a thread of its own, and 400 at once would
    // starve the rest of a parallel test run.

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test("A 4 kB message from the central reaches the peripheral on each of 200 seeds")
    func fourKilobytesUp() async throws {
        let message = MessagingFixture.message(size: 4_096)
        for seed in 0..<200 {
            let bridge = MockBLEBridge(configuration: .realistic(seed: UInt64(seed)))
            let received = try await bridge.run {
                let (central, peripheral, _) = try await Self.channels(on: bridge, mtu: 23 + seed % 3 * 81)
                var messages = peripheral.messages().makeAsyncIterator()
                try await central.send(message)
                return await messages.next()?.bytes
            }
            #expect(received == message, "seed \(seed)")
        }
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test("A 4 kB message from the peripheral reaches the central on each of 200 seeds")
    func fourKilobytesDown() async throws {
        let message = MessagingFixture.message(size: 4_096)
        for seed in 0..<200 {
            let bridge = MockBLEBridge(configuration: .realistic(seed: UInt64(seed)))
            let received = try await bridge.run {
                let (central, peripheral, centralID) = try await Self.channels(on: bridge, mtu: 23 + seed % 3 * 81)
                var messages = central.messages().makeAsyncIterator()
                try await peripheral.send(message, to: centralID)
                return await messages.next()
            }
            #expect(received == message, "seed \(seed)")
        }
    }
}
