import BLECore
import BLEMockKit
import Foundation
import Testing

/// What discovery costs on the link, as a GATT client does it (Bluetooth Core Specification,
/// Vol 3, Part G, 4.6 and 4.7).
@Suite("Discovery costs what the client sends", .timeLimit(.minutes(10)))
struct DiscoveryCostTests {
    /// A peripheral with one service of ten characteristics, none with descriptors, and a
    /// central at ATT_MTU 23 connected to it with the service discovered, on a steady realistic bridge.
    static func rig() async throws -> (MockBLEBridge, MockCentralManager, RemoteService) {
        let bridge = Realistic.steadyBridge()
        let peripheral = MockPeripheralManager(configuration: .init(name: "Many"), bridge: bridge)
        _ = try await peripheral.add(
            GATTService(
                uuid: "FFF0",
                characteristics: (1...10).map {
                    GATTCharacteristic(
                        uuid: BluetoothUUID(UInt16(0xFFF0 + $0)), properties: .read, permissions: .readable,
                        value: Data([UInt8($0)]))
                }))
        try await peripheral.startAdvertising(AdvertisementData(localName: "Many"))
        let central = MockCentralManager(configuration: .init(mtu: .fixed(23)), bridge: bridge)
        try await Realistic.discover(peripheral, by: central, on: bridge)
        try await central.connect(peripheral.identifier)
        let service = try await central.discoverServices(nil, for: peripheral.identifier)[0]
        return (bridge, central, service)
    }

    @Test("Discovering characteristics by UUID reads every declaration in the range, as discovering all does")
    func byUUIDCostsTheSameAsAll() async throws {
        let (bridge, central, service) = try await Self.rig()
        var before = await bridge.attPDUCount
        let one = try await central.discoverCharacteristics(["FFF5"], for: service)
        let byUUID = await bridge.attPDUCount - before
        #expect(one.map(\.uuid) == ["FFF5"])
        before = await bridge.attPDUCount
        let all = try await central.discoverCharacteristics(nil, for: service)
        let everything = await bridge.attPDUCount - before
        #expect(all.count == 10)
        // Seven-byte declarations, three per Read By Type response at ATT_MTU 23: four
        // responses, then "attribute not found" ends the search; five requests, five answers.
        #expect(everything == 10)
        #expect(byUUID == everything)
    }

    @Test("Discovering the descriptors of a characteristic that has none sends nothing and takes no time")
    func anEmptyDescriptorRangeSendsNothing() async throws {
        let (bridge, central, service) = try await Self.rig()
        let characteristic = try await central.discoverCharacteristics(["FFF1"], for: service)[0]
        let (pdus, start) = (await bridge.attPDUCount, await bridge.now)
        #expect(try await central.discoverDescriptors(for: characteristic).isEmpty)
        #expect(await bridge.attPDUCount == pdus)
        #expect(await bridge.now == start)
        let entry = await bridge.log.last { $0.kind == .descriptorsDiscovered }
        #expect(entry?.attribute == "FFF1")
        #expect(entry?.error == nil)
    }
}

/// A descriptor longer than one response reads like a characteristic: a Read, then Read
/// Blobs of ATT_MTU − 1 bytes until a shorter part (Bluetooth Core Specification, Vol 3,
/// Part G, 4.12.2).
@Suite("Long descriptor reads", .timeLimit(.minutes(10)))
struct LongDescriptorReadTests {
    @Test(
        "A descriptor reads back whole at ATT_MTU 23, in as many exchanges as a characteristic of its length",
        arguments: [(0, 1), (21, 1), (22, 2), (30, 2), (44, 3), (100, 5)])
    func longDescriptors(length: Int, exchanges: Int) async throws {
        let bridge = Realistic.steadyBridge()
        let text = String((0..<length).map { Character(UnicodeScalar(UInt8(65 + $0 % 26))) })
        let peripheral = MockPeripheralManager(configuration: .init(name: "Labels"), bridge: bridge)
        _ = try await peripheral.add(
            GATTService(
                uuid: "FFF0",
                characteristics: [
                    GATTCharacteristic(
                        uuid: "FFF1", properties: .read, permissions: .readable, value: Data([1]),
                        descriptors: [.userDescription(text)])
                ]))
        try await peripheral.startAdvertising(AdvertisementData(localName: "Labels"))
        let central = MockCentralManager(configuration: .init(mtu: .fixed(23)), bridge: bridge)
        try await Realistic.discover(peripheral, by: central, on: bridge)
        try await central.connect(peripheral.identifier)
        let characteristic = try await central.discoverAll(for: peripheral.identifier)[0]
        let descriptor = try #require(try await central.discoverDescriptors(for: characteristic).first)
        let (pdus, start) = (await bridge.attPDUCount, await bridge.now)
        #expect(try await central.readValue(for: descriptor) == Data(text.utf8))
        #expect(await bridge.attPDUCount - pdus == 2 * exchanges)
        #expect(start.duration(to: await bridge.now) == .milliseconds(30 * exchanges))
    }
}
