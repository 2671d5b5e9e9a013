import BLECore
import BLEMockKit
import Foundation
import Testing

/// Durations given to calls: a timeout or time limit that is not above zero, or a negative
/// stall patience, is refused with `APIMisuseError.invalidArgument` naming the call, the
/// argument, its value and the range (they used to be taken silently: a connect with a
/// negative timeout failed at once with connectionTimeout in realistic mode, and a run with a
/// negative time limit stalled at 0 s).
@Suite("Call arguments: durations out of range are refused, naming the argument", .timeLimit(.minutes(10)))
struct CallArgumentTests {
    static func connectProblem(_ value: String) -> APIMisuseError {
        .invalidArgument(
            "connect(_:options:): timeout: \(value) is outside 0s… (exclusive); give a timeout above zero, or none "
                + "(nil) to wait until the link comes up or the attempt is cancelled")
    }

    @Test("A connect with a timeout of zero or less is refused, and nothing is attempted", arguments: [-1, 0])
    func connectTimeoutMustBePositive(seconds: Int) async throws {
        let bridge = MockBLEBridge()
        let (peripheral, _) = try await TestPeripherals.advertisingHeartRate(on: bridge)
        let central = MockCentralManager(bridge: bridge)
        try await central.scanForPeripherals(withServices: nil)
        await #expect(throws: Self.connectProblem("\(seconds)s")) {
            try await central.connect(peripheral.identifier, timeout: .seconds(seconds))
        }
        #expect(await !central.isConnected(peripheral.identifier))
        #expect(await !bridge.log.contains { $0.kind == .connecting })
        // A positive one still connects.
        try await central.connect(peripheral.identifier, timeout: .seconds(1))
        #expect(await central.isConnected(peripheral.identifier))
    }

    @Test("A realistic connect with a negative timeout is refused rather than timing out at once")
    func realisticConnectTimeoutMustBePositive() async throws {
        let bridge = MockBLEBridge(configuration: .realistic(seed: 5))
        let error = try await bridge.run { () -> (any Error)? in
            let sensor = MockPeripheralManager(configuration: .realistic(seed: 5))
            _ = await sensor.waitForPoweredOn()
            try await sensor.startAdvertising(AdvertisementData(localName: "S"))
            let central = MockCentralManager(configuration: .realistic(seed: 5))
            _ = await central.waitForPoweredOn()
            let events = central.events()
            try await central.scanForPeripherals(withServices: nil)
            _ = await events.first { if case .discovered = $0 { true } else { false } }
            do {
                try await central.connect(sensor.identifier, timeout: .milliseconds(-1))
                return nil
            } catch {
                return error
            }
        }
        #expect(error as? APIMisuseError == Self.connectProblem("-0.001s"))
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(
        "A run with a time limit of zero or less, or a negative stall patience, is refused before its body runs",
        arguments: [
            (Duration.seconds(-1), Duration.seconds(1), "timeLimit: -1s is outside 0s… (exclusive)"),
            (.zero, .seconds(1), "timeLimit: 0s is outside 0s… (exclusive)"),
            (.seconds(10), .seconds(-1), "stallPatience: -1s is outside 0s…"),
        ])
    func runArgumentsMustBeInRange(timeLimit: Duration, stallPatience: Duration, problem: String) async throws {
        let bridge = MockBLEBridge()
        let runs = Recorder<Int>()
        await #expect(
            throws: APIMisuseError.invalidArgument("MockBLEBridge.run(timeLimit:stallPatience:_:): " + problem)
        ) {
            try await bridge.run(timeLimit: timeLimit, stallPatience: stallPatience) { runs.append(1) }
        }
        #expect(runs.entries.isEmpty)
        let clock = VirtualClock()
        await #expect(
            throws: APIMisuseError.invalidArgument("VirtualClock.run(timeLimit:stallPatience:_:): " + problem)
        ) {
            try await clock.run(timeLimit: timeLimit, stallPatience: stallPatience) { runs.append(2) }
        }
        #expect(runs.entries.isEmpty)
        // A zero stall patience is allowed (a body with no outside work).
        try await bridge.run(timeLimit: .seconds(1), stallPatience: .zero) { runs.append(3) }
        #expect(runs.entries == [3])
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test("A run called from a cancelled task throws CancellationError without running its body")
    func aCancelledCallerRunsNoBody() async throws {
        let bridge = MockBLEBridge(seed: 3)
        let runs = Recorder<Int>()
        let clock = VirtualClock()
        let caller = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            await #expect(throws: CancellationError.self) { try await bridge.run { runs.append(1) } }
            await #expect(throws: CancellationError.self) { try await bridge.clock.run { runs.append(2) } }
            await #expect(throws: CancellationError.self) { try await clock.run { runs.append(3) } }
        }
        await caller.value
        #expect(runs.entries.isEmpty)
        // The bridge and the clock are left as they were: a run from a task that is not cancelled
        // runs its body.
        try await bridge.run { runs.append(4) }
        try await clock.run { runs.append(5) }
        #expect(runs.entries == [4, 5])
        #expect(await bridge.finish() == .clean)
    }

    @Test("A fault scheduled after a negative delay fires at once, as one scheduled at a past instant")
    func negativeDelayFiresAtOnce() async throws {
        let bridge = MockBLEBridge()
        let (peripheral, _) = try await TestPeripherals.advertisingHeartRate(on: bridge)
        await bridge.advance(by: .seconds(5))
        await bridge.schedule(.nameChange(peripheral: peripheral.identifier, "Renamed"), after: .seconds(-3))
        // (At 5 s, as it was scheduled, not at 2 s, which has passed.)
        await bridge.advance(by: .milliseconds(1))
        #expect(await bridge.log.contains { $0.detail == "name=Renamed" && $0.time == .zero + .seconds(5) })
    }
}
