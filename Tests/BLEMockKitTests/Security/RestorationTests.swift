import BLECore
import BLEMockKit
import Foundation
import Testing

@Suite("State restoration", .timeLimit(.minutes(10)))
struct RestorationTests {
    static func sensor(on bridge: MockBLEBridge, restoreIdentifier: String? = nil) async throws -> MockPeripheralManager
    {
        let sensor = MockPeripheralManager(configuration: .init(restoreIdentifier: restoreIdentifier), bridge: bridge)
        _ = try await sensor.add(
            GATTService(
                uuid: "180D",
                characteristics: [
                    GATTCharacteristic(uuid: "2A38", properties: .read, permissions: .readable, value: Data([1]))
                ]))
        try await sensor.startAdvertising(AdvertisementData(localName: "HRM", serviceUUIDs: ["180D"]))
        return sensor
    }

    @Test func aRelaunchedCentralGetsItsLinksScanAndDiscoveredAttributesBack() async throws {
        let bridge = MockBLEBridge()
        let sensor = try await Self.sensor(on: bridge)
        let first = MockCentralManager(configuration: .init(restoreIdentifier: "app.central"), bridge: bridge)
        let options = ScanOptions(allowDuplicates: true)
        try await first.scanForPeripherals(withServices: ["180D"], options: options)
        try await first.connect(sensor.identifier)
        let location = try await first.discoverAll(for: sensor.identifier)[0]
        let firstEvents = first.events()

        await first.simulateAppTermination()
        #expect(await firstEvents.prefixArray(10).isEmpty)  // the old manager's streams ended
        #expect(await sensor.subscribedCentrals(for: sensor.services[0].characteristics[0]).isEmpty)

        let relaunched = MockCentralManager(configuration: .init(restoreIdentifier: "app.central"), bridge: bridge)
        #expect(relaunched.identifier == first.identifier)
        let events = relaunched.events()
        #expect(await relaunched.waitForPoweredOn() == .poweredOn)
        let expected = RestoredCentralState(
            peripherals: [RemotePeripheral(identifier: sensor.identifier, name: "HRM")], scanServices: ["180D"],
            scanOptions: options)
        #expect(await events.prefixArray(1) == [.willRestoreState(expected)])
        #expect(await relaunched.restoredState == expected)
        #expect(await relaunched.isConnected(sensor.identifier))
        #expect(await relaunched.isScanning)
        // No rediscovery needed: the attributes discovered before are still known and usable.
        #expect(await relaunched.services(of: sensor.identifier).map(\.uuid) == ["180D"])
        #expect(try await relaunched.readValue(for: location) == Data([1]))
        #expect(await bridge.log.contains { $0.detail == "app terminated" })
        #expect(await bridge.log.contains { $0.detail == "restored" })
    }

    @Test func aPendingConnectionCompletesForTheRelaunchedApp() async throws {
        let bridge = MockBLEBridge()
        let sensor = try await Self.sensor(on: bridge)
        let first = MockCentralManager(configuration: .init(restoreIdentifier: "app"), bridge: bridge)
        try await first.scanForPeripherals(withServices: nil)
        await first.stopScan()
        await sensor.stopAdvertising()
        let attempt = Task { try await first.connect(sensor.identifier) }
        await bridge.waitUntil { !$0.pendingOperations.isEmpty }

        await first.simulateAppTermination()
        await #expect(throws: CoreBluetoothError(.operationCancelled)) { try await attempt.value }

        try await sensor.startAdvertising(AdvertisementData(localName: "HRM"))  // the system connects
        let relaunched = MockCentralManager(configuration: .init(restoreIdentifier: "app"), bridge: bridge)
        #expect(await relaunched.restoredState?.peripherals.map(\.identifier) == [sensor.identifier])
        #expect(await relaunched.restoredState?.scanServices == nil)
        #expect(await relaunched.isConnected(sensor.identifier))
    }

    @Test func withoutARestoreIdentifierTerminationShutsTheManagerDown() async throws {
        let bridge = MockBLEBridge()
        let sensor = try await Self.sensor(on: bridge)
        let central = MockCentralManager(bridge: bridge)
        try await central.scanForPeripherals(withServices: nil)
        try await central.connect(sensor.identifier)
        await central.simulateAppTermination()
        #expect(await !central.isConnected(sensor.identifier))
        #expect(await central.state == .unknown)
        let next = MockCentralManager(bridge: bridge)
        #expect(next.identifier != central.identifier)
        #expect(await next.restoredState == nil)
    }

    /// The terminated app's object shares its identifier with the central the system keeps for
    /// the next manager: it refuses every call, and nothing it is asked touches that central
    /// (a cancel through it used to drop the relaunched app's link).
    @Test func aCentralTerminatedWithARestoreIdentifierRefusesEveryCallAndLeavesItsSuccessorAlone() async throws {
        let bridge = MockBLEBridge()
        let sensor = try await Self.sensor(on: bridge)
        let first = MockCentralManager(configuration: .init(restoreIdentifier: "app"), bridge: bridge)
        try await first.scanForPeripherals(withServices: nil)
        try await first.connect(sensor.identifier)
        let location = try await first.discoverAll(for: sensor.identifier)[0]
        await first.simulateAppTermination()
        #expect(await first.state == .unknown)
        #expect(await !first.isConnected(sensor.identifier))
        #expect(await !first.canSendWriteWithoutResponse(to: sensor.identifier))
        let relaunched = MockCentralManager(configuration: .init(restoreIdentifier: "app"), bridge: bridge)
        #expect(await relaunched.waitForPoweredOn() == .poweredOn)
        #expect(await first.state == .unknown)
        #expect(await first.waitForPoweredOn() == .unknown)
        await #expect(throws: APIMisuseError.managerShutDown(operation: "cancelPeripheralConnection")) {
            try await first.cancelPeripheralConnection(sensor.identifier)
        }
        await #expect(throws: APIMisuseError.managerShutDown(operation: "readValue")) {
            try await first.readValue(for: location)
        }
        await #expect(throws: APIMisuseError.managerShutDown(operation: "connect")) {
            try await first.connect(sensor.identifier)
        }
        await #expect(throws: APIMisuseError.managerShutDown(operation: "openL2CAPChannel")) {
            try await first.openL2CAPChannel(0x80, on: sensor.identifier)
        }
        await first.shutDown()
        #expect(await relaunched.isConnected(sensor.identifier))
        #expect(try await relaunched.readValue(for: location) == Data([1]))
    }

    /// The same for a peripheral manager: the terminated app's object neither notifies, nor
    /// changes the services, advertising or requests the system keeps for the next manager.
    @Test func aPeripheralManagerTerminatedWithARestoreIdentifierRefusesEveryCallAndLeavesItsSuccessorAlone()
        async throws
    {
        let bridge = MockBLEBridge()
        let sensor = try await Self.sensor(on: bridge, restoreIdentifier: "app.peripheral")
        let local = try await sensor.add(
            GATTService(
                uuid: "180F",
                characteristics: [
                    GATTCharacteristic(uuid: "2A19", properties: [.read, .notify], permissions: .readable)
                ]))
        let central = MockCentralManager(bridge: bridge)
        try await central.scanForPeripherals(withServices: ["180D"])
        try await central.connect(sensor.identifier)
        let level = try #require(try await central.discoverAll(for: sensor.identifier).first { $0.uuid == "2A19" })
        try await central.setNotifyValue(true, for: level)
        await sensor.simulateAppTermination()
        let relaunched = MockPeripheralManager(
            configuration: .init(restoreIdentifier: "app.peripheral"), bridge: bridge)
        let services = await relaunched.services
        #expect(services.count == 2)
        #expect(await sensor.state == .unknown)
        #expect(await sensor.waitForPoweredOn() == .unknown)
        #expect(await sensor.services.isEmpty)
        await #expect(throws: APIMisuseError.managerShutDown(operation: "updateValue")) {
            try await sensor.updateValue(Data([9]), for: local.characteristics[0], onSubscribedCentrals: nil)
        }
        await #expect(throws: APIMisuseError.managerShutDown(operation: "remove")) { try await sensor.remove(local) }
        await #expect(throws: APIMisuseError.managerShutDown(operation: "setValue")) {
            try await sensor.setValue(Data([5]), for: local.characteristics[0])
        }
        await sensor.removeAllServices()
        await sensor.stopAdvertising()
        await sensor.simulateDisconnection(of: central.identifier)
        await sensor.shutDown()
        #expect(await relaunched.services == services)
        #expect(await relaunched.isAdvertising)
        #expect(await central.isConnected(sensor.identifier))
        #expect(await !bridge.log.contains { $0.kind == .notification && $0.value == Data([9]) })
    }

    @Test func anotherRestoreIdentifierRestoresNothing() async throws {
        let bridge = MockBLEBridge()
        let sensor = try await Self.sensor(on: bridge)
        let first = MockCentralManager(configuration: .init(restoreIdentifier: "a"), bridge: bridge)
        try await first.scanForPeripherals(withServices: nil)
        try await first.connect(sensor.identifier)
        await first.simulateAppTermination()
        let other = MockCentralManager(configuration: .init(restoreIdentifier: "b"), bridge: bridge)
        #expect(other.identifier != first.identifier)
        #expect(await other.restoredState == nil)
        #expect(await !other.isConnected(sensor.identifier))
    }

    @Test func aRelaunchedPeripheralManagerKeepsItsServicesAdvertisingAndLinks() async throws {
        let bridge = MockBLEBridge()
        let sensor = try await Self.sensor(on: bridge, restoreIdentifier: "app.peripheral")
        let central = MockCentralManager(bridge: bridge)
        try await central.scanForPeripherals(withServices: ["180D"])
        try await central.connect(sensor.identifier)
        let location = try await central.discoverAll(for: sensor.identifier)[0]
        let services = await sensor.services

        await sensor.simulateAppTermination()
        // The system keeps answering for the terminated app.
        #expect(try await central.readValue(for: location) == Data([1]))

        let relaunched = MockPeripheralManager(
            configuration: .init(restoreIdentifier: "app.peripheral"), bridge: bridge)
        #expect(relaunched.identifier == sensor.identifier)
        let events = relaunched.events()
        #expect(await relaunched.isAdvertising)
        let expected = RestoredPeripheralState(
            services: services, advertisement: AdvertisementData(localName: "HRM", serviceUUIDs: ["180D"]))
        #expect(await events.prefixArray(1) == [.willRestoreState(expected)])
        #expect(await relaunched.restoredState == expected)
        #expect(await relaunched.services == services)
        #expect(await central.isConnected(sensor.identifier))
    }

    @Test func aRealisticRelaunchSettlesItsStateAgain() async throws {
        let bridge = MockBLEBridge(configuration: .realistic(seed: 3))
        let sensor = try await Self.sensor(on: bridge)
        var configuration = MockCentralManager.Configuration.realistic(seed: 3)
        configuration.restoreIdentifier = "app"
        let first = MockCentralManager(configuration: configuration, bridge: bridge)
        _ = await first.waitForPoweredOn()
        try await first.scanForPeripherals(withServices: nil)
        await bridge.advance(by: .milliseconds(200))
        try await first.connect(sensor.identifier)
        await first.simulateAppTermination()

        let relaunched = MockCentralManager(configuration: configuration, bridge: bridge)
        #expect(await relaunched.state == .unknown)
        #expect(await relaunched.waitForPoweredOn() == .poweredOn)
        #expect(await relaunched.isConnected(sensor.identifier))
    }

    @Test(arguments: [false, true])
    func theTerminatedManagerShuttingDownLeavesWhatTheSystemKeptAlone(relaunchFirst: Bool) async throws {
        let bridge = MockBLEBridge()
        let sensor = try await Self.sensor(on: bridge, restoreIdentifier: "watch")
        let first = MockCentralManager(configuration: .init(restoreIdentifier: "phone"), bridge: bridge)
        try await first.scanForPeripherals(withServices: nil)
        try await first.connect(sensor.identifier)
        await first.simulateAppTermination()
        await sensor.simulateAppTermination()
        // The dead app's objects go, before or after the relaunched app's managers arrive (the
        // kit's CoreBluetooth-shaped managers shut theirs down as they are released).
        var relaunched: (MockCentralManager, MockPeripheralManager)?
        if relaunchFirst {
            relaunched = (
                MockCentralManager(configuration: .init(restoreIdentifier: "phone"), bridge: bridge),
                MockPeripheralManager(configuration: .init(restoreIdentifier: "watch"), bridge: bridge)
            )
            _ = await relaunched!.0.state
            _ = await relaunched!.1.state
        }
        await first.shutDown()
        await sensor.shutDown()
        if !relaunchFirst {
            relaunched = (
                MockCentralManager(configuration: .init(restoreIdentifier: "phone"), bridge: bridge),
                MockPeripheralManager(configuration: .init(restoreIdentifier: "watch"), bridge: bridge)
            )
        }
        let (central, peripheral) = try #require(relaunched)
        #expect(await central.waitForPoweredOn() == .poweredOn)
        #expect(await central.isConnected(sensor.identifier))
        #expect(await peripheral.isAdvertising)
        #expect(await peripheral.services.map(\.uuid) == ["180D"])
        #expect(await !bridge.log.contains { $0.detail == "shut down" || $0.kind == .disconnected })
    }

    @Test(arguments: [false, true])
    func eventsWhileTheAppIsTerminatedWaitForTheRelaunchedManagerInOrder(realistic: Bool) async throws {
        let bridge = MockBLEBridge(configuration: realistic ? .realistic(seed: 4) : .init(seed: 4))
        let sensor = MockPeripheralManager(bridge: bridge)
        let local = try await sensor.add(
            GATTService(
                uuid: "180D",
                characteristics: [GATTCharacteristic(uuid: "2A37", properties: .notify, permissions: .readable)]))
        try await sensor.startAdvertising(AdvertisementData(localName: "HRM", serviceUUIDs: ["180D"]))
        var setUp: MockCentralManager.Configuration = realistic ? .realistic(seed: 4) : .fast
        setUp.restoreIdentifier = "app"
        let configuration = setUp
        let first = MockCentralManager(configuration: configuration, bridge: bridge)
        let events = try await bridge.run { () -> [CentralEvent] in
            _ = await first.waitForPoweredOn()
            try await first.scanForPeripherals(withServices: ["180D"])
            await bridge.waitUntil { $0.log.contains { $0.kind == .discovered } }
            await first.stopScan()
            try await first.connect(sensor.identifier)
            let measurement = try await first.discoverAll(for: sensor.identifier)[0]
            try await first.setNotifyValue(true, for: measurement)
            await first.simulateAppTermination()
            _ = try await sensor.updateValue(Data([1]), for: local.characteristics[0])
            _ = try await sensor.updateValue(Data([2]), for: local.characteristics[0])
            try await bridge.clock.sleep(for: .seconds(1))
            let relaunched = MockCentralManager(configuration: configuration, bridge: bridge)
            var iterator = relaunched.events().makeAsyncIterator()
            var events: [CentralEvent] = []
            while events.filter({ if case .valueUpdated = $0 { true } else { false } }).count < 2,
                let event = await iterator.next()
            {
                events.append(event)
            }
            return events
        }
        let restored = RestoredCentralState(
            peripherals: [RemotePeripheral(identifier: sensor.identifier, name: "HRM")], scanServices: nil)
        let measurement = try #require(
            events.lazy.compactMap { event -> RemoteCharacteristic? in
                if case .valueUpdated(let characteristic, _) = event { characteristic } else { nil }
            }.first)
        // The restored state first, then (once powered on) what happened while the app was gone.
        #expect(
            events.filter { if case .stateChanged = $0 { false } else { true } } == [
                .willRestoreState(restored), .valueUpdated(measurement, Data([1])),
                .valueUpdated(measurement, Data([2])),
            ])
        if realistic {
            // (A realistic manager reports its state settling; the held events come after.)
            let poweredOn = try #require(events.firstIndex(of: .stateChanged(.poweredOn)))
            #expect(poweredOn < events.firstIndex(of: .valueUpdated(measurement, Data([1])))!)
        }
    }

    /// In fast mode outside a run nothing moves the schedule but the calls that need it: what
    /// was held for a relaunched app's manager reaches it as it joins, and what comes after
    /// reaches it as it happens (it was held until some later call happened to run the schedule,
    /// and `finish()` dropped it unreported).
    @Test("In fast mode a relaunched central gets the notifications held for it and those after, in order")
    func aFastRelaunchedCentralGetsHeldAndLaterNotifications() async throws {
        let bridge = MockBLEBridge()
        let watch = MockPeripheralManager(bridge: bridge)
        let service = try await watch.add(
            GATTService(
                uuid: "FFF0",
                characteristics: [GATTCharacteristic(uuid: "FFF3", properties: .notify, permissions: .readable)]))
        try await watch.startAdvertising(AdvertisementData(localName: "Watch"))
        let first = MockCentralManager(configuration: .init(restoreIdentifier: "companion"), bridge: bridge)
        try await first.scanForPeripherals(withServices: nil)
        await first.stopScan()
        try await first.connect(watch.identifier)
        let status = try await first.discoverAll(for: watch.identifier)[0]
        try await first.setNotifyValue(true, for: status)
        await first.simulateAppTermination()
        #expect(try await watch.updateValue(Data([1]), for: service.characteristics[0]))

        let relaunched = MockCentralManager(configuration: .init(restoreIdentifier: "companion"), bridge: bridge)
        let events = relaunched.events()
        #expect(await relaunched.waitForPoweredOn() == .poweredOn)
        #expect(await relaunched.isConnected(watch.identifier))
        #expect(try await watch.updateValue(Data([2]), for: service.characteristics[0]))
        // (finish() ends the streams: what was not delivered by then never will be.)
        _ = await bridge.finish()
        let received = await events.prefixArray(5)
        #expect(received.count == 4)
        guard case .willRestoreState = received.first else {
            Issue.record("expected the restored state first, got \(received)")
            return
        }
        #expect(
            Array(received.dropFirst()) == [
                .stateChanged(.poweredOn), .valueUpdated(status, Data([1])), .valueUpdated(status, Data([2])),
            ])
    }

    @Test("In fast mode a relaunched peripheral manager hears the writes held for it and those after, in order")
    func aFastRelaunchedPeripheralManagerHearsHeldAndLaterWrites() async throws {
        let bridge = MockBLEBridge()
        // (Handling requests itself: automatic answering hands the app no write requests.)
        let configuration = MockPeripheralManager.Configuration(requestHandling: .manual, restoreIdentifier: "watch")
        let watch = MockPeripheralManager(configuration: configuration, bridge: bridge)
        _ = try await watch.add(
            GATTService(
                uuid: "FFF0",
                characteristics: [
                    GATTCharacteristic(uuid: "FFF2", properties: .writeWithoutResponse, permissions: .writeable)
                ]))
        try await watch.startAdvertising(AdvertisementData(localName: "Watch"))
        let phone = MockCentralManager(bridge: bridge)
        try await phone.scanForPeripherals(withServices: nil)
        await phone.stopScan()
        try await phone.connect(watch.identifier)
        let data = try await phone.discoverAll(for: watch.identifier)[0]
        await watch.simulateAppTermination()
        try await phone.writeValue(Data([1]), for: data, type: .withoutResponse)

        let relaunched = MockPeripheralManager(configuration: configuration, bridge: bridge)
        let events = relaunched.events()
        #expect(await relaunched.isAdvertising)
        try await phone.writeValue(Data([2]), for: data, type: .withoutResponse)
        _ = await bridge.finish()
        var written: [Data?] = []
        for await event in events {
            if case .writeRequests(let requests) = event { written += requests.map(\.value) }
        }
        #expect(written == [Data([1]), Data([2])])
    }
}
