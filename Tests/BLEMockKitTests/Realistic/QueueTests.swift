import BLECore
import BLEMockKit
import Foundation
import Testing

@Suite("Realistic: transmit queues", .timeLimit(.minutes(10)))
struct QueueTests {
    /// A manual peripheral and a central with a write-without-response queue, connected.
    static func writeLink(bridge: MockBLEBridge, queue: QueueBehavior) async throws
        -> (MockPeripheralManager, MockCentralManager, RemoteCharacteristic)
    {
        let (peripheral, _) = try await Realistic.advertisingPeripheral(
            on: bridge, configuration: .init(name: "Sensor", requestHandling: .manual))
        let (central, characteristics) = try await Realistic.connectedCentral(
            to: peripheral, on: bridge, configuration: .init(writeWithoutResponseQueue: queue))
        return (peripheral, central, try #require(characteristics.first { $0.uuid == RigUUID.value }))
    }

    /// Writes 1, 2, 3, 4 without response; checks the queue fills after three and the fourth is dropped.
    static func fillQueue(
        bridge: MockBLEBridge, central: MockCentralManager, peripheral: MockPeripheralManager,
        value: RemoteCharacteristic
    ) async throws {
        for byte in UInt8(1)...3 {
            #expect(await central.canSendWriteWithoutResponse(to: peripheral.identifier))
            try await central.writeValue(Data([byte]), for: value, type: .withoutResponse)
        }
        #expect(await !central.canSendWriteWithoutResponse(to: peripheral.identifier))
        try await central.writeValue(Data([4]), for: value, type: .withoutResponse)
        #expect(await !central.canSendWriteWithoutResponse(to: peripheral.identifier))
        let writes = await bridge.log.filter { $0.kind == .write }
        #expect(writes.map(\.value) == [Data([1]), Data([2]), Data([3]), Data([4])])
        #expect(writes.map(\.error) == [nil, nil, nil, .coreBluetooth(CoreBluetoothError(.outOfSpace))])
        #expect(writes.map(\.detail) == [nil, nil, nil, "dropped: transmit queue full"])
        // Nothing has reached the peripheral yet.
        #expect(await bridge.log.filter { $0.kind == .writeRequest }.isEmpty)
    }

    @Test("A full write queue of 3 on a fast bridge drops the 4th write until run() drains it")
    func writeQueueFast() async throws {
        let bridge = MockBLEBridge()
        let (peripheral, central, value) = try await Self.writeLink(bridge: bridge, queue: .realistic(capacity: 3))
        let centralEvents = central.events()
        let peripheralEvents = peripheral.events()
        try await Self.fillQueue(bridge: bridge, central: central, peripheral: peripheral, value: value)
        await bridge.run()
        #expect(await central.canSendWriteWithoutResponse(to: peripheral.identifier))
        #expect(
            await centralEvents.prefixArray(1) == [
                .readyToSendWriteWithoutResponse(RemotePeripheral(identifier: peripheral.identifier, name: "Sensor"))
            ])
        _ = await bridge.finish()
        #expect(await Realistic.drain(peripheralEvents).writtenValues == [Data([1]), Data([2]), Data([3])])
        #expect(await bridge.now == .zero)
    }

    @Test("A full write queue of 3 on a realistic bridge drains at the next connection event")
    func writeQueueRealistic() async throws {
        let bridge = MockBLEBridge(configuration: .realistic(seed: 5))
        let (peripheral, central, value) = try await Self.writeLink(bridge: bridge, queue: .realistic(capacity: 3))
        let centralEvents = central.events()
        let peripheralEvents = peripheral.events()
        let start = await bridge.now
        try await Self.fillQueue(bridge: bridge, central: central, peripheral: peripheral, value: value)
        #expect(await bridge.now == start)
        await bridge.advance(by: .milliseconds(27))  // a connection event is 30 ± 2 ms away
        #expect(await !central.canSendWriteWithoutResponse(to: peripheral.identifier))
        await bridge.advance(by: .milliseconds(6))
        #expect(await central.canSendWriteWithoutResponse(to: peripheral.identifier))
        #expect(
            await centralEvents.prefixArray(1) == [
                .readyToSendWriteWithoutResponse(RemotePeripheral(identifier: peripheral.identifier, name: "Sensor"))
            ])
        let delivered = await bridge.log.filter { $0.kind == .writeRequest }
        #expect(delivered.map(\.value) == [Data([1]), Data([2]), Data([3])])
        #expect(Set(delivered.map(\.time)).count == 1)
        let delay = start.duration(to: delivered[0].time)
        #expect(delay >= .milliseconds(28) && delay <= .milliseconds(32), "seed 5: \(delay)")
        _ = await bridge.finish()
        #expect(await Realistic.drain(peripheralEvents).writtenValues == [Data([1]), Data([2]), Data([3])])
    }

    @Test("An unlimited write queue on a realistic bridge delivers 4 writes per connection event")
    func unlimitedWritesPaced() async throws {
        let bridge = Realistic.steadyBridge()
        let (peripheral, central, value) = try await Self.writeLink(bridge: bridge, queue: .unlimited)
        let start = await bridge.now
        for byte in UInt8(0)..<10 {
            try await central.writeValue(Data([byte]), for: value, type: .withoutResponse)
            #expect(await central.canSendWriteWithoutResponse(to: peripheral.identifier))
        }
        #expect(await bridge.now == start)
        await bridge.advance(by: .milliseconds(100))
        let delivered = await bridge.log.filter { $0.kind == .writeRequest }
        #expect(delivered.map(\.value) == (0..<10).map { Data([UInt8($0)]) })
        let offsets = delivered.map { start.duration(to: $0.time) }
        let expected: [Duration] =
            Array(repeating: .milliseconds(30), count: 4)
            + Array(repeating: .milliseconds(60), count: 4) + Array(repeating: .milliseconds(90), count: 2)
        #expect(offsets == expected)
    }

    @Test("Writes without response on a fast bridge with an unlimited queue reach the peripheral at once")
    func unlimitedWritesFast() async throws {
        let bridge = MockBLEBridge()
        let (_, central, value) = try await Self.writeLink(bridge: bridge, queue: .unlimited)
        for byte in UInt8(0)..<10 { try await central.writeValue(Data([byte]), for: value, type: .withoutResponse) }
        #expect(await bridge.log.filter { $0.kind == .writeRequest }.count == 10)
    }

    // MARK: The peripheral's update queue

    /// A peripheral with an update queue and one subscribed central.
    static func updateLink(bridge: MockBLEBridge, queue: QueueBehavior) async throws
        -> (MockPeripheralManager, LocalCharacteristic, MockCentralManager)
    {
        let (peripheral, service) = try await Realistic.advertisingPeripheral(
            on: bridge, configuration: .init(name: "Sensor", updateQueue: queue))
        let (central, characteristics) = try await Realistic.connectedCentral(to: peripheral, on: bridge)
        try await central.setNotifyValue(true, for: try #require(characteristics.first { $0.uuid == RigUUID.value }))
        return (peripheral, try #require(service.characteristic(RigUUID.value)), central)
    }

    @Test(
        "An update queue of 2 refuses the third update, delivers the two at the next connection event, then says ready")
    func updateQueueRealistic() async throws {
        let bridge = Realistic.steadyBridge()
        let (peripheral, characteristic, central) = try await Self.updateLink(
            bridge: bridge, queue: .realistic(capacity: 2))
        let centralEvents = central.events()
        let peripheralEvents = peripheral.events()
        let start = await bridge.now
        #expect(try await peripheral.updateValue(Data([1]), for: characteristic, onSubscribedCentrals: nil))
        #expect(try await peripheral.updateValue(Data([2]), for: characteristic, onSubscribedCentrals: nil))
        #expect(try await !peripheral.updateValue(Data([3]), for: characteristic, onSubscribedCentrals: nil))
        let refused = await bridge.log.last { $0.kind == .notification }
        #expect(refused?.central == nil)
        #expect(refused?.detail == "transmit queue full: updateValue returned false")
        await bridge.advance(by: .milliseconds(29))
        #expect(await bridge.log.filter { $0.kind == .notification && $0.central != nil }.isEmpty)
        await bridge.advance(by: .milliseconds(1))
        let delivered = await bridge.log.filter { $0.kind == .notification && $0.central != nil }
        #expect(delivered.map(\.value) == [Data([1]), Data([2])])
        #expect(delivered.map(\.time) == Array(repeating: start.advanced(by: .milliseconds(30)), count: 2))
        #expect(await peripheralEvents.prefixArray(1) == [.readyToUpdateSubscribers])
        // Ready again: the next update is accepted and arrives one connection event later.
        #expect(try await peripheral.updateValue(Data([4]), for: characteristic, onSubscribedCentrals: nil))
        await bridge.advance(by: .milliseconds(30))
        _ = await bridge.finish()
        #expect(await Realistic.drain(centralEvents).updatedValues == [Data([1]), Data([2]), Data([4])])
        let last = await bridge.log.last { $0.kind == .notification && $0.central != nil }
        #expect(last?.time == start.advanced(by: .milliseconds(60)))
    }

    @Test("An update queue of 2 on a fast bridge refuses the third update until run() drains it")
    func updateQueueFast() async throws {
        let bridge = MockBLEBridge()
        let (peripheral, characteristic, central) = try await Self.updateLink(
            bridge: bridge, queue: .realistic(capacity: 2))
        let centralEvents = central.events()
        let peripheralEvents = peripheral.events()
        #expect(try await peripheral.updateValue(Data([1]), for: characteristic, onSubscribedCentrals: nil))
        #expect(try await peripheral.updateValue(Data([2]), for: characteristic, onSubscribedCentrals: nil))
        #expect(try await !peripheral.updateValue(Data([3]), for: characteristic, onSubscribedCentrals: nil))
        await bridge.run()
        #expect(await peripheralEvents.prefixArray(1) == [.readyToUpdateSubscribers])
        #expect(try await peripheral.updateValue(Data([5]), for: characteristic, onSubscribedCentrals: nil))
        await bridge.run()
        _ = await bridge.finish()
        #expect(await Realistic.drain(centralEvents).updatedValues == [Data([1]), Data([2]), Data([5])])
    }

    @Test("An unlimited update queue on a realistic bridge sends 4 notifications per connection event")
    func unlimitedUpdatesPaced() async throws {
        let bridge = Realistic.steadyBridge()
        let (peripheral, characteristic, _) = try await Self.updateLink(bridge: bridge, queue: .unlimited)
        let start = await bridge.now
        for byte in UInt8(0)..<6 {
            #expect(try await peripheral.updateValue(Data([byte]), for: characteristic, onSubscribedCentrals: nil))
        }
        await bridge.advance(by: .milliseconds(100))
        let delivered = await bridge.log.filter { $0.kind == .notification && $0.central != nil }
        #expect(delivered.map(\.value) == (0..<6).map { Data([UInt8($0)]) })
        #expect(
            delivered.map { start.duration(to: $0.time) } == [30, 30, 30, 30, 60, 60].map { Duration.milliseconds($0) })
    }
}
