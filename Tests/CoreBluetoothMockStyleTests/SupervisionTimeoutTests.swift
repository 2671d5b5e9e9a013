import BLECBM
import BLEMockKit
import Foundation
import Testing

/// A spec delegate that counts the read requests reaching the device.
final class ReadCounter: CBMPeripheralSpecDelegate, @unchecked Sendable {
    // @unchecked Sendable: `count` is guarded by `lock`.
    private let lock = NSLock()
    private var count = 0

    var reads: Int { lock.withLock { count } }

    func peripheral(_ peripheral: CBMPeripheralSpec, didReceiveReadRequestFor characteristic: CBMCharacteristicMock)
        -> Result<Data, Error>
    {
        lock.withLock { count += 1 }
        return .success(Data([0x4B]))
    }
}

/// An app noting when, on the bridge's clock, it hears that its peripheral disconnected, and
/// what its reads got.
final class DisconnectionTimer: NSObject, CBMCentralManagerDelegate, CBMPeripheralDelegate {
    let clock: VirtualClock
    var manager: CBMCentralManager?
    /// The peripheral connected (an app keeps it: CoreBluetooth cancels the connection of one
    /// nobody keeps).
    var peripheral: CBMPeripheral?
    var characteristic: CBMCharacteristic?
    var disconnection: (at: VirtualClock.Instant, error: NSError?)?
    var reads: [String] = []

    init(clock: VirtualClock) { self.clock = clock }

    func centralManagerDidUpdateState(_ central: CBMCentralManager) {}

    func centralManager(_ central: CBMCentralManager, didConnect peripheral: CBMPeripheral) {
        peripheral.delegate = self
    }

    func centralManager(
        _ central: CBMCentralManager, didDisconnectPeripheral peripheral: CBMPeripheral, error: Error?
    ) {
        disconnection = (clock.now, error as NSError?)
    }

    func peripheral(_ peripheral: CBMPeripheral, didDiscoverServices error: Error?) {
        for service in peripheral.services ?? [] { peripheral.discoverCharacteristics(nil, for: service) }
    }

    func peripheral(_ peripheral: CBMPeripheral, didDiscoverCharacteristicsFor service: CBMService, error: Error?) {
        characteristic = service.characteristics?.first
    }

    func peripheral(_ peripheral: CBMPeripheral, didUpdateValueFor characteristic: CBMCharacteristic, error: Error?) {
        reads.append(error.map { "\(($0 as NSError).domain) \(($0 as NSError).code)" } ?? "value")
    }
}

// CoreBluetoothMock (CBMCentralManagerMock.swift, disconnected(withError:)) reports a disconnection
// whose error is a connection timeout after the spec's supervision timeout (4 s unless the builder
// is given another), and any other at once; simulateReset() and simulateProximityChange(.outOfRange)
// end the links with a connection timeout, so after it too.
@Suite("A spec's supervision timeout", .timeLimit(.minutes(10)), .finishesOwnBridges)
struct SupervisionTimeoutTests {
    /// How the test makes the device go silent.
    enum Path: String, CaseIterable, Sendable {
        case reset, outOfRange, timeoutDisconnection

        func apply(to spec: CBMPeripheralSpec) {
            switch self {
            case .reset: spec.simulateReset()
            case .outOfRange: spec.simulateProximityChange(.outOfRange)
            case .timeoutDisconnection: spec.simulateDisconnection(withError: CBMError(.connectionTimeout))
            }
        }
    }

    /// A known, connectable spec with a readable characteristic; `supervisionTimeout` `nil`
    /// leaves the builder's default.
    static func makeTag(supervisionTimeout: TimeInterval?, delegate: ReadCounter = ReadCounter()) -> CBMPeripheralSpec {
        let builder = CBMPeripheralSpec.simulatePeripheral(proximity: .near)
            .advertising(advertisementData: [CBMAdvertisementDataLocalNameKey: "Tag"], withInterval: 0.100)
        let services = [CBMServiceMock(type: .batteryService, primary: true, characteristics: batteryLevelMock())]
        let connectable =
            supervisionTimeout.map {
                builder.connectable(name: "Tag", services: services, delegate: delegate, supervisionTimeout: $0)
            } ?? builder.connectable(name: "Tag", services: services, delegate: delegate)
        return connectable.allowForRetrieval().build()
    }

    /// Connects an app to the spec and discovers its characteristic.
    @MainActor
    static func connect(
        _ spec: CBMPeripheralSpec, on bridge: MockBLEBridge
    ) async throws -> (DisconnectionTimer, CBMPeripheral, CBMCharacteristic) {
        let app = DisconnectionTimer(clock: bridge.clock)
        let manager = CBMCentralManagerMock(delegate: app, queue: nil)
        app.manager = manager
        try await bridge.waitForApp { manager.state == .poweredOn }
        let peripheral = try #require(manager.retrievePeripherals(withIdentifiers: [spec.identifier]).first)
        app.peripheral = peripheral
        manager.connect(peripheral)
        try await bridge.waitForApp { peripheral.state == .connected }
        peripheral.discoverServices(nil)
        try await bridge.waitForApp { app.characteristic != nil }
        return (app, peripheral, try #require(app.characteristic))
    }

    /// What the app saw after the spec went silent by `path`: whether it was still connected
    /// 1 ms before `timeout`, and when (from the silence) and with what error it heard of the
    /// disconnection.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    static func silence(
        _ spec: CBMPeripheralSpec, by path: Path, expecting timeout: Duration, realistic: Bool, seed: UInt64
    ) async throws -> (stillConnected: Bool, after: Duration, error: NSError?) {
        let bridge = CoreBluetoothMockParityTests.bridge(realistic: realistic, seed: seed)
        return try await bridge.run { @MainActor () -> (Bool, Duration, NSError?) in
            CBMCentralManagerMock.simulatePeripherals([spec])
            let (app, peripheral, _) = try await Self.connect(spec, on: bridge)
            let start = bridge.clock.now
            path.apply(to: spec)
            await bridge.advance(to: start.advanced(by: timeout - .milliseconds(1)))
            let stillConnected = peripheral.state == .connected && app.disconnection == nil
            try await bridge.waitForApp { app.disconnection != nil }
            let heard = try #require(app.disconnection)
            return (stillConnected, start.duration(to: heard.at), heard.error)
        }
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(arguments: Path.allCases, [false, true])
    func theLinkEndsWithAConnectionTimeoutExactlyAfterTheSpecsOwnSupervisionTimeout(
        path: Path, realistic: Bool
    ) async throws {
        let tag = Self.makeTag(supervisionTimeout: 3.0)
        let seen = try await Self.silence(tag, by: path, expecting: .seconds(3), realistic: realistic, seed: 90)
        #expect(seen.stillConnected, "still connected 2.999 s after going silent")
        #expect(seen.after == .seconds(3))
        #expect(seen.error?.domain == CBMErrorDomain)
        #expect(seen.error?.code == CBMError.Code.connectionTimeout.rawValue)
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(arguments: Path.allCases, [false, true])
    func withoutOneGivenTheLinkEndsAfterCoreBluetoothMocksDefaultOfFourSeconds(
        path: Path, realistic: Bool
    ) async throws {
        let tag = Self.makeTag(supervisionTimeout: nil)
        #expect(tag.supervisionTimeout == 4.0)
        let seen = try await Self.silence(tag, by: path, expecting: .seconds(4), realistic: realistic, seed: 91)
        #expect(seen.stillConnected, "still connected 3.999 s after going silent")
        #expect(seen.after == .seconds(4))
        #expect(seen.error?.code == CBMError.Code.connectionTimeout.rawValue)
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(arguments: [false, true])
    func aDisconnectionWithAnotherErrorReachesTheAppAtOnce(realistic: Bool) async throws {
        let bridge = CoreBluetoothMockParityTests.bridge(realistic: realistic, seed: 92)
        let tag = Self.makeTag(supervisionTimeout: 3.0)
        let heard = try await bridge.run { @MainActor () -> [(Duration, Int?)] in
            CBMCentralManagerMock.simulatePeripherals([tag])
            var heard: [(Duration, Int?)] = []
            for error: any Error in [CBMError(.peripheralDisconnected), CBMATTError(.insufficientEncryption)] {
                let (app, _, _) = try await Self.connect(tag, on: bridge)
                let start = bridge.clock.now
                tag.simulateDisconnection(withError: error)
                try await bridge.waitForApp { app.disconnection != nil }
                let disconnection = try #require(app.disconnection)
                heard.append((start.duration(to: disconnection.at), disconnection.error?.code))
            }
            return heard
        }
        #expect(heard.map(\.0) == [.zero, .zero])
        #expect(
            heard.map(\.1) == [
                CBMError.Code.peripheralDisconnected.rawValue, CBMATTError.Code.insufficientEncryption.rawValue,
            ])
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(arguments: [false, true])
    func aReadWhileTheDeviceIsSilentGetsNoAnswerAndTheLinkStillEndsOnTime(realistic: Bool) async throws {
        let bridge = CoreBluetoothMockParityTests.bridge(realistic: realistic, seed: 93)
        let counter = ReadCounter()
        let tag = Self.makeTag(supervisionTimeout: 3.0, delegate: counter)
        let (before, after, reachedDevice, after3s) = try await bridge.run {
            @MainActor () -> ([String], [String], Int, Duration) in
            CBMCentralManagerMock.simulatePeripherals([tag])
            let (app, peripheral, characteristic) = try await Self.connect(tag, on: bridge)
            let start = bridge.clock.now
            tag.simulateDisconnection(withError: CBMError(.connectionTimeout))
            await bridge.advance(by: .seconds(1))
            peripheral.readValue(for: characteristic)
            await bridge.advance(to: start.advanced(by: .milliseconds(2_999)))
            let before = app.reads
            try await bridge.waitForApp { app.disconnection != nil }
            let heard = try #require(app.disconnection)
            return (before, app.reads, counter.reads, start.duration(to: heard.at))
        }
        // The device never hears the request, and the app no answer, before the link ends on time.
        #expect(before == [])
        #expect(reachedDevice == 0)
        #expect(!after.contains("value"))
        #expect(after3s == .seconds(3))
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(arguments: [false, true])
    func backInRangeBeforeTheSupervisionTimeoutTheLinkLivesOn(realistic: Bool) async throws {
        let bridge = CoreBluetoothMockParityTests.bridge(realistic: realistic, seed: 95)
        let counter = ReadCounter()
        let tag = Self.makeTag(supervisionTimeout: 3.0, delegate: counter)
        let (connected, reads, disconnection) = try await bridge.run {
            @MainActor () -> (Bool, [String], VirtualClock.Instant?) in
            CBMCentralManagerMock.simulatePeripherals([tag])
            let (app, peripheral, characteristic) = try await Self.connect(tag, on: bridge)
            tag.simulateProximityChange(.outOfRange)
            await bridge.advance(by: .seconds(2))
            tag.simulateProximityChange(.near)
            await bridge.advance(by: .seconds(2))
            peripheral.readValue(for: characteristic)
            try await bridge.waitForApp { !app.reads.isEmpty }
            return (peripheral.state == .connected, app.reads, app.disconnection?.at)
        }
        #expect(connected)
        #expect(reads == ["value"])
        #expect(counter.reads == 1)
        #expect(disconnection == nil)
    }

    /// A supervision timeout a spec may be given out of the range a link can have.
    enum OddValue: String, CaseIterable, Sendable {
        case negative, negativeInfinity, nan, huge, infinity, zero

        var given: TimeInterval {
            switch self {
            case .negative: -1
            case .negativeInfinity: -.infinity
            case .nan: .nan
            case .huge: 1e12
            case .infinity: .infinity
            case .zero: 0
            }
        }

        /// What the links get: negative or NaN is the builder's default (4 s), as a bad
        /// advertising interval is the default one; longer than 32 s (the Core specification's
        /// longest) is cut to 32 s; zero drops the links at once.
        var taken: Duration {
            switch self {
            case .negative, .negativeInfinity, .nan: .seconds(4)
            case .huge, .infinity: .seconds(32)
            case .zero: .zero
            }
        }
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(arguments: OddValue.allCases)
    func aBadSupervisionTimeoutIsTakenAsTheDefaultOrCutToTheLongestALinkHas(value: OddValue) async throws {
        let tag = Self.makeTag(supervisionTimeout: value.given)
        // The spec keeps what it was given.
        let kept = try #require(tag.supervisionTimeout)
        #expect(kept == value.given || (kept.isNaN && value.given.isNaN))
        let seen = try await Self.silence(
            tag, by: .reset, expecting: max(value.taken, .milliseconds(1)), realistic: true, seed: 94)
        if value.taken > .zero { #expect(seen.stillConnected) }
        #expect(seen.after == value.taken)
        #expect(seen.error?.code == CBMError.Code.connectionTimeout.rawValue)
    }
}
