import BLECBM
import BLECore
import BLEMockKit
import Foundation
import Testing

/// A peripheral app that publishes one readable characteristic with the descriptors it is given,
/// and notes how its service's add ended.
private final class DescriptorPeripheral: NSObject, CBMPeripheralManagerDelegate, @unchecked Sendable {
    // @unchecked Sendable: only touched on the main queue.
    static let service = CBMUUID(string: "D1E50000-0000-4000-8000-00805F9B0000")
    static let characteristic = CBMUUID(string: "D1E50001-0000-4000-8000-00805F9B0000")

    let descriptors: [CBMMutableDescriptor]
    var manager: CBMPeripheralManager!
    /// How the add ended: `nil` until it has, then the error (`.some(nil)` when it succeeded).
    var added: (any Error)??

    init(descriptors: [CBMMutableDescriptor]) {
        self.descriptors = descriptors
        super.init()
        manager = CBMPeripheralManager(delegate: self, queue: nil)
    }

    func peripheralManagerDidUpdateState(_ peripheral: CBMPeripheralManager) {
        guard peripheral.state == .poweredOn else { return }
        let characteristic = CBMMutableCharacteristic(
            type: Self.characteristic, properties: [.read], value: Data([1]), permissions: [.readable])
        characteristic.descriptors = descriptors
        let service = CBMMutableService(type: Self.service, primary: true)
        service.characteristics = [characteristic]
        peripheral.add(service)
    }

    func peripheralManager(_ peripheral: CBMPeripheralManager, didAdd service: CBMService, error: (any Error)?) {
        added = .some(error)
        guard error == nil else { return }
        peripheral.startAdvertising([CBMAdvertisementDataServiceUUIDsKey: [Self.service]])
    }
}

@Suite("Descriptors a peripheral app publishes", .timeLimit(.minutes(10)))
struct PublishedDescriptorTests {
    /// Publishes `descriptors` from a delegate app on a new bridge; returns how the add ended, the
    /// manager's misuses and, when it succeeded, the descriptors a central of the async API
    /// discovers on the characteristic with the values it reads from them.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    static func publish(
        _ descriptors: @escaping @Sendable () -> [CBMMutableDescriptor], realistic: Bool = false
    ) async throws -> (error: (any Error)?, misuses: [String], read: [BluetoothUUID: Data]) {
        let bridge = MockBLEBridge(configuration: realistic ? .realistic(seed: 8) : .init(seed: 8))
        let central = MockCentralManager(configuration: realistic ? .realistic(seed: 8) : .fast, bridge: bridge)
        return try await bridge.run { @MainActor () -> ((any Error)?, [String], [BluetoothUUID: Data]) in
            let app = DescriptorPeripheral(descriptors: descriptors())
            try await bridge.waitForApp { app.added != nil }
            let error = app.added!
            guard error == nil else { return (error, app.manager.apiMisuses, [:]) }
            try await bridge.waitForApp { app.manager.isAdvertising }
            let identifier = try #require(app.manager.simulatedPeripheral?.identifier)
            try await central.scanForPeripherals(withServices: [DescriptorPeripheral.service.bluetoothUUID])
            await bridge.waitUntil { bridge in
                bridge.log.contains { $0.kind == .discovered && $0.peripheral == identifier }
            }
            try await central.connect(identifier)
            let characteristic = try #require(try await central.discoverAll(for: identifier).first)
            var read: [BluetoothUUID: Data] = [:]
            for descriptor in try await central.discoverDescriptors(for: characteristic) {
                read[descriptor.uuid] = try await central.readValue(for: descriptor)
            }
            return (nil, app.manager.apiMisuses, read)
        }
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(
        "A user description, a presentation format, a valid range and a 128-bit descriptor are published and read",
        arguments: [false, true])
    func descriptorsCoreBluetoothTakesArePublished(realistic: Bool) async throws {
        let format = Data([0x04, 0x00, 0x27, 0x27, 0x01, 0x00, 0x00])
        let custom = CBMUUID(string: "D1E5F00D-0000-4000-8000-00805F9B0000")
        let (error, misuses, read) = try await Self.publish(
            {
                [
                    CBMMutableDescriptor(type: CBMUUID(string: "2901"), value: "Battery level"),
                    CBMMutableDescriptor(type: CBMUUID(string: "2904"), value: format),
                    CBMMutableDescriptor(type: CBMUUID(string: "2906"), value: Data([0x00, 0x64])),
                    CBMMutableDescriptor(type: custom, value: Data([0xCA, 0xFE])),
                ]
            }, realistic: realistic)
        #expect(error == nil)
        #expect(misuses.isEmpty)
        #expect(read["2901"] == Data("Battery level".utf8))
        #expect(read["2904"] == format)
        #expect(read["2906"] == Data([0x00, 0x64]))
        #expect(read[custom.bluetoothUUID] == Data([0xCA, 0xFE]))
    }

    /// A descriptor CoreBluetooth's initializer refuses, and the reason it gives.
    struct Refusal: Sendable, CustomTestStringConvertible {
        let uuid: String
        let value: @Sendable () -> Any?
        let valueText: String
        let reason: String
        var testDescription: String { "\(uuid) with \(valueText)" }
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(
        "A descriptor whose value CoreBluetooth refuses as it is made fails its service's add, naming the reason",
        arguments: [
            Refusal(
                uuid: "2901", value: { Data([1]) }, valueText: "Data(1 bytes)",
                reason: "Expecting NSString value type for User Description descriptor"),
            Refusal(
                uuid: "2901", value: { nil }, valueText: "nil",
                reason: "Expecting NSString value type for User Description descriptor"),
            Refusal(
                uuid: "2904", value: { "%" }, valueText: "\"%\"",
                reason: "Expecting NSData value type for Format descriptor"),
            Refusal(
                uuid: "2906", value: { Data([0x00, 0x64, 0x01]) }, valueText: "Data(3 bytes)",
                reason: "Valid range must be an even number of bytes"),
            Refusal(
                uuid: "2906", value: { "0-100" }, valueText: "\"0-100\"",
                reason: "Valid range must be an even number of bytes"),
            Refusal(
                uuid: "D1E5F00D-0000-4000-8000-00805F9B0000", value: { "custom" }, valueText: "\"custom\"",
                reason: "Expecting NSData value type for 128-bit descriptor"),
            Refusal(
                uuid: "D1E5F00D-0000-4000-8000-00805F9B0000", value: { NSNumber(value: 7) }, valueText: "",
                reason: "Expecting NSData value type for 128-bit descriptor"),
        ])
    func refusedDescriptorsFailTheAdd(refusal: Refusal) async throws {
        let (error, misuses, _) = try await Self.publish {
            [
                CBMMutableDescriptor(type: CBMUUID(string: "2901"), value: "fine"),
                CBMMutableDescriptor(type: CBMUUID(string: refusal.uuid), value: refusal.value()),
            ]
        }
        #expect((error as? CBMError)?.code == .invalidParameters)
        #expect(misuses.count == 1)
        let misuse = try #require(misuses.first)
        #expect(misuse.hasPrefix("add: CBMMutableDescriptor(type: \(CBMUUID(string: refusal.uuid)), value: "))
        if !refusal.valueText.isEmpty { #expect(misuse.contains("value: \(refusal.valueText))")) }
        #expect(
            misuse.hasSuffix(
                "of characteristic \(DescriptorPeripheral.characteristic): CoreBluetooth raises "
                    + "NSInternalInconsistencyException (\"\(refusal.reason)\") as it is made, and the app crashes"))
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test("A 16-bit descriptor of another type takes any value, as CoreBluetooth's initializer does")
    func otherShortDescriptorsTakeAnyValue() async throws {
        let (error, misuses, read) = try await Self.publish {
            [CBMMutableDescriptor(type: CBMUUID(string: "290B"), value: NSNumber(value: 0x0102))]
        }
        #expect(error == nil)
        #expect(misuses.isEmpty)
        #expect(read["290B"] == Data([0x02, 0x01]))
    }
}
