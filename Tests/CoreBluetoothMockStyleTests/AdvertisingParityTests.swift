import BLECBM
import BLEMockKit
import Foundation
import Testing

/// Records the local names a scan hears, in order.
final class NameRecorder: NSObject, CBMCentralManagerDelegate {
    var names: [String] = []
    func centralManagerDidUpdateState(_ central: CBMCentralManager) {}
    func centralManager(
        _ central: CBMCentralManager, didDiscover peripheral: CBMPeripheral, advertisementData: [String: Any],
        rssi: NSNumber
    ) {
        names.append(advertisementData[CBMAdvertisementDataLocalNameKey] as? String ?? "")
    }

    /// How many times `name` was heard.
    func count(_ name: String) -> Int { names.filter { $0 == name }.count }
}

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
@Suite("Advertising while connected, and advertisement changes", .timeLimit(.minutes(10)), .finishesOwnBridges)
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

    // CoreBluetoothMock's CBMCentralManagerMock.swift, peripheral(_:didChangeAdvertisement:):
    // stops every timer of the spec and starts each new set with its own delay and interval
    // (startAdvertising: a delay > 0 first, then repeating at interval > 0; interval 0 is a
    // one-time advertisement).
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(arguments: [false, true])
    func anAdvertisementChangeGivesTheFirstSetItsNewDelayAndInterval(realistic: Bool) async throws {
        let bridge = CoreBluetoothMockParityTests.bridge(realistic: realistic, seed: 92)
        let spec = CBMPeripheralSpec.simulatePeripheral(proximity: .near)
            .advertising(advertisementData: [CBMAdvertisementDataLocalNameKey: "Old"], withInterval: 0.250)
            .build()
        let (early, late, once) = try await bridge.run { @MainActor () -> (Int, Int, Int) in
            CBMCentralManagerMock.simulatePeripherals([spec])
            let recorder = NameRecorder()
            let manager = CBMCentralManagerMock(delegate: recorder, queue: nil)
            try await bridge.waitForApp { manager.state == .poweredOn }
            manager.scanForPeripherals(
                withServices: nil, options: [CBMCentralManagerScanOptionAllowDuplicatesKey: true])
            // Every 100 ms after 500 ms, where the spec was built to advertise every 250 ms at once.
            spec.simulateAdvertisementChange([
                CBMAdvertisementConfig(data: [CBMAdvertisementDataLocalNameKey: "New"], interval: 0.100, delay: 0.500)
            ])
            try await bridge.clock.sleep(for: .milliseconds(400))
            let early = recorder.count("New")
            try await bridge.clock.sleep(for: .milliseconds(1_100))
            let late = recorder.count("New")
            // Once, 200 ms after the change.
            spec.simulateAdvertisementChange([
                CBMAdvertisementConfig(data: [CBMAdvertisementDataLocalNameKey: "Once"], interval: 0, delay: 0.200)
            ])
            try await bridge.clock.sleep(for: .milliseconds(100))
            let beforeItsDelay = recorder.count("Once")
            try await bridge.clock.sleep(for: .milliseconds(1_400))
            manager.stopScan()
            #expect(beforeItsDelay == 0)
            return (early, late, recorder.count("Once"))
        }
        #expect(early == 0)
        // At 500, 600, … 1 500 ms (each up to 10 ms later in realistic mode).
        #expect((10...11).contains(late), "\(late)")
        #expect(once == 1)
    }

    // CoreBluetoothMock takes any interval (a Timer's); legacy advertising's 20 ms…10.24 s bounds
    // a MockPeripheralManager's configuration, not a spec.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(arguments: [0.010, 20.0])
    func aSpecWhoseFirstSetAdvertisesOutsideLegacyIntervalsIsDiscovered(interval: Double) async throws {
        let bridge = CoreBluetoothMockParityTests.bridge(realistic: false, seed: 93)
        let spec = CBMPeripheralSpec.simulatePeripheral(proximity: .near)
            .advertising(advertisementData: [CBMAdvertisementDataLocalNameKey: "Odd"], withInterval: interval)
            .build()
        let heard = try await bridge.run { @MainActor () -> Int in
            CBMCentralManagerMock.simulatePeripherals([spec])
            let recorder = NameRecorder()
            let manager = CBMCentralManagerMock(delegate: recorder, queue: nil)
            try await bridge.waitForApp { manager.state == .poweredOn }
            manager.scanForPeripherals(withServices: nil, options: nil)
            try await bridge.clock.sleep(for: .milliseconds(100))
            manager.stopScan()
            return recorder.count("Odd")
        }
        #expect(heard == 1)
    }

    // A set repeating with no time between its advertisements held the simulation at one instant
    // for ever (a scan with duplicates never let time move): a negative or NaN interval is the
    // peripheral's default (100 ms), as for the first set.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(arguments: [-1.0, Double.nan])
    func anAdditionalSetWithANegativeIntervalAdvertisesAtTheDefaultInterval(interval: Double) async throws {
        let bridge = CoreBluetoothMockParityTests.bridge(realistic: false, seed: 94)
        let spec = CBMPeripheralSpec.simulatePeripheral(proximity: .near)
            .advertising(advertisementData: [CBMAdvertisementDataLocalNameKey: "First"], withInterval: 1.0)
            .advertising(advertisementData: [CBMAdvertisementDataLocalNameKey: "Second"], withInterval: interval)
            .build()
        let heard = try await bridge.run(timeLimit: .seconds(10)) { @MainActor () -> Int in
            CBMCentralManagerMock.simulatePeripherals([spec])
            let recorder = NameRecorder()
            let manager = CBMCentralManagerMock(delegate: recorder, queue: nil)
            try await bridge.waitForApp { manager.state == .poweredOn }
            manager.scanForPeripherals(
                withServices: nil, options: [CBMCentralManagerScanOptionAllowDuplicatesKey: true])
            try await bridge.clock.sleep(for: .milliseconds(950))
            manager.stopScan()
            return recorder.count("Second")
        }
        // At 0, 100, … 900 ms.
        #expect(heard == 10)
    }
}
