import BLECore
import BLEMockKit
import Foundation
import Testing

/// A link comes up only to a peripheral the central can hear and connect to when the
/// connection latency ends.
@Suite("Connection attempts during the connection latency", .timeLimit(.minutes(10)))
struct ConnectionAttemptTests {
    /// A realistic bridge (connection latency 50–150 ms) with an advertising peripheral the
    /// central has discovered.
    static func discovered() async throws -> (MockBLEBridge, MockPeripheralManager, MockCentralManager) {
        let bridge = MockBLEBridge(configuration: .realistic(seed: 1))
        let (peripheral, _) = try await Realistic.advertisingPeripheral(on: bridge)
        let central = MockCentralManager(bridge: bridge)
        try await Realistic.discover(peripheral, by: central, on: bridge)
        return (bridge, peripheral, central)
    }

    @Test("A peripheral powered off during the latency is not connected; the attempt waits until it is back")
    func poweredOffDuringLatency() async throws {
        let (bridge, peripheral, central) = try await Self.discovered()
        let start = await bridge.now
        await bridge.schedule(.peripheralState(peripheral.identifier, .poweredOff), after: .milliseconds(10))
        await #expect(throws: CoreBluetoothError(.connectionTimeout)) {
            try await central.connect(peripheral.identifier, options: ConnectOptions(timeout: .seconds(2)))
        }
        #expect(await bridge.now == start.advanced(by: .seconds(2)))
        #expect(await bridge.log.contains { $0.kind == .connected } == false)
    }

    @Test("A peripheral out of range during the latency is not connected; the attempt completes once it is heard")
    func outOfRangeDuringLatency() async throws {
        let (bridge, peripheral, central) = try await Self.discovered()
        let start = await bridge.now
        await bridge.schedule(.proximity(peripheral: peripheral.identifier, .outOfRange), after: .milliseconds(10))
        await bridge.schedule(.proximity(peripheral: peripheral.identifier, .near), after: .seconds(1))
        try await central.connect(peripheral.identifier, options: ConnectOptions(timeout: .seconds(5)))
        let connected = try #require(await bridge.log.last { $0.kind == .connected })
        #expect(connected.time > start.advanced(by: .seconds(1)))
        #expect(await central.isConnected(peripheral.identifier))
        await bridge.advance(by: .seconds(5))
        #expect(await central.isConnected(peripheral.identifier))
    }
}
