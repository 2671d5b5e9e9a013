import BLECore
import BLEMockKit
import Foundation
import Testing

@Suite("Realistic: presets", .timeLimit(.minutes(10)))
struct PresetTests {
    @Test("The central's realistic preset: 100 ms state transition, device MTU, a queue of 20, the seed; the rest fast")
    func centralRealisticPreset() {
        let preset = MockCentralManager.Configuration.realistic(seed: 3)
        #expect(preset.initialState == .poweredOn)
        #expect(preset.stateTransition == .realistic(duration: .milliseconds(100)))
        #expect(preset.mtu == .device)
        #expect(preset.strictLengths == false)
        #expect(preset.writeWithoutResponseQueue == .realistic(capacity: 20))
        #expect(preset.connection == ConnectionBehavior(failureProbability: 0, limit: nil, latency: nil))
        #expect(preset.errorInjection.isEmpty)
        #expect(preset.seed == 3)
        #expect(preset.identifier == nil)
    }

    @Test("The peripheral's realistic preset: 100 ms state transition, device MTU, a queue of 20, ±4 dB, the seed")
    func peripheralRealisticPreset() {
        let preset = MockPeripheralManager.Configuration.realistic(seed: 4)
        #expect(preset.initialState == .poweredOn)
        #expect(preset.stateTransition == .realistic(duration: .milliseconds(100)))
        #expect(preset.mtu == .device)
        #expect(preset.strictLengths == false)
        #expect(preset.updateQueue == .realistic(capacity: 20))
        #expect(preset.rssi == -50)
        #expect(preset.rssiVariation == 4)
        #expect(preset.advertisingInterval == .milliseconds(100))
        #expect(preset.advertisingDelay == .zero)
        #expect(preset.advertisesOnce == false)
        #expect(preset.errorInjection.isEmpty)
        #expect(preset.seed == 4)
        #expect(preset.identifier == nil)
        #expect(preset.name == nil)
    }

    @Test("The fast presets are the defaults")
    func fastPresets() {
        #expect(MockCentralManager.Configuration.fast == MockCentralManager.Configuration())
        let central = MockCentralManager.Configuration.fast
        #expect(central.stateTransition == .instant)
        #expect(central.mtu == .fixed(517))
        #expect(central.writeWithoutResponseQueue == .unlimited)
        let peripheral = MockPeripheralManager.Configuration.fast
        #expect(peripheral.initialState == .poweredOn)
        #expect(peripheral.stateTransition == .instant)
        #expect(peripheral.mtu == .fixed(517))
        #expect(peripheral.strictLengths == false)
        #expect(peripheral.updateQueue == .unlimited)
        #expect(peripheral.advertisingInterval == .milliseconds(100))
        #expect(peripheral.rssi == -50)
        #expect(peripheral.rssiVariation == 0)
        #expect(peripheral.advertisingDelay == .zero)
        #expect(peripheral.advertisesOnce == false)
        #expect(peripheral.seed == nil)
        #expect(MockBLEBridge.Configuration.fast == MockBLEBridge.Configuration(seed: 0, timing: .instant))
        #expect(
            MockBLEBridge.Configuration.realistic(seed: 6) == MockBLEBridge.Configuration(seed: 6, timing: .realistic))
    }

    @Test("LinkTiming.realistic has the documented values; instant has none")
    func linkTimingPresets() {
        let realistic = LinkTiming.realistic
        #expect(realistic.connectionInterval == .milliseconds(30))
        #expect(realistic.jitter == .milliseconds(2))
        #expect(realistic.connectionLatency == .milliseconds(50) ... .milliseconds(150))
        #expect(realistic.packetsPerConnectionEvent == 4)
        #expect(realistic.supervisionTimeout == .milliseconds(720))
        #expect(!realistic.isInstant)
        #expect(LinkTiming.instant.isInstant)
        #expect(LinkTiming.instant.connectionInterval == .zero)
        #expect(LinkTiming.instant.supervisionTimeout == .zero)
    }

    @Test("A central created with the realistic preset and no bridge gets a realistic bridge with its seed")
    func centralOwnBridge() async {
        let central = MockCentralManager(configuration: .realistic(seed: 3))
        #expect(central.bridge.configuration.timing == .realistic)
        #expect(central.bridge.configuration.seed == 3)
        #expect(await central.waitForPoweredOn() == .poweredOn)
        #expect(await central.bridge.now == Realistic.at(.milliseconds(100)))
    }

    @Test("A peripheral created with the realistic preset and no bridge gets a realistic bridge with its seed")
    func peripheralOwnBridge() async {
        let peripheral = MockPeripheralManager(configuration: .realistic(seed: 8))
        #expect(peripheral.bridge.configuration.timing == .realistic)
        #expect(peripheral.bridge.configuration.seed == 8)
        #expect(await peripheral.waitForPoweredOn() == .poweredOn)
        #expect(await peripheral.bridge.now == Realistic.at(.milliseconds(100)))
    }

    @Test("A manager created with no arguments gets a fast bridge seeded 0")
    func defaultOwnBridge() {
        #expect(MockCentralManager().bridge.configuration == .fast)
        #expect(MockPeripheralManager().bridge.configuration == .fast)
        #expect(
            MockCentralManager(configuration: .init(seed: 12)).bridge.configuration
                == MockBLEBridge.Configuration(seed: 12))
    }

    @Test("Both realistic presets on a realistic bridge: link MTU 185, a write queue of 20, an update queue of 20")
    func presetsTogether() async throws {
        let bridge = MockBLEBridge(configuration: .realistic(seed: 10))
        let peripheral = MockPeripheralManager(configuration: .realistic(seed: 1), bridge: bridge)
        #expect(await peripheral.waitForPoweredOn() == .poweredOn)
        let local = try await peripheral.add(Realistic.service)
        try await peripheral.startAdvertising(AdvertisementData(localName: "Sensor", serviceUUIDs: [RigUUID.service]))
        let central = MockCentralManager(configuration: .realistic(seed: 2), bridge: bridge)
        #expect(await central.waitForPoweredOn() == .poweredOn)
        try await Realistic.discover(peripheral, by: central, on: bridge)
        try await central.connect(peripheral.identifier)
        let value = try await central.discoverAll(for: peripheral.identifier).first { $0.uuid == RigUUID.value }!
        #expect(try await central.maximumWriteValueLength(for: peripheral.identifier, type: .withoutResponse) == 182)
        for byte in UInt8(0)..<20 { try await central.writeValue(Data([byte]), for: value, type: .withoutResponse) }
        #expect(await !central.canSendWriteWithoutResponse(to: peripheral.identifier))
        try await central.setNotifyValue(true, for: value)
        let characteristic = try #require(local.characteristic(RigUUID.value))
        for byte in UInt8(0)..<20 {
            #expect(try await peripheral.updateValue(Data([byte]), for: characteristic, onSubscribedCentrals: nil))
        }
        #expect(try await !peripheral.updateValue(Data([20]), for: characteristic, onSubscribedCentrals: nil))
        let discovered = await bridge.log.filter { $0.kind == .discovered }
        #expect(
            discovered.allSatisfy { entry in
                entry.detail.flatMap { Int($0.dropFirst("rssi=".count)) }.map { (-54 ... -46).contains($0) } ?? false
            })
    }
}

@Suite("Peripheral seed and identifier", .timeLimit(.minutes(10)))
struct PeripheralSeedTests {
    /// The RSSIs a scanning central sees from a peripheral with `rssiVariation` over 10
    /// advertisements, on a bridge seeded `bridgeSeed`.
    static func rssis(peripheralSeed: UInt64?, bridgeSeed: UInt64) async throws -> [Int] {
        let bridge = MockBLEBridge(seed: bridgeSeed)
        let peripheral = MockPeripheralManager(
            configuration: .init(rssiVariation: 6, seed: peripheralSeed), bridge: bridge)
        try await peripheral.startAdvertising(AdvertisementData())
        let central = MockCentralManager(bridge: bridge)
        try await central.scanForPeripherals(withServices: nil, options: ScanOptions(allowDuplicates: true))
        await bridge.advance(by: .milliseconds(950))
        return await bridge.log.filter { $0.kind == .discovered }.compactMap(\.detail)
            .compactMap { Int($0.dropFirst("rssi=".count)) }
    }

    @Test("A peripheral's own seed makes its draws independent of the bridge's seed")
    func peripheralSeed() async throws {
        let first = try await Self.rssis(peripheralSeed: 99, bridgeSeed: 1)
        #expect(first.count == 10)
        #expect(try await Self.rssis(peripheralSeed: 99, bridgeSeed: 2) == first)
        #expect(try await Self.rssis(peripheralSeed: 98, bridgeSeed: 1) != first)
        #expect(
            try await Self.rssis(peripheralSeed: nil, bridgeSeed: 1) != Self.rssis(peripheralSeed: nil, bridgeSeed: 2))
    }

    @Test("A configured peripheral identifier is used as is")
    func peripheralIdentifier() {
        let fixed = UUID(uuid: (9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9))
        #expect(MockPeripheralManager(configuration: .init(identifier: fixed)).identifier == fixed)
    }
}
