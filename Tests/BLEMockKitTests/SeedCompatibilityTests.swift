import BLECore
import BLEMockKit
import Foundation
import Testing

/// The seed documents' example tests, ported to this kit's API.
@Suite("Seed examples", .timeLimit(.minutes(10)))
struct SeedCompatibilityTests {
    @Test("Existing tests work unchanged: a default mock is instantly powered on")
    func backwardCompatibility() async throws {
        let mock = MockCentralManager()
        #expect(await mock.waitForPoweredOn() == .poweredOn)
        #expect(await mock.state == .poweredOn)
        let peripheral = MockPeripheralManager(bridge: mock.bridge)
        try await peripheral.startAdvertising(AdvertisementData(localName: "Test"))
        try await mock.scanForPeripherals(withServices: nil)
        try await mock.connect(peripheral.identifier, timeout: .seconds(1))
        #expect(await mock.isConnected(peripheral.identifier))
        #expect(await mock.bridge.now == .zero)
    }

    @Test("Basic workflow: scan, connect, discover, read a dynamic characteristic")
    func basicWorkflow() async throws {
        let bridge = MockBLEBridge()
        let peripheral = MockPeripheralManager(bridge: bridge)
        let service = try await peripheral.add(
            GATTService(
                uuid: "1234",
                characteristics: [
                    GATTCharacteristic(
                        uuid: "5678", properties: [.read, .write, .notify], permissions: [.readable, .writeable])
                ]))
        try await peripheral.setValue(Data("hello".utf8), for: service.characteristics[0])
        try await peripheral.startAdvertising(AdvertisementData(localName: "TestDevice", serviceUUIDs: ["1234"]))

        let central = MockCentralManager(bridge: bridge)
        #expect(await central.waitForPoweredOn() == .poweredOn)
        var events = central.events().makeAsyncIterator()
        try await central.scanForPeripherals(withServices: ["1234"])
        guard case .discovered(let discovery) = await events.next() else {
            Issue.record("expected a discovery")
            return
        }
        #expect(discovery.advertisementData.localName == "TestDevice")
        try await central.connect(discovery.identifier)
        #expect(await events.next() == .connected(discovery.peripheral))
        let services = try await central.discoverServices(["1234"], for: discovery.identifier)
        let characteristics = try await central.discoverCharacteristics(nil, for: services[0])
        #expect(try await central.readValue(for: characteristics[0]) == Data("hello".utf8))
    }

    @Test("Allow duplicates: one peripheral is reported at every advertisement")
    func scanWithAllowDuplicates() async throws {
        let bridge = MockBLEBridge()
        let peripheral = MockPeripheralManager(
            configuration: .init(advertisingInterval: .milliseconds(100)), bridge: bridge)
        try await peripheral.startAdvertising(AdvertisementData(localName: "Dup"))
        let central = MockCentralManager(bridge: bridge)
        let events = central.events()
        try await central.scanForPeripherals(withServices: nil, options: ScanOptions(allowDuplicates: true))
        await bridge.advance(by: .milliseconds(200))
        await central.stopScan()
        _ = await bridge.finish()
        let discoveries = await events.prefixArray(10).compactMap { event -> UUID? in
            if case .discovered(let discovery) = event { return discovery.identifier }
            return nil
        }
        #expect(discoveries.count == 3)  // at 0, 100 and 200 ms
        #expect(Set(discoveries) == [peripheral.identifier])
    }

    @Test("Without duplicates a peripheral is reported once however long the scan")
    func scanWithoutDuplicates() async throws {
        let bridge = MockBLEBridge()
        let peripheral = MockPeripheralManager(bridge: bridge)
        try await peripheral.startAdvertising(AdvertisementData(localName: "Once"))
        let central = MockCentralManager(bridge: bridge)
        try await central.scanForPeripherals(withServices: nil)
        await bridge.advance(by: .seconds(5))
        let discoveries = await bridge.log.filter { $0.kind == .discovered }
        #expect(discoveries.count == 1)
        #expect(discoveries.first?.peripheral == peripheral.identifier)
    }

    @Test("Bidirectional disconnect: the peripheral sees the central unsubscribe")
    func bidirectionalDisconnect() async throws {
        let bridge = MockBLEBridge()
        let (peripheral, service) = try await TestPeripherals.advertisingHeartRate(on: bridge)
        let peripheralEvents = peripheral.events()
        let (central, characteristics) = try await TestPeripherals.connectedCentral(to: peripheral, on: bridge)
        let measurement = try #require(characteristics.first { $0.uuid == TestPeripherals.measurement })
        try await central.setNotifyValue(true, for: measurement)
        try await central.cancelPeripheralConnection(peripheral.identifier)

        let events = await peripheralEvents.prefixArray(2)
        let remoteCentral = RemoteCentral(identifier: central.identifier, maximumUpdateValueLength: 512)
        #expect(
            events == [
                .subscribed(remoteCentral, service.characteristics[0]),
                .unsubscribed(remoteCentral, service.characteristics[0]),
            ])
        #expect(await peripheral.subscribedCentrals(for: service.characteristics[0]).isEmpty)
        #expect(await !central.isConnected(peripheral.identifier))
    }
}
