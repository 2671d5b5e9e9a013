import BLECore
import Foundation
import Testing

@testable import BLEMockKit

/// Every (entity, purpose) draws from its own seeded stream, and derived identifiers depend on
/// a manager's role and name, so an unrelated manager added to a test never changes what
/// another link does: its MTUs, its timing, its identifier.
@Suite("Seeded streams: unrelated managers never perturb each other", .timeLimit(.minutes(10)))
struct StreamIndependenceTests {
    /// What the sensor's link did over four reconnects: each link's ATT_MTU, and the log of
    /// the pair (time, kind, detail), leaving out what other managers did.
    struct Run: Equatable {
        var mtus: [Int] = []
        var log: [String] = []
    }

    /// A realistic run: a sensor drawing its MTU and RSSI, a central drawing its MTU, four
    /// connections with a notification each; with `bystander`, another central scans the
    /// whole time (drawing RSSI values from the sensor's advertisements).
    static func run(bystander: Bool) async throws -> Run {
        let bridge = MockBLEBridge(configuration: .realistic(seed: 11))
        let sensor = MockPeripheralManager(
            configuration: .init(
                name: "Sensor", mtu: .realistic(23...517), advertisingInterval: .milliseconds(20), rssiVariation: 8),
            bridge: bridge)
        let local = try await sensor.add(Rig.testService)
        try await sensor.startAdvertising(AdvertisementData(localName: "Sensor", serviceUUIDs: [RigUUID.service]))
        let central = MockCentralManager(configuration: .init(mtu: .realistic(23...517)), bridge: bridge)
        if bystander {
            let scanner = MockCentralManager(bridge: bridge)
            try await scanner.scanForPeripherals(withServices: nil, options: ScanOptions(allowDuplicates: true))
        }
        try await central.scanForPeripherals(withServices: [RigUUID.service])
        await bridge.advance(by: .milliseconds(200))
        await central.stopScan()
        var run = Run()
        for _ in 0..<4 {
            try await central.connect(sensor.identifier)
            let limit = try await central.maximumWriteValueLength(for: sensor.identifier, type: .withoutResponse)
            run.mtus.append(limit + 3)
            let service = try await central.discoverServices([RigUUID.service], for: sensor.identifier)[0]
            let value = try await central.discoverCharacteristics([RigUUID.value], for: service)[0]
            try await central.setNotifyValue(true, for: value)
            _ = try await sensor.updateValue(Data([1, 2, 3]), for: local.characteristic(RigUUID.value)!)
            await bridge.advance(by: .milliseconds(500))
            try await central.cancelPeripheralConnection(sensor.identifier)
            await bridge.advance(by: .milliseconds(100))
        }
        run.log = await bridge.log.filter { $0.central == central.identifier }.map {
            "\($0.time) \($0.kind) \($0.detail ?? "")"
        }
        return run
    }

    @Test("A central that only scans changes neither another link's MTUs nor its timing")
    func aScanningCentralPerturbsNothing() async throws {
        let alone = try await Self.run(bystander: false)
        let watched = try await Self.run(bystander: true)
        #expect(alone.mtus.count == 4)
        #expect(Set(alone.mtus).count > 1, "the draws vary from link to link: \(alone.mtus)")
        #expect(watched == alone)
    }

    @Test("A manager's streams are children of its own stream, one per purpose")
    func streamsArePerPurpose() {
        let base = SeededGenerator(seed: 5)
        var streams = World.Streams(base)
        var mtu = base.derived("mtu")
        var rssi = base.derived("rssi")
        #expect(streams.mtu.next() == mtu.next())
        #expect(streams.rssi.next() == rssi.next())
        // Drawing from one leaves the others where they were.
        for _ in 0..<10 { _ = streams.rssi.next() }
        #expect(streams.mtu.next() == mtu.next())
        var advertising = base.derived("advertising")
        var connection = base.derived("connection")
        var injection = base.derived("injection")
        #expect(streams.advertising.next() == advertising.next())
        #expect(streams.connection.next() == connection.next())
        #expect(streams.injection.next() == injection.next())
    }

    @Test("A named peripheral's identifier does not depend on peripherals created before it")
    func namedIdentifiersAreStable() {
        let quiet = MockBLEBridge(configuration: .realistic(seed: 3))
        let alone = MockPeripheralManager(configuration: .init(name: "Watch"), bridge: quiet)
        let busy = MockBLEBridge(configuration: .realistic(seed: 3))
        _ = MockPeripheralManager(configuration: .init(name: "Scale"), bridge: busy)
        _ = MockPeripheralManager(bridge: busy)
        _ = MockCentralManager(bridge: busy)
        let later = MockPeripheralManager(configuration: .init(name: "Watch"), bridge: busy)
        #expect(later.identifier == alone.identifier)
        // A second manager of the same name gets an identifier of its own.
        let twin = MockPeripheralManager(configuration: .init(name: "Watch"), bridge: busy)
        #expect(twin.identifier != later.identifier)
    }

    @Test("Unnamed managers are numbered per role, and a restore identifier names its manager")
    func unnamedAndRestoredIdentifiers() {
        let one = MockBLEBridge(configuration: .realistic(seed: 3))
        let first = MockCentralManager(bridge: one)
        let two = MockBLEBridge(configuration: .realistic(seed: 3))
        _ = MockPeripheralManager(bridge: two)
        _ = MockCentralManager(configuration: .init(restoreIdentifier: "app"), bridge: two)
        #expect(MockCentralManager(bridge: two).identifier == first.identifier)
        let restored = MockCentralManager(configuration: .init(restoreIdentifier: "app"), bridge: one)
        #expect(
            restored.identifier
                == one.makeIdentifier(role: .central, restoreIdentifier: "app"))
        #expect(restored.identifier != first.identifier)
    }

    @Test("Derived identifiers depend on the bridge's seed")
    func identifiersFollowTheSeed() {
        let a = MockCentralManager(bridge: MockBLEBridge(configuration: .realistic(seed: 1)))
        let b = MockCentralManager(bridge: MockBLEBridge(configuration: .realistic(seed: 2)))
        let c = MockCentralManager(bridge: MockBLEBridge(configuration: .realistic(seed: 1)))
        #expect(a.identifier != b.identifier)
        #expect(a.identifier == c.identifier)
    }
}
