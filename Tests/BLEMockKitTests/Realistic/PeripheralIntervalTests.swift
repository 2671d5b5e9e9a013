import BLECore
import BLEMockKit
import Foundation
import Testing

/// A peripheral's own interval preference (`MockPeripheralManager.Configuration`'s package
/// `preferredConnectionIntervals`, what a CoreBluetoothMock-style spec's `connectionInterval`
/// becomes) times its links in place of the bridge's peripheral profile's, and only its own.
@Suite("Realistic: a peripheral's own connection interval preference", .timeLimit(.minutes(10)))
struct PeripheralIntervalTests {
    /// A peripheral (asking for `preferred`, with its own `supervisionTimeout`) and a central
    /// connected to it that discovered its read-only characteristic.
    static func link(
        on bridge: MockBLEBridge, name: String, preferred: ClosedRange<Duration>?, supervisionTimeout: Duration? = nil
    ) async throws -> (MockPeripheralManager, MockCentralManager, RemoteCharacteristic) {
        var configuration = MockPeripheralManager.Configuration(name: name)
        configuration.preferredConnectionIntervals = preferred
        configuration.supervisionTimeout = supervisionTimeout
        let (peripheral, _) = try await Realistic.advertisingPeripheral(on: bridge, configuration: configuration)
        let (central, characteristics) = try await Realistic.connectedCentral(to: peripheral, on: bridge)
        return (peripheral, central, try #require(characteristics.first { $0.uuid == RigUUID.readOnly }))
    }

    /// How long a one-packet read takes on the link.
    static func readTime(
        _ characteristic: RemoteCharacteristic, by central: MockCentralManager, on bridge: MockBLEBridge
    ) async throws -> Duration {
        try await Realistic.elapsed(on: bridge) { _ = try await central.readValue(for: characteristic) }
    }

    @Test("Without link profiles a peripheral's links run at the interval it asks for; another's at the timing's")
    func withoutProfiles() async throws {
        let bridge = Realistic.steadyBridge(seed: 4)
        let (_, slowCentral, slow) = try await Self.link(
            on: bridge, name: "Slow", preferred: .milliseconds(500) ... .milliseconds(500))
        let (_, plainCentral, plain) = try await Self.link(on: bridge, name: "Plain", preferred: nil)
        #expect(try await Self.readTime(slow, by: slowCentral, on: bridge) == .milliseconds(500))
        #expect(try await Self.readTime(plain, by: plainCentral, on: bridge) == .milliseconds(30))
    }

    @Test(
        "With link profiles the central grants a peripheral's own preference within its rules, in place of the peripheral profile's"
    )
    func withProfiles() async throws {
        var timing = LinkTiming.realistic(central: .iPhoneiOS18, peripheral: .watch)
        timing.jitter = .zero
        let bridge = MockBLEBridge(configuration: .init(seed: 5, timing: timing))
        // 510 ms is a whole number of the iPhone's 15 ms steps; 500 ms is not, so it keeps its
        // default (30 ms); the watch profile's 15…30 ms gets 15 ms.
        let (_, onStepCentral, onStep) = try await Self.link(
            on: bridge, name: "OnStep", preferred: .milliseconds(510) ... .milliseconds(510))
        let (_, offStepCentral, offStep) = try await Self.link(
            on: bridge, name: "OffStep", preferred: .milliseconds(500) ... .milliseconds(500))
        let (_, watchCentral, watch) = try await Self.link(on: bridge, name: "Watch", preferred: nil)
        #expect(try await Self.readTime(onStep, by: onStepCentral, on: bridge) == .milliseconds(510))
        #expect(try await Self.readTime(offStep, by: offStepCentral, on: bridge) == .milliseconds(30))
        #expect(try await Self.readTime(watch, by: watchCentral, on: bridge) == .milliseconds(15))
    }

    @Test(
        "A supervision timeout not above twice the peripheral's own interval becomes the shortest the Core specification allows"
    )
    func supervisionTimeoutFitsTheInterval() async throws {
        let bridge = Realistic.steadyBridge(seed: 6)
        let (peripheral, central, _) = try await Self.link(
            on: bridge, name: "Slow", preferred: .seconds(2) ... .seconds(2), supervisionTimeout: .seconds(3))
        let start = await bridge.now
        await peripheral.simulateProximityChange(.outOfRange)
        await bridge.advance(by: .milliseconds(4_009))
        #expect(await central.isConnected(peripheral.identifier))
        await bridge.advance(by: .milliseconds(1))
        #expect(await !central.isConnected(peripheral.identifier))
        #expect(await bridge.log.last { $0.kind == .disconnected }?.time == start.advanced(by: .milliseconds(4_010)))
    }

    @Test("A peripheral's own interval shorter than the timing's jitter varies by at most itself")
    func jitterIsCappedAtTheOwnInterval() async throws {
        let timing = LinkTiming(
            connectionInterval: .seconds(1), jitter: .milliseconds(500), supervisionTimeout: .seconds(3))
        let bridge = MockBLEBridge(configuration: .init(seed: 7, timing: timing))
        let (_, central, characteristic) = try await Self.link(
            on: bridge, name: "Brisk", preferred: .milliseconds(10) ... .milliseconds(10))
        var times: [Duration] = []
        for _ in 0..<20 { times.append(try await Self.readTime(characteristic, by: central, on: bridge)) }
        #expect(times.allSatisfy { $0 >= .milliseconds(1) && $0 <= .milliseconds(20) }, "seed 7: \(times)")
    }

    @Test("In fast mode a peripheral's own interval costs nothing")
    func fastModeIsInstant() async throws {
        let bridge = MockBLEBridge()
        let (_, central, characteristic) = try await Self.link(
            on: bridge, name: "Slow", preferred: .milliseconds(500) ... .milliseconds(500))
        #expect(try await Self.readTime(characteristic, by: central, on: bridge) == .zero)
    }
}
