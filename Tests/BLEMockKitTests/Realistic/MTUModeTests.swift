import BLECore
import BLEMockKit
import Foundation
import Testing

@Suite("Realistic: MTU modes", .timeLimit(.minutes(10)))
struct MTUModeTests {
    /// Connects one central (configured as given) to a peripheral preferring 517 `links` times
    /// in a row, disconnecting in between; returns each link's ATT_MTU.
    static func linkMTUs(
        links: Int, bridgeSeed: UInt64, central configuration: MockCentralManager.Configuration,
        peripheral peripheralConfiguration: MockPeripheralManager.Configuration = .init(name: "Sensor")
    ) async throws -> [Int] {
        let bridge = MockBLEBridge(seed: bridgeSeed)
        let (peripheral, _) = try await Realistic.advertisingPeripheral(
            on: bridge, configuration: peripheralConfiguration)
        let central = MockCentralManager(configuration: configuration, bridge: bridge)
        try await Realistic.discover(peripheral, by: central, on: bridge)
        for _ in 0..<links {
            try await central.connect(peripheral.identifier)
            let mtu = try #require(Realistic.linkMTUs(in: await bridge.log).last)
            // What one write without response carries: ATT_MTU − 3, at most 512 bytes.
            let maximum = try await central.maximumWriteValueLength(for: peripheral.identifier, type: .withoutResponse)
            #expect(maximum == min(mtu - 3, 512))
            try await central.cancelPeripheralConnection(peripheral.identifier)
        }
        let mtus = Realistic.linkMTUs(in: await bridge.log)
        #expect(mtus.count == links)
        return mtus
    }

    @Test("realistic(23...517) draws each link's MTU from the real-world values, the same way for the same seed")
    func realisticFullRange() async throws {
        let configuration = MockCentralManager.Configuration(mtu: .realistic(23...517))
        let first = try await Self.linkMTUs(links: 30, bridgeSeed: 11, central: configuration)
        let second = try await Self.linkMTUs(links: 30, bridgeSeed: 11, central: configuration)
        #expect(first.count == 30)
        #expect(first.allSatisfy { MTUMode.realWorldValues.contains($0) }, "seed 11: \(first)")
        #expect(Set(first).count > 1, "seed 11: \(first)")
        #expect(first == second)
    }

    @Test("realistic(180...250) only ever negotiates 185 or 247, and both occur")
    func realisticNarrowRange() async throws {
        let mtus = try await Self.linkMTUs(
            links: 30, bridgeSeed: 4, central: MockCentralManager.Configuration(mtu: .realistic(180...250)))
        #expect(Set(mtus) == [185, 247], "seed 4: \(mtus)")
    }

    @Test("A peripheral's realistic MTU mode draws too, and the link takes the smaller preference")
    func realisticPeripheral() async throws {
        let mtus = try await Self.linkMTUs(
            links: 20, bridgeSeed: 8, central: .init(mtu: .fixed(200)),
            peripheral: .init(name: "Sensor", mtu: .realistic(150...260)))
        // The peripheral draws from 158, 185, 247, 251; the central's 200 caps the two larger.
        #expect(Set(mtus) == [158, 185, 200], "seed 8: \(mtus)")
    }

    @Test("A device central (185) and a device peripheral (247) negotiate 185")
    func deviceModes() async throws {
        let bridge = MockBLEBridge()
        let (peripheral, _) = try await Realistic.advertisingPeripheral(
            on: bridge, configuration: .init(name: "Sensor", mtu: .device))
        let (central, _) = try await Realistic.connectedCentral(
            to: peripheral, on: bridge, configuration: .init(mtu: .device))
        #expect(try await central.maximumWriteValueLength(for: peripheral.identifier, type: .withoutResponse) == 182)
        #expect(try await central.maximumWriteValueLength(for: peripheral.identifier, type: .withResponse) == 512)
        #expect(await peripheral.maximumUpdateValueLength(for: central.identifier) == 182)
        #expect(Realistic.linkMTUs(in: await bridge.log) == [185])
    }

    @Test("A device peripheral with a fixed-517 central negotiates 247")
    func devicePeripheral() async throws {
        let bridge = MockBLEBridge()
        let (peripheral, _) = try await Realistic.advertisingPeripheral(
            on: bridge, configuration: .init(name: "Sensor", mtu: .device))
        let (central, _) = try await Realistic.connectedCentral(to: peripheral, on: bridge)
        #expect(await peripheral.maximumUpdateValueLength(for: central.identifier) == 244)
    }

    @Test("A central's own seed makes its MTU draws independent of the bridge's seed")
    func centralSeed() async throws {
        let seeded = MockCentralManager.Configuration(mtu: .realistic(23...517), seed: 99)
        let onBridge1 = try await Self.linkMTUs(links: 20, bridgeSeed: 1, central: seeded)
        let onBridge2 = try await Self.linkMTUs(links: 20, bridgeSeed: 2, central: seeded)
        #expect(onBridge1 == onBridge2)
        #expect(Set(onBridge1).count > 1, "central seed 99: \(onBridge1)")
        // Without its own seed, the draws follow the bridge's seed.
        let unseeded = MockCentralManager.Configuration(mtu: .realistic(23...517))
        let unseeded1 = try await Self.linkMTUs(links: 20, bridgeSeed: 1, central: unseeded)
        let unseeded2 = try await Self.linkMTUs(links: 20, bridgeSeed: 2, central: unseeded)
        #expect(unseeded1 != unseeded2)
    }

    @Test("simulateMTUPreference changes the next link's negotiation on either side, and refuses a bad mode")
    func mtuPreferenceHooks() async throws {
        let bridge = MockBLEBridge()
        let (peripheral, _) = try await Realistic.advertisingPeripheral(on: bridge)
        let central = MockCentralManager(bridge: bridge)
        try await Realistic.discover(peripheral, by: central, on: bridge)
        try await central.connect(peripheral.identifier)
        try await central.simulateMTUPreference(.fixed(100))
        // A link that is up keeps its ATT_MTU.
        #expect(try await central.maximumWriteValueLength(for: peripheral.identifier, type: .withoutResponse) == 512)
        try await central.cancelPeripheralConnection(peripheral.identifier)
        try await central.connect(peripheral.identifier)
        #expect(try await central.maximumWriteValueLength(for: peripheral.identifier, type: .withoutResponse) == 97)
        try await peripheral.simulateMTUPreference(.fixed(40))
        try await central.cancelPeripheralConnection(peripheral.identifier)
        try await central.connect(peripheral.identifier)
        #expect(try await central.maximumWriteValueLength(for: peripheral.identifier, type: .withoutResponse) == 37)
        await #expect(
            throws: APIMisuseError.invalidConfiguration(
                "simulateMTUPreference: ATT_MTU 600 is outside 23…517; use a value in that range")
        ) {
            try await central.simulateMTUPreference(.fixed(600))
        }
        await #expect(
            throws: APIMisuseError.invalidConfiguration(
                "simulateMTUPreference: the ATT_MTU range 1...20 has no value in 23…517")
        ) {
            try await peripheral.simulateMTUPreference(.realistic(1...20))
        }
    }

    @Test("value(of:) is what the peripheral holds: a cached value, a written one, nil for one it did not publish")
    func peripheralValue() async throws {
        let rig = try await Rig.make()
        #expect(await rig.peripheral.value(of: rig.local(RigUUID.readOnly)) == Data([1, 2, 3]))
        #expect(await rig.peripheral.value(of: rig.local(RigUUID.value)) == Data())
        try await rig.central.writeValue(Data([7]), for: rig.remote(RigUUID.value), type: .withoutResponse)
        #expect(await rig.peripheral.value(of: rig.local(RigUUID.value)) == Data([7]))
        let foreign = LocalCharacteristic(
            serviceUUID: "FFF0", serviceHandle: 1, uuid: "FFF9", properties: .read, permissions: .readable, handle: 99)
        #expect(await rig.peripheral.value(of: foreign) == nil)
    }
}
