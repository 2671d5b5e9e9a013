import BLECore
import BLEMockKit
import Foundation
import Testing

@Suite("Realistic: strict lengths", .timeLimit(.minutes(10)))
struct StrictLengthTests {
    /// A central at ATT_MTU 23 connected to the test peripheral on a fast bridge.
    static func link(strict: Bool) async throws -> (
        MockBLEBridge, MockPeripheralManager, MockCentralManager, RemoteCharacteristic
    ) {
        let bridge = MockBLEBridge()
        let (peripheral, _) = try await Realistic.advertisingPeripheral(on: bridge)
        let (central, characteristics) = try await Realistic.connectedCentral(
            to: peripheral, on: bridge, configuration: .init(mtu: .fixed(23), strictLengths: strict))
        let value = try #require(characteristics.first { $0.uuid == RigUUID.value })
        return (bridge, peripheral, central, value)
    }

    @Test("With strict lengths, a write without response longer than MTU − 3 throws valueTooLong and writes nothing")
    func strictCentralRefuses() async throws {
        let (bridge, _, central, value) = try await Self.link(strict: true)
        let expected = APIMisuseError.valueTooLong(
            operation: "writeValue(_:for:type: .withoutResponse)", length: 21, maximum: 20)
        await #expect(throws: expected) {
            try await central.writeValue(testBytes(21), for: value, type: .withoutResponse)
        }
        let writes = await bridge.log.filter { $0.kind == .write }
        #expect(writes.count == 1)
        #expect(writes.first?.error == .misuse(expected))
        #expect(await bridge.log.filter { $0.kind == .truncated }.isEmpty)
        #expect(try await central.readValue(for: value) == Data())
        // Exactly MTU − 3 bytes is fine.
        try await central.writeValue(testBytes(20), for: value, type: .withoutResponse)
        #expect(try await central.readValue(for: value) == testBytes(20))
    }

    @Test("Without strict lengths, a write without response is cut to MTU − 3 and the truncation is logged")
    func lenientCentralTruncates() async throws {
        let (bridge, peripheral, central, value) = try await Self.link(strict: false)
        try await central.writeValue(testBytes(25), for: value, type: .withoutResponse)
        let truncations = await bridge.log.filter { $0.kind == .truncated }
        #expect(truncations.count == 1)
        #expect(truncations.first?.central == central.identifier)
        #expect(truncations.first?.peripheral == peripheral.identifier)
        #expect(truncations.first?.detail == "write without response of 25 bytes cut to 20 (ATT_MTU 23 - 3)")
        let writes = await bridge.log.filter { $0.kind == .write }
        #expect(writes.map(\.value) == [testBytes(20)])
        #expect(writes.allSatisfy { $0.succeeded })
        #expect(try await central.readValue(for: value) == testBytes(20))
    }

    /// A peripheral (strict or not) with two subscribed centrals, at ATT_MTU 23 and 100.
    static func twoSubscribers(strict: Bool) async throws
        -> (MockBLEBridge, MockPeripheralManager, LocalCharacteristic, [MockCentralManager])
    {
        let bridge = MockBLEBridge()
        let (peripheral, service) = try await Realistic.advertisingPeripheral(
            on: bridge, configuration: .init(name: "Sensor", strictLengths: strict))
        var centrals: [MockCentralManager] = []
        for mtu in [23, 100] {
            let (central, characteristics) = try await Realistic.connectedCentral(
                to: peripheral, on: bridge, configuration: .init(mtu: .fixed(mtu)))
            try await central.setNotifyValue(
                true, for: try #require(characteristics.first { $0.uuid == RigUUID.value }))
            centrals.append(central)
        }
        return (bridge, peripheral, try #require(service.characteristic(RigUUID.value)), centrals)
    }

    @Test("With strict lengths, updateValue longer than the smallest subscriber's maximum throws and sends nothing")
    func strictPeripheralRefuses() async throws {
        let (bridge, peripheral, characteristic, centrals) = try await Self.twoSubscribers(strict: true)
        let streams = centrals.map { $0.events() }
        await #expect(throws: APIMisuseError.valueTooLong(operation: "updateValue", length: 50, maximum: 20)) {
            try await peripheral.updateValue(testBytes(50), for: characteristic, onSubscribedCentrals: nil)
        }
        #expect(await bridge.log.filter { $0.kind == .notification || $0.kind == .truncated }.isEmpty)
        // Only the roomier central is addressed: 50 bytes fit its 97.
        #expect(
            try await peripheral.updateValue(
                testBytes(50), for: characteristic, onSubscribedCentrals: [centrals[1].identifier]))
        // 20 bytes fit both.
        #expect(try await peripheral.updateValue(testBytes(20), for: characteristic, onSubscribedCentrals: nil))
        _ = await bridge.finish()
        #expect(await Realistic.drain(streams[0]).updatedValues == [testBytes(20)])
        #expect(await Realistic.drain(streams[1]).updatedValues == [testBytes(50), testBytes(20)])
    }

    @Test("Without strict lengths, each central receives the update truncated to its own maximum")
    func lenientPeripheralTruncates() async throws {
        let (bridge, peripheral, characteristic, centrals) = try await Self.twoSubscribers(strict: false)
        let streams = centrals.map { $0.events() }
        #expect(try await peripheral.updateValue(testBytes(120), for: characteristic, onSubscribedCentrals: nil))
        let truncations = await bridge.log.filter { $0.kind == .truncated }
        #expect(Set(truncations.compactMap(\.central)) == Set(centrals.map(\.identifier)))
        #expect(
            Set(truncations.compactMap(\.detail)) == [
                "notification of 120 bytes cut to 20", "notification of 120 bytes cut to 97",
            ])
        _ = await bridge.finish()
        #expect(await Realistic.drain(streams[0]).updatedValues == [testBytes(20)])
        #expect(await Realistic.drain(streams[1]).updatedValues == [testBytes(97)])
    }
}
