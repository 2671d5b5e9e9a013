import BLECore
import BLEMockKit
import Foundation
import Testing

@Suite("Faults", .timeLimit(.minutes(10)))
struct FaultTests {
    static let heartRateName = "HRM-1"

    @Test("A disconnect scheduled at 2 s fires when the simulation reaches 2 s")
    func scheduledDisconnect() async throws {
        let bridge = MockBLEBridge()
        let (peripheral, _) = try await TestPeripherals.advertisingHeartRate(on: bridge)
        let (central, _) = try await TestPeripherals.connectedCentral(to: peripheral, on: bridge)
        let events = central.events()
        await bridge.schedule(
            .disconnect(
                central: central.identifier, peripheral: peripheral.identifier,
                error: CoreBluetoothError(.connectionTimeout)),
            after: .seconds(2))
        await bridge.advance(by: .milliseconds(1999))
        #expect(await central.isConnected(peripheral.identifier))
        await bridge.advance(by: .milliseconds(1))
        #expect(await !central.isConnected(peripheral.identifier))
        let entry = try #require(await bridge.log.last { $0.kind == .disconnected })
        #expect(entry.time == VirtualClock.Instant(offset: .seconds(2)))
        #expect(entry.error == .coreBluetooth(CoreBluetoothError(.connectionTimeout)))
        #expect(
            await events.prefixArray(1) == [
                .disconnected(
                    RemotePeripheral(identifier: peripheral.identifier, name: Self.heartRateName),
                    CoreBluetoothError(.connectionTimeout))
            ])
    }

    @Test("A fault scheduled during a long realistic read fails the read with the fault's error")
    func faultDuringOperation() async throws {
        let bridge = MockBLEBridge(configuration: .init(seed: 5, timing: LinkTiming(jitter: .zero)))
        let peripheral = MockPeripheralManager(configuration: .init(mtu: .fixed(23)), bridge: bridge)
        _ = try await peripheral.add(
            GATTService(
                uuid: "AAAA",
                characteristics: [
                    GATTCharacteristic(uuid: "BBBB", properties: .read, permissions: .readable, value: Data(count: 300))
                ]))
        try await peripheral.startAdvertising(AdvertisementData())
        let central = MockCentralManager(bridge: bridge)
        try await central.scanForPeripherals(withServices: nil)
        await bridge.advance(by: .milliseconds(200))
        try await central.connect(peripheral.identifier)
        let characteristic = try await central.discoverAll(for: peripheral.identifier)[0]
        let start = await bridge.now
        // The read needs 14 round trips of 30 ms; the peripheral resets after 100 ms, and the
        // central notices when the supervision timeout (720 ms) passes with nothing heard.
        await bridge.schedule(.reset(peripheral: peripheral.identifier), at: start.advanced(by: .milliseconds(100)))
        await #expect(throws: CoreBluetoothError(.connectionTimeout)) {
            try await central.readValue(for: characteristic)
        }
        #expect(await bridge.now == start.advanced(by: .milliseconds(820)))
        #expect(await !bridge.log.contains { $0.kind == .read && $0.succeeded })
    }

    @Test(
        "In fast mode a reset drops every central's link at once with connectionTimeout; the peripheral stays available"
    )
    func reset() async throws {
        let bridge = MockBLEBridge()
        let (peripheral, _) = try await TestPeripherals.advertisingHeartRate(on: bridge)
        let (first, _) = try await TestPeripherals.connectedCentral(to: peripheral, on: bridge)
        let (second, _) = try await TestPeripherals.connectedCentral(to: peripheral, on: bridge)
        await peripheral.simulateReset()
        #expect(await !first.isConnected(peripheral.identifier))
        #expect(await !second.isConnected(peripheral.identifier))
        let reasons = await bridge.log.filter { $0.kind == .disconnected }.map(\.error)
        #expect(
            reasons == [
                .coreBluetooth(CoreBluetoothError(.connectionTimeout)),
                .coreBluetooth(CoreBluetoothError(.connectionTimeout)),
            ])
        #expect(await peripheral.isAdvertising)
        try await first.connect(peripheral.identifier)
        #expect(await first.isConnected(peripheral.identifier))
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(
        "In realistic mode a reset ends the peripheral's subscriptions once: the drop at the supervision timeout does not end them again"
    )
    func aResetEndsSubscriptionsOnce() async throws {
        let bridge = MockBLEBridge(configuration: .realistic(seed: 12))
        let (peripheral, _) = try await TestPeripherals.advertisingHeartRate(on: bridge)
        let peripheralEvents = peripheral.events()
        let central = MockCentralManager(bridge: bridge)
        let (droppedAt, resetAt) = try await bridge.run {
            try await central.scanForPeripherals(withServices: [TestPeripherals.heartRateService])
            try await bridge.clock.sleep(for: .milliseconds(300))
            try await central.connect(peripheral.identifier)
            let characteristics = try await central.discoverAll(for: peripheral.identifier)
            let measurement = try #require(characteristics.first { $0.properties.contains(.notify) })
            try await central.setNotifyValue(true, for: measurement)
            let resetAt = await bridge.now
            await peripheral.simulateReset()
            // The central notices at the supervision timeout (720 ms) and drops the link.
            try await bridge.clock.sleep(for: .seconds(2))
            return (await bridge.log.last { $0.kind == .disconnected }?.time, resetAt)
        }
        let dropped = try #require(droppedAt)
        #expect(dropped.offset - resetAt.offset == .milliseconds(720))
        #expect(await !central.isConnected(peripheral.identifier))
        _ = await bridge.finish()
        var subscribed = 0
        var unsubscribed = 0
        for await event in peripheralEvents {
            if case .subscribed = event { subscribed += 1 }
            if case .unsubscribed = event { unsubscribed += 1 }
        }
        #expect(subscribed == 1)
        #expect(unsubscribed == 1)
        let logged = await bridge.log.filter { $0.kind == .unsubscribe }
        #expect(logged.map(\.detail) == ["reset"])
    }

    @Test("An advertisement change mid-scan is reported with the new data")
    func advertisementChange() async throws {
        let bridge = MockBLEBridge()
        let (peripheral, _) = try await TestPeripherals.advertisingHeartRate(on: bridge)
        let central = MockCentralManager(bridge: bridge)
        let events = central.events()
        try await central.scanForPeripherals(withServices: nil)
        await peripheral.simulateAdvertisementChange(
            AdvertisementData(localName: "HRM-2", serviceUUIDs: ["180D"], txPowerLevel: 4))
        let names = await events.prefixArray(3).compactMap { event -> String? in
            if case .discovered(let discovery) = event { return discovery.advertisementData.localName }
            return nil
        }
        #expect(names == ["HRM-1", "HRM-2"])
    }

    @Test("A name change reaches connected centrals")
    func nameChange() async throws {
        let bridge = MockBLEBridge()
        let (peripheral, _) = try await TestPeripherals.advertisingHeartRate(on: bridge)
        let (central, _) = try await TestPeripherals.connectedCentral(to: peripheral, on: bridge)
        let events = central.events()
        await peripheral.simulateNameChange("Renamed")
        #expect(
            await events.prefixArray(1) == [
                .nameUpdated(RemotePeripheral(identifier: peripheral.identifier, name: "Renamed"))
            ])
        #expect(await central.retrievePeripherals(withIdentifiers: [peripheral.identifier]).first?.name == "Renamed")
    }

    @Test("A central's power-off scheduled as a fault drops its links")
    func scheduledPowerOff() async throws {
        let bridge = MockBLEBridge()
        let (peripheral, _) = try await TestPeripherals.advertisingHeartRate(on: bridge)
        let (central, _) = try await TestPeripherals.connectedCentral(to: peripheral, on: bridge)
        await bridge.schedule(.centralState(central.identifier, .poweredOff), after: .seconds(1))
        await bridge.advance(by: .seconds(1))
        #expect(await central.state == .poweredOff)
        #expect(await !central.isConnected(peripheral.identifier))
        await #expect(throws: APIMisuseError.notPoweredOn(operation: "connect", state: .poweredOff)) {
            try await central.connect(peripheral.identifier)
        }
    }

    @Test("Removing a service fails a read the peripheral has not answered yet with invalid handle")
    func removalFailsPendingRequest() async throws {
        let bridge = MockBLEBridge()
        let (peripheral, service) = try await TestPeripherals.advertisingHeartRate(
            on: bridge, configuration: .init(name: "HRM-1", requestHandling: .manual))
        let (central, characteristics) = try await TestPeripherals.connectedCentral(to: peripheral, on: bridge)
        let measurement = characteristics[0]
        let read = Task { try await central.readValue(for: measurement) }
        await bridge.waitUntil { !$0.pendingOperations.isEmpty }
        try await peripheral.remove(service)
        await #expect(throws: ATTError(.invalidHandle)) { try await read.value }
        #expect(await bridge.finish() == .clean)  // nothing is left waiting
    }
}

@Suite("One ATT request at a time", .timeLimit(.minutes(10)))
struct ATTSerializationTests {
    @Test("Concurrent realistic reads on one link complete one after another")
    func concurrentReadsAreSequential() async throws {
        let bridge = MockBLEBridge(configuration: .init(seed: 1, timing: LinkTiming(jitter: .zero)))
        let (peripheral, _) = try await TestPeripherals.advertisingHeartRate(on: bridge)
        let central = MockCentralManager(bridge: bridge)
        try await central.scanForPeripherals(withServices: nil)
        await bridge.advance(by: .milliseconds(200))  // realistic scans hear advertisers at their advertising events
        try await central.connect(peripheral.identifier)
        let characteristics = try await central.discoverAll(for: peripheral.identifier)
        let start = await bridge.now
        let location = characteristics[1]
        async let first = central.readValue(for: location)
        async let second = central.readValue(for: location)
        _ = try await (first, second)
        let reads = await bridge.log.filter { $0.kind == .read }.map(\.time)
        #expect(reads == [start.advanced(by: .milliseconds(30)), start.advanced(by: .milliseconds(60))])
    }

    @Test("A manual peripheral receives the next request only after answering the current one")
    func manualRequestsAreSequential() async throws {
        // Realistic, so that time passes while the read waits for its answer; the write is
        // issued only once the read is pending, so the order of the two is fixed.
        let bridge = MockBLEBridge(configuration: .realistic(seed: 5))
        let (peripheral, _) = try await TestPeripherals.advertisingHeartRate(
            on: bridge, configuration: .init(name: "HRM-1", requestHandling: .manual))
        let requests = peripheral.events()
        let central = MockCentralManager(bridge: bridge)
        try await Realistic.discover(peripheral, by: central, on: bridge)
        try await central.connect(peripheral.identifier)
        let characteristics = try await central.discoverAll(for: peripheral.identifier)
        let measurement = characteristics[0]
        let control = characteristics[2]
        let read = Task { try await central.readValue(for: measurement) }
        await bridge.waitUntil { $0.pendingOperations.count >= 1 }
        let write = Task { try await central.writeValue(Data([7]), for: control, type: .withResponse) }
        await bridge.waitUntil { $0.pendingOperations.count >= 2 }
        var iterator = requests.makeAsyncIterator()
        guard case .readRequest(let first) = await iterator.next() else {
            Issue.record("expected the read request first")
            return
        }
        // A whole second of link time with the read unanswered: the write stays behind it.
        await bridge.advance(by: .seconds(1))
        #expect(await bridge.log.filter { $0.kind == .readRequest }.count == 1)
        #expect(await bridge.log.filter { $0.kind == .writeRequest }.isEmpty)
        let answered = await bridge.now
        try await peripheral.respond(to: first, withResult: .success, value: Data([1]))
        guard case .writeRequests(let batch) = await iterator.next() else {
            Issue.record("expected the write batch second")
            return
        }
        #expect(batch.map(\.value) == [Data([7])])
        let arrival = try #require(await bridge.log.last { $0.kind == .writeRequest })
        #expect(arrival.time > answered)
        try await peripheral.respond(to: batch[0], withResult: .success)
        #expect(try await read.value == Data([1]))
        try await write.value
    }
}

@Suite("Determinism", .timeLimit(.minutes(10)))
struct DeterminismTests {
    /// A realistic session: jittered timing, MTU draws, seeded RSSI, duplicates, notifications
    /// and writes; returns the log as text.
    static func session(seed: UInt64) async throws -> [String] {
        let bridge = MockBLEBridge(configuration: .realistic(seed: seed))
        let peripheral = MockPeripheralManager(configuration: .realistic(seed: seed), bridge: bridge)
        #expect(await peripheral.waitForPoweredOn() == .poweredOn)
        let service = try await peripheral.add(TestPeripherals.heartRate)
        try await peripheral.startAdvertising(AdvertisementData(localName: "HRM", serviceUUIDs: ["180D"]))
        let central = MockCentralManager(configuration: .init(mtu: .realistic(23...517)), bridge: bridge)
        _ = await central.waitForPoweredOn()
        try await central.scanForPeripherals(withServices: nil, options: ScanOptions(allowDuplicates: true))
        await bridge.advance(by: .milliseconds(500))
        await central.stopScan()
        try await central.connect(peripheral.identifier)
        let characteristics = try await central.discoverAll(for: peripheral.identifier)
        try await central.setNotifyValue(true, for: characteristics[0])
        for beat in 0..<20 {
            _ = try await peripheral.updateValue(Data([0, UInt8(60 + beat)]), for: service.characteristics[0])
            await bridge.advance(by: .milliseconds(20))
        }
        for index in 0..<5 {
            try await central.writeValue(
                Data(repeating: UInt8(index), count: 40), for: characteristics[2], type: .withResponse)
            _ = try await central.readRSSI(for: peripheral.identifier)
        }
        try await central.cancelPeripheralConnection(peripheral.identifier)
        return await bridge.log.map(\.description)
    }

    @Test("The same seed and steps give a byte-identical log, run after run", arguments: [0, 42, 7_777] as [UInt64])
    func sameSeedSameLog(seed: UInt64) async throws {
        let first = try await Self.session(seed: seed)
        #expect(first.count > 50, "seed \(seed)")
        for _ in 0..<5 {
            let again = try await Self.session(seed: seed)
            #expect(again == first, "seed \(seed) diverged")
        }
    }

    @Test("Different seeds give different timings")
    func differentSeedsDiffer() async throws {
        #expect(try await Self.session(seed: 1) != Self.session(seed: 2))
    }
}

@Suite("Service changes", .timeLimit(.minutes(10)))
struct ServiceChangeTests {
    @Test("Adding a service while connected tells the central to rediscover, invalidating nothing")
    func addingAServiceNotifiesCentrals() async throws {
        let bridge = MockBLEBridge()
        let (peripheral, _) = try await TestPeripherals.advertisingHeartRate(on: bridge)
        let (central, characteristics) = try await TestPeripherals.connectedCentral(to: peripheral, on: bridge)
        let events = central.events()
        _ = try await peripheral.add(
            GATTService(
                uuid: "180F",
                characteristics: [
                    GATTCharacteristic(uuid: "2A19", properties: .read, permissions: .readable, value: Data([90]))
                ]))
        #expect(
            await events.prefixArray(1) == [
                .servicesModified(RemotePeripheral(identifier: peripheral.identifier, name: "HRM-1"), invalidated: [])
            ])
        #expect(try await central.readValue(for: characteristics[1]) == Data([0x01]))
        let services = try await central.discoverServices(nil, for: peripheral.identifier)
        #expect(services.map(\.uuid) == ["180D", "180F"])
    }
}

@Suite("Realistic updates", .timeLimit(.minutes(10)))
struct RealisticUpdateTests {
    static func rig(properties: CharacteristicProperties) async throws -> (
        MockBLEBridge, MockPeripheralManager, LocalCharacteristic, MockCentralManager
    ) {
        let bridge = MockBLEBridge(configuration: .init(seed: 9, timing: LinkTiming(jitter: .zero)))
        let peripheral = MockPeripheralManager(bridge: bridge)
        let service = try await peripheral.add(
            GATTService(
                uuid: "AAAA",
                characteristics: [
                    GATTCharacteristic(uuid: "BBBB", properties: properties, permissions: [])
                ]))
        try await peripheral.startAdvertising(AdvertisementData())
        let central = MockCentralManager(bridge: bridge)
        try await central.scanForPeripherals(withServices: nil)
        await bridge.advance(by: .milliseconds(200))
        try await central.connect(peripheral.identifier)
        let characteristic = try await central.discoverAll(for: peripheral.identifier)[0]
        try await central.setNotifyValue(true, for: characteristic)
        return (bridge, peripheral, service.characteristics[0], central)
    }

    @Test("Notifications go out four per connection event")
    func notificationsPerEvent() async throws {
        let (bridge, peripheral, characteristic, _) = try await Self.rig(properties: .notify)
        let start = await bridge.now
        for value in 0..<6 { _ = try await peripheral.updateValue(Data([UInt8(value)]), for: characteristic) }
        await bridge.advance(by: .milliseconds(100))
        let times = await bridge.log.filter { $0.kind == .notification }.map { start.duration(to: $0.time) }
        #expect(times == [30, 30, 30, 30, 60, 60].map { Duration.milliseconds($0) })
    }

    @Test("Indications wait for their confirmation: one per link per connection event")
    func indicationsAreConfirmed() async throws {
        let (bridge, peripheral, characteristic, _) = try await Self.rig(properties: .indicate)
        let start = await bridge.now
        for value in 0..<3 { _ = try await peripheral.updateValue(Data([UInt8(value)]), for: characteristic) }
        await bridge.advance(by: .milliseconds(100))
        let indications = await bridge.log.filter { $0.kind == .indication }
        #expect(indications.map { start.duration(to: $0.time) } == [30, 60, 90].map { Duration.milliseconds($0) })
        #expect(indications.map(\.value) == [Data([0]), Data([1]), Data([2])])
    }
}

@Suite("State and range edge cases", .timeLimit(.minutes(10)))
struct StateAndRangeEdgeTests {
    @Test("A state change during a realistic start-up is not undone by the start-up's later steps")
    func hookWinsOverStartup() async throws {
        let bridge = MockBLEBridge()
        let central = MockCentralManager(
            configuration: .init(stateTransition: .realistic(duration: .milliseconds(100))), bridge: bridge)
        #expect(await central.state == .unknown)
        await bridge.advance(by: .milliseconds(20))
        await central.simulateStateChange(.poweredOff)
        #expect(await central.waitForPoweredOn() == .poweredOff)
        await bridge.advance(by: .seconds(1))
        #expect(await central.state == .poweredOff)
    }

    @Test("Powering off while scanning logs the scan's end")
    func powerOffStopsTheScanVisibly() async throws {
        let bridge = MockBLEBridge()
        let central = MockCentralManager(bridge: bridge)
        try await central.scanForPeripherals(withServices: nil)
        await central.simulateStateChange(.poweredOff)
        #expect(await !central.isScanning)
        #expect(await bridge.log.map(\.kind).suffix(2) == [.stateChanged, .scanStopped])
    }

    @Test("An operation to a peripheral that went out of range fails with connectionTimeout at the supervision timeout")
    func outOfRangeOperationsGoUnanswered() async throws {
        let bridge = MockBLEBridge(configuration: .init(seed: 4, timing: LinkTiming(jitter: .zero)))
        let (peripheral, _) = try await TestPeripherals.advertisingHeartRate(on: bridge)
        let central = MockCentralManager(bridge: bridge)
        try await central.scanForPeripherals(withServices: nil)
        await bridge.advance(by: .milliseconds(200))
        try await central.connect(peripheral.identifier)
        let characteristics = try await central.discoverAll(for: peripheral.identifier)
        await peripheral.simulateProximityChange(.outOfRange)
        let start = await bridge.now
        // The read is served on (virtual time runs) until the supervision timeout ends the link.
        await #expect(throws: CoreBluetoothError(.connectionTimeout)) {
            try await central.readValue(for: characteristics[1])
        }
        #expect(await bridge.now == start.advanced(by: .milliseconds(720)))
        let dropped = try #require(await bridge.log.last { $0.kind == .disconnected })
        #expect(dropped.time == start.advanced(by: .milliseconds(720)))
        #expect(await !bridge.log.contains { $0.kind == .read && $0.succeeded })
    }
}
