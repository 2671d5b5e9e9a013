import BLECore
import BLEMockKit
import Foundation
import Testing

@Suite("Connection events and ANCS", .timeLimit(.minutes(10)))
struct ConnectionEventTests {
    /// Two peripherals (a heart-rate sensor and a lock) on one bridge.
    struct World {
        let bridge = MockBLEBridge()
        let sensor: MockPeripheralManager
        let lock: MockPeripheralManager

        init(lockRequestsANCS: Bool = false) async throws {
            sensor = MockPeripheralManager(bridge: bridge)
            lock = MockPeripheralManager(
                configuration: .init(requestsANCSAuthorization: lockRequestsANCS), bridge: bridge)
            _ = try await sensor.add(GATTService(uuid: "180D", characteristics: []))
            try await sensor.startAdvertising(AdvertisementData(localName: "HRM"))
            try await lock.startAdvertising(AdvertisementData(localName: "Lock", serviceUUIDs: ["FEE0"]))
        }

        func central(_ configuration: MockCentralManager.Configuration = .init()) async throws -> MockCentralManager {
            let central = MockCentralManager(configuration: configuration, bridge: bridge)
            try await central.scanForPeripherals(withServices: nil)
            await central.stopScan()
            return central
        }

        /// The connection events `central` was told of, as (event, peripheral) pairs.
        func events(of central: MockCentralManager) async -> [String] {
            await bridge.log.filter { $0.kind == .connectionEvent && $0.central == central.identifier }.map {
                "\($0.detail ?? "") \($0.peripheral == sensor.identifier ? "sensor" : "lock")"
            }
        }
    }

    @Test func aRegisteredCentralHearsOfOtherManagersConnectionsToMatchingPeripherals() async throws {
        let world = try await World()
        let watcher = try await world.central()
        let stream = watcher.events()
        await watcher.registerForConnectionEvents(options: ConnectionEventOptions(serviceUUIDs: ["180D"]))
        let other = try await world.central()
        try await other.connect(world.sensor.identifier)
        try await other.connect(world.lock.identifier)
        try await other.cancelPeripheralConnection(world.sensor.identifier)
        #expect(await world.events(of: watcher) == ["peerConnected sensor", "peerDisconnected sensor"])
        let events = await stream.prefixArray(2)
        #expect(
            events == [
                .connectionEvent(.peerConnected, RemotePeripheral(identifier: world.sensor.identifier, name: "HRM")),
                .connectionEvent(.peerDisconnected, RemotePeripheral(identifier: world.sensor.identifier, name: "HRM")),
            ])
    }

    @Test func peripheralIdentifiersAndAdvertisedServicesMatchToo() async throws {
        let world = try await World()
        let byIdentifier = try await world.central()
        await byIdentifier.registerForConnectionEvents(
            options: ConnectionEventOptions(peripheralIdentifiers: [world.lock.identifier]))
        let byAdvertisedService = try await world.central()
        await byAdvertisedService.registerForConnectionEvents(options: ConnectionEventOptions(serviceUUIDs: ["FEE0"]))
        let everything = try await world.central()
        await everything.registerForConnectionEvents(options: nil)
        let unregistered = try await world.central()

        try await unregistered.connect(world.sensor.identifier)
        try await unregistered.connect(world.lock.identifier)
        await world.bridge.simulate(.reset(peripheral: world.lock.identifier))

        #expect(await world.events(of: byIdentifier) == ["peerConnected lock", "peerDisconnected lock"])
        #expect(await world.events(of: byAdvertisedService) == ["peerConnected lock", "peerDisconnected lock"])
        #expect(
            await world.events(of: everything) == [
                "peerConnected sensor", "peerConnected lock", "peerDisconnected lock",
            ])
        #expect(await world.events(of: unregistered).isEmpty)
    }

    @Test func registeringAgainReplacesTheOptions() async throws {
        let world = try await World()
        let watcher = try await world.central()
        await watcher.registerForConnectionEvents(options: ConnectionEventOptions(serviceUUIDs: ["180D"]))
        await watcher.registerForConnectionEvents(options: ConnectionEventOptions(serviceUUIDs: ["FEE0"]))
        try await watcher.connect(world.sensor.identifier)
        try await watcher.connect(world.lock.identifier)
        #expect(await world.events(of: watcher) == ["peerConnected lock"])
    }

    @Test func optionsMatchByServiceOrIdentifierAndEmptyOptionsMatchEverything() {
        let id = UUID()
        #expect(ConnectionEventOptions().matches(identifier: id, services: []))
        #expect(ConnectionEventOptions(serviceUUIDs: ["180D"]).matches(identifier: id, services: ["180F", "180D"]))
        #expect(!ConnectionEventOptions(serviceUUIDs: ["180D"]).matches(identifier: id, services: ["180F"]))
        #expect(ConnectionEventOptions(peripheralIdentifiers: [id]).matches(identifier: id, services: []))
        #expect(!ConnectionEventOptions(peripheralIdentifiers: [UUID()]).matches(identifier: id, services: ["180D"]))
        #expect(ConnectionEvent.peerConnected.rawValue == 1 && ConnectionEvent.peerDisconnected.rawValue == 0)
    }

    @Test func anANCSRequestingPeripheralGetsTheUsersDecisionOnConnecting() async throws {
        let world = try await World(lockRequestsANCS: true)
        let central = try await world.central(.init(grantsANCSAuthorization: true))
        let stream = central.events()
        try await central.connect(world.lock.identifier)
        #expect(await central.isANCSAuthorized(world.lock.identifier))
        let lock = RemotePeripheral(identifier: world.lock.identifier, name: "Lock")
        #expect(await stream.prefixArray(2) == [.connected(lock), .ancsAuthorizationUpdated(lock, isAuthorized: true)])

        // The user revokes it in Settings, then grants it again.
        await central.simulateANCSAuthorizationChange(false, for: world.lock.identifier)
        #expect(await !central.isANCSAuthorized(world.lock.identifier))
        await central.simulateANCSAuthorizationChange(false, for: world.lock.identifier)  // no change, no event
        await central.simulateANCSAuthorizationChange(true, for: world.lock.identifier)
        #expect(
            await stream.prefixArray(2) == [
                .ancsAuthorizationUpdated(lock, isAuthorized: false),
                .ancsAuthorizationUpdated(lock, isAuthorized: true),
            ])
        #expect(
            await world.bridge.log.filter { $0.kind == .ancsAuthorization }.compactMap(\.detail) == [
                "authorized", "not authorized", "authorized",
            ])

        // Disconnected, it is no longer authorized until it connects again.
        try await central.cancelPeripheralConnection(world.lock.identifier)
        #expect(await !central.isANCSAuthorized(world.lock.identifier))
    }

    @Test func peripheralsThatDoNotRequestANCSGetNoDecision() async throws {
        let world = try await World(lockRequestsANCS: false)
        let central = try await world.central(.init(grantsANCSAuthorization: true))
        try await central.connect(world.lock.identifier)
        await central.simulateANCSAuthorizationChange(true, for: world.lock.identifier)
        #expect(await !central.isANCSAuthorized(world.lock.identifier))
        #expect(await !world.bridge.log.contains { $0.kind == .ancsAuthorization })
    }

    @Test func aDeniedRequestIsReportedAsUnauthorized() async throws {
        let world = try await World(lockRequestsANCS: true)
        let central = try await world.central()
        try await central.connect(world.lock.identifier)
        #expect(await !central.isANCSAuthorized(world.lock.identifier))
        #expect(await world.bridge.log.last { $0.kind == .ancsAuthorization }?.detail == "not authorized")
    }
}
