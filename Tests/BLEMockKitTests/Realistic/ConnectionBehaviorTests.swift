import BLECore
import BLEMockKit
import Foundation
import Testing

@Suite("Realistic: connection behaviour", .timeLimit(.minutes(10)))
struct ConnectionBehaviorTests {
    @Test("failureProbability 1 fails every attempt with connectionFailed and a failedToConnect event")
    func alwaysFails() async throws {
        let bridge = MockBLEBridge()
        let (peripheral, _) = try await Realistic.advertisingPeripheral(on: bridge)
        let central = MockCentralManager(configuration: .init(connection: .init(failureProbability: 1)), bridge: bridge)
        try await Realistic.discover(peripheral, by: central, on: bridge)
        let events = central.events()
        for _ in 0..<3 {
            await #expect(throws: CoreBluetoothError(.connectionFailed)) {
                try await central.connect(peripheral.identifier)
            }
        }
        #expect(await !central.isConnected(peripheral.identifier))
        let failure = CentralEvent.failedToConnect(
            RemotePeripheral(identifier: peripheral.identifier, name: "Sensor"), CoreBluetoothError(.connectionFailed))
        #expect(await events.prefixArray(3) == [failure, failure, failure])
        let failed = await bridge.log.filter { $0.kind == .connectionFailed }
        #expect(
            failed.map(\.error) == Array(repeating: .coreBluetooth(CoreBluetoothError(.connectionFailed)), count: 3))
        #expect(await bridge.log.filter { $0.kind == .connected }.isEmpty)
    }

    /// Ten attempts at failure probability 0.5 with a central seed; `true` where it connected.
    static func pattern(centralSeed: UInt64, bridgeSeed: UInt64) async throws -> [Bool] {
        let bridge = MockBLEBridge(seed: bridgeSeed)
        let (peripheral, _) = try await Realistic.advertisingPeripheral(on: bridge)
        let central = MockCentralManager(
            configuration: .init(connection: .init(failureProbability: 0.5), seed: centralSeed), bridge: bridge)
        try await Realistic.discover(peripheral, by: central, on: bridge)
        var outcomes: [Bool] = []
        for _ in 0..<10 {
            do {
                try await central.connect(peripheral.identifier)
                outcomes.append(true)
                try await central.cancelPeripheralConnection(peripheral.identifier)
            } catch let error as CoreBluetoothError {
                #expect(error == CoreBluetoothError(.connectionFailed))
                outcomes.append(false)
            }
        }
        return outcomes
    }

    @Test("failureProbability 0.5 with a seed fails a fixed, mixed pattern of attempts")
    func seededFailures() async throws {
        let first = try await Self.pattern(centralSeed: 21, bridgeSeed: 0)
        let second = try await Self.pattern(centralSeed: 21, bridgeSeed: 0)
        #expect(first == second)
        #expect(first.contains(true) && first.contains(false), "central seed 21: \(first)")
        // The central's own seed rules its draws, whatever the bridge's seed.
        #expect(try await Self.pattern(centralSeed: 21, bridgeSeed: 77) == first)
    }

    /// Two advertising peripherals ("Sensor", "Second") and a central with a connection limit
    /// of 1 that discovered both, on a fast bridge.
    static func limitedCentral() async throws -> (
        MockBLEBridge, MockPeripheralManager, MockPeripheralManager, MockCentralManager
    ) {
        let bridge = MockBLEBridge()
        let (first, _) = try await Realistic.advertisingPeripheral(on: bridge)
        let (second, _) = try await Realistic.advertisingPeripheral(on: bridge, configuration: .init(name: "Second"))
        let central = MockCentralManager(configuration: .init(connection: .init(limit: 1)), bridge: bridge)
        try await Realistic.discover(first, by: central, on: bridge)
        try await Realistic.discover(second, by: central, on: bridge)
        return (bridge, first, second, central)
    }

    @Test("A connection limit of 1 refuses a second peripheral with connectionLimitReached and keeps the first link")
    func connectionLimit() async throws {
        let (_, first, second, central) = try await Self.limitedCentral()
        try await central.connect(first.identifier)
        let events = central.events()
        await #expect(throws: CoreBluetoothError(.connectionLimitReached)) {
            try await central.connect(second.identifier)
        }
        #expect(await central.isConnected(first.identifier))
        #expect(await !central.isConnected(second.identifier))
        #expect(
            await events.prefixArray(1) == [
                .failedToConnect(
                    RemotePeripheral(identifier: second.identifier, name: "Second"),
                    CoreBluetoothError(.connectionLimitReached))
            ])
        // Once the first link is gone, the second peripheral connects.
        try await central.cancelPeripheralConnection(first.identifier)
        try await central.connect(second.identifier)
        #expect(await central.isConnected(second.identifier))
    }

    @Test("The connection limit holds when links come up: of two pending attempts under a limit of 1, one connects")
    func connectionLimitAtCompletion() async throws {
        let (bridge, first, second, central) = try await Self.limitedCentral()
        // Neither is connectable yet: both attempts start with no link up and pass the check.
        await first.stopAdvertising()
        await second.stopAdvertising()
        let one = Task { try await central.connect(first.identifier) }
        let two = Task { try await central.connect(second.identifier) }
        await bridge.waitUntil { $0.pendingOperations.count == 2 }
        try await first.startAdvertising(AdvertisementData(localName: "Sensor"))
        try await one.value
        try await second.startAdvertising(AdvertisementData(localName: "Second"))
        await #expect(throws: CoreBluetoothError(.connectionLimitReached)) { try await two.value }
        #expect(await central.isConnected(first.identifier))
        #expect(await !central.isConnected(second.identifier))
        #expect(
            await bridge.log.filter { $0.kind == .connectionFailed }.map(\.error) == [
                .coreBluetooth(CoreBluetoothError(.connectionLimitReached))
            ])
    }

    @Test("A fixed connection latency of 200 ms plus the MTU exchange makes connecting take exactly 230 ms")
    func fixedLatency() async throws {
        let bridge = Realistic.steadyBridge()
        let (peripheral, _) = try await Realistic.advertisingPeripheral(on: bridge)
        let central = MockCentralManager(
            configuration: .init(connection: .init(latency: .milliseconds(200) ... .milliseconds(200))), bridge: bridge)
        try await Realistic.discover(peripheral, by: central, on: bridge)
        let elapsed = try await Realistic.elapsed(on: bridge) { try await central.connect(peripheral.identifier) }
        #expect(elapsed == .milliseconds(230))
        let connected = await bridge.log.last { $0.kind == .connected }
        let connecting = await bridge.log.last { $0.kind == .connecting }
        #expect(try #require(connecting).time.duration(to: try #require(connected).time) == .milliseconds(230))
    }

    @Test("The bridge's connection latency (50–150 ms) plus one interval bounds a realistic connection")
    func defaultLatency() async throws {
        for seed in UInt64(1)...3 {
            let bridge = Realistic.steadyBridge(seed: seed)
            let (peripheral, _) = try await Realistic.advertisingPeripheral(on: bridge)
            let central = MockCentralManager(bridge: bridge)
            try await Realistic.discover(peripheral, by: central, on: bridge)
            let elapsed = try await Realistic.elapsed(on: bridge) { try await central.connect(peripheral.identifier) }
            #expect(elapsed >= .milliseconds(80) && elapsed <= .milliseconds(180), "seed \(seed): \(elapsed)")
        }
    }

    @Test("On a fast bridge, connecting takes no virtual time, unless the central sets a latency")
    func fastConnect() async throws {
        let bridge = MockBLEBridge()
        let (peripheral, _) = try await Realistic.advertisingPeripheral(on: bridge)
        let (other, _) = try await Realistic.advertisingPeripheral(on: bridge, configuration: .init(name: "Other"))
        let central = MockCentralManager(bridge: bridge)
        try await Realistic.discover(peripheral, by: central, on: bridge)
        try await central.connect(peripheral.identifier)
        #expect(await bridge.now == .zero)
        let slow = MockCentralManager(
            configuration: .init(connection: .init(latency: .milliseconds(200) ... .milliseconds(200))), bridge: bridge)
        try await Realistic.discover(other, by: slow, on: bridge)
        try await slow.connect(other.identifier)
        #expect(await bridge.now == Realistic.at(.milliseconds(200)))
    }
}

@Suite("Realistic: connection attempts and power", .timeLimit(.minutes(10)))
struct ConnectionAttemptPowerTests {
    @Test("Powering a central off ends its pending connection attempt: it does not connect after powering on again")
    func poweredOffAttemptIsForgotten() async throws {
        let bridge = MockBLEBridge()
        let (peripheral, _) = try await Realistic.advertisingPeripheral(on: bridge)
        let central = MockCentralManager(bridge: bridge)
        try await Realistic.discover(peripheral, by: central, on: bridge)
        await peripheral.stopAdvertising()
        let attempt = Task { try await central.connect(peripheral.identifier) }
        await bridge.waitUntil { $0.log.last?.kind == .connecting }
        await central.simulateStateChange(.poweredOff)
        // As CoreBluetooth reports it: the connection failed (it never came up).
        await #expect(throws: CoreBluetoothError(.connectionFailed)) { try await attempt.value }
        await central.simulateStateChange(.poweredOn)
        try await peripheral.startAdvertising(AdvertisementData(localName: "Back"))
        await bridge.run()
        // The app never asked to connect again: no link may appear.
        #expect(await !central.isConnected(peripheral.identifier))
        #expect(await bridge.log.filter { $0.kind == .connected }.isEmpty)
    }
}
