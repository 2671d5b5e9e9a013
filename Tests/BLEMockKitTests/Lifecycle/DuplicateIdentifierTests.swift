import BLECore
import BLEMockKit
import Foundation
import Testing

/// Every manager on a bridge has its own identifier. A second manager created with an
/// identifier another one already has is refused (it used to be merged silently into the
/// first, its own configuration ignored); a relaunched app's manager with a restore
/// identifier takes over its predecessor's identifier, as CoreBluetooth's restoration does.
@Suite("Manager identity: one manager per identifier on a bridge", .timeLimit(.minutes(10)))
struct DuplicateIdentifierTests {
    static let shared = UUID(uuidString: "0000AAAA-0000-0000-0000-000000000001")!

    static var problem: APIMisuseError {
        .invalidConfiguration(
            "identifier 0000AAAA-0000-0000-0000-000000000001 is already used by another manager on this bridge; "
                + "give each manager its own identifier, or leave identifier nil to derive one")
    }

    @Test("A second central with an identifier already on the bridge refuses every call, and the first is untouched")
    func secondCentralIsRefused() async throws {
        let bridge = MockBLEBridge()
        let (peripheral, _) = try await TestPeripherals.advertisingHeartRate(on: bridge)
        let first = MockCentralManager(configuration: .init(mtu: .fixed(23), identifier: Self.shared), bridge: bridge)
        try await first.scanForPeripherals(withServices: nil)
        let second = MockCentralManager(configuration: .init(mtu: .fixed(517), identifier: Self.shared), bridge: bridge)
        #expect(second.identifier == Self.shared)
        await #expect(throws: Self.problem) { try await second.scanForPeripherals(withServices: nil) }
        await #expect(throws: Self.problem) { try await second.connect(peripheral.identifier) }
        await #expect(throws: Self.problem) {
            try await second.maximumWriteValueLength(for: peripheral.identifier, type: .withResponse)
        }
        #expect(await second.waitForPoweredOn() == .poweredOn)
        // The first keeps its own configuration: its link runs at its ATT_MTU, not the second's.
        try await first.connect(peripheral.identifier)
        #expect(try await first.maximumWriteValueLength(for: peripheral.identifier, type: .withoutResponse) == 20)
        #expect(await bridge.log.filter { $0.kind == .connected }.count == 1)
    }

    @Test("A second peripheral with an identifier already on the bridge refuses every call")
    func secondPeripheralIsRefused() async throws {
        let bridge = MockBLEBridge()
        let first = MockPeripheralManager(configuration: .init(name: "First", identifier: Self.shared), bridge: bridge)
        _ = try await first.add(TestPeripherals.heartRate)
        let second = MockPeripheralManager(
            configuration: .init(name: "Second", identifier: Self.shared), bridge: bridge)
        await #expect(throws: Self.problem) { try await second.add(TestPeripherals.heartRate) }
        await #expect(throws: Self.problem) { try await second.startAdvertising(AdvertisementData(localName: "2")) }
        try await first.startAdvertising(AdvertisementData(localName: "1"))
        let central = MockCentralManager(bridge: bridge)
        try await central.scanForPeripherals(withServices: nil)
        try await central.connect(Self.shared)
        #expect(try await central.discoverServices(nil, for: Self.shared).map(\.uuid) == ["180D"])
    }

    @Test("A central and a peripheral cannot share an identifier either")
    func rolesDoNotShareIdentifiers() async throws {
        let bridge = MockBLEBridge()
        let peripheral = MockPeripheralManager(configuration: .init(identifier: Self.shared), bridge: bridge)
        _ = try await peripheral.add(TestPeripherals.heartRate)
        let central = MockCentralManager(configuration: .init(identifier: Self.shared), bridge: bridge)
        await #expect(throws: Self.problem) { try await central.scanForPeripherals(withServices: nil) }
    }

    @Test("The same identifier on two bridges is two managers")
    func bridgesAreSeparate() async throws {
        let one = MockCentralManager(configuration: .init(identifier: Self.shared), bridge: MockBLEBridge())
        let two = MockCentralManager(configuration: .init(identifier: Self.shared), bridge: MockBLEBridge())
        try await one.scanForPeripherals(withServices: nil)
        try await two.scanForPeripherals(withServices: nil)
    }

    @Test("A relaunched app's central with the same restore identifier takes over, and is not refused")
    func restorationIsNotADuplicate() async throws {
        let bridge = MockBLEBridge()
        let before = MockCentralManager(configuration: .init(restoreIdentifier: "app"), bridge: bridge)
        try await before.scanForPeripherals(withServices: ["180D"])
        await before.simulateAppTermination()
        let after = MockCentralManager(configuration: .init(restoreIdentifier: "app"), bridge: bridge)
        #expect(after.identifier == before.identifier)
        try await after.scanForPeripherals(withServices: ["180D"])
    }

    static func restoreProblem(_ restoreIdentifier: String, _ identifier: UUID, role: String, given: Bool = false)
        -> APIMisuseError
    {
        .invalidConfiguration(
            "restore identifier \"\(restoreIdentifier)\" (\(given ? "given " : "")identifier \(identifier.uuidString)) "
                + "is already used by another \(role) manager on this bridge whose app was not terminated; give each "
                + "live manager its own restore identifier (a manager takes over its predecessor's only after "
                + "simulateAppTermination() on that one)")
    }

    // (It used to share the first's identity: it saw the first's link and scan, its cancel
    // dropped the first's link and its shutDown shut the first down.)
    @Test("A second live central with a restore identifier already on the bridge is refused; the first is untouched")
    func secondLiveCentralWithTheSameRestoreIdentifierIsRefused() async throws {
        let bridge = MockBLEBridge()
        let (peripheral, _) = try await TestPeripherals.advertisingHeartRate(on: bridge)
        let first = MockCentralManager(configuration: .init(restoreIdentifier: "app"), bridge: bridge)
        try await first.scanForPeripherals(withServices: nil)
        try await first.connect(peripheral.identifier)
        let second = MockCentralManager(configuration: .init(restoreIdentifier: "app"), bridge: bridge)
        let problem = Self.restoreProblem("app", second.identifier, role: "central")
        #expect(await !second.isConnected(peripheral.identifier))
        #expect(await !second.isScanning)
        await #expect(throws: problem) { try await second.scanForPeripherals(withServices: nil) }
        await #expect(throws: problem) { try await second.cancelPeripheralConnection(peripheral.identifier) }
        await second.shutDown()
        await second.simulateAppTermination()
        #expect(await first.isConnected(peripheral.identifier))
        #expect(await first.isScanning)
        #expect(await first.state == .poweredOn)
        // The first's termination still hands its identity over, to one relaunched manager.
        await first.simulateAppTermination()
        let relaunched = MockCentralManager(configuration: .init(restoreIdentifier: "app"), bridge: bridge)
        #expect(relaunched.identifier == first.identifier)
        #expect(await relaunched.isConnected(peripheral.identifier))
        let third = MockCentralManager(configuration: .init(restoreIdentifier: "app"), bridge: bridge)
        await #expect(throws: problem) { try await third.scanForPeripherals(withServices: nil) }
        #expect(await relaunched.isConnected(peripheral.identifier))
    }

    @Test("A second live peripheral with a restore identifier on the bridge is refused; the first is untouched")
    func secondLivePeripheralWithTheSameRestoreIdentifierIsRefused() async throws {
        let bridge = MockBLEBridge()
        let first = MockPeripheralManager(configuration: .init(restoreIdentifier: "watch"), bridge: bridge)
        _ = try await first.add(TestPeripherals.heartRate)
        try await first.startAdvertising(AdvertisementData(localName: "1"))
        let second = MockPeripheralManager(configuration: .init(restoreIdentifier: "watch"), bridge: bridge)
        let problem = Self.restoreProblem("watch", second.identifier, role: "peripheral")
        await #expect(throws: problem) { try await second.startAdvertising(AdvertisementData(localName: "2")) }
        #expect(await !second.isAdvertising)
        await second.shutDown()
        #expect(await first.isAdvertising)
        #expect(await first.services.map(\.uuid) == ["180D"])
        // Nor does a restore identifier given with an explicit identifier skip the check.
        let third = MockPeripheralManager(
            configuration: .init(restoreIdentifier: "watch", identifier: first.identifier), bridge: bridge)
        await #expect(throws: Self.restoreProblem("watch", first.identifier, role: "peripheral", given: true)) {
            try await third.add(TestPeripherals.heartRate)
        }
    }

    @Test("A central made after its predecessor with the same restore identifier shut down starts afresh under it")
    func aShutDownPredecessorsIdentifierStartsAfresh() async throws {
        let bridge = MockBLEBridge()
        let first = MockCentralManager(configuration: .init(restoreIdentifier: "app"), bridge: bridge)
        try await first.scanForPeripherals(withServices: nil)
        await first.shutDown()
        let second = MockCentralManager(configuration: .init(restoreIdentifier: "app"), bridge: bridge)
        #expect(second.identifier == first.identifier)
        // Not the shut-down one: powered on, scanning, nothing restored.
        #expect(await second.waitForPoweredOn() == .poweredOn)
        try await second.scanForPeripherals(withServices: nil)
        #expect(await second.isScanning)
        #expect(await second.restoredState == nil)
        // The first stays shut down, and a third while the second lives is refused.
        await #expect(throws: APIMisuseError.self) { try await first.scanForPeripherals(withServices: nil) }
        let third = MockCentralManager(configuration: .init(restoreIdentifier: "app"), bridge: bridge)
        await #expect(throws: Self.restoreProblem("app", first.identifier, role: "central")) {
            try await third.scanForPeripherals(withServices: nil)
        }
    }

    @Test("A shut-down central's calls reach nothing of its successor's, even once that one shut down too")
    func aShutDownCentralsCallsReachNothingOfItsSuccessors() async throws {
        let bridge = MockBLEBridge()
        let (peripheral, _) = try await TestPeripherals.advertisingHeartRate(on: bridge)
        let first = MockCentralManager(configuration: .init(restoreIdentifier: "app"), bridge: bridge)
        try await first.scanForPeripherals(withServices: nil)
        await first.shutDown()
        let second = MockCentralManager(configuration: .init(restoreIdentifier: "app"), bridge: bridge)
        try await second.scanForPeripherals(withServices: nil)
        try await second.connect(peripheral.identifier)
        // Refused, and the second's link and scan stay.
        await #expect(throws: APIMisuseError.managerShutDown(operation: "discoverServices")) {
            try await first.discoverServices(nil, for: peripheral.identifier)
        }
        await first.shutDown()
        #expect(await second.isConnected(peripheral.identifier))
        #expect(await second.isScanning)
        // Once the second shut down too, the first does not take the identifier back: a third
        // made then starts afresh under it.
        await second.shutDown()
        await #expect(throws: APIMisuseError.managerShutDown(operation: "connect")) {
            try await first.connect(peripheral.identifier)
        }
        #expect(await bridge.log.filter { $0.kind == .connected }.count == 1)
        let third = MockCentralManager(configuration: .init(restoreIdentifier: "app"), bridge: bridge)
        #expect(await third.waitForPoweredOn() == .poweredOn)
        try await third.connect(peripheral.identifier)
        #expect(await third.isConnected(peripheral.identifier))
        #expect(await !first.isConnected(peripheral.identifier))
    }

    /// A device's pending connection does not time out, nor end because the peripheral went
    /// quiet: it used to fail with `operationCancelled`, which CoreBluetooth reports only for the
    /// app's own cancellation.
    @Test("A connection pending to a peripheral that shut down stays pending, and its successor completes it")
    func aPendingConnectionOutlivesItsPeripheralsShutDown() async throws {
        let bridge = MockBLEBridge()
        let first = MockPeripheralManager(configuration: .init(restoreIdentifier: "watch"), bridge: bridge)
        try await first.startAdvertising(AdvertisementData(localName: "1"))
        let central = MockCentralManager(bridge: bridge)
        try await central.scanForPeripherals(withServices: nil)
        await central.stopScan()
        await first.stopAdvertising()
        let connect = Task { try await central.connect(first.identifier) }
        await bridge.waitUntil { $0.pendingOperations.count == 1 }
        await first.shutDown()
        #expect(await bridge.pendingOperations.count == 1)
        let second = MockPeripheralManager(configuration: .init(restoreIdentifier: "watch"), bridge: bridge)
        #expect(await second.waitForPoweredOn() == .poweredOn)
        try await second.startAdvertising(AdvertisementData(localName: "2"))
        try await connect.value
        #expect(await central.isConnected(second.identifier))
        #expect(await bridge.finish() == .clean)
    }

    // (It used to be refused as a second live peripheral with the restore identifier.)
    @Test("A peripheral made after its predecessor with the same restore identifier shut down starts afresh under it")
    func aShutDownPeripheralsIdentifierStartsAfresh() async throws {
        let bridge = MockBLEBridge()
        let first = MockPeripheralManager(configuration: .init(restoreIdentifier: "watch"), bridge: bridge)
        _ = try await first.add(TestPeripherals.heartRate)
        try await first.startAdvertising(AdvertisementData(localName: "1"))
        let central = MockCentralManager(bridge: bridge)
        try await central.scanForPeripherals(withServices: nil)
        try await central.connect(first.identifier)
        await first.shutDown()
        #expect(await !central.isConnected(first.identifier))
        let second = MockPeripheralManager(configuration: .init(restoreIdentifier: "watch"), bridge: bridge)
        #expect(second.identifier == first.identifier)
        // Not the shut-down one: powered on, its services and advertising gone with the first,
        // nothing restored.
        #expect(await second.waitForPoweredOn() == .poweredOn)
        #expect(await second.services.isEmpty)
        #expect(await !second.isAdvertising)
        #expect(await second.restoredState == nil)
        // It publishes and advertises, and a central connects to it and reads.
        _ = try await second.add(TestPeripherals.heartRate)
        try await second.startAdvertising(AdvertisementData(localName: "2"))
        try await central.connect(second.identifier)
        let found = try await central.discoverAll(for: second.identifier)
        let location = try #require(found.first { $0.uuid == TestPeripherals.bodyLocation })
        #expect(try await central.readValue(for: location) == Data([0x01]))
        // The first stays shut down, and nothing it is asked reaches the second.
        await #expect(throws: APIMisuseError.managerShutDown(operation: "add")) {
            try await first.add(TestPeripherals.heartRate)
        }
        await first.simulateStateChange(.poweredOff)
        await first.simulateDisconnection(of: central.identifier)
        await first.shutDown()
        #expect(await first.state == .unknown)
        #expect(await !first.isAdvertising)
        #expect(await first.services.isEmpty)
        #expect(await second.isAdvertising)
        #expect(await central.isConnected(second.identifier))
        // A third while the second lives is refused.
        let third = MockPeripheralManager(configuration: .init(restoreIdentifier: "watch"), bridge: bridge)
        await #expect(throws: Self.restoreProblem("watch", first.identifier, role: "peripheral")) {
            try await third.startAdvertising(AdvertisementData(localName: "3"))
        }
        #expect(await second.isAdvertising)
        // Once the second shut down too, the first does not take the identifier back: the next
        // manager starts afresh under it.
        await second.shutDown()
        await #expect(throws: APIMisuseError.managerShutDown(operation: "startAdvertising")) {
            try await first.startAdvertising(AdvertisementData(localName: "1"))
        }
        let next = MockPeripheralManager(configuration: .init(restoreIdentifier: "watch"), bridge: bridge)
        try await next.startAdvertising(AdvertisementData(localName: "4"))
        #expect(await next.isAdvertising)
        #expect(await !first.isAdvertising)
    }

    @Test("A relaunched app's peripheral takes over what the system kept; one made after it shut down starts afresh")
    func aRelaunchedPeripheralRestoresAndItsSuccessorStartsAfresh() async throws {
        let bridge = MockBLEBridge()
        let first = MockPeripheralManager(configuration: .init(restoreIdentifier: "watch"), bridge: bridge)
        _ = try await first.add(TestPeripherals.heartRate)
        try await first.startAdvertising(AdvertisementData(localName: "1"))
        await first.simulateAppTermination()
        // (The dead app's object: shutting it down leaves what the system keeps alone.)
        await first.shutDown()
        let relaunched = MockPeripheralManager(configuration: .init(restoreIdentifier: "watch"), bridge: bridge)
        #expect(relaunched.identifier == first.identifier)
        #expect(await relaunched.restoredState?.services.map(\.uuid) == ["180D"])
        #expect(await relaunched.isAdvertising)
        await relaunched.shutDown()
        let next = MockPeripheralManager(configuration: .init(restoreIdentifier: "watch"), bridge: bridge)
        #expect(next.identifier == first.identifier)
        #expect(await next.restoredState == nil)
        #expect(await next.services.isEmpty)
        _ = try await next.add(TestPeripherals.heartRate)
        try await next.startAdvertising(AdvertisementData(localName: "3"))
        #expect(await next.isAdvertising)
    }

    @Test("A peripheral made again after its predecessor shut down keeps the bonds the system holds")
    func aRecreatedPeripheralKeepsItsBonds() async throws {
        let bridge = MockBLEBridge()
        @Sendable func publish(_ peripheral: MockPeripheralManager) async throws {
            let service = try await peripheral.add(
                GATTService(
                    uuid: "FEE0",
                    characteristics: [
                        GATTCharacteristic(uuid: "FEE1", properties: .read, permissions: .readEncryptionRequired)
                    ]))
            try await peripheral.setValue(Data([0x5E]), for: service.characteristics[0])
            try await peripheral.startAdvertising(AdvertisementData(localName: "Lock", serviceUUIDs: ["FEE0"]))
        }
        let first = MockPeripheralManager(configuration: .init(restoreIdentifier: "lock"), bridge: bridge)
        try await publish(first)
        let central = MockCentralManager(configuration: .init(pairing: .onFirstAccess), bridge: bridge)
        try await central.scanForPeripherals(withServices: ["FEE0"])
        try await central.connect(first.identifier)
        let secret = try #require(try await central.discoverAll(for: first.identifier).first)
        #expect(try await central.readValue(for: secret) == Data([0x5E]))
        await first.shutDown()
        let second = MockPeripheralManager(configuration: .init(restoreIdentifier: "lock"), bridge: bridge)
        try await publish(second)
        #expect(await bridge.isBonded(central: central.identifier, peripheral: second.identifier))
        try await central.connect(second.identifier)
        let again = try #require(try await central.discoverAll(for: second.identifier).first)
        #expect(try await central.readValue(for: again) == Data([0x5E]))
        // Encrypted with the keys of the first pairing: no pairing this time.
        #expect(await bridge.log.filter { $0.kind == .paired }.count == 1)
    }

    @Test("A peripheral made again is where its predecessor was, its app still in the background")
    func aRecreatedPeripheralKeepsItsPlaceAndItsAppsBackground() async throws {
        let bridge = MockBLEBridge()
        let first = MockPeripheralManager(configuration: .init(restoreIdentifier: "watch"), bridge: bridge)
        await first.simulateProximityChange(.far)
        await first.simulateBackgroundExecution(true)
        await first.shutDown()
        let second = MockPeripheralManager(configuration: .init(restoreIdentifier: "watch"), bridge: bridge)
        _ = try await second.add(TestPeripherals.heartRate)
        let central = MockCentralManager(bridge: bridge)
        let events = central.events()
        try await central.scanForPeripherals(withServices: ["180D"])
        try await second.startAdvertising(AdvertisementData(localName: "Watch", serviceUUIDs: ["180D"]))
        await bridge.waitUntil { bridge in
            bridge.log.contains { $0.kind == .discovered && $0.peripheral == second.identifier }
        }
        var discovered: DiscoveredPeripheral?
        for await event in events {
            if case .discovered(let found) = event {
                discovered = found
                break
            }
        }
        #expect(discovered?.rssi == Proximity.far.rssi)
        // A backgrounded app's advertisement: no local name, its services in the overflow area.
        #expect(discovered?.advertisementData.localName == nil)
        #expect(discovered?.advertisementData.overflowServiceUUIDs == ["180D"])
    }

    @Test("A peripheral made again does not take its shut-down predecessor's unfinished start-up steps")
    func aRecreatedPeripheralSkipsItsPredecessorsStartUp() async throws {
        let bridge = MockBLEBridge()
        let first = MockPeripheralManager(
            configuration: .init(stateTransition: .realistic(duration: .milliseconds(100)), restoreIdentifier: "watch"),
            bridge: bridge)
        #expect(await first.state == .unknown)
        await first.shutDown()
        let second = MockPeripheralManager(configuration: .init(restoreIdentifier: "watch"), bridge: bridge)
        _ = try await second.add(TestPeripherals.heartRate)
        try await second.startAdvertising(AdvertisementData(localName: "2"))
        await bridge.advance(by: .milliseconds(200))
        #expect(await second.state == .poweredOn)
        #expect(await second.isAdvertising)
        #expect(await second.services.map(\.uuid) == ["180D"])
    }

    @Test("A central made again does not take its shut-down predecessor's unfinished start-up steps")
    func aRecreatedCentralSkipsItsPredecessorsStartUp() async throws {
        let bridge = MockBLEBridge()
        let first = MockCentralManager(
            configuration: .init(stateTransition: .realistic(duration: .milliseconds(100)), restoreIdentifier: "app"),
            bridge: bridge)
        #expect(await first.state == .unknown)
        await first.shutDown()
        let second = MockCentralManager(configuration: .init(restoreIdentifier: "app"), bridge: bridge)
        try await second.scanForPeripherals(withServices: nil)
        await bridge.advance(by: .milliseconds(200))
        #expect(await second.state == .poweredOn)
        #expect(await second.isScanning)
    }
}
