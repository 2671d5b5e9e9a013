import BLECore
import BLEMockKit
import Foundation
import Transport

/// A fresh bridge with a peripheral that publishes one message characteristic (written by
/// centrals, notifying them) with manual request handling, as an app's own GATT server.
struct MessagingFixture {
    static let serviceUUID: BluetoothUUID = "FFF0"
    static let characteristicUUID: BluetoothUUID = "FFF1"
    /// The message sizes every round trip covers.
    static let sizes = [0, 1, 19, 20, 100, 1_000, 10_000]

    let bridge: MockBLEBridge
    let peripheral: MockPeripheralManager
    let characteristic: LocalCharacteristic

    /// Publishes the characteristic and starts advertising.
    init(properties: CharacteristicProperties = [.write, .writeWithoutResponse, .notify]) async throws {
        bridge = MockBLEBridge()
        peripheral = MockPeripheralManager(
            configuration: .init(name: "Messenger", requestHandling: .manual), bridge: bridge)
        let service = try await peripheral.add(
            GATTService(
                uuid: Self.serviceUUID,
                characteristics: [
                    GATTCharacteristic(uuid: Self.characteristicUUID, properties: properties, permissions: .writeable)
                ]))
        characteristic = service.characteristics[0]
        try await peripheral.startAdvertising(
            AdvertisementData(localName: "Messenger", serviceUUIDs: [Self.serviceUUID]))
    }

    /// A central asking for `mtu`, connected, with the characteristic discovered and
    /// subscribed to.
    func connectCentral(mtu: Int = 517) async throws -> (MockCentralManager, RemoteCharacteristic) {
        let central = MockCentralManager(configuration: .init(mtu: .fixed(mtu)), bridge: bridge)
        try await central.scanForPeripherals(withServices: [Self.serviceUUID])
        await central.stopScan()
        try await central.connect(peripheral.identifier)
        try await central.discoverAll(for: peripheral.identifier)
        let remote = try await central.characteristic(Self.characteristicUUID, of: peripheral.identifier)
        try await central.setNotifyValue(true, for: remote)
        return (central, remote)
    }

    /// A channel on the peripheral's side, timed by the bridge's clock.
    func peripheralChannel(
        configuration: TransportConfiguration = TransportConfiguration()
    ) async -> PeripheralMessageChannel<VirtualClock> {
        await PeripheralMessageChannel(
            peripheral: peripheral, characteristic: characteristic, configuration: configuration, clock: bridge.clock)
    }

    /// A channel on a central's side, timed by the bridge's clock.
    func centralChannel(
        _ central: MockCentralManager, _ remote: RemoteCharacteristic, writeType: WriteType = .withoutResponse,
        configuration: TransportConfiguration = TransportConfiguration()
    ) async -> CentralMessageChannel<VirtualClock> {
        await CentralMessageChannel(
            central: central, characteristic: remote, writeType: writeType, configuration: configuration,
            clock: bridge.clock)
    }

    /// A manual peripheral on `bridge` that publishes the message characteristic for write
    /// commands and notifications, with the given update queue, and advertises it.
    static func commandPeripheral(on bridge: MockBLEBridge, updateQueue: QueueBehavior) async throws -> (
        MockPeripheralManager, LocalCharacteristic
    ) {
        let peripheral = MockPeripheralManager(
            configuration: .init(name: "Messenger", updateQueue: updateQueue, requestHandling: .manual), bridge: bridge)
        let service = try await peripheral.add(
            GATTService(
                uuid: serviceUUID,
                characteristics: [
                    GATTCharacteristic(
                        uuid: characteristicUUID, properties: [.writeWithoutResponse, .notify], permissions: .writeable)
                ]))
        try await peripheral.startAdvertising(AdvertisementData(localName: "Messenger", serviceUUIDs: [serviceUUID]))
        return (peripheral, service.characteristics[0])
    }

    /// A command peripheral (with `updateQueue`) and a central (with `configuration`) on
    /// `bridge`: the central scans until it hears the peripheral (so a run drives it), connects,
    /// discovers and subscribes; a message channel at each end.
    static func connectedChannels(
        on bridge: MockBLEBridge, updateQueue: QueueBehavior, central configuration: MockCentralManager.Configuration
    ) async throws -> (
        central: CentralMessageChannel<VirtualClock>, peripheral: PeripheralMessageChannel<VirtualClock>,
        manager: MockCentralManager, remote: RemoteCharacteristic
    ) {
        let (peripheral, characteristic) = try await commandPeripheral(on: bridge, updateQueue: updateQueue)
        let central = MockCentralManager(configuration: configuration, bridge: bridge)
        var events = central.events().makeAsyncIterator()
        try await central.scanForPeripherals(withServices: [serviceUUID])
        while let event = await events.next() {
            if case .discovered = event { break }
        }
        await central.stopScan()
        try await central.connect(peripheral.identifier)
        let remote = try await central.discoverAll(for: peripheral.identifier)[0]
        try await central.setNotifyValue(true, for: remote)
        let centralChannel = await CentralMessageChannel(central: central, characteristic: remote, clock: bridge.clock)
        let peripheralChannel = await PeripheralMessageChannel(
            peripheral: peripheral, characteristic: characteristic, clock: bridge.clock)
        return (centralChannel, peripheralChannel, central, remote)
    }

    /// A deterministic message of `size` bytes, different for each `salt`.
    static func message(size: Int, salt: UInt8 = 0) -> [UInt8] {
        (0..<size).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 8 &+ Int(salt) &* 7) }
    }
}

extension AsyncStream {
    /// The next `count` elements (fewer if the stream ends first).
    func next(_ count: Int) async -> [Element] {
        var result: [Element] = []
        guard count > 0 else { return result }
        for await element in self {
            result.append(element)
            if result.count == count { break }
        }
        return result
    }

    /// Every remaining element, once the stream has finished.
    func remaining() async -> [Element] {
        var result: [Element] = []
        for await element in self { result.append(element) }
        return result
    }
}
