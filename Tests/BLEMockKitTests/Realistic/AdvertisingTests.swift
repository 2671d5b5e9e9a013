import BLECore
import BLEMockKit
import Foundation
import Testing

@Suite("Realistic: advertising and proximity", .timeLimit(.minutes(10)))
struct AdvertisingTests {
    static let duplicates = ScanOptions(allowDuplicates: true)

    /// The discoveries of `peripheral` by `central` in the log, as (time, RSSI).
    static func discoveries(of peripheral: MockPeripheralManager, on bridge: MockBLEBridge) async -> [(
        VirtualClock.Instant, Int
    )] {
        await bridge.log.filter { $0.kind == .discovered && $0.peripheral == peripheral.identifier }.map { entry in
            (entry.time, Int(entry.detail!.dropFirst("rssi=".count))!)
        }
    }

    @Test(
        "advertisingDelay 1 s: a scanning central first discovers the peripheral at exactly 1 s",
        arguments: [false, true])
    func advertisingDelay(realistic: Bool) async throws {
        let bridge = realistic ? MockBLEBridge(configuration: .realistic(seed: 2)) : MockBLEBridge()
        let central = MockCentralManager(bridge: bridge)
        try await central.scanForPeripherals(withServices: nil)
        let peripheral = MockPeripheralManager(configuration: .init(advertisingDelay: .seconds(1)), bridge: bridge)
        try await peripheral.startAdvertising(AdvertisementData(localName: "Late"))
        #expect(await peripheral.isAdvertising)
        await bridge.advance(by: .milliseconds(999))
        #expect(await Self.discoveries(of: peripheral, on: bridge).isEmpty)
        await bridge.advance(by: .milliseconds(1))
        #expect(await Self.discoveries(of: peripheral, on: bridge).map(\.0) == [Realistic.at(.seconds(1))])
    }

    @Test("A delayed advertiser cannot be connected before its first advertisement")
    func delayedAdvertiserIsUnknown() async throws {
        let bridge = MockBLEBridge()
        let central = MockCentralManager(bridge: bridge)
        let peripheral = MockPeripheralManager(configuration: .init(advertisingDelay: .seconds(1)), bridge: bridge)
        try await peripheral.startAdvertising(AdvertisementData(localName: "Late"))
        try await central.scanForPeripherals(withServices: nil)
        await #expect(throws: CoreBluetoothError(.unknownDevice)) { try await central.connect(peripheral.identifier) }
    }

    @Test(
        "advertisesOnce: exactly one discovery, even with duplicates allowed, then the peripheral stops advertising",
        arguments: [false, true])
    func advertisesOnce(realistic: Bool) async throws {
        let bridge = realistic ? MockBLEBridge(configuration: .realistic(seed: 3)) : MockBLEBridge()
        let central = MockCentralManager(bridge: bridge)
        try await central.scanForPeripherals(withServices: nil, options: Self.duplicates)
        let peripheral = MockPeripheralManager(configuration: .init(advertisesOnce: true), bridge: bridge)
        try await peripheral.startAdvertising(AdvertisementData(localName: "Once"))
        await bridge.advance(by: .seconds(2))
        #expect(await Self.discoveries(of: peripheral, on: bridge).count == 1)
        #expect(await !peripheral.isAdvertising)
        #expect(
            await bridge.log.filter { $0.kind == .advertisingStopped && $0.peripheral == peripheral.identifier }.count
                == 1)
        // Starting again advertises once more.
        try await peripheral.startAdvertising(AdvertisementData(localName: "Once"))
        await bridge.advance(by: .seconds(2))
        #expect(await Self.discoveries(of: peripheral, on: bridge).count == 2)
        #expect(await !peripheral.isAdvertising)
    }

    @Test("A one-time advertisement goes out when due though nobody scans; a scan started later does not hear it")
    func aOneTimeAdvertisementIsNotKeptForLateScanners() async throws {
        let bridge = MockBLEBridge(configuration: .realistic(seed: 3))
        let peripheral = MockPeripheralManager(configuration: .init(advertisesOnce: true), bridge: bridge)
        try await peripheral.startAdvertising(AdvertisementData(localName: "Once"))
        await bridge.advance(by: .seconds(2))
        #expect(await !peripheral.isAdvertising)
        let stopped = try #require(
            await bridge.log.first { $0.kind == .advertisingStopped && $0.peripheral == peripheral.identifier })
        // Its one advertising event goes out as advertising starts (no advertisingDelay).
        #expect(stopped.time == .zero)
        let central = MockCentralManager(bridge: bridge)
        try await central.scanForPeripherals(withServices: nil, options: Self.duplicates)
        await bridge.advance(by: .seconds(2))
        #expect(await Self.discoveries(of: peripheral, on: bridge).isEmpty)
    }

    @Test("Without advertisesOnce, a scan allowing duplicates discovers the peripheral at every 100 ms interval")
    func periodicAdvertising() async throws {
        let bridge = MockBLEBridge()
        let central = MockCentralManager(bridge: bridge)
        let peripheral = MockPeripheralManager(bridge: bridge)
        try await peripheral.startAdvertising(AdvertisementData(localName: "Often"))
        try await central.scanForPeripherals(withServices: nil, options: Self.duplicates)
        await bridge.advance(by: .milliseconds(500))
        #expect(
            await Self.discoveries(of: peripheral, on: bridge).map(\.0)
                == (0...5).map { Realistic.at(.milliseconds(100 * $0)) })
    }

    /// The RSSIs of the first 20 duplicate discoveries of a peripheral with ±4 dB variation.
    static func variedRSSIs(peripheralSeed: UInt64, bridgeSeed: UInt64) async throws -> [Int] {
        let bridge = MockBLEBridge(seed: bridgeSeed)
        let peripheral = MockPeripheralManager(
            configuration: .init(rssi: -50, rssiVariation: 4, seed: peripheralSeed), bridge: bridge)
        try await peripheral.startAdvertising(AdvertisementData(localName: "Noisy"))
        let central = MockCentralManager(bridge: bridge)
        let events = central.events()
        try await central.scanForPeripherals(withServices: nil, options: Self.duplicates)
        await bridge.advance(by: .seconds(2))
        let found = await events.prefixArray(21).discoveries
        #expect(found.count == 20)
        return found.map(\.rssi)
    }

    @Test("rssiVariation 4 with a seed: 20 RSSIs within -54...-46, not all equal, the same on every run")
    func rssiVariation() async throws {
        let first = try await Self.variedRSSIs(peripheralSeed: 17, bridgeSeed: 0)
        #expect(first.allSatisfy { (-54 ... -46).contains($0) }, "seed 17: \(first)")
        #expect(Set(first).count > 1, "seed 17: \(first)")
        #expect(try await Self.variedRSSIs(peripheralSeed: 17, bridgeSeed: 0) == first)
        #expect(try await Self.variedRSSIs(peripheralSeed: 17, bridgeSeed: 9) == first)
    }

    @Test("Proximity sets the RSSI as CoreBluetoothMock does: immediate -40, far -100, near -70, with no variation")
    func proximityRSSI() async throws {
        let bridge = MockBLEBridge()
        let peripheral = MockPeripheralManager(configuration: .init(name: "Mover", rssi: -50), bridge: bridge)
        try await peripheral.startAdvertising(AdvertisementData(localName: "Mover"))
        let central = MockCentralManager(bridge: bridge)
        try await central.scanForPeripherals(withServices: nil, options: Self.duplicates)
        await peripheral.simulateProximityChange(.immediate)
        await bridge.advance(by: .milliseconds(300))
        await peripheral.simulateProximityChange(.far)
        await bridge.advance(by: .milliseconds(300))
        await peripheral.simulateProximityChange(.near)
        let rssis = await Self.discoveries(of: peripheral, on: bridge).map(\.1)
        // At start; immediate at once and at 100, 200, 300 ms; far at once and at 400, 500, 600 ms; near at once.
        #expect(rssis == [-50, -40, -40, -40, -40, -100, -100, -100, -100, -70])
        try await central.connect(peripheral.identifier)
        #expect(try await central.readRSSI(for: peripheral.identifier) == -70)
    }

    @Test("Out of range, a peripheral is no longer discovered; back in range it is again")
    func outOfRangeIsNotDiscovered() async throws {
        let bridge = MockBLEBridge()
        let peripheral = MockPeripheralManager(bridge: bridge)
        try await peripheral.startAdvertising(AdvertisementData(localName: "Gone"))
        let central = MockCentralManager(bridge: bridge)
        try await central.scanForPeripherals(withServices: nil, options: Self.duplicates)
        #expect(await Self.discoveries(of: peripheral, on: bridge).count == 1)
        await peripheral.simulateProximityChange(.outOfRange)
        await bridge.advance(by: .seconds(1))
        #expect(await Self.discoveries(of: peripheral, on: bridge).count == 1)
        await peripheral.simulateProximityChange(.far)
        #expect(await Self.discoveries(of: peripheral, on: bridge).last?.1 == -100)
    }

    @Test("Out of range on a jitter-free realistic bridge, the link drops with connectionTimeout after exactly 720 ms")
    func outOfRangeSupervisionTimeout() async throws {
        let bridge = Realistic.steadyBridge()
        let (peripheral, _) = try await Realistic.advertisingPeripheral(on: bridge)
        let (central, _) = try await Realistic.connectedCentral(to: peripheral, on: bridge)
        let events = central.events()
        let start = await bridge.now
        await peripheral.simulateProximityChange(.outOfRange)
        await bridge.advance(by: .milliseconds(719))
        #expect(await central.isConnected(peripheral.identifier))
        await bridge.advance(by: .milliseconds(1))
        #expect(await !central.isConnected(peripheral.identifier))
        let disconnect = await bridge.log.last { $0.kind == .disconnected }
        #expect(disconnect?.time == start.advanced(by: .milliseconds(720)))
        #expect(disconnect?.error == .coreBluetooth(CoreBluetoothError(.connectionTimeout)))
        #expect(
            await events.prefixArray(1) == [
                .disconnected(
                    RemotePeripheral(identifier: peripheral.identifier, name: "Sensor"),
                    CoreBluetoothError(.connectionTimeout))
            ])
    }

    @Test("Coming back within the supervision timeout keeps the link")
    func backInRangeInTime() async throws {
        let bridge = Realistic.steadyBridge()
        let (peripheral, _) = try await Realistic.advertisingPeripheral(on: bridge)
        let (central, _) = try await Realistic.connectedCentral(to: peripheral, on: bridge)
        await peripheral.simulateProximityChange(.outOfRange)
        await bridge.advance(by: .milliseconds(500))
        await peripheral.simulateProximityChange(.near)
        await bridge.advance(by: .seconds(2))
        #expect(await central.isConnected(peripheral.identifier))
    }

    @Test("Out of range on a fast bridge, the link drops with connectionTimeout at once")
    func outOfRangeFast() async throws {
        let bridge = MockBLEBridge()
        let (peripheral, _) = try await Realistic.advertisingPeripheral(on: bridge)
        let (central, _) = try await Realistic.connectedCentral(to: peripheral, on: bridge)
        let events = central.events()
        await peripheral.simulateProximityChange(.outOfRange)
        #expect(await !central.isConnected(peripheral.identifier))
        #expect(
            await events.prefixArray(1) == [
                .disconnected(
                    RemotePeripheral(identifier: peripheral.identifier, name: "Sensor"),
                    CoreBluetoothError(.connectionTimeout))
            ])
        #expect(await bridge.now == .zero)
        // A connection attempt waits while it is out of range and completes when it is back.
        let attempt = Task { try await central.connect(peripheral.identifier) }
        await bridge.waitUntil { $0.log.last?.kind == .connecting }
        #expect(await !central.isConnected(peripheral.identifier))
        await peripheral.simulateProximityChange(.near)
        try await attempt.value
        #expect(await central.isConnected(peripheral.identifier))
    }
}
