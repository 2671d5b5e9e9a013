import BLECore
import BLEMockKit
import Foundation
import Testing

/// A discovered attribute belongs to the central that discovered it, on the link it was
/// discovered on: CoreBluetooth invalidates every service, characteristic and descriptor of a
/// peripheral when its link goes, and each central has objects of its own.
@Suite("Attribute identity: who discovered it, on which link", .timeLimit(.minutes(10)))
struct AttributeIdentityTests {
    @Test("A characteristic discovered before a reconnect is refused until it is rediscovered")
    func staleAfterReconnect() async throws {
        let bridge = MockBLEBridge()
        let (peripheral, _) = try await TestPeripherals.advertisingHeartRate(on: bridge)
        let (central, characteristics) = try await TestPeripherals.connectedCentral(to: peripheral, on: bridge)
        let location = characteristics[1]
        #expect(try await central.readValue(for: location) == Data([0x01]))
        try await central.cancelPeripheralConnection(peripheral.identifier)
        try await central.connect(peripheral.identifier)
        // The commonest production bug: caching characteristics across reconnects.
        await #expect(throws: CoreBluetoothError(.invalidHandle)) { try await central.readValue(for: location) }
        await #expect(throws: CoreBluetoothError(.invalidHandle)) {
            try await central.writeValue(Data([1]), for: characteristics[2], type: .withoutResponse)
        }
        await #expect(throws: CoreBluetoothError(.invalidHandle)) {
            try await central.setNotifyValue(true, for: characteristics[0])
        }
        let refusal = await bridge.log.last { $0.kind == .refused }
        #expect(refusal?.detail == "characteristic not discovered on this link")
        #expect(refusal?.central == central.identifier)
        #expect(String(describing: CoreBluetoothError(.invalidHandle)).contains("rediscover"))
        // Rediscovering makes it usable again.
        let again = try await central.discoverAll(for: peripheral.identifier)
        #expect(try await central.readValue(for: again[1]) == Data([0x01]))
    }

    @Test("A descriptor its characteristic does not have is refused with invalidHandle, and the log says why")
    func aForgedDescriptorIsRefused() async throws {
        let bridge = MockBLEBridge()
        let (peripheral, _) = try await TestPeripherals.advertisingHeartRate(on: bridge)
        let (central, characteristics) = try await TestPeripherals.connectedCentral(to: peripheral, on: bridge)
        let descriptors = try await central.discoverDescriptors(for: characteristics[0])
        let cccd = try #require(descriptors.first)
        // The same characteristic, a handle past its descriptors: no such attribute.
        let forged = RemoteDescriptor(characteristic: characteristics[0], uuid: cccd.uuid, handle: cccd.handle &+ 40)
        let pdus = await bridge.attPDUCount
        await #expect(throws: CoreBluetoothError(.invalidHandle)) { try await central.readValue(for: forged) }
        await #expect(throws: CoreBluetoothError(.invalidHandle)) {
            try await central.writeValue(Data([0x01, 0x00]), for: forged)
        }
        #expect(await bridge.attPDUCount == pdus)
        let refusals = await bridge.log.filter { $0.kind == .refused }
        #expect(
            refusals.map(\.detail) == ["descriptor not on its characteristic", "descriptor not on its characteristic"])
        #expect(
            refusals.allSatisfy {
                $0.central == central.identifier && $0.error == .coreBluetooth(CoreBluetoothError(.invalidHandle))
            })
        // The real one still reads.
        #expect(try await central.readValue(for: cccd) == Data([0x00, 0x00]))
    }

    @Test("A central cannot use a characteristic another central discovered")
    func attributesBelongToTheirCentral() async throws {
        let bridge = MockBLEBridge()
        let (peripheral, _) = try await TestPeripherals.advertisingHeartRate(on: bridge)
        let (_, characteristics) = try await TestPeripherals.connectedCentral(to: peripheral, on: bridge)
        let other = MockCentralManager(bridge: bridge)
        try await other.connect(peripheral.identifier)
        await #expect(throws: CoreBluetoothError(.invalidHandle)) { try await other.readValue(for: characteristics[1]) }
        let own = try await other.discoverAll(for: peripheral.identifier)
        #expect(own == characteristics)  // the same values, now discovered by this central
        #expect(try await other.readValue(for: own[1]) == Data([0x01]))
    }

    @Test("A service kept across a reconnect, or another central's, is refused with invalidHandle until rediscovered")
    func staleServiceAfterReconnect() async throws {
        let bridge = MockBLEBridge()
        let (peripheral, _) = try await TestPeripherals.advertisingHeartRate(on: bridge)
        let (central, characteristics) = try await TestPeripherals.connectedCentral(to: peripheral, on: bridge)
        let service = characteristics[0].service
        try await central.cancelPeripheralConnection(peripheral.identifier)
        try await central.connect(peripheral.identifier)
        let pdus = await bridge.attPDUCount
        // Before, both went to the server, and the characteristics found through the stale
        // service were usable although the central had discovered no service on this link.
        await #expect(throws: CoreBluetoothError(.invalidHandle)) {
            try await central.discoverCharacteristics(nil, for: service)
        }
        await #expect(throws: CoreBluetoothError(.invalidHandle)) {
            try await central.discoverIncludedServices(nil, for: service)
        }
        #expect(await bridge.attPDUCount == pdus)  // refused before anything was sent
        #expect(await central.characteristics(of: service).isEmpty)
        let refusal = await bridge.log.last { $0.kind == .refused }
        #expect(refusal?.detail == "service not discovered on this link")
        #expect(refusal?.attribute == service.uuid)
        // Another central has objects of its own.
        let other = MockCentralManager(bridge: bridge)
        try await other.connect(peripheral.identifier)
        await #expect(throws: CoreBluetoothError(.invalidHandle)) {
            try await other.discoverCharacteristics(nil, for: service)
        }
        // Rediscovering makes it usable again.
        #expect(try await central.discoverServices(nil, for: peripheral.identifier) == [service])
        #expect(try await central.discoverCharacteristics(nil, for: service) == characteristics)
        #expect(try await central.discoverIncludedServices(nil, for: service).isEmpty)
        #expect(await bridge.finish() == .clean)
    }

    /// A peripheral whose primary service includes a secondary battery service, and a central
    /// that discovered both and the battery level.
    static func includedRig() async throws -> (
        MockBLEBridge, MockPeripheralManager, LocalService, MockCentralManager, RemoteService, RemoteCharacteristic
    ) {
        let bridge = MockBLEBridge()
        let peripheral = MockPeripheralManager(configuration: .init(name: "Watch"), bridge: bridge)
        let battery = try await peripheral.add(
            GATTService(
                uuid: "180F", isPrimary: false,
                characteristics: [
                    GATTCharacteristic(uuid: "2A19", properties: .read, permissions: .readable, value: Data([50]))
                ]))
        _ = try await peripheral.add(
            GATTService(
                uuid: "AAA0", includedServices: ["180F"],
                characteristics: [
                    GATTCharacteristic(uuid: "AAA1", properties: .read, permissions: .readable, value: Data([1]))
                ]))
        try await peripheral.startAdvertising(AdvertisementData(localName: "Watch"))
        let central = MockCentralManager(bridge: bridge)
        try await central.scanForPeripherals(withServices: nil)
        try await central.connect(peripheral.identifier)
        let primary = try await central.discoverServices(nil, for: peripheral.identifier)
        let included = try await central.discoverIncludedServices(nil, for: primary[0])
        let level = try await central.discoverCharacteristics(nil, for: included[0])[0]
        #expect(try await central.readValue(for: level) == Data([50]))
        return (bridge, peripheral, battery, central, included[0], level)
    }

    @Test("Removing an included service invalidates it on the central, which is told so")
    func removingAnIncludedServiceInvalidatesIt() async throws {
        let (_, peripheral, battery, central, included, level) = try await Self.includedRig()
        let events = central.events()
        try await peripheral.remove(battery)
        #expect(
            await events.prefixArray(1) == [
                .servicesModified(
                    RemotePeripheral(identifier: peripheral.identifier, name: "Watch"), invalidated: [included])
            ])
        await #expect(throws: CoreBluetoothError(.invalidHandle)) { try await central.readValue(for: level) }
        #expect(await central.characteristics(of: included).isEmpty)
    }

    @Test("An included service's characteristics are invalidated by a disconnection with everything else")
    func includedServicesGoWithTheLink() async throws {
        let (_, peripheral, _, central, included, level) = try await Self.includedRig()
        try await central.cancelPeripheralConnection(peripheral.identifier)
        #expect(await central.characteristics(of: included).isEmpty)
        try await central.connect(peripheral.identifier)
        await #expect(throws: CoreBluetoothError(.invalidHandle)) { try await central.readValue(for: level) }
    }
}
