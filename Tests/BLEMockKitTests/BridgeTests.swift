import BLECore
import Foundation
import Testing

@testable import BLEMockKit

@Suite("Bridge", .timeLimit(.minutes(10)))
struct BridgeTests {
    @Test("The log lets a test verify interactions in order without spies")
    func interactionLog() async throws {
        let bridge = MockBLEBridge()
        let (peripheral, service) = try await TestPeripherals.advertisingHeartRate(on: bridge)
        let (central, characteristics) = try await TestPeripherals.connectedCentral(to: peripheral, on: bridge)
        try await central.writeValue(Data([0x01]), for: characteristics[2], type: .withResponse)
        try await central.setNotifyValue(true, for: characteristics[0])

        let log = await bridge.log
        let appActions = log.filter { [.write, .subscribe].contains($0.kind) }
        #expect(appActions.map(\.kind) == [.write, .subscribe])
        #expect(appActions[0].attribute == TestPeripherals.controlPoint)
        #expect(appActions[0].value == Data([0x01]))
        #expect(appActions[0].writeType == .withResponse)
        #expect(appActions[1].attribute == TestPeripherals.measurement)
        #expect(appActions[1].handle == service.characteristics[0].handle)
        #expect(appActions.allSatisfy { $0.central == central.identifier && $0.peripheral == peripheral.identifier })
        #expect(log.map(\.index) == Array(0..<log.count))
        #expect(log.allSatisfy { $0.time == .zero })
        #expect(appActions[0].description.hasPrefix("0s write 2A39@8 01 withResponse central="))
        #expect(appActions[0].description.hasSuffix(" ok"))
    }

    @Test("Failed operations are logged with the error")
    func failuresAreLogged() async throws {
        let bridge = MockBLEBridge()
        let (peripheral, _) = try await TestPeripherals.advertisingHeartRate(on: bridge)
        let (central, characteristics) = try await TestPeripherals.connectedCentral(to: peripheral, on: bridge)
        await #expect(throws: ATTError(.writeNotPermitted)) {
            try await central.writeValue(Data([1]), for: characteristics[1], type: .withResponse)
        }
        let entry = try #require(await bridge.log.last)
        #expect(entry.kind == .write)
        #expect(entry.error == .att(ATTError(.writeNotPermitted)))
        #expect(!entry.succeeded)
        #expect(entry.description.hasSuffix("failed: \(ATTError(.writeNotPermitted))"))
    }

    @Test("Finishing a quiet bridge is clean and ends every event stream")
    func cleanFinish() async throws {
        let bridge = MockBLEBridge()
        let (peripheral, _) = try await TestPeripherals.advertisingHeartRate(on: bridge)
        let (central, _) = try await TestPeripherals.connectedCentral(to: peripheral, on: bridge)
        let events = central.events()
        #expect(await bridge.finish() == .clean)
        #expect(await events.prefixArray(1).isEmpty)
    }

    @Test("Finishing reports unread events and waiting operations")
    func leftovers() async throws {
        let bridge = MockBLEBridge()
        let (peripheral, _) = try await TestPeripherals.advertisingHeartRate(on: bridge)
        let central = MockCentralManager(bridge: bridge)
        let events = central.events()
        try await central.scanForPeripherals(withServices: nil)
        await peripheral.stopAdvertising()
        let attempt = Task { try await central.connect(peripheral.identifier) }
        await bridge.waitUntil { $0.log.last?.kind == .connecting }
        let report = await bridge.finish()
        guard case .leftovers(let items) = report else {
            Issue.record("expected leftovers, got \(report)")
            return
        }
        #expect(items.count == 3)
        #expect(items.last == .seed(0))
        #expect(items.last?.description == "bridge seed 0: rerun with the same seed and steps to reproduce")
        #expect(
            items.first
                == .operation(
                    "connect", central: central.identifier, peripheral: peripheral.identifier, characteristic: nil,
                    since: .zero))
        #expect(
            items.first?.description.hasSuffix(
                "connect on peripheral \(peripheral.identifier.uuidString.prefix(8)) was still waiting (since 0s)")
                == true)
        #expect(
            items.contains {
                guard case .unreadEvents(central.identifier, 2, let first) = $0 else { return false }
                return first.hasPrefix("stateChanged(")
            })
        #expect(!report.isClean)
        await #expect(throws: CoreBluetoothError(.operationCancelled)) { try await attempt.value }
        withExtendedLifetime(events) {}
    }

    @Test("Identifiers derive from the seed and creation order")
    func deterministicIdentifiers() {
        func identifiers(seed: UInt64) -> [UUID] {
            let bridge = MockBLEBridge(seed: seed)
            return [
                MockCentralManager(bridge: bridge).identifier, MockPeripheralManager(bridge: bridge).identifier,
                MockCentralManager(bridge: bridge).identifier,
            ]
        }
        #expect(identifiers(seed: 7) == identifiers(seed: 7))
        #expect(identifiers(seed: 7) != identifiers(seed: 8))
        #expect(Set(identifiers(seed: 7)).count == 3)
        let fixed = UUID(uuid: (1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1))
        #expect(MockCentralManager(configuration: .init(identifier: fixed)).identifier == fixed)
    }

    @Test("The same steps on the same seed produce the same log")
    func deterministicLog() async throws {
        func run() async throws -> [String] {
            let bridge = MockBLEBridge(seed: 42)
            let (peripheral, service) = try await TestPeripherals.advertisingHeartRate(on: bridge)
            let (central, characteristics) = try await TestPeripherals.connectedCentral(to: peripheral, on: bridge)
            try await central.setNotifyValue(true, for: characteristics[0])
            for beat in 0..<5 {
                _ = try await peripheral.updateValue(Data([0, UInt8(60 + beat)]), for: service.characteristics[0])
            }
            try await central.writeValue(Data([1]), for: characteristics[2], type: .withResponse)
            try await central.cancelPeripheralConnection(peripheral.identifier)
            return await bridge.log.map(\.description)
        }
        let first = try await run()
        for _ in 0..<5 { #expect(try await run() == first) }
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test("Inside a run, advancing wakes sleepers on the bridge's clock in time order and lets each woken task run")
    func advanceWakesClockSleepers() async throws {
        let bridge = MockBLEBridge()
        let clock = bridge.clock
        let wakes = try await bridge.run {
            let sleeper = bridge.task {
                var wakes: [VirtualClock.Instant] = []
                for _ in 0..<3 {
                    try await clock.sleep(for: .milliseconds(250))
                    wakes.append(clock.now)
                }
                return wakes
            }
            await bridge.advance(by: .seconds(1))
            #expect(await bridge.now == VirtualClock.Instant(offset: .seconds(1)))
            return try await sleeper.value
        }
        #expect(wakes == [250, 500, 750].map { VirtualClock.Instant(offset: .milliseconds($0)) })
        #expect(clock.now == VirtualClock.Instant(offset: .seconds(1)))
    }

    @Test("Outside a run, advancing wakes the sleepers due by its target and lands exactly on it")
    func advanceOutsideRunWakesDueSleepers() async throws {
        let bridge = MockBLEBridge()
        let clock = bridge.clock
        let early = Task { try await clock.sleep(until: VirtualClock.Instant(offset: .milliseconds(250))) }
        let late = Task { try await clock.sleep(until: VirtualClock.Instant(offset: .milliseconds(400))) }
        await clock.untilSleeping(count: 2)
        await bridge.advance(by: .milliseconds(300))
        try await early.value
        #expect(await bridge.now == VirtualClock.Instant(offset: .milliseconds(300)))
        #expect(clock.sleeperCount == 1)
        late.cancel()
        await #expect(throws: CancellationError.self) { try await late.value }
        #expect(clock.sleeperCount == 0)
    }

    @Test("Advancing into the past does nothing")
    func noTimeTravel() async {
        let bridge = MockBLEBridge()
        await bridge.advance(by: .seconds(2))
        await bridge.advance(to: VirtualClock.Instant(offset: .seconds(1)))
        await bridge.advance(by: .seconds(-5))
        #expect(await bridge.now == VirtualClock.Instant(offset: .seconds(2)))
    }

    @Test("run() drains a finite schedule and stops an endless one at its limit")
    func runDrainsSchedule() async throws {
        let bridge = MockBLEBridge()
        #expect(await bridge.run())
        let peripheral = MockPeripheralManager(bridge: bridge)
        try await peripheral.startAdvertising(AdvertisementData())
        let central = MockCentralManager(bridge: bridge)
        try await central.scanForPeripherals(withServices: nil, options: ScanOptions(allowDuplicates: true))
        #expect(await bridge.run(maximumEvents: 10) == false)  // advertising repeats while someone scans
        #expect(await bridge.now == VirtualClock.Instant(offset: .seconds(1)))
        await central.stopScan()
        #expect(await bridge.run())  // the last scheduled advertisement finds no scanner and stops
    }
}

@Suite("Bridge side objects", .timeLimit(.minutes(10)))
struct BridgeSideObjectTests {
    /// The identities of one bridge's side objects, as one task sees them.
    struct Seen: Sendable, Equatable {
        let runs, conditions, outside, systemView, settings: ObjectIdentifier

        init(_ bridge: MockBLEBridge) {
            runs = ObjectIdentifier(bridge.runs)
            conditions = ObjectIdentifier(bridge.conditions)
            outside = ObjectIdentifier(bridge.outside)
            systemView = ObjectIdentifier(bridge.systemView)
            settings = ObjectIdentifier(bridge.frontEndSettings)
        }
    }

    @Test("A side object made when first reached is the same object for every task that reaches it, at once or later")
    func sideObjectsAreMadeOnce() async {
        let bridge = MockBLEBridge()
        let seen = await withTaskGroup(of: Seen.self) { group in
            for _ in 0..<16 { group.addTask { Seen(bridge) } }
            return await group.reduce(into: [Seen]()) { $0.append($1) }
        }
        #expect(seen.count == 16)
        #expect(Set(seen.map(\.runs)).count == 1)
        #expect(seen.allSatisfy { $0 == Seen(bridge) })
        // Each bridge has its own.
        let other = Seen(MockBLEBridge())
        #expect(other.runs != seen[0].runs && other.outside != seen[0].outside)
    }

    @Test("A setting kept on a bridge's side object stays there, and another bridge's is apart")
    func sideObjectsKeepState() {
        let bridge = MockBLEBridge()
        bridge.frontEndSettings["authorization"] = 3
        #expect(bridge.frontEndSettings["authorization"] == 3)
        #expect(MockBLEBridge().frontEndSettings["authorization"] == nil)
        bridge.outside.noteActivity()
        bridge.outside.noteActivity()
        #expect(bridge.outside.activity == 2)
        #expect(!bridge.runs.isActive)
    }
}

@Suite("Shutting down", .timeLimit(.minutes(10)))
struct ShutdownTests {
    @Test("A central shutting down ends its streams and unsubscribes it on the peripheral")
    func centralShutdown() async throws {
        let bridge = MockBLEBridge()
        let (peripheral, service) = try await TestPeripherals.advertisingHeartRate(on: bridge)
        let (central, characteristics) = try await TestPeripherals.connectedCentral(to: peripheral, on: bridge)
        try await central.setNotifyValue(true, for: characteristics[0])
        let events = central.events()
        await central.shutDown()
        #expect(
            await events.prefixArray(5) == [
                .disconnected(RemotePeripheral(identifier: peripheral.identifier, name: "HRM-1"), nil)
            ])
        #expect(await peripheral.subscribedCentrals(for: service.characteristics[0]).isEmpty)
        #expect(await central.state == .unknown)
        await #expect(throws: APIMisuseError.managerShutDown(operation: "scanForPeripherals")) {
            try await central.scanForPeripherals(withServices: nil)
        }
    }

    @Test("A shut-down central cannot be powered on again: every call fails with managerShutDown")
    func shutDownCentralStaysDown() async throws {
        let bridge = MockBLEBridge()
        let (peripheral, _) = try await TestPeripherals.advertisingHeartRate(on: bridge)
        let central = MockCentralManager(bridge: bridge)
        await central.shutDown()
        await central.shutDown()  // twice is harmless
        await central.simulateStateChange(.poweredOn)
        #expect(await central.state == .unknown)
        #expect(await central.waitForPoweredOn() == .unknown)
        await #expect(throws: APIMisuseError.managerShutDown(operation: "connect")) {
            try await central.connect(peripheral.identifier)
        }
        await #expect(throws: APIMisuseError.managerShutDown(operation: "scanForPeripherals")) {
            try await central.scanForPeripherals(withServices: nil)
        }
        #expect(
            await bridge.log.filter { $0.kind == .stateChanged && $0.central == central.identifier }.map(\.detail)
                == ["poweredOn", "shut down"])
    }

    @Test("A shut-down peripheral cannot be powered on again: every call fails with managerShutDown")
    func shutDownPeripheralStaysDown() async throws {
        let bridge = MockBLEBridge()
        let peripheral = MockPeripheralManager(bridge: bridge)
        await peripheral.shutDown()
        await peripheral.simulateStateChange(.poweredOn)
        #expect(await peripheral.state == .unknown)
        await #expect(throws: APIMisuseError.managerShutDown(operation: "add")) {
            try await peripheral.add(TestPeripherals.heartRate)
        }
        await #expect(throws: APIMisuseError.managerShutDown(operation: "startAdvertising")) {
            try await peripheral.startAdvertising(AdvertisementData(localName: "Gone"))
        }
        await #expect(throws: APIMisuseError.managerShutDown(operation: "publishL2CAPChannel")) {
            try await peripheral.publishL2CAPChannel(requiresEncryption: false)
        }
    }

    @Test("A shut-down peripheral's services stay as they were: remove and setValue fail with managerShutDown")
    func shutDownPeripheralKeepsItsDatabase() async throws {
        let bridge = MockBLEBridge()
        let peripheral = MockPeripheralManager(bridge: bridge)
        let service = try await peripheral.add(TestPeripherals.heartRate)
        await peripheral.shutDown()
        await #expect(throws: APIMisuseError.managerShutDown(operation: "remove")) {
            try await peripheral.remove(service)
        }
        await #expect(throws: APIMisuseError.managerShutDown(operation: "setValue")) {
            try await peripheral.setValue(Data([7]), for: service.characteristics[0])
        }
        await peripheral.removeAllServices()
        #expect(await peripheral.services == [service])
        #expect(await bridge.log.filter { $0.kind == .refused }.map(\.detail) == ["remove", "setValue"])
    }

    @Test("Shutting down a central ends its pending connection attempts: no link to it comes up later")
    func shutDownEndsPendingConnects() async throws {
        let bridge = MockBLEBridge()
        let peripheral = MockPeripheralManager(bridge: bridge)
        _ = try await peripheral.add(TestPeripherals.heartRate)
        try await peripheral.startAdvertising(AdvertisementData(localName: "HRM-1"))
        let central = MockCentralManager(bridge: bridge)
        try await central.scanForPeripherals(withServices: nil)
        await central.stopScan()
        await peripheral.stopAdvertising()
        let connect = Task { try await central.connect(peripheral.identifier) }
        await bridge.waitUntil { !$0.pendingOperations.isEmpty }
        await central.shutDown()
        await #expect(throws: CoreBluetoothError(.operationCancelled)) { try await connect.value }
        try await peripheral.startAdvertising(AdvertisementData(localName: "HRM-1"))
        await bridge.advance(by: .seconds(1))
        #expect(await !bridge.log.contains { $0.kind == .connected })
        #expect(await !central.isConnected(peripheral.identifier))
    }

    @Test("A peripheral shutting down disconnects its centrals with peripheralDisconnected")
    func peripheralShutdown() async throws {
        let bridge = MockBLEBridge()
        let (peripheral, _) = try await TestPeripherals.advertisingHeartRate(on: bridge)
        let (central, _) = try await TestPeripherals.connectedCentral(to: peripheral, on: bridge)
        let events = central.events()
        let peripheralEvents = peripheral.events()
        await peripheral.shutDown()
        #expect(
            await events.prefixArray(1) == [
                .disconnected(
                    RemotePeripheral(identifier: peripheral.identifier, name: "HRM-1"),
                    CoreBluetoothError(.peripheralDisconnected))
            ])
        #expect(await !peripheral.isAdvertising)
        #expect(await peripheralEvents.prefixArray(1).isEmpty)
    }

    @Test("A manager that is released ends the streams it handed out")
    func releasedManagerEndsStreams() async {
        var central: MockCentralManager? = MockCentralManager()
        let events = central!.events()
        central = nil
        #expect(await events.prefixArray(1).isEmpty)
    }
}

@Suite("Refusals in the log", .timeLimit(.minutes(10)))
struct RefusalLogTests {
    @Test("Calls refused before reaching the air are logged with the operation and the error")
    func refusalsAreLogged() async throws {
        let bridge = MockBLEBridge()
        let (peripheral, service) = try await TestPeripherals.advertisingHeartRate(on: bridge)
        let (central, characteristics) = try await TestPeripherals.connectedCentral(to: peripheral, on: bridge)
        try await peripheral.remove(service)
        await #expect(throws: CoreBluetoothError(.invalidHandle)) {
            try await central.readValue(for: characteristics[1])
        }
        try await central.cancelPeripheralConnection(peripheral.identifier)
        await #expect(throws: CoreBluetoothError(.notConnected)) {
            try await central.readRSSI(for: peripheral.identifier)
        }
        await central.simulateStateChange(.poweredOff)
        await #expect(throws: APIMisuseError.notPoweredOn(operation: "scanForPeripherals", state: .poweredOff)) {
            try await central.scanForPeripherals(withServices: nil)
        }
        let refusals = await bridge.log.filter { $0.kind == .refused }
        #expect(refusals.map(\.detail) == ["stale characteristic", "readRSSI", "scanForPeripherals"])
        #expect(
            refusals.map(\.error) == [
                .coreBluetooth(CoreBluetoothError(.invalidHandle)), .coreBluetooth(CoreBluetoothError(.notConnected)),
                .misuse(.notPoweredOn(operation: "scanForPeripherals", state: .poweredOff)),
            ])
    }
}
