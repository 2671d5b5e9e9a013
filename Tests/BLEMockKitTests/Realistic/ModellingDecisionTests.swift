import BLECore
import BLEMockKit
import Foundation
import Testing

/// The faithful behaviours realistic mode offers where fast mode takes a shortcut: a connect
/// to a non-connectable advertiser stays pending (CoreBluetooth keeps it until the app cancels
/// it), and a peripheral reset is noticed by the supervision timeout.
@Suite("Realistic: pending connects and resets as CoreBluetooth has them", .timeLimit(.minutes(10)))
struct ModellingDecisionTests {
    /// A realistic bridge with a peripheral advertising as non-connectable that a central heard.
    static func beacon() async throws -> (MockBLEBridge, MockPeripheralManager, MockCentralManager) {
        let bridge = MockBLEBridge(configuration: .realistic(seed: 12))
        let peripheral = MockPeripheralManager(bridge: bridge)
        try await peripheral.startAdvertising(AdvertisementData(localName: "Beacon", isConnectable: false))
        let central = MockCentralManager(bridge: bridge)
        try await central.scanForPeripherals(withServices: nil)
        await bridge.advance(by: .milliseconds(300))
        await central.stopScan()
        return (bridge, peripheral, central)
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test("A connect to a non-connectable advertiser stays pending until it advertises as connectable")
    func nonConnectableStaysPending() async throws {
        let (bridge, peripheral, central) = try await Self.beacon()
        try await bridge.run {
            let attempt = bridge.task { try await central.connect(peripheral.identifier) }
            try await bridge.clock.sleep(for: .seconds(30))
            #expect(await !central.isConnected(peripheral.identifier))
            #expect(await bridge.pendingOperations.count == 1)
            await peripheral.simulateAdvertisementChange(AdvertisementData(localName: "Beacon", isConnectable: true))
            try await attempt.value
            #expect(await central.isConnected(peripheral.identifier))
        }
        #expect(await !bridge.log.contains { $0.kind == .connectionFailed })
    }

    @Test("A connect with a timeout to a non-connectable advertiser fails when it runs out, as a failed connection")
    func nonConnectableTimesOut() async throws {
        let (bridge, peripheral, central) = try await Self.beacon()
        let start = await bridge.now
        await #expect(throws: CoreBluetoothError(.connectionTimeout)) {
            try await central.connect(peripheral.identifier, timeout: .seconds(2))
        }
        #expect(await bridge.now == start.advanced(by: .seconds(2)))
        #expect(
            await bridge.log.last { $0.kind == .connectionFailed }?.error == .coreBluetooth(.init(.connectionTimeout)))
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test("A test that waits for ever on such a connect gets the hang report, with the seed")
    func waitingForEverIsReported() async throws {
        let (bridge, peripheral, central) = try await Self.beacon()
        let stall = await #expect(throws: MockBLEBridge.Stall.self) {
            try await bridge.run(timeLimit: .seconds(60)) { try await central.connect(peripheral.identifier) }
        }
        #expect(stall?.seed == 12)
        #expect(stall?.waiting.contains { "\($0)".contains("connect") } == true)
    }

    @Test(
        "A reset is noticed at the supervision timeout: the central's operations wait, then fail with connectionTimeout"
    )
    func resetIsNoticedBySupervision() async throws {
        let bridge = MockBLEBridge(configuration: .init(seed: 3, timing: LinkTiming(jitter: .zero)))
        let (peripheral, _) = try await Realistic.advertisingPeripheral(on: bridge)
        let (central, characteristics) = try await Realistic.connectedCentral(to: peripheral, on: bridge)
        let value = try #require(characteristics.first { $0.uuid == RigUUID.value })
        var events = peripheral.events().makeAsyncIterator()
        try await central.setNotifyValue(true, for: value)
        _ = await events.next()
        let start = await bridge.now
        await peripheral.simulateReset()
        // The peripheral's side ended at once.
        if case .unsubscribed = await events.next() {} else { Issue.record("no unsubscription at the reset") }
        #expect(await central.isConnected(peripheral.identifier))
        await #expect(throws: CoreBluetoothError(.connectionTimeout)) {
            _ = try await central.readValue(for: value)
        }
        #expect(await bridge.now == start.advanced(by: .milliseconds(720)))
        #expect(await !central.isConnected(peripheral.identifier))
        // It rebooted into the same firmware: it advertises and takes a new connection.
        #expect(await peripheral.isAdvertising)
        try await central.connect(peripheral.identifier)
    }
}
