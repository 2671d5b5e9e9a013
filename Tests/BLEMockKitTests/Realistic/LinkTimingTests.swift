import BLECore
import BLEMockKit
import Foundation
import Testing

@Suite("Realistic: link timing fields", .timeLimit(.minutes(10)))
struct LinkTimingTests {
    /// Jitter-free timing with a 50 ms interval, 2 packets per event and a 2 s supervision timeout.
    static let custom = LinkTiming(
        connectionInterval: .milliseconds(50), jitter: .zero,
        connectionLatency: .milliseconds(100) ... .milliseconds(100),
        packetsPerConnectionEvent: 2, supervisionTimeout: .seconds(2))

    static func link(requestHandling: RequestHandling = .automatic) async throws
        -> (MockBLEBridge, MockPeripheralManager, MockCentralManager, RemoteCharacteristic)
    {
        let bridge = MockBLEBridge(configuration: .init(seed: 1, timing: custom))
        let (peripheral, _) = try await Realistic.advertisingPeripheral(
            on: bridge, configuration: .init(name: "Sensor", requestHandling: requestHandling))
        let central = MockCentralManager(configuration: .init(mtu: .fixed(23)), bridge: bridge)
        try await Realistic.discover(peripheral, by: central, on: bridge)
        let elapsed = try await Realistic.elapsed(on: bridge) { try await central.connect(peripheral.identifier) }
        // The connection latency plus one interval for the MTU exchange.
        #expect(elapsed == .milliseconds(150))
        let characteristics = try await central.discoverAll(for: peripheral.identifier)
        return (bridge, peripheral, central, try #require(characteristics.first { $0.uuid == RigUUID.value }))
    }

    @Test("connectionInterval sets the cost of each ATT round trip")
    func connectionInterval() async throws {
        let (bridge, _, central, value) = try await Self.link()
        #expect(
            try await Realistic.elapsed(on: bridge) {
                try await central.writeValue(testBytes(100), for: value, type: .withResponse)
            } == .milliseconds(7 * 50))
        #expect(
            try await Realistic.elapsed(on: bridge) { _ = try await central.readValue(for: value) }
                == .milliseconds(5 * 50))
    }

    @Test("packetsPerConnectionEvent sets how many queued writes each connection event carries")
    func packetsPerEvent() async throws {
        let (bridge, _, central, value) = try await Self.link(requestHandling: .manual)
        let start = await bridge.now
        for byte in UInt8(0)..<5 { try await central.writeValue(Data([byte]), for: value, type: .withoutResponse) }
        await bridge.advance(by: .milliseconds(200))
        let delivered = await bridge.log.filter { $0.kind == .writeRequest }
        #expect(delivered.map(\.value) == (0..<5).map { Data([UInt8($0)]) })
        #expect(
            delivered.map { start.duration(to: $0.time) } == [50, 50, 100, 100, 150].map { Duration.milliseconds($0) })
    }

    @Test("supervisionTimeout sets when an out-of-range peripheral's links drop")
    func supervisionTimeout() async throws {
        let (bridge, peripheral, central, _) = try await Self.link()
        let start = await bridge.now
        await peripheral.simulateProximityChange(.outOfRange)
        await bridge.advance(by: .milliseconds(1999))
        #expect(await central.isConnected(peripheral.identifier))
        await bridge.advance(by: .milliseconds(1))
        #expect(await !central.isConnected(peripheral.identifier))
        #expect(await bridge.log.last { $0.kind == .disconnected }?.time == start.advanced(by: .seconds(2)))
    }

    @Test("On a realistic bridge a scan hears an advertiser at its next advertising event: interval plus 0–10 ms")
    func scanWaitsForAdvertisement() async throws {
        let bridge = MockBLEBridge(configuration: .realistic(seed: 12))
        let peripheral = MockPeripheralManager(
            configuration: .init(advertisingInterval: .milliseconds(250)), bridge: bridge)
        try await peripheral.startAdvertising(AdvertisementData(localName: "Slow"))
        let central = MockCentralManager(bridge: bridge)
        try await central.scanForPeripherals(withServices: nil, options: ScanOptions(allowDuplicates: true))
        #expect(await bridge.log.filter { $0.kind == .discovered }.isEmpty)
        await bridge.advance(by: .seconds(1))
        let times = await bridge.log.filter { $0.kind == .discovered }.map(\.time)
        #expect(times.count == 3, "seed 12: \(times)")
        var previous = VirtualClock.Instant.zero
        for time in times {
            let gap = previous.duration(to: time)
            #expect(gap >= .milliseconds(250) && gap <= .milliseconds(260), "seed 12: \(times)")
            previous = time
        }
    }

    @Test("advertisingInterval sets the spacing of duplicate discoveries on a fast bridge")
    func advertisingInterval() async throws {
        let bridge = MockBLEBridge()
        let peripheral = MockPeripheralManager(
            configuration: .init(advertisingInterval: .milliseconds(250)), bridge: bridge)
        try await peripheral.startAdvertising(AdvertisementData(localName: "Slow"))
        let central = MockCentralManager(bridge: bridge)
        try await central.scanForPeripherals(withServices: nil, options: ScanOptions(allowDuplicates: true))
        await bridge.advance(by: .seconds(1))
        let times = await bridge.log.filter { $0.kind == .discovered }.map(\.time)
        #expect(times == [0, 250, 500, 750, 1000].map { Realistic.at(.milliseconds($0)) })
    }
}

@Suite("Realistic: a zero connection interval", .timeLimit(.minutes(10)))
struct ZeroIntervalTests {
    @Test("With a zero connection interval, a peripheral out of range with packets queued still times out")
    func outOfRangeWithZeroIntervalTimesOut() async throws {
        let timing = LinkTiming(connectionInterval: .zero)
        let bridge = MockBLEBridge(configuration: .init(seed: 1, timing: timing))
        let (peripheral, _) = try await Realistic.advertisingPeripheral(on: bridge)
        let (central, characteristics) = try await Realistic.connectedCentral(to: peripheral, on: bridge)
        let value = try #require(characteristics.first { $0.uuid == RigUUID.value })
        await peripheral.simulateProximityChange(.outOfRange)
        let start = await bridge.now
        try await central.writeValue(Data([1]), for: value, type: .withoutResponse)
        #expect(await bridge.run(maximumEvents: 100))
        #expect(await bridge.now == start.advanced(by: timing.supervisionTimeout))
        #expect(await !central.isConnected(peripheral.identifier))
        #expect(
            await bridge.log.last { $0.kind == .disconnected }?.error
                == .coreBluetooth(CoreBluetoothError(.connectionTimeout)))
    }
}
