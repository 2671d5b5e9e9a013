import BLECore
import Foundation
import Testing

@testable import BLEMockKit

/// An adversarial probe of the configuration and construction surface: the values a careless
/// or hostile user could give (negative, zero and huge durations, NaN, huge counts, extreme
/// seeds). Each is refused as its documentation says, or accepted and run without trapping or
/// hanging.
@Suite("Bad input: the configuration surface refuses or survives hostile values", .timeLimit(.minutes(10)))
struct BadInputProbeTests {
    /// The longest duration a `Duration` built from whole seconds holds.
    static let huge = Duration.seconds(Int64.max)

    // MARK: Exploration

    @Test("An exploration of more seeds than memory holds is refused with a problem naming the count")
    func aHugeSeedCountIsRefused() async {
        let exploration = Exploration(budget: .conditionsOnly, seeds: Int.max)
        #expect(exploration.seeds.isEmpty)
        let report = await exploration.run { _ in }
        #expect(
            report.problem
                == "Exploration(seeds: \(Int.max)): a seed count of \(Int.max) is outside 1…10000000; explore "
                + "fewer seeds at a time (from: picks where to start)")
        #expect(!report.passed)
        #expect(report.seedsRun == 0)
    }

    @Test("The largest seed count is accepted, and seeds from UInt64.max wrap around to 0")
    func theLargestSeedCountIsAccepted() {
        #expect(Exploration(seeds: Exploration.maximumSeedCount).seeds.count == Exploration.maximumSeedCount)
        #expect(Exploration(seeds: 2, from: .max).seeds == [.max, 0])
    }

    @Test("Drawing a plan from a budget with huge durations and counts clamps them rather than trapping")
    func drawingFromAHugeBudgetDoesNotTrap() {
        var budget = ExplorationBudget(
            faultCount: 1...1, faultDuration: .zero...Self.huge,
            connectionInterval: .microseconds(7_500)...Self.huge, jitter: .zero...Self.huge,
            packetsPerConnectionEvent: 1...Int.max, writeWithoutResponseQueueCapacity: 1...Int.max,
            updateQueueCapacity: Int.min...Int.max)
        budget.faultKinds = [.outOfRange]
        #expect(budget.problem != nil)
        for seed: UInt64 in [0, 1, .max] {
            let plan = ExplorationPlan.draw(seed: seed, budget: budget, window: .zero...Self.huge)
            #expect(ConfigurationProblems.connectionIntervals.contains(plan.conditions.connectionInterval))
            #expect(plan.conditions.jitter <= plan.conditions.connectionInterval)
            #expect(plan.faults.count == 1)
            for fault in plan.faults {
                #expect(ExplorationBudget.durations.contains(fault.at))
                #expect(ExplorationBudget.durations.contains(fault.duration))
            }
            #expect(plan.configuration.problem == nil)
        }
    }

    @Test("Drawing a plan from a budget asking for more faults than allowed draws at most the maximum")
    func drawingAHugeFaultCountIsBounded() {
        let budget = ExplorationBudget(faultKinds: [.reset], faultCount: Int.max...Int.max)
        #expect(budget.problem == "ExplorationBudget.faultCount: \(Int.max)...\(Int.max) is outside 0…10000")
        let plan = ExplorationPlan.draw(seed: 3, budget: budget, window: .zero ... .seconds(1))
        #expect(plan.faults.count == ExplorationBudget.maximumFaultCount)
    }

    // MARK: Bridge

    @Test("Demo pacing by a huge finite factor saturates the owed wait rather than trapping")
    func hugePacingDoesNotTrap() async {
        let bridge = MockBLEBridge(configuration: .init(realTimePacing: 1e300))
        #expect(bridge.configuration.problem == nil)
        // The owed wall-clock wait is computed as time moves, and waited until the caller is
        // cancelled. (Waited in one sleep, it trapped in the runtime: its deadline did not fit.
        // A caller cancelled before the advance moves no time, and owes nothing.)
        let task = Task { await bridge.advance(by: .seconds(1)) }
        await bridge.waitUntil { $0.now >= .zero + .seconds(1) }
        #expect(await bridge.pacedInAll > .seconds(1_000_000_000))
        task.cancel()
        await task.value
        #expect(await bridge.now == .zero + .seconds(1))
    }

    /// What ``hugeStallPatienceDoesNotTrap()``'s waiter and waker share (read and written with
    /// the condition's lock held).
    final class Handshake: @unchecked Sendable {
        var waiting = false
        var woken = false
    }

    @Test("A wall-clock wait of Int64.max seconds (a run's stall patience) waits rather than trapping")
    func hugeStallPatienceDoesNotTrap() {
        // `run(stallPatience:)` accepts any patience not negative; a stalled run waits for it
        // on this condition. The waker wakes the waiter once it waits (it takes the lock only
        // the wait releases), so the test ends at once; before, the deadline overflowed. The
        // waker is a dispatch block, not a task: the wait blocks this thread of the concurrency
        // pool, which has one per core, and a task waking it would wait for the other's (on two
        // cores, a long test there stood the whole suite still for a minute).
        let condition = Condition()
        let handshake = Handshake()
        DispatchQueue.global().async {
            var done = false
            while !done {
                done = condition.withLock {
                    guard handshake.waiting else { return false }
                    handshake.woken = true
                    condition.signal()
                    return true
                }
            }
        }
        condition.withLock {
            handshake.waiting = true
            while !handshake.woken { condition.wait(for: Self.huge) }
        }
        #expect(handshake.woken)
    }

    @Test("Extreme seeds make distinct, repeatable identifiers", arguments: [UInt64.min, .max])
    func extremeSeeds(seed: UInt64) async throws {
        let bridge = MockBLEBridge(seed: seed)
        let (peripheral, _) = try await TestPeripherals.advertisingHeartRate(on: bridge)
        let (central, characteristics) = try await TestPeripherals.connectedCentral(to: peripheral, on: bridge)
        #expect(central.identifier != peripheral.identifier)
        #expect(!characteristics.isEmpty)
        let again = MockBLEBridge(seed: seed)
        #expect(
            MockPeripheralManager(configuration: .init(name: "HRM-1"), bridge: again).identifier
                == peripheral.identifier)
        let seeded = MockCentralManager(configuration: .init(seed: seed), bridge: MockBLEBridge(seed: seed ^ 1))
        try await seeded.scanForPeripherals(withServices: nil)
    }

    // MARK: Huge values the documentation accepts

    /// Scans until `peripheral` is discovered (realistic mode takes an advertising interval),
    /// connects and discovers everything.
    static func connect(
        _ central: MockCentralManager, to peripheral: MockPeripheralManager, on bridge: MockBLEBridge
    ) async throws -> [RemoteCharacteristic] {
        try await central.scanForPeripherals(withServices: nil)
        await bridge.advance(by: .seconds(1))
        await central.stopScan()
        try await central.connect(peripheral.identifier)
        return try await central.discoverAll(for: peripheral.identifier)
    }

    @Test("Huge capacities, limits and counts are accepted and a realistic link works under them")
    func hugeCountsWork() async throws {
        var configuration = MockBLEBridge.Configuration.realistic(seed: 5)
        configuration.limits = LinkLimits(
            maximumMTU: 517, writeWithoutResponseQueueCapacity: Int.max, updateQueueCapacity: Int.max)
        configuration.timing.packetsPerConnectionEvent = Int.max
        let bridge = MockBLEBridge(configuration: configuration)
        let (peripheral, _) = try await TestPeripherals.advertisingHeartRate(
            on: bridge, configuration: .init(name: "HRM-1", updateQueue: .realistic(capacity: Int.max)))
        let central = MockCentralManager(
            configuration: .init(
                writeWithoutResponseQueue: .realistic(capacity: Int.max), connection: .init(limit: Int.max),
                errorInjection: [
                    ErrorInjection(.readRSSI, failure: .coreBluetooth(.unknown), frequency: .times(Int.max))
                ]),
            bridge: bridge)
        let characteristics = try await Self.connect(central, to: peripheral, on: bridge)
        #expect(!characteristics.isEmpty)
        await #expect(throws: CoreBluetoothError(.unknown)) { try await central.readRSSI(for: peripheral.identifier) }
        await #expect(throws: CoreBluetoothError(.unknown)) { try await central.readRSSI(for: peripheral.identifier) }
    }

    @Test("A huge state transition is accepted (not negative) and the manager settles at the end of time")
    func hugeStateTransition() async throws {
        let bridge = MockBLEBridge()
        let central = MockCentralManager(
            configuration: .init(stateTransition: .realistic(duration: Self.huge)), bridge: bridge)
        #expect(await central.waitForPoweredOn() == .poweredOn)
        let peripheral = MockPeripheralManager(
            configuration: .init(stateTransition: .delayed(Self.huge)), bridge: bridge)
        #expect(await peripheral.waitForPoweredOn() == .poweredOn)
        _ = try await peripheral.add(TestPeripherals.heartRate)
        try await peripheral.startAdvertising(AdvertisementData(localName: "Late"))
        try await central.scanForPeripherals(withServices: nil)
        await bridge.advance(by: .seconds(2))
        // Time stands at the latest instant: periodic advertising ends there, and nothing loops.
        #expect(await bridge.now == .latest)
        #expect(await bridge.run(maximumEvents: 1_000))
        #expect(await bridge.log.last?.kind == .discovered)
        // The run's timeline renders at the end of time too.
        let page = await bridge.timelinePage(title: "End of time")
        #expect(page.html.contains("End of time"))
        #expect(ScenarioTrace.milliseconds(Self.huge) == "9223372036854775807.000s")
        #expect(ScenarioTrace.milliseconds(.milliseconds(9_223_372_036_854_775_807)) == "9223372036854775.807s")
        #expect(
            ScenarioTrace.milliseconds(.seconds(9_223_372_036_854_775) + .microseconds(999_900))
                == "9223372036854775.999s")
        #expect(ScenarioTrace.milliseconds(.microseconds(1_294_400)) == "1.294s")
    }

    @Test("A huge advertising delay is accepted and a scan over it ends")
    func hugeAdvertisingDelay() async throws {
        let bridge = MockBLEBridge()
        let peripheral = MockPeripheralManager(configuration: .init(advertisingDelay: Self.huge), bridge: bridge)
        try await peripheral.startAdvertising(AdvertisementData(localName: "Slow"))
        let central = MockCentralManager(bridge: bridge)
        try await central.scanForPeripherals(withServices: nil)
        await bridge.advance(by: .seconds(10))
        #expect(await bridge.log.last?.kind == .scanStarted)
        #expect(await bridge.run(maximumEvents: 100))
        #expect(await bridge.log.last?.kind == .discovered)
    }

    @Test("A huge connection latency is accepted and a connect with a timeout ends at the timeout")
    func hugeConnectionLatency() async throws {
        let bridge = MockBLEBridge(configuration: .realistic(seed: 1))
        let (peripheral, _) = try await TestPeripherals.advertisingHeartRate(on: bridge)
        let central = MockCentralManager(
            configuration: .init(connection: .init(latency: Self.huge...Self.huge)), bridge: bridge)
        try await central.scanForPeripherals(withServices: nil)
        await bridge.advance(by: .seconds(1))
        await central.stopScan()
        await #expect(throws: CoreBluetoothError(.connectionTimeout)) {
            try await central.connect(peripheral.identifier, options: ConnectOptions(timeout: .seconds(5)))
        }
    }

    // MARK: Durations past what `Duration.components` splits (2^63 seconds and more)

    /// Ten quintillion seconds: past the `Int64` of seconds `Duration.components` returns, still
    /// a `Duration`.
    static let beyond = Duration.seconds(1e19)

    @Test("Durations past 2^63 seconds either way are written in floating point and split saturated")
    func durationsPastInt64SecondsAreWrittenAndSplit() {
        #expect(FixtureDuration.string(Self.beyond) == "1e+19s")
        #expect(FixtureDuration.string(.zero - Self.beyond) == "-1e+19s")
        #expect(FixtureDuration.string(.seconds(Int64.min)) == "-9.223372036854776e+18s")
        // Just inside, every digit is kept.
        #expect(FixtureDuration.string(.seconds(Int64.min) + .seconds(1)) == "-9223372036854775807s")
        #expect(FixtureDuration.string(Self.huge) == "9223372036854775807s")
        #expect(FixtureDuration.string(Self.huge + .milliseconds(500)) == "9223372036854775807.5s")
        #expect(Self.beyond.saturatingComponents == (Int64.max, 0))
        #expect((.zero - Self.beyond).saturatingComponents == (Int64.min, 0))
        #expect(Duration.milliseconds(-1500).saturatingComponents == (-1, -500_000_000_000_000_000))
        #expect(!Self.beyond.hasComponents && !(.zero - Duration.seconds(Int64.min)).hasComponents)
        #expect(Self.huge.hasComponents && Duration.seconds(Int64.min).hasComponents)
        #expect(Self.huge.saturatingComponents == (Int64.max, 0))
        #expect(VirtualClock.Instant(offset: Self.beyond).description == "9223372036854775807.999999999s")
        #expect(!LinkProfile.isWholeMultiple(Self.beyond, of: .microseconds(1_250)))
        #expect(WaitReporting.tenths(Self.beyond) == "9223372036854775807.0")
        #expect(WaitReporting.tenths(.milliseconds(12_345)) == "12.3")
        #expect(WaitReporting.tenths(.milliseconds(300)) == "0.3")
    }

    @Test("A duration draw over a range wider than 2^63 seconds is clamped to 292 years, not trapped")
    func aDrawOverAnEnormousRangeIsClamped() {
        var generator = SeededGenerator(seed: 1)
        for _ in 0..<100 {
            let draw = generator.duration(in: .zero...Self.beyond)
            #expect(draw >= .zero && draw <= .nanoseconds(Int64.max))
        }
        #expect(SeededGenerator.wholeNanoseconds(in: Self.beyond) == UInt64(Int64.max))
        #expect(SeededGenerator.wholeNanoseconds(in: .zero - Self.beyond) == 0)
    }

    @Test("A connect timeout of Int64.min seconds is refused as an invalid argument naming it")
    func aConnectTimeoutOfInt64MinSecondsIsRefused() async {
        let central = MockCentralManager(bridge: MockBLEBridge())
        let error = await #expect(throws: APIMisuseError.self) {
            try await central.connect(UUID(), timeout: .seconds(Int64.min))
        }
        guard case .invalidArgument(let message) = error else {
            Issue.record("expected invalidArgument, got \(String(describing: error))")
            return
        }
        #expect(message.contains("-9.223372036854776e+18s"), "\(message)")
    }

    @Test(
        "A timing duration past 2^63 seconds is refused as an invalid configuration, naming the field",
        arguments: ["supervisionTimeout", "jitter"])
    func aTimingDurationPastInt64SecondsIsRefused(field: String) async {
        var timing = LinkTiming.realistic
        if field == "jitter" { timing.jitter = .seconds(Int64.min) } else { timing.supervisionTimeout = Self.beyond }
        let central = MockCentralManager(bridge: MockBLEBridge(configuration: .init(seed: 1, timing: timing)))
        let error = await #expect(throws: APIMisuseError.self) {
            try await central.scanForPeripherals(withServices: nil)
        }
        guard case .invalidConfiguration(let message) = error else {
            Issue.record("expected invalidConfiguration, got \(String(describing: error))")
            return
        }
        #expect(message.contains("timing.\(field)"), "\(message)")
    }

    @Test("Manager durations of Int64.min seconds are refused as invalid configurations, naming the field")
    func managerDurationsOfInt64MinSecondsAreRefused() async {
        let bridge = MockBLEBridge()
        let central = MockCentralManager(
            configuration: .init(pairing: .automatic(duration: .seconds(Int64.min), outcome: .succeeds)), bridge: bridge
        )
        let centralError = await #expect(throws: APIMisuseError.self) {
            try await central.scanForPeripherals(withServices: nil)
        }
        #expect(Self.message(of: centralError)?.contains("pairing.automatic(duration:)") == true)
        let peripheral = MockPeripheralManager(
            configuration: .init(stateTransition: .delayed(.seconds(Int64.min))), bridge: bridge)
        let peripheralError = await #expect(throws: APIMisuseError.self) {
            try await peripheral.startAdvertising(AdvertisementData(localName: "P"))
        }
        #expect(Self.message(of: peripheralError)?.contains("stateTransition") == true)
        let late = MockPeripheralManager(
            configuration: .init(advertisingDelay: .seconds(Int64.min)), bridge: bridge)
        let lateError = await #expect(throws: APIMisuseError.self) {
            try await late.startAdvertising(AdvertisementData(localName: "P"))
        }
        #expect(Self.message(of: lateError)?.contains("advertisingDelay") == true)
    }

    @Test("A run's time limit or stall patience of Int64.min seconds is refused as an invalid argument")
    func aRunLimitOfInt64MinSecondsIsRefused() async {
        let bridge = MockBLEBridge()
        for (limit, patience) in [
            (Duration.seconds(Int64.min), Duration.seconds(1)), (.seconds(1), .seconds(Int64.min)),
        ] {
            let error = await #expect(throws: APIMisuseError.self) {
                try await bridge.run(timeLimit: limit, stallPatience: patience) {}
            }
            guard case .invalidArgument(let message) = error else {
                Issue.record("expected invalidArgument, got \(String(describing: error))")
                continue
            }
            #expect(message.hasPrefix("MockBLEBridge.run(timeLimit:stallPatience:_:): "), "\(message)")
            #expect(message.contains("-9.223372036854776e+18s"), "\(message)")
        }
    }

    @Test("An exploration budget's window or time limit past 2^63 seconds is a problem, not a trap")
    func anExplorationPastInt64SecondsIsAProblem() async {
        var budget = ExplorationBudget()
        budget.window = .zero...Self.beyond
        #expect(budget.problem?.contains("window") == true, "\(budget.problem ?? "no problem")")
        let report = await Exploration(seeds: 1, timeLimit: .seconds(Int64.min)).run { _ in }
        #expect(report.problem?.contains("timeLimit") == true, "\(report.problem ?? "no problem")")
        #expect(report.seedsRun == 0)
    }

    @Test("A connection latency whose upper bound is past 2^63 seconds connects or times out, not traps")
    func aConnectionLatencyPastInt64SecondsTimesOut() async throws {
        var timing = LinkTiming.realistic
        timing.connectionLatency = .zero...Self.beyond
        let bridge = MockBLEBridge(configuration: .init(seed: 1, timing: timing))
        let (peripheral, _) = try await TestPeripherals.advertisingHeartRate(on: bridge)
        let central = MockCentralManager(
            configuration: .init(connection: .init(latency: .zero...Self.beyond)), bridge: bridge)
        try await central.scanForPeripherals(withServices: nil)
        await bridge.advance(by: .seconds(1))
        await central.stopScan()
        await #expect(throws: CoreBluetoothError(.connectionTimeout)) {
            try await central.connect(peripheral.identifier, options: ConnectOptions(timeout: .seconds(5)))
        }
    }

    private static func message(of error: APIMisuseError?) -> String? {
        guard case .invalidConfiguration(let message) = error else { return nil }
        return message
    }
}
