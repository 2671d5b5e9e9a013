import BLECore
import BLEMockKit
import Foundation
import Testing

@Suite("GATT conversation", .timeLimit(.minutes(10)))
struct GATTConversationTests {
    @Test("Discovery finds services by filter, included services, characteristics and descriptors")
    func discovery() async throws {
        let bridge = MockBLEBridge()
        let peripheral = MockPeripheralManager(bridge: bridge)
        _ = try await peripheral.add(
            GATTService(
                uuid: "180F", isPrimary: false,
                characteristics: [
                    GATTCharacteristic(uuid: "2A19", properties: .read, permissions: .readable, value: Data([99]))
                ]))
        _ = try await peripheral.add(TestPeripherals.heartRate)
        _ = try await peripheral.add(GATTService(uuid: "1812", includedServices: ["180F"]))
        try await peripheral.startAdvertising(AdvertisementData(serviceUUIDs: ["180D"]))
        let central = MockCentralManager(bridge: bridge)
        try await central.scanForPeripherals(withServices: nil)
        try await central.connect(peripheral.identifier)

        let all = try await central.discoverServices(nil, for: peripheral.identifier)
        #expect(all.map(\.uuid) == ["180D", "1812"])  // the secondary service is not primary-discoverable
        #expect(try await central.discoverServices(["1812"], for: peripheral.identifier).map(\.uuid) == ["1812"])
        let included = try await central.discoverIncludedServices(nil, for: all[1])
        #expect(included.map(\.uuid) == ["180F"])
        #expect(included[0].isPrimary == false)
        let battery = try await central.discoverCharacteristics(nil, for: included[0])
        #expect(try await central.readValue(for: battery[0]) == Data([99]))

        let characteristics = try await central.discoverCharacteristics(nil, for: all[0])
        #expect(
            characteristics.map(\.uuid) == [
                TestPeripherals.measurement, TestPeripherals.bodyLocation, TestPeripherals.controlPoint,
            ])
        #expect(try await central.discoverCharacteristics(["2A39"], for: all[0]).map(\.uuid) == ["2A39"])
        #expect(characteristics[0].properties == [.notify, .read])
        let measurementDescriptors = try await central.discoverDescriptors(for: characteristics[0])
        #expect(measurementDescriptors.map(\.uuid) == [.clientCharacteristicConfiguration])
        let controlDescriptors = try await central.discoverDescriptors(for: characteristics[2])
        #expect(controlDescriptors.map(\.uuid) == [.characteristicUserDescription])
        #expect(try await central.readValue(for: controlDescriptors[0]) == Data("Control Point".utf8))
        #expect(await central.services(of: peripheral.identifier).map(\.uuid) == ["180D", "1812"])
        #expect(await central.characteristics(of: all[0]) == characteristics)
    }

    @Test(
        "discoverAll makes the same exchanges, logs and timing as discovering each service, characteristic and descriptor in turn",
        arguments: [false, true])
    func discoverAllMatchesTheCallsOneByOne(realistic: Bool) async throws {
        func connectedPair() async throws -> (MockBLEBridge, MockCentralManager, UUID) {
            let bridge = MockBLEBridge(configuration: realistic ? .realistic(seed: 7) : .fast)
            let peripheral = MockPeripheralManager(bridge: bridge)
            _ = try await peripheral.add(TestPeripherals.heartRate)
            _ = try await peripheral.add(GATTService(uuid: "1812", includedServices: ["180D"]))
            try await peripheral.startAdvertising(AdvertisementData(serviceUUIDs: ["180D"]))
            let central = MockCentralManager(bridge: bridge)
            try await central.scanForPeripherals(withServices: nil)
            await bridge.advance(by: .seconds(1))  // a realistic scan hears the first advertisement
            try await central.connect(peripheral.identifier)
            await central.stopScan()
            return (bridge, central, peripheral.identifier)
        }
        let (allBridge, allCentral, allPeripheral) = try await connectedPair()
        // Through the protocol, as generic app code calls it.
        let manager: any CentralManaging = allCentral
        let found = try await manager.discoverAll(for: allPeripheral)

        let (oneBridge, oneCentral, onePeripheral) = try await connectedPair()
        var expected: [RemoteCharacteristic] = []
        for service in try await oneCentral.discoverServices(nil, for: onePeripheral) {
            for characteristic in try await oneCentral.discoverCharacteristics(nil, for: service) {
                _ = try await oneCentral.discoverDescriptors(for: characteristic)
                expected.append(characteristic)
            }
        }

        #expect(found == expected)
        #expect(
            found.map(\.uuid) == [
                TestPeripherals.measurement, TestPeripherals.bodyLocation, TestPeripherals.controlPoint,
            ])
        #expect(await allBridge.log == oneBridge.log)
        #expect(await allBridge.now == oneBridge.now)
        #expect(await allBridge.attPDUCount == oneBridge.attPDUCount)
        #expect(await allBridge.log.filter { $0.kind == .descriptorsDiscovered }.count == 3)
    }

    /// On a realistic link, discovering services by UUID costs a Find By Type Value procedure
    /// for each UUID: four PDUs for a UUID found once, two for one not found, each UUID once;
    /// and the characteristics of a service with nothing after its declaration cost a request
    /// and its "attribute not found". (It cost two PDUs for any filter, and none for the empty
    /// service.)
    @Test func discoveringServicesByUUIDCostsAFindByTypeValueProcedureForEachUUID() async throws {
        let bridge = MockBLEBridge(configuration: .realistic(seed: 7))
        let peripheral = MockPeripheralManager(bridge: bridge)
        _ = try await peripheral.add(TestPeripherals.heartRate)
        _ = try await peripheral.add(GATTService(uuid: "1812"))
        try await peripheral.startAdvertising(AdvertisementData(serviceUUIDs: ["180D"]))
        let central = MockCentralManager(bridge: bridge)
        try await central.scanForPeripherals(withServices: nil)
        await bridge.advance(by: .seconds(1))
        try await central.connect(peripheral.identifier)
        await central.stopScan()
        var before = await bridge.attPDUCount
        let found = try await central.discoverServices(["180D", "1812", "FFF0", "180D"], for: peripheral.identifier)
        #expect(found.map(\.uuid) == ["180D", "1812"])
        #expect(await bridge.attPDUCount - before == 10)
        before = await bridge.attPDUCount
        #expect(try await central.discoverCharacteristics(nil, for: found[1]).isEmpty)
        #expect(await bridge.attPDUCount - before == 2)
    }

    @Test("Two services with the same characteristic UUID are told apart by handle")
    func sameCharacteristicInTwoServices() async throws {
        let bridge = MockBLEBridge()
        let peripheral = MockPeripheralManager(bridge: bridge)
        let first = try await peripheral.add(
            GATTService(
                uuid: "AAA1",
                characteristics: [
                    GATTCharacteristic(uuid: "2A19", properties: .read, permissions: .readable, value: Data([1]))
                ]))
        let second = try await peripheral.add(
            GATTService(
                uuid: "AAA2",
                characteristics: [
                    GATTCharacteristic(uuid: "2A19", properties: .read, permissions: .readable, value: Data([2]))
                ]))
        try await peripheral.startAdvertising(AdvertisementData())
        let central = MockCentralManager(bridge: bridge)
        try await central.scanForPeripherals(withServices: nil)
        try await central.connect(peripheral.identifier)
        let characteristics = try await central.discoverAll(for: peripheral.identifier)
        #expect(characteristics.count == 2)
        #expect(characteristics[0] != characteristics[1])
        #expect(try await central.readValue(for: characteristics[0]) == Data([1]))
        #expect(try await central.readValue(for: characteristics[1]) == Data([2]))
        let inSecond = try await central.characteristic("2A19", service: "AAA2", of: peripheral.identifier)
        #expect(inSecond.handle == second.characteristics[0].handle)
        #expect(inSecond.handle != first.characteristics[0].handle)
    }

    @Test("Writes with and without response reach the peripheral and change the value")
    func writes() async throws {
        let bridge = MockBLEBridge()
        let (peripheral, service) = try await TestPeripherals.advertisingHeartRate(on: bridge)
        let (central, characteristics) = try await TestPeripherals.connectedCentral(to: peripheral, on: bridge)
        let control = characteristics[2]
        try await central.writeValue(Data([0x01]), for: control, type: .withResponse)
        try await central.writeValue(Data([0x02, 0x03]), for: control, type: .withoutResponse)
        #expect(await central.canSendWriteWithoutResponse(to: peripheral.identifier))
        let writes = await bridge.log.filter { $0.kind == .write }
        #expect(writes.map(\.value) == [Data([0x01]), Data([0x02, 0x03])])
        #expect(writes.map(\.writeType) == [.withResponse, .withoutResponse])
        #expect(writes.allSatisfy { $0.handle == service.characteristics[2].handle && $0.succeeded })
    }

    @Test("A write without response longer than ATT_MTU − 3 is truncated and the truncation logged")
    func writeWithoutResponseTruncation() async throws {
        let bridge = MockBLEBridge()
        let (peripheral, _) = try await TestPeripherals.advertisingHeartRate(on: bridge)
        let (central, characteristics) = try await TestPeripherals.connectedCentral(
            to: peripheral, on: bridge, configuration: .init(mtu: .fixed(23)))
        try await central.writeValue(Data(0..<30), for: characteristics[2], type: .withoutResponse)
        let log = await bridge.log
        let truncation = try #require(log.first { $0.kind == .truncated })
        #expect(truncation.detail == "write without response of 30 bytes cut to 20 (ATT_MTU 23 - 3)")
        #expect(log.last { $0.kind == .write }?.value == Data(0..<20))
    }

    @Test("Notifications reach every subscribed central, and each central's subscription is its own")
    func perCentralSubscriptions() async throws {
        let bridge = MockBLEBridge()
        let (peripheral, service) = try await TestPeripherals.advertisingHeartRate(on: bridge)
        let (first, firstCharacteristics) = try await TestPeripherals.connectedCentral(to: peripheral, on: bridge)
        let (second, secondCharacteristics) = try await TestPeripherals.connectedCentral(to: peripheral, on: bridge)
        try await first.setNotifyValue(true, for: firstCharacteristics[0])
        try await second.setNotifyValue(true, for: secondCharacteristics[0])
        let firstEvents = first.events()
        let secondEvents = second.events()
        let measurement = service.characteristics[0]
        #expect(
            await peripheral.subscribedCentrals(for: measurement).map(\.identifier).sorted {
                $0.uuidString < $1.uuidString
            }
                == [first.identifier, second.identifier].sorted { $0.uuidString < $1.uuidString })

        #expect(try await peripheral.updateValue(Data([0x06, 0x48]), for: measurement))
        try await second.setNotifyValue(false, for: secondCharacteristics[0])
        #expect(try await peripheral.updateValue(Data([0x06, 0x49]), for: measurement))
        #expect(await peripheral.subscribedCentrals(for: measurement).map(\.identifier) == [first.identifier])

        #expect(
            await firstEvents.prefixArray(2) == [
                .valueUpdated(firstCharacteristics[0], Data([0x06, 0x48])),
                .valueUpdated(firstCharacteristics[0], Data([0x06, 0x49])),
            ])
        #expect(await secondEvents.prefixArray(1) == [.valueUpdated(secondCharacteristics[0], Data([0x06, 0x48]))])
        _ = await bridge.finish()
        #expect(await secondEvents.prefixArray(1).isEmpty)
    }

    @Test("An update can target some subscribed centrals only")
    func targetedUpdate() async throws {
        let bridge = MockBLEBridge()
        let (peripheral, service) = try await TestPeripherals.advertisingHeartRate(on: bridge)
        let (first, firstCharacteristics) = try await TestPeripherals.connectedCentral(to: peripheral, on: bridge)
        let (second, secondCharacteristics) = try await TestPeripherals.connectedCentral(to: peripheral, on: bridge)
        try await first.setNotifyValue(true, for: firstCharacteristics[0])
        try await second.setNotifyValue(true, for: secondCharacteristics[0])
        _ = try await peripheral.updateValue(
            Data([1]), for: service.characteristics[0], onSubscribedCentrals: [second.identifier])
        let notified = await bridge.log.filter { $0.kind == .notification }.map(\.central)
        #expect(notified == [second.identifier])
    }

    @Test("A notification longer than the central's maximum update length is truncated and logged")
    func notificationTruncation() async throws {
        let bridge = MockBLEBridge()
        let (peripheral, service) = try await TestPeripherals.advertisingHeartRate(on: bridge)
        let (central, characteristics) = try await TestPeripherals.connectedCentral(
            to: peripheral, on: bridge, configuration: .init(mtu: .fixed(23)))
        try await central.setNotifyValue(true, for: characteristics[0])
        let events = central.events()
        _ = try await peripheral.updateValue(Data(0..<40), for: service.characteristics[0])
        #expect(await events.prefixArray(1) == [.valueUpdated(characteristics[0], Data(0..<20))])
        #expect(
            await bridge.log.contains { $0.kind == .truncated && $0.detail == "notification of 40 bytes cut to 20" })
    }

    @Test("Indications are sent to centrals subscribed to an indicate-only characteristic")
    func indications() async throws {
        let bridge = MockBLEBridge()
        let peripheral = MockPeripheralManager(bridge: bridge)
        let service = try await peripheral.add(
            GATTService(
                uuid: "1810",
                characteristics: [
                    GATTCharacteristic(uuid: "2A35", properties: .indicate, permissions: [])
                ]))
        try await peripheral.startAdvertising(AdvertisementData())
        let central = MockCentralManager(bridge: bridge)
        try await central.scanForPeripherals(withServices: nil)
        try await central.connect(peripheral.identifier)
        let characteristic = try await central.discoverAll(for: peripheral.identifier)[0]
        try await central.setNotifyValue(true, for: characteristic)
        let descriptor = try await central.discoverDescriptors(for: characteristic)[0]
        #expect(try await central.readValue(for: descriptor) == Data([0x02, 0x00]))
        _ = try await peripheral.updateValue(Data([7]), for: service.characteristics[0])
        #expect(await bridge.log.last?.kind == .indication)
        try await central.setNotifyValue(false, for: characteristic)
        #expect(try await central.readValue(for: descriptor) == Data([0x00, 0x00]))
    }

    @Test("Every events() call is its own stream that sees every later event")
    func broadcastStreams() async throws {
        let bridge = MockBLEBridge()
        let (peripheral, _) = try await TestPeripherals.advertisingHeartRate(on: bridge)
        let central = MockCentralManager(bridge: bridge)
        let one = central.events()
        let two = central.events()
        try await central.scanForPeripherals(withServices: nil)
        try await central.connect(peripheral.identifier)
        let three = central.events()  // created after both events: sees neither
        _ = await bridge.finish()
        let first = await one.prefixArray(5)
        // The new manager's state once it joins, the discovery, the connection.
        #expect(first.count == 3)
        #expect(first.first == .stateChanged(.poweredOn))
        #expect(await two.prefixArray(5) == first)
        #expect(await three.prefixArray(5).isEmpty)
    }

    @Test("Removing a service invalidates the centrals' copies and tells them")
    func serviceRemoval() async throws {
        let bridge = MockBLEBridge()
        let (peripheral, service) = try await TestPeripherals.advertisingHeartRate(on: bridge)
        let (central, characteristics) = try await TestPeripherals.connectedCentral(to: peripheral, on: bridge)
        let events = central.events()
        let discovered = await central.services(of: peripheral.identifier)
        try await peripheral.remove(service)
        #expect(
            await events.prefixArray(1) == [
                .servicesModified(
                    RemotePeripheral(identifier: peripheral.identifier, name: "HRM-1"), invalidated: discovered)
            ])
        #expect(await central.services(of: peripheral.identifier).isEmpty)
        await #expect(throws: CoreBluetoothError(.invalidHandle)) {
            try await central.readValue(for: characteristics[1])
        }
    }

    @Test("Removing all services empties the database, unsubscribes the centrals and invalidates every copy at once")
    func removeAllServices() async throws {
        let bridge = MockBLEBridge()
        let (peripheral, heartRate) = try await TestPeripherals.advertisingHeartRate(on: bridge)
        let batteryService = GATTService(
            uuid: "180F",
            characteristics: [GATTCharacteristic(uuid: "2A19", properties: [.read, .notify], permissions: .readable)])
        let battery = try await peripheral.add(batteryService)
        let (central, characteristics) = try await TestPeripherals.connectedCentral(to: peripheral, on: bridge)
        try await central.setNotifyValue(true, for: characteristics[0])
        #expect(await peripheral.subscribedCentrals(for: heartRate.characteristics[0]).count == 1)
        let events = central.events()
        let discovered = await central.services(of: peripheral.identifier)
        #expect(discovered.map(\.uuid) == ["180D", "180F"])
        await peripheral.removeAllServices()
        #expect(await peripheral.services.isEmpty)
        #expect(
            await events.prefixArray(1) == [
                .servicesModified(
                    RemotePeripheral(identifier: peripheral.identifier, name: "HRM-1"), invalidated: discovered)
            ])
        #expect(await central.services(of: peripheral.identifier).isEmpty)
        #expect(await peripheral.subscribedCentrals(for: heartRate.characteristics[0]).isEmpty)
        await #expect(throws: CoreBluetoothError(.invalidHandle)) {
            try await central.readValue(for: characteristics[1])
        }
        let removed = await bridge.log.filter { $0.kind == .serviceRemoved }
        #expect(removed.map(\.attribute) == ["180D", "180F"])
        #expect(removed.map(\.handle) == [heartRate.handle, battery.handle])
        // The link stays up, and a service added afterwards is discovered afresh.
        #expect(await central.isConnected(peripheral.identifier))
        _ = try await peripheral.add(batteryService)
        let again = try await central.discoverServices(nil, for: peripheral.identifier)
        #expect(again.map(\.uuid) == ["180F"])
        // Removing all services of an empty database changes nothing.
        await peripheral.removeAllServices()
        await peripheral.removeAllServices()
        #expect(await bridge.log.filter { $0.kind == .serviceRemoved }.count == 3)
    }
}
