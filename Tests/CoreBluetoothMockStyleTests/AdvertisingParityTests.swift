import BLECBM
import BLEMockKit
import Foundation
import Testing

/// A spec advertising "Beacon" every 100 ms also when connected, built `.connected(…)`.
func makeBeacon() -> CBMPeripheralSpec {
    CBMPeripheralSpec.simulatePeripheral(proximity: .near)
        .advertising(
            advertisementData: [CBMAdvertisementDataLocalNameKey: "Beacon"], withInterval: 0.100,
            alsoWhenConnected: true
        )
        .connected(name: "Beacon", services: [], delegate: nil)
        .build()
}

// CoreBluetoothMock's CBMCentralManagerMock.swift, notify(_:for:): "If the device is connected and
// does not advertise in that state, skip" (`!mock.isConnected || config.isAdvertisingWhenConnected`),
// where a spec is connected while any app (a central manager, or the "other app" of a spec built
// `.connected(…)` or `simulateConnection()`) is; its timers keep running, so it is heard again once
// the connection ends (simulateDisconnection, simulateReset, the last manager cancelling).
@Suite("Advertising while connected, and advertisement changes", .timeLimit(.minutes(10)))
struct AdvertisingParityTests {
    /// A powered-on manager whose delegate counts discoveries.
    @MainActor
    static func scanner(on bridge: MockBLEBridge) async throws -> (CBMCentralManager, DiscoveryCounter) {
        try await ScanParityTests.manager(on: bridge)
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(arguments: [false, true], [false, true])
    func aSpecAnotherAppIsConnectedToIsNotDiscoveredUntilTheConnectionEnds(realistic: Bool, byReset: Bool)
        async throws
    {
        let bridge = CoreBluetoothMockParityTests.bridge(realistic: realistic, seed: 90)
        let sensor = makeSensor(ConnectionWatcher(), byAnotherApp: true)
        let beacon = makeBeacon()
        let (whileConnected, afterwards) = try await bridge.run { @MainActor () -> ([UUID], [UUID]) in
            CBMCentralManagerMock.simulatePeripherals([sensor, beacon])
            let (manager, counter) = try await Self.scanner(on: bridge)
            manager.scanForPeripherals(withServices: nil, options: nil)
            try await bridge.clock.sleep(for: .milliseconds(300))
            let whileConnected = counter.found
            if byReset { sensor.simulateReset() } else { sensor.simulateDisconnection() }
            try await bridge.clock.sleep(for: .milliseconds(300))
            manager.stopScan()
            return (whileConnected, counter.found)
        }
        // The beacon advertises also when connected; the sensor's set does not.
        #expect(whileConnected == [beacon.identifier])
        #expect(afterwards == [beacon.identifier, sensor.identifier])
        #expect(!sensor.isConnected)
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(arguments: [false, true])
    func aSpecAnAppIsConnectedToStopsAdvertisingUntilTheAppCancels(realistic: Bool) async throws {
        let bridge = CoreBluetoothMockParityTests.bridge(realistic: realistic, seed: 91)
        let sensor = makeSensor(ConnectionWatcher())
        let (whileConnected, afterwards) = try await bridge.run { @MainActor () -> ([UUID], [UUID]) in
            CBMCentralManagerMock.simulatePeripherals([sensor])
            let (app, peripheral) = try await SpecConnectionTests.app(for: sensor, on: bridge)
            app.manager?.connect(peripheral)
            try await bridge.waitForApp { peripheral.state == .connected }
            let (manager, counter) = try await Self.scanner(on: bridge)
            manager.scanForPeripherals(
                withServices: nil, options: [CBMCentralManagerScanOptionAllowDuplicatesKey: true])
            try await bridge.clock.sleep(for: .milliseconds(300))
            let whileConnected = counter.found
            app.manager?.cancelPeripheralConnection(peripheral)
            try await bridge.waitForApp { peripheral.state == .disconnected }
            try await bridge.clock.sleep(for: .milliseconds(300))
            manager.stopScan()
            return (whileConnected, counter.found)
        }
        #expect(whileConnected == [])
        #expect(afterwards.first == sensor.identifier)
    }
}
