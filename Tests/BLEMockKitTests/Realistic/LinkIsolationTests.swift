import BLECore
import BLEMockKit
import Foundation
import Testing

@Suite("Realistic: determinism", .timeLimit(.minutes(10)))
struct LinkIsolationTests {
    /// A realistic session: connect, subscribe, read, write, notify, go out of range.
    static func session(seed: UInt64) async throws -> [String] {
        let bridge = MockBLEBridge(configuration: .realistic(seed: seed))
        let peripheral = MockPeripheralManager(configuration: .realistic(seed: seed), bridge: bridge)
        #expect(await peripheral.waitForPoweredOn() == .poweredOn)
        let service = try await peripheral.add(Realistic.service)
        try await peripheral.startAdvertising(AdvertisementData(localName: "Sensor"))
        let central = MockCentralManager(configuration: .realistic(seed: seed), bridge: bridge)
        #expect(await central.waitForPoweredOn() == .poweredOn)
        try await Realistic.discover(peripheral, by: central, on: bridge)
        try await central.connect(peripheral.identifier)
        let characteristics = try await central.discoverAll(for: peripheral.identifier)
        let value = try #require(characteristics.first { $0.uuid == RigUUID.value })
        try await central.setNotifyValue(true, for: value)
        try await central.writeValue(testBytes(200), for: value, type: .withResponse)
        _ = try await central.readValue(for: value)
        for byte in UInt8(0)..<8 { try await central.writeValue(Data([byte]), for: value, type: .withoutResponse) }
        let local = try #require(service.characteristic(RigUUID.value))
        for byte in UInt8(0)..<8 {
            _ = try await peripheral.updateValue(Data([byte]), for: local, onSubscribedCentrals: nil)
        }
        await peripheral.simulateProximityChange(.outOfRange)
        await bridge.advance(by: .seconds(1))
        return await bridge.log.map(\.description)
    }

    @Test("The same seed and the same steps give a byte-identical log; another seed gives another")
    func sameSeedSameLog() async throws {
        let first = try await Self.session(seed: 40)
        #expect(first.count > 20)
        #expect(try await Self.session(seed: 40) == first)
        #expect(try await Self.session(seed: 41) != first)
    }

    /// The durations of five reads on one link, with or without an unrelated second link on the air.
    static func readDurations(withOtherLink: Bool) async throws -> [Duration] {
        let bridge = MockBLEBridge(configuration: .realistic(seed: 1))
        let (peripheral, _) = try await Realistic.advertisingPeripheral(
            on: bridge, configuration: .init(name: "A", seed: 1))
        let (central, characteristics) = try await Realistic.connectedCentral(
            to: peripheral, on: bridge, configuration: .init(seed: 2))
        if withOtherLink {
            let (other, _) = try await Realistic.advertisingPeripheral(
                on: bridge, configuration: .init(name: "B", seed: 3))
            let (otherCentral, otherCharacteristics) = try await Realistic.connectedCentral(
                to: other, on: bridge, configuration: .init(seed: 4))
            _ = try await otherCentral.readValue(
                for: try #require(otherCharacteristics.first { $0.uuid == RigUUID.readOnly }))
        }
        let short = try #require(characteristics.first { $0.uuid == RigUUID.readOnly })
        var durations: [Duration] = []
        for _ in 0..<5 {
            durations.append(try await Realistic.elapsed(on: bridge) { _ = try await central.readValue(for: short) })
        }
        return durations
    }

    @Test("Adding an unrelated peripheral and link does not perturb another link's seeded timing (DESIGN principle 2)")
    func otherLinksDoNotPerturb() async throws {
        let alone = try await Self.readDurations(withOtherLink: false)
        let crowded = try await Self.readDurations(withOtherLink: true)
        #expect(alone == crowded, "bridge seed 1: alone \(alone), with another link \(crowded)")
    }
}
