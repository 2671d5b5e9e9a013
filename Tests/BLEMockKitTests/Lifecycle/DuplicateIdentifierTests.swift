import BLECore
import BLEMockKit
import Foundation
import Testing

/// Every manager on a bridge has its own identifier. A second manager created with an
/// identifier another one already has is refused (it used to be merged silently into the
/// first, its own configuration ignored); a relaunched app's manager with a restore
/// identifier takes over its predecessor's identifier, as CoreBluetooth's restoration does.
@Suite("Manager identity: one manager per identifier on a bridge", .timeLimit(.minutes(10)))
struct DuplicateIdentifierTests {
    static let shared = UUID(uuidString: "0000AAAA-0000-0000-0000-000000000001")!

    static var problem: APIMisuseError {
        .invalidConfiguration(
            "identifier 0000AAAA-0000-0000-0000-000000000001 is already used by another manager on this bridge; "
                + "give each manager its own identifier, or leave identifier nil to derive one")
    }

    @Test("A second central with an identifier already on the bridge refuses every call, and the first is untouched")
    func secondCentralIsRefused() async throws {
        let bridge = MockBLEBridge()
        let (peripheral, _) = try await TestPeripherals.advertisingHeartRate(on: bridge)
        let first = MockCentralManager(configuration: .init(mtu: .fixed(23), identifier: Self.shared), bridge: bridge)
        try await first.scanForPeripherals(withServices: nil)
        let second = MockCentralManager(configuration: .init(mtu: .fixed(517), identifier: Self.shared), bridge: bridge)
        #expect(second.identifier == Self.shared)
        await #expect(throws: Self.problem) { try await second.scanForPeripherals(withServices: nil) }
        await #expect(throws: Self.problem) { try await second.connect(peripheral.identifier) }
        await #expect(throws: Self.problem) {
            try await second.maximumWriteValueLength(for: peripheral.identifier, type: .withResponse)
        }
        #expect(await second.waitForPoweredOn() == .poweredOn)
        // The first keeps its own configuration: its link runs at its ATT_MTU, not the second's.
        try await first.connect(peripheral.identifier)
        #expect(try await first.maximumWriteValueLength(for: peripheral.identifier, type: .withoutResponse) == 20)
        #expect(await bridge.log.filter { $0.kind == .connected }.count == 1)
    }

    @Test("A second peripheral with an identifier already on the bridge refuses every call")
    func secondPeripheralIsRefused() async throws {
        let bridge = MockBLEBridge()
        let first = MockPeripheralManager(configuration: .init(name: "First", identifier: Self.shared), bridge: bridge)
        _ = try await first.add(TestPeripherals.heartRate)
        let second = MockPeripheralManager(
            configuration: .init(name: "Second", identifier: Self.shared), bridge: bridge)
        await #expect(throws: Self.problem) { try await second.add(TestPeripherals.heartRate) }
        await #expect(throws: Self.problem) { try await second.startAdvertising(AdvertisementData(localName: "2")) }
        try await first.startAdvertising(AdvertisementData(localName: "1"))
        let central = MockCentralManager(bridge: bridge)
        try await central.scanForPeripherals(withServices: nil)
        try await central.connect(Self.shared)
        #expect(try await central.discoverServices(nil, for: Self.shared).map(\.uuid) == ["180D"])
    }

    @Test("A central and a peripheral cannot share an identifier either")
    func rolesDoNotShareIdentifiers() async throws {
        let bridge = MockBLEBridge()
        let peripheral = MockPeripheralManager(configuration: .init(identifier: Self.shared), bridge: bridge)
        _ = try await peripheral.add(TestPeripherals.heartRate)
        let central = MockCentralManager(configuration: .init(identifier: Self.shared), bridge: bridge)
        await #expect(throws: Self.problem) { try await central.scanForPeripherals(withServices: nil) }
    }

    @Test("The same identifier on two bridges is two managers")
    func bridgesAreSeparate() async throws {
        let one = MockCentralManager(configuration: .init(identifier: Self.shared), bridge: MockBLEBridge())
        let two = MockCentralManager(configuration: .init(identifier: Self.shared), bridge: MockBLEBridge())
        try await one.scanForPeripherals(withServices: nil)
        try await two.scanForPeripherals(withServices: nil)
    }

    @Test("A relaunched app's central with the same restore identifier takes over, and is not refused")
    func restorationIsNotADuplicate() async throws {
        let bridge = MockBLEBridge()
        let before = MockCentralManager(configuration: .init(restoreIdentifier: "app"), bridge: bridge)
        try await before.scanForPeripherals(withServices: ["180D"])
        await before.simulateAppTermination()
        let after = MockCentralManager(configuration: .init(restoreIdentifier: "app"), bridge: bridge)
        #expect(after.identifier == before.identifier)
        try await after.scanForPeripherals(withServices: ["180D"])
    }
}
