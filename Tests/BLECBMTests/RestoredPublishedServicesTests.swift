import BLECBM
import BLECore
import BLEMockKit
import Foundation
import Testing

/// A watch app that publishes a service with a static characteristic, a notifying one with a
/// user description and an included service, and records what its relaunched self is handed.
final class PublishingWatch: NSObject, CBMPeripheralManagerDelegate, @unchecked Sendable {
    // @unchecked Sendable: only touched on the main queue.
    var manager: CBMPeripheralManager!
    var calls: [String] = []
    var restored: [CBMMutableService] = []
    var status: CBMMutableCharacteristic?
    private let publishes: Bool

    static let main = CBMUUID(string: "180F")
    static let included = CBMUUID(string: "FFF9")
    static let firmware = CBMUUID(string: "2A26")
    static let statusUUID = CBMUUID(string: "2A19")

    init(publishes: Bool) {
        self.publishes = publishes
        super.init()
        manager = CBMPeripheralManager(
            delegate: self, queue: nil, options: [CBMPeripheralManagerOptionRestoreIdentifierKey: "watch"])
    }

    func peripheralManagerDidUpdateState(_ peripheral: CBMPeripheralManager) {
        calls.append("state \(peripheral.state)")
        guard publishes, peripheral.state == .poweredOn, calls.count == 1 else { return }
        let included = CBMMutableService(type: Self.included, primary: false)
        peripheral.add(included)
        let firmware = CBMMutableCharacteristic(
            type: Self.firmware, properties: [.read], value: Data([1, 2, 3]), permissions: [.readable])
        let status = CBMMutableCharacteristic(
            type: Self.statusUUID, properties: [.notify], value: nil, permissions: [.readable])
        status.descriptors = [CBMMutableDescriptor(type: CBMUUID(string: "2901"), value: "Status")]
        self.status = status
        let service = CBMMutableService(type: Self.main, primary: true)
        service.characteristics = [firmware, status]
        service.includedServices = [included]
        peripheral.add(service)
    }

    func peripheralManager(_ peripheral: CBMPeripheralManager, didAdd service: CBMService, error: (any Error)?) {
        calls.append("added \(service.uuid.uuidString) \(error == nil ? "ok" : "failed")")
        guard service.uuid == Self.main else { return }
        peripheral.startAdvertising([CBMAdvertisementDataServiceUUIDsKey: [Self.main]])
    }

    func peripheralManager(_ peripheral: CBMPeripheralManager, willRestoreState dict: [String: Any]) {
        restored = dict[CBMPeripheralManagerRestoredStateServicesKey] as? [CBMMutableService] ?? []
        status =
            restored.flatMap { $0.characteristics ?? [] }.first { $0.uuid == Self.statusUUID }
            as? CBMMutableCharacteristic
        calls.append("restored subscribers=\(status?.subscribedCentrals?.count ?? -1)")
    }

    func peripheralManager(
        _ peripheral: CBMPeripheralManager, central: CBMCentral, didSubscribeTo characteristic: CBMCharacteristic
    ) {
        calls.append(
            "subscribed subscribers=\((characteristic as? CBMMutableCharacteristic)?.subscribedCentrals?.count ?? -1)")
    }
}

/// What a relaunched peripheral app gets back: the services it had published, as it published
/// them (`CBPeripheralManagerRestoredStateServicesKey`), and each subscribed central once.
@Suite(.timeLimit(.minutes(10)))
struct RestoredPublishedServicesTests {
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(
        "A relaunched peripheral app's restored services keep their static values, descriptors and included services",
        arguments: [false, true])
    func restoredServicesAreAsPublished(realistic: Bool) async throws {
        let bridge = MockBLEBridge(configuration: realistic ? .realistic(seed: 11) : .init(seed: 11))
        let restored = try await bridge.run { @MainActor () -> [CBMMutableService] in
            var first: PublishingWatch? = PublishingWatch(publishes: true)
            try await bridge.waitForApp { first!.manager.isAdvertising }
            await first!.manager.simulatedPeripheral!.simulateAppTermination()
            first = nil
            let relaunched = PublishingWatch(publishes: false)
            try await bridge.waitForApp { !relaunched.restored.isEmpty }
            return relaunched.restored
        }
        let main = try #require(restored.first { $0.uuid == PublishingWatch.main })
        let characteristics = try #require(main.characteristics as? [CBMMutableCharacteristic])
        #expect(characteristics.map(\.uuid) == [PublishingWatch.firmware, PublishingWatch.statusUUID])
        #expect(characteristics[0].value == Data([1, 2, 3]))
        #expect(characteristics[1].value == nil)
        let description = try #require(characteristics[1].descriptors?.first)
        #expect(characteristics[1].descriptors?.count == 1)
        #expect(description.uuid == CBMUUID(string: "2901"))
        #expect(description.value as? String == "Status")
        #expect(description is CBMMutableDescriptor)
        let included = try #require(restored.first { $0.uuid == PublishingWatch.included })
        #expect(main.includedServices?.count == 1)
        #expect(main.includedServices?.first === included)
        #expect(!included.isPrimary)
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(
        "A central that subscribes while the peripheral app is terminated is its characteristic's subscriber once",
        arguments: [false, true])
    func aSubscriptionWhileTerminatedIsListedOnce(realistic: Bool) async throws {
        let bridge = MockBLEBridge(configuration: realistic ? .realistic(seed: 11) : .init(seed: 11))
        let central = MockCentralManager(configuration: realistic ? .realistic(seed: 4) : .fast, bridge: bridge)
        let (calls, subscribers) = try await bridge.run { @MainActor () -> ([String], Int) in
            var first: PublishingWatch? = PublishingWatch(publishes: true)
            try await bridge.waitForApp { first!.manager.isAdvertising }
            let identifier = first!.manager.simulatedPeripheral!.identifier
            _ = await central.waitForPoweredOn()
            try await central.scanForPeripherals(withServices: ["180F"])
            await bridge.waitUntil { $0.log.contains { $0.kind == .discovered } }
            await central.stopScan()
            try await central.connect(identifier)
            let status = try await central.discoverAll(for: identifier).first { $0.uuid == "2A19" }
            await first!.manager.simulatedPeripheral!.simulateAppTermination()
            first = nil
            try await central.setNotifyValue(true, for: try #require(status))
            let relaunched = PublishingWatch(publishes: false)
            try await bridge.waitForApp { relaunched.calls.contains { $0.hasPrefix("subscribed") } }
            return (relaunched.calls, relaunched.status?.subscribedCentrals?.count ?? -1)
        }
        #expect(subscribers == 1)
        #expect(calls.contains("subscribed subscribers=1"), "\(calls)")
    }
}
