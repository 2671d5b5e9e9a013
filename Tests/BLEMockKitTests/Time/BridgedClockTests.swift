import BLECore
import Foundation
import Testing

@testable import BLEMockKit

/// A bridge's clock (``MockBLEBridge/clock``): its sleepers are events on the bridge's one
/// schedule, and its time is the bridge's.
@Suite("A bridge's clock: sleepers on the bridge's one schedule", .timeLimit(.minutes(10)))
struct BridgedClockTests {
    typealias Instant = VirtualClock.Instant

    static func at(_ milliseconds: Int) -> Instant { Instant(offset: .milliseconds(milliseconds)) }

    /// A fast bridge with a heart-rate sensor and a central connected to it.
    static func connected() async throws -> (MockBLEBridge, MockCentralManager, MockPeripheralManager) {
        let bridge = MockBLEBridge()
        let (peripheral, _) = try await TestPeripherals.advertisingHeartRate(on: bridge)
        let (central, _) = try await TestPeripherals.connectedCentral(to: peripheral, on: bridge)
        return (bridge, central, peripheral)
    }

    /// A realistic sensor advertising and a central scanning it with duplicates: a stream of
    /// scheduled events for sleepers to interleave with.
    /// Returns the scanning central.
    @discardableResult
    static func scanAmongAdvertisements(on bridge: MockBLEBridge, seed: UInt64) async throws -> MockCentralManager {
        let sensor = MockPeripheralManager(configuration: .realistic(seed: seed), bridge: bridge)
        _ = await sensor.waitForPoweredOn()
        try await sensor.startAdvertising(AdvertisementData(localName: "Sensor"))
        let central = MockCentralManager(configuration: .realistic(seed: seed), bridge: bridge)
        _ = await central.waitForPoweredOn()
        try await central.scanForPeripherals(withServices: nil, options: ScanOptions(allowDuplicates: true))
        return central
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test("Sleepers wake in (deadline, sequence) order among advertising events, each at its deadline and after them")
    func sleepersInterleaveWithLinkEvents() async throws {
        for seed: UInt64 in [1, 2, 3] {
            let bridge = MockBLEBridge(configuration: .realistic(seed: seed))
            let clock = bridge.clock
            let wakes = Recorder<(name: String, now: Instant, logCount: Int)>()
            let start = try await bridge.run {
                let central = try await Self.scanAmongAdvertisements(on: bridge, seed: seed)
                let start = clock.now
                let plan = [("c", 700), ("a", 250), ("d", 700), ("b", 480), ("e", 1_000)]
                let sleepers = plan.map { name, offset in
                    bridge.task {
                        try await clock.sleep(until: start.advanced(by: .milliseconds(offset)))
                        wakes.append((name, clock.now, await bridge.log.count))
                    }
                }
                for sleeper in sleepers { try await sleeper.value }
                await central.stopScan()
                return start
            }
            let entries = wakes.entries
            #expect(entries.map(\.name) == ["a", "b", "c", "d", "e"], "seed \(seed)")
            #expect(entries.map(\.now) == [250, 480, 700, 700, 1_000].map { start.advanced(by: .milliseconds($0)) })
            let log = await bridge.log
            for wake in entries {
                // Everything due by the sleeper's deadline had happened when it woke; nothing later had.
                #expect(log[..<wake.logCount].allSatisfy { $0.time <= wake.now }, "seed \(seed), \(wake.name)")
                let later = log[wake.logCount...].filter { $0.kind == .discovered }
                #expect(later.allSatisfy { $0.time > wake.now }, "seed \(seed), \(wake.name)")
            }
            let between = log.filter { $0.kind == .discovered && $0.time > entries[0].now && $0.time < entries[4].now }
            #expect(between.count >= 3, "advertisements fall between the wake-ups (seed \(seed))")
        }
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test("A sleeper due at the instant of a fault wakes after it, even when the fault was scheduled later")
    func sleeperWakesAfterAFaultDueThen() async throws {
        let (bridge, central, peripheral) = try await Self.connected()
        let clock = bridge.clock
        let seen = try await bridge.run {
            let sleeper = bridge.task {
                try await clock.sleep(until: Self.at(2_000))
                return (clock.now, await central.isConnected(peripheral.identifier))
            }
            // Queued on the bridge after the sleeper's registration, before the driver's next step.
            bridge.task {
                await bridge.schedule(
                    .disconnect(
                        central: central.identifier, peripheral: peripheral.identifier,
                        error: CoreBluetoothError(.connectionTimeout)),
                    at: Self.at(2_000))
            }
            return try await sleeper.value
        }
        #expect(seen.0 == Self.at(2_000))
        #expect(seen.1 == false)
        let disconnected = try #require(await bridge.log.last(where: { $0.kind == .disconnected }))
        #expect(disconnected.time == Self.at(2_000))
    }

    @Test("Cancelling a sleeper removes it from the clock at once, and its sleep throws CancellationError")
    func cancellationRemovesTheSleeperAtOnce() async throws {
        let bridge = MockBLEBridge()
        let clock = bridge.clock
        let early = Task { try await clock.sleep(until: Self.at(1_000)) }
        await clock.untilSleeping(count: 1)
        let late = Task { try await clock.sleep(until: Self.at(2_000)) }
        await clock.untilSleeping(count: 2)
        #expect(clock.nextDeadline == Self.at(1_000))
        early.cancel()
        // At once: before the bridge has had a turn.
        #expect(clock.sleeperCount == 1)
        #expect(clock.nextDeadline == Self.at(2_000))
        await #expect(throws: CancellationError.self) { try await early.value }
        await bridge.advance(by: .milliseconds(1_500))
        #expect(clock.sleeperCount == 1)
        late.cancel()
        #expect(clock.sleeperCount == 0)
        #expect(clock.nextDeadline == nil)
        await #expect(throws: CancellationError.self) { try await late.value }
        #expect(await bridge.now == Self.at(1_500))
        #expect(clock.now == Self.at(1_500))
    }

    @Test("Sleepers cancelled at arbitrary points of their sleep, racing registration, all throw and leave nothing")
    func cancellationRacingRegistration() async throws {
        let bridge = MockBLEBridge()
        let clock = bridge.clock
        let tasks = (0..<200).map { index in
            Task { try await clock.sleep(until: Self.at(1_000 * (1 + index % 7))) }
        }
        for task in tasks { task.cancel() }
        for task in tasks {
            await #expect(throws: CancellationError.self) { try await task.value }
        }
        #expect(clock.sleeperCount == 0)
        #expect(await bridge.run())
        await bridge.advance(by: .zero)
        #expect(await bridge.stalledSleepers == 0)
        #expect(await bridge.now == .zero)
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test("Inside a run, a cancelled sleeper's deadline is never visited: time stays where the cancellation left it")
    func cancelledSleeperInsideARun() async throws {
        let bridge = MockBLEBridge()
        let clock = bridge.clock
        let central = MockCentralManager(bridge: bridge)
        do {
            try await bridge.run(stallPatience: .milliseconds(100)) {
                let long = bridge.task { try await clock.sleep(for: .seconds(10)) }
                let short = bridge.task {
                    try await clock.sleep(for: .seconds(1))
                    long.cancel()
                    #expect(clock.sleeperCount == 0)
                }
                try await short.value
                await #expect(throws: CancellationError.self) { try await long.value }
                var events = central.events().makeAsyncIterator()
                _ = await events.next()  // nothing will come: the run stalls
            }
            Issue.record("the run should have stalled")
        } catch let stall as MockBLEBridge.Stall {
            #expect(stall.reason == .nothingScheduled)
            #expect(stall.at == Self.at(1_000))
            #expect(!stall.waiting.contains { if case .sleepers = $0 { true } else { false } })
        }
    }

    @Test("untilSleeping(count:) on a bridge's clock returns once that many tasks sleep on the bridge's schedule")
    func untilSleepingCountsTheBridgesSleepers() async throws {
        let bridge = MockBLEBridge()
        let clock = bridge.clock
        let tasks = [3, 1, 2].map { seconds in Task { try await clock.sleep(for: .seconds(seconds)) } }
        await clock.untilSleeping(count: 3)
        #expect(clock.sleeperCount == 3)
        #expect(clock.nextDeadline == Self.at(1_000))
        #expect(await bridge.stalledSleepers == 3)
        await clock.advance(by: .seconds(3))
        for task in tasks { try await task.value }
        #expect(clock.sleeperCount == 0)
        // A cancelled wait returns too.
        let watcher = Task { await clock.untilSleeping(count: 1) }
        watcher.cancel()
        await watcher.value
    }

    @Test("Advancing a bridge's clock runs the bridge's schedule: faults and sleepers due, in order")
    func advancingTheClockAdvancesTheBridge() async throws {
        let (bridge, central, peripheral) = try await Self.connected()
        let clock = bridge.clock
        let start = await bridge.now
        await bridge.schedule(
            .disconnect(
                central: central.identifier, peripheral: peripheral.identifier,
                error: CoreBluetoothError(.connectionTimeout)),
            after: .seconds(1))
        let sleeper = Task { try await clock.sleep(until: start.advanced(by: .seconds(3))) }
        await clock.untilSleeping(count: 1)
        await clock.advance(by: .seconds(2))
        #expect(await bridge.now == start.advanced(by: .seconds(2)))
        #expect(clock.now == start.advanced(by: .seconds(2)))
        #expect(await !central.isConnected(peripheral.identifier))
        #expect(clock.sleeperCount == 1)
        await clock.advance(to: start.advanced(by: .seconds(3)))
        try await sleeper.value
        #expect(await bridge.now == start.advanced(by: .seconds(3)))
        let later = Task { try await clock.sleep(for: .seconds(5)) }
        await clock.untilSleeping(count: 1)
        #expect(await clock.run())
        try await later.value
        #expect(await bridge.now == start.advanced(by: .seconds(8)))
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    /// (It moved the time to the target, leaving the events due before it unrun, to run later
    /// stamped with a time past their deadlines.)
    @Test("A cancelled advance stops at the last event it ran: time never passes an event that has not run")
    func aCancelledAdvanceStopsAtTheLastEventItRan() async throws {
        let bridge = MockBLEBridge(configuration: .realistic(seed: 2))
        try await Self.scanAmongAdvertisements(on: bridge, seed: 2)
        let before = await bridge.now
        let entries = await bridge.log.count
        let advance = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            await bridge.advance(by: .seconds(3_600))
        }
        await advance.value
        #expect(await bridge.now == before)
        #expect(await bridge.log.count == entries, "no advertisement was heard: none ran")
        // Uncancelled, the same advance runs them, and lands on its target.
        await bridge.advance(by: .seconds(1))
        #expect(await bridge.now == before.advanced(by: .seconds(1)))
        #expect(await bridge.log.count > entries)
    }

    @Test("A bridge's clock's run is the bridge's run, and does not nest inside it")
    func clockRunIsTheBridgesRun() async throws {
        let bridge = MockBLEBridge()
        let clock = bridge.clock
        let now = try await clock.run {
            for _ in 0..<3 { try await clock.sleep(for: .seconds(1)) }
            return clock.now
        }
        #expect(now == Self.at(3_000))
        #expect(await bridge.now == Self.at(3_000))
        _ = try await bridge.run {
            await #expect(throws: APIMisuseError.self) { _ = try await clock.run { 0 } }
        }
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test("A run past its time limit lists the sleepers still on the bridge's clock")
    func stallListsSleepers() async throws {
        let bridge = MockBLEBridge()
        let clock = bridge.clock
        do {
            try await bridge.run(timeLimit: .seconds(5)) {
                // Child tasks: the stall cancels the body, and so them.
                async let first: Void = clock.sleep(for: .seconds(60))
                async let second: Void = clock.sleep(for: .seconds(60))
                _ = try await (first, second)
            }
            Issue.record("the run should have stopped at its time limit")
        } catch let stall as MockBLEBridge.Stall {
            #expect(stall.reason == .timeLimitReached)
            #expect(stall.waiting.contains(.sleepers(count: 2)))
            #expect(stall.description.contains("2 tasks sleeping on the bridge's clock"))
        }
    }

    /// With nothing on the schedule, an advance past the time limit used to carry the run past
    /// it (to a million seconds with a limit of 100).
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(
        "A run whose advance goes past its time limit stops at the limit, naming the advance", arguments: [false, true])
    func anAdvancePastTheTimeLimitStopsAtIt(scheduleBusy: Bool) async throws {
        let bridge = MockBLEBridge()
        if scheduleBusy { _ = try await TestPeripherals.advertisingHeartRate(on: bridge) }
        let start = await bridge.now
        do {
            try await bridge.run(timeLimit: .seconds(100)) { await bridge.advance(by: .seconds(1_000_000)) }
            Issue.record("the run should have stopped at its time limit")
        } catch let stall as MockBLEBridge.Stall {
            #expect(stall.reason == .timeLimitReached)
            #expect(stall.at <= start.advanced(by: .seconds(100)))
            #expect(stall.waiting.contains { "\($0)".contains("bridge.advance (to ") })
        }
        #expect(await bridge.now <= start.advanced(by: .seconds(100)))
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test("Tasks sleeping in loops among advertising events wake exactly on time: registration never races the driver")
    func registrationNeverRacesTheDriver() async throws {
        for seed: UInt64 in 0..<10 {
            let bridge = MockBLEBridge(configuration: .realistic(seed: seed))
            let clock = bridge.clock
            let wakes = Recorder<(task: Int, round: Int, now: Instant)>()
            let start = try await bridge.run {
                let central = try await Self.scanAmongAdvertisements(on: bridge, seed: seed)
                let start = clock.now
                let loops = (0..<6).map { task in
                    bridge.task {
                        for round in 1...20 {
                            try await clock.sleep(for: .milliseconds(7 + 3 * task))
                            wakes.append((task, round, clock.now))
                        }
                    }
                }
                for loop in loops { try await loop.value }
                await central.stopScan()
                return start
            }
            let entries = wakes.entries
            #expect(entries.count == 120)
            for wake in entries {
                #expect(
                    wake.now == start.advanced(by: .milliseconds((7 + 3 * wake.task) * wake.round)),
                    "seed \(seed): task \(wake.task) round \(wake.round) woke at \(wake.now)")
            }
            // In time order; at equal instants, in the order the sleeps began.
            #expect(entries.map(\.now) == entries.map(\.now).sorted(), "seed \(seed)")
        }
    }

    @Test("A bridge's clock whose bridge is gone refuses to sleep with a clear error")
    func sleepingAfterTheBridgeIsGone() async throws {
        var bridge: MockBLEBridge? = MockBLEBridge()
        let clock = try #require(bridge?.clock)
        weak let gone = bridge
        bridge = nil
        #expect(gone == nil)
        await #expect(throws: APIMisuseError.self) { try await clock.sleep(for: .seconds(1)) }
        try await clock.sleep(for: .zero)  // due at once: nothing to wait for
        #expect(clock.now == .zero)
    }

    @Test("A task sleeping on a bridge's clock does not keep the bridge; when the bridge goes, the sleep throws")
    func sleepingDoesNotKeepTheBridge() async throws {
        var bridge: MockBLEBridge? = MockBLEBridge()
        let clock = try #require(bridge?.clock)
        let sleeper = Task { try await clock.sleep(for: .seconds(10)) }
        await clock.untilSleeping(count: 1)
        weak let gone = bridge
        bridge = nil
        #expect(gone == nil)
        // (Were the bridge still there, nothing would wake the sleeper: let it go.)
        if gone != nil { sleeper.cancel() }
        await #expect(
            throws: APIMisuseError.invalidConfiguration(
                "VirtualClock.sleep: this is a MockBLEBridge's clock and the bridge no longer exists; "
                    + "keep the bridge alive while code uses its clock, or use a VirtualClock() of its own")
        ) { try await sleeper.value }
    }

    @Test("A sleeper's continuation registered after its wake-up, its cancellation or its bridge's end finds it")
    func registrationAfterTheEvent() async throws {
        let clock = VirtualClock(bridgedAt: .zero)
        let woken = SleeperID(rawValue: 1)
        clock.wake(woken, remaining: [])
        let wake = try await withCheckedThrowingContinuation { clock.register(woken, $0) }
        #expect(wake == .advanced)

        let cancelled = SleeperID(rawValue: 2)
        clock.publish(sleepers: [World.Sleeper(id: cancelled, deadline: Self.at(5))])
        #expect(clock.cancelSleeper(cancelled))
        clock.wake(cancelled, remaining: [])  // a cancelled sleeper's wake-up finds nothing to record
        await #expect(throws: CancellationError.self) {
            _ = try await withCheckedThrowingContinuation { clock.register(cancelled, $0) }
        }

        clock.bridgeWentAway()
        await #expect(throws: APIMisuseError.self) {
            _ = try await withCheckedThrowingContinuation { clock.register(SleeperID(rawValue: 3), $0) }
        }
    }
}

extension MockBLEBridge {
    /// The sleepers on the world's schedule (for tests).
    var stalledSleepers: Int { world.sleeperCount }
}
