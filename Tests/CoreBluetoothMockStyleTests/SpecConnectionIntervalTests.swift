import BLECBM
import BLECore
import BLEMockKit
import Foundation
import Testing

/// An app that connects to specs, discovers their first characteristic, and notes when, on the
/// bridge's clock, each read's answer reaches it.
final class ReadTimer: NSObject, CBMCentralManagerDelegate, CBMPeripheralDelegate {
    let clock: VirtualClock
    var manager: CBMCentralManager?
    /// The peripherals connected (an app keeps them: CoreBluetooth cancels the connection of one
    /// nobody keeps).
    var peripherals: [CBMPeripheral] = []
    var characteristics: [UUID: CBMCharacteristic] = [:]
    var answers: [UUID: [VirtualClock.Instant]] = [:]
    var disconnection: VirtualClock.Instant?

    init(clock: VirtualClock) { self.clock = clock }

    func centralManagerDidUpdateState(_ central: CBMCentralManager) {}

    func centralManager(_ central: CBMCentralManager, didConnect peripheral: CBMPeripheral) {
        peripheral.delegate = self
        peripheral.discoverServices(nil)
    }

    func centralManager(
        _ central: CBMCentralManager, didDisconnectPeripheral peripheral: CBMPeripheral, error: Error?
    ) {
        disconnection = clock.now
    }

    func peripheral(_ peripheral: CBMPeripheral, didDiscoverServices error: Error?) {
        for service in peripheral.services ?? [] { peripheral.discoverCharacteristics(nil, for: service) }
    }

    func peripheral(_ peripheral: CBMPeripheral, didDiscoverCharacteristicsFor service: CBMService, error: Error?) {
        characteristics[peripheral.identifier] = service.characteristics?.first
    }

    func peripheral(_ peripheral: CBMPeripheral, didUpdateValueFor characteristic: CBMCharacteristic, error: Error?) {
        answers[peripheral.identifier, default: []].append(clock.now)
    }

    /// Connects to `spec` and discovers its characteristic.
    @MainActor
    func connect(_ spec: CBMPeripheralSpec, on bridge: MockBLEBridge) async throws -> CBMPeripheral {
        let manager = try #require(manager)
        let peripheral = try #require(manager.retrievePeripherals(withIdentifiers: [spec.identifier]).first)
        peripherals.append(peripheral)
        manager.connect(peripheral)
        try await bridge.waitForApp { self.characteristics[peripheral.identifier] != nil }
        return peripheral
    }

    /// How long a read of the peripheral's characteristic takes to be answered.
    @MainActor
    func readTime(of peripheral: CBMPeripheral, on bridge: MockBLEBridge) async throws -> Duration {
        let characteristic = try #require(characteristics[peripheral.identifier])
        let before = answers[peripheral.identifier]?.count ?? 0
        let start = clock.now
        peripheral.readValue(for: characteristic)
        try await bridge.waitForApp { (self.answers[peripheral.identifier]?.count ?? 0) > before }
        return start.duration(to: try #require(answers[peripheral.identifier]?.last))
    }
}

// CoreBluetoothMock completes every GATT operation on a spec one `connectionInterval` later, so
// tests give a spec a long interval to exercise their timeouts and slow-device paths. The kit
// makes the interval the peripheral's connection parameter request, which the central grants
// within its own rules; in fast mode nothing takes time.
@Suite("A spec's connection interval", .timeLimit(.minutes(10)), .finishesOwnBridges)
struct SpecConnectionIntervalTests {
    /// A known, connectable spec with a readable characteristic; `connectionInterval` `nil`
    /// leaves the builder's default.
    static func makeTag(
        _ name: String, connectionInterval: TimeInterval?, supervisionTimeout: TimeInterval = 4.0
    ) -> CBMPeripheralSpec {
        let builder = CBMPeripheralSpec.simulatePeripheral(proximity: .near)
            .advertising(advertisementData: [CBMAdvertisementDataLocalNameKey: name], withInterval: 0.100)
        let services = [CBMServiceMock(type: .batteryService, primary: true, characteristics: batteryLevelMock())]
        let connectable =
            connectionInterval.map {
                builder.connectable(
                    name: name, services: services, delegate: ReadCounter(), connectionInterval: $0,
                    supervisionTimeout: supervisionTimeout)
            }
            ?? builder.connectable(
                name: name, services: services, delegate: ReadCounter(), supervisionTimeout: supervisionTimeout)
        return connectable.allowForRetrieval().build()
    }

    /// How long a read of each of `specs` takes on a new bridge, one after the other, and the
    /// bridge's log.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    static func readTimes(
        _ specs: [CBMPeripheralSpec], realistic: Bool = true, seed: UInt64
    ) async throws -> (times: [Duration], log: [String]) {
        let bridge = CoreBluetoothMockParityTests.bridge(realistic: realistic, seed: seed)
        let times = try await bridge.run { @MainActor () -> [Duration] in
            CBMCentralManagerMock.simulatePeripherals(specs)
            let app = ReadTimer(clock: bridge.clock)
            let manager = CBMCentralManagerMock(delegate: app, queue: nil)
            app.manager = manager
            try await bridge.waitForApp { manager.state == .poweredOn }
            var peripherals: [CBMPeripheral] = []
            for spec in specs { peripherals.append(try await app.connect(spec, on: bridge)) }
            var times: [Duration] = []
            for peripheral in peripherals { times.append(try await app.readTime(of: peripheral, on: bridge)) }
            return times
        }
        return (times, await bridge.log.map { "\($0)" })
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test("In realistic timing a read on a spec with a 0.5 s interval takes about one interval; with the default, less")
    func aLongIntervalSlowsTheSpecsReads() async throws {
        let slow = Self.makeTag("Slow", connectionInterval: 0.5)
        let plain = Self.makeTag("Plain", connectionInterval: nil)
        #expect(slow.connectionInterval == 0.5)
        #expect(plain.connectionInterval == 0.045)
        let slowTime = try #require(try await Self.readTimes([slow], seed: 30).times.first)
        let plainTime = try #require(try await Self.readTimes([plain], seed: 30).times.first)
        // One interval, give or take the bridge's 2 ms of jitter.
        #expect(slowTime >= .milliseconds(498) && slowTime <= .milliseconds(502), "seed 30: \(slowTime)")
        #expect(plainTime >= .milliseconds(43) && plainTime <= .milliseconds(47), "seed 30: \(plainTime)")
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test("Two specs with different intervals on one bridge each keep their own")
    func eachSpecKeepsItsOwnInterval() async throws {
        let slow = Self.makeTag("Slow", connectionInterval: 0.5)
        let brisk = Self.makeTag("Brisk", connectionInterval: 0.1)
        let times = try await Self.readTimes([slow, brisk], seed: 31).times
        #expect(times.count == 2)
        #expect(times[0] >= .milliseconds(498) && times[0] <= .milliseconds(502), "seed 31: \(times)")
        #expect(times[1] >= .milliseconds(98) && times[1] <= .milliseconds(102), "seed 31: \(times)")
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test("A peripheral of the async API on the same bridge keeps the bridge's interval")
    func theAsyncAPIsPeripheralsAreUnaffected() async throws {
        let slow = Self.makeTag("Slow", connectionInterval: 0.5)
        let bridge = CoreBluetoothMockParityTests.bridge(realistic: true, seed: 32)
        let uuid: BluetoothUUID = "C0FFEE00-0000-4000-8000-00805F9B0001"
        let plain = MockPeripheralManager(configuration: .init(name: "Plain"), bridge: bridge)
        let central = MockCentralManager(configuration: .realistic(seed: 32), bridge: bridge)
        let (specTime, asyncTime) = try await bridge.run { @MainActor () -> (Duration, Duration) in
            CBMCentralManagerMock.simulatePeripherals([slow])
            let app = ReadTimer(clock: bridge.clock)
            let manager = CBMCentralManagerMock(delegate: app, queue: nil)
            app.manager = manager
            try await bridge.waitForApp { manager.state == .poweredOn }
            let specTime = try await app.readTime(of: try await app.connect(slow, on: bridge), on: bridge)
            _ = try await plain.add(
                GATTService(
                    uuid: uuid,
                    characteristics: [
                        GATTCharacteristic(uuid: uuid, properties: .read, permissions: .readable, value: Data([7]))
                    ]))
            try await plain.startAdvertising(AdvertisementData(localName: "Plain", serviceUUIDs: [uuid]))
            try await central.scanForPeripherals(withServices: [uuid])
            await bridge.waitUntil { bridge in
                bridge.log.contains { $0.kind == .discovered && $0.peripheral == plain.identifier }
            }
            try await central.connect(plain.identifier)
            let characteristic = try #require(try await central.discoverAll(for: plain.identifier).first)
            let start = bridge.clock.now
            _ = try await central.readValue(for: characteristic)
            return (specTime, start.duration(to: bridge.clock.now))
        }
        #expect(specTime >= .milliseconds(498), "seed 32: \(specTime)")
        // The bridge's 30 ms, give or take its 2 ms of jitter.
        #expect(asyncTime >= .milliseconds(28) && asyncTime <= .milliseconds(32), "seed 32: \(asyncTime)")
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test("The same seed gives byte-identical bridge logs", arguments: [UInt64(33), 34])
    func theSameSeedGivesTheSameLog(seed: UInt64) async throws {
        let specs = { [Self.makeTag("Slow", connectionInterval: 0.5), Self.makeTag("Brisk", connectionInterval: 0.1)] }
        let first = try await Self.readTimes(specs(), seed: seed)
        let second = try await Self.readTimes(specs(), seed: seed)
        #expect(first.log == second.log)
        #expect(first.times == second.times)
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test("In fast mode a spec's interval costs nothing: reads are instant")
    func fastModeStaysInstant() async throws {
        let slow = Self.makeTag("Slow", connectionInterval: 0.5)
        let plain = Self.makeTag("Plain", connectionInterval: nil)
        #expect(try await Self.readTimes([slow, plain], realistic: false, seed: 35).times == [.zero, .zero])
    }

    /// An interval a spec may be given out of the range a link can have.
    enum OddValue: String, CaseIterable, Sendable {
        case negative, negativeInfinity, nan, zero, tiny, offUnit, huge, infinity

        var given: TimeInterval {
            switch self {
            case .negative: -1
            case .negativeInfinity: -.infinity
            case .nan: .nan
            case .zero: 0
            case .tiny: 0.000_1
            case .offUnit: 0.1004
            case .huge: 1e12
            case .infinity: .infinity
            }
        }

        /// What the link gets: negative or NaN is the builder's default (45 ms), as a bad
        /// supervision timeout or advertising interval is the default one; the rest is rounded to
        /// the Core specification's 1.25 ms unit and kept within 7.5 ms…4 s.
        var taken: Duration {
            switch self {
            case .negative, .negativeInfinity, .nan: .milliseconds(45)
            case .zero, .tiny: .microseconds(7_500)
            case .offUnit: .milliseconds(100)
            case .huge, .infinity: .seconds(4)
            }
        }
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(arguments: OddValue.allCases)
    func aBadIntervalIsTakenAsTheDefaultOrKeptWithinWhatALinkCanHave(value: OddValue) async throws {
        let tag = Self.makeTag("Odd", connectionInterval: value.given)
        // The spec keeps what it was given.
        let kept = try #require(tag.connectionInterval)
        #expect(kept == value.given || (kept.isNaN && value.given.isNaN))
        let time = try #require(try await Self.readTimes([tag], seed: 36).times.first)
        let jitter = Duration.milliseconds(2)
        #expect(time >= value.taken - jitter && time <= value.taken + jitter, "seed 36: \(time)")
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test("A supervision timeout not above twice the interval becomes the shortest the Core specification allows")
    func aTooShortSupervisionTimeoutIsLengthened() async throws {
        // 3 s of interval needs more than 6 s: 6.01 s, the next 10 ms step, in place of 4 s.
        let tag = Self.makeTag("Slow", connectionInterval: 3, supervisionTimeout: 4)
        #expect(tag.supervisionTimeout == 4)
        let bridge = CoreBluetoothMockParityTests.bridge(realistic: true, seed: 37)
        let (stillConnected, after) = try await bridge.run { @MainActor () -> (Bool, Duration) in
            CBMCentralManagerMock.simulatePeripherals([tag])
            let app = ReadTimer(clock: bridge.clock)
            let manager = CBMCentralManagerMock(delegate: app, queue: nil)
            app.manager = manager
            try await bridge.waitForApp { manager.state == .poweredOn }
            let peripheral = try await app.connect(tag, on: bridge)
            let start = bridge.clock.now
            tag.simulateReset()
            await bridge.advance(to: start.advanced(by: .milliseconds(6_009)))
            let stillConnected = peripheral.state == .connected && app.disconnection == nil
            try await bridge.waitForApp { app.disconnection != nil }
            return (stillConnected, start.duration(to: try #require(app.disconnection)))
        }
        #expect(stillConnected)
        #expect(after == .milliseconds(6_010))
    }
}
