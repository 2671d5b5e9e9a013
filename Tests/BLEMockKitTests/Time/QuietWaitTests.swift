import BLECore
import Foundation
import Testing

@testable import BLEMockKit

/// Waits outside runs that nothing may end (a test reading events, sleeping on the clock or in
/// `waitUntil` while nothing moves time) are reported once they have stood still for a patience
/// of wall time, with the seed: the rules (``QuietWaits``, synchronously) and the reports of real
/// waits on bridges and clocks.
@Suite("Waits outside runs that nothing may end are reported", .timeLimit(.minutes(10)))
struct QuietWaitTests {
    typealias Instant = VirtualClock.Instant

    static let central = UUID(uuidString: "00000000-0000-0000-0000-0000000000C1")!
    static let patience: Duration = .seconds(10)

    // MARK: The rules

    @Test("A wait is reported once, after standing still for the patience, and the check is armed until then")
    func aWaitIsReportedOnceAfterThePatience() {
        var waits = QuietWaits()
        let start = ContinuousClock.now
        let begun = waits.begin(.events(.central(Self.central)), now: .zero, wall: start, patience: Self.patience)
        #expect(begun.armAfter == Self.patience)
        let early = waits.check(
            now: .zero, wall: start.advanced(by: .seconds(4)), driven: false, patience: Self.patience)
        #expect(early.reports.isEmpty)
        #expect(early.armAfter == .seconds(6))
        #expect(waits.isArmed)
        let due = waits.check(
            now: .zero, wall: start.advanced(by: .seconds(10)), driven: false, patience: Self.patience)
        #expect(due.reports == [.init(wait: .events(.central(Self.central)), since: .zero, waited: .seconds(10))])
        #expect(due.armAfter == nil)
        #expect(!waits.isArmed)
        let later = waits.check(
            now: .zero, wall: start.advanced(by: .seconds(30)), driven: false, patience: Self.patience)
        #expect(later.reports.isEmpty, "reported once per wait")
        #expect(waits.entries.count == 1, "the wait is still watched until it ends")
    }

    @Test("Only the first wait arms a check; later ones are found by it")
    func onlyTheFirstWaitArmsACheck() {
        var waits = QuietWaits()
        let start = ContinuousClock.now
        #expect(waits.begin(.condition, now: .zero, wall: start, patience: Self.patience).armAfter == Self.patience)
        let second = waits.begin(
            .sleep(until: Instant(offset: .seconds(1))), now: .zero, wall: start.advanced(by: .seconds(3)),
            patience: Self.patience)
        #expect(second.armAfter == nil)
        let first = waits.check(
            now: .zero, wall: start.advanced(by: .seconds(10)), driven: false, patience: Self.patience)
        #expect(first.reports.map(\.wait) == [.condition])
        #expect(first.armAfter == .seconds(3), "the second wait's patience runs out 3 s later")
        let next = waits.check(
            now: .zero, wall: start.advanced(by: .seconds(13)), driven: false, patience: Self.patience)
        #expect(next.reports.map(\.wait) == [.sleep(until: Instant(offset: .seconds(1)))])
    }

    @Test("Virtual time moving starts a wait's quiet stretch again, from the new time")
    func timeMovingStartsTheStretchAgain() {
        var waits = QuietWaits()
        let start = ContinuousClock.now
        _ = waits.begin(.condition, now: .zero, wall: start, patience: Self.patience)
        let moved = Instant(offset: .milliseconds(250))
        let first = waits.check(
            now: moved, wall: start.advanced(by: .seconds(10)), driven: false, patience: Self.patience)
        #expect(first.reports.isEmpty)
        #expect(first.armAfter == Self.patience)
        let second = waits.check(
            now: moved, wall: start.advanced(by: .seconds(20)), driven: false, patience: Self.patience)
        #expect(second.reports == [.init(wait: .condition, since: moved, waited: .seconds(10))])
    }

    @Test("While a run or the wall clock drives time, a wait is not quiet: its stretch starts again")
    func aDrivenClockReportsNothing() {
        var waits = QuietWaits()
        let start = ContinuousClock.now
        _ = waits.begin(.condition, now: .zero, wall: start, patience: Self.patience)
        let driven = waits.check(
            now: .zero, wall: start.advanced(by: .seconds(60)), driven: true, patience: Self.patience)
        #expect(driven.reports.isEmpty)
        #expect(driven.armAfter == Self.patience)
        let quiet = waits.check(
            now: .zero, wall: start.advanced(by: .seconds(70)), driven: false, patience: Self.patience)
        #expect(quiet.reports.map(\.waited) == [.seconds(10)])
    }

    @Test("A wait that ended is not reported, and with none left the check is not armed again")
    func anEndedWaitIsNotReported() {
        var waits = QuietWaits()
        let start = ContinuousClock.now
        let token = waits.begin(.condition, now: .zero, wall: start, patience: Self.patience).token
        waits.end(token)
        let check = waits.check(
            now: .zero, wall: start.advanced(by: .seconds(10)), driven: false, patience: Self.patience)
        #expect(check.reports.isEmpty)
        #expect(check.armAfter == nil)
        #expect(!waits.isArmed)
        #expect(waits.begin(.condition, now: .zero, wall: start, patience: Self.patience).armAfter != nil)
    }

    @Test("A patience of zero arms its check a millisecond later, not at once")
    func aZeroPatienceDoesNotSpin() {
        var waits = QuietWaits()
        let start = ContinuousClock.now
        #expect(waits.begin(.condition, now: .zero, wall: start, patience: .zero).armAfter == .milliseconds(1))
    }

    // MARK: The reports' text

    @Test("A report names what waits, the bridge's seed and timing, the time standing still and how to move it")
    func theReportsText() {
        let since = Instant(offset: .milliseconds(1_250))
        let events = QuietWaits.message(
            .init(wait: .events(.central(Self.central)), since: since, waited: .milliseconds(10_040)),
            bridge: (seed: 7, fast: false))
        #expect(
            events
                == "a task reading the events of MockCentralManager 00000000-0000-0000-0000-0000000000C1, on a "
                + "MockBLEBridge (seed 7, realistic timing), has waited 10.0 s of wall time with virtual time "
                + "standing at 1.25s and nothing driving it. Outside a run nothing moves virtual time while a task "
                + "waits, so an event that needs time (an advertisement, a connection event, a timeout) never "
                + "comes: if no other code of the test moves time or acts on the bridge, this wait never ends. "
                + "Step time with `await bridge.advance(by:)` before waiting, or wait inside `bridge.run { }` (or "
                + "the `.mockBridge` trait), where time drives itself and a wait that cannot end throws "
                + "MockBLEBridge.Stall with the seed.")
        let fast = QuietWaits.message(
            .init(wait: .events(.peripheral(Self.central)), since: .zero, waited: .milliseconds(300)),
            bridge: (seed: 0, fast: true))
        #expect(
            fast.hasPrefix(
                "a task reading the events of MockPeripheralManager 00000000-0000-0000-0000-0000000000C1, on a MockBLEBridge (seed 0, fast mode), has waited 0.3 s"
            ))
        #expect(
            fast.contains(
                "Outside a run, in fast mode, an event comes only when code calls the bridge, so the event it waits "
                    + "for never comes: if no other code of the test moves time or acts on the bridge, this wait never "
                    + "ends."))
        let sleep = QuietWaits.message(
            .init(wait: .sleep(until: Instant(offset: .seconds(2))), since: .zero, waited: .seconds(12)),
            bridge: (seed: 3, fast: false))
        #expect(
            sleep.hasPrefix(
                "a task sleeping on the clock until 2s, on a MockBLEBridge (seed 3, realistic timing), has waited 12.0 s"
            ))
        #expect(sleep.contains("so its deadline never comes"))
        let condition = QuietWaits.message(
            .init(wait: .condition, since: .zero, waited: .seconds(10)), bridge: (1, true))
        #expect(condition.hasPrefix("a bridge.waitUntil { … }, on a MockBLEBridge (seed 1, fast mode)"))
        let ownClock = QuietWaits.message(
            .init(wait: .sleep(until: Instant(offset: .seconds(1))), since: .zero, waited: .seconds(10)), bridge: nil)
        #expect(ownClock.hasPrefix("a task sleeping on the clock until 1s, on a VirtualClock, has waited 10.0 s"))
        #expect(
            ownClock.hasSuffix(
                "Advance the clock from the test (`clock.advance(by:)`), or run the code in `clock.run { }`, where "
                    + "time drives itself."))
        #expect(!ownClock.contains("seed"))
    }

    @Test("An operation's report says what the operation is, what it waits for, and how to let it go on")
    func anOperationsReportText() {
        let message = QuietWaits.message(
            .init(
                wait: .operation(
                    "MockCentralManager 00000000-0000-0000-0000-0000000000C1: connect on peripheral 00000000",
                    needs: "the peripheral, which is not advertising, to become connectable"),
                since: .zero, waited: .seconds(10)),
            bridge: (seed: 12, fast: true))
        #expect(
            message
                == "a task awaiting MockCentralManager 00000000-0000-0000-0000-0000000000C1: connect on peripheral "
                + "00000000, on a MockBLEBridge (seed 12, fast mode), has waited 10.0 s of wall time with virtual "
                + "time standing at 0s and nothing driving it. It waits for the peripheral, which is not "
                + "advertising, to become connectable, which outside a run only other code of the test brings "
                + "about: if none moves time or acts on the bridge, this wait never ends. Step time with `await "
                + "bridge.advance(by:)` before waiting, or wait inside `bridge.run { }` (or the `.mockBridge` "
                + "trait), where time drives itself and a wait that cannot end throws MockBLEBridge.Stall with the "
                + "seed.")
    }

    // MARK: Real waits

    /// A realistic central, powered on, on a bridge whose quiet waits are reported after 0.2 s.
    static func poweredCentral(seed: UInt64) async -> (MockBLEBridge, MockCentralManager) {
        let bridge = MockBLEBridge(configuration: .realistic(seed: seed))
        bridge.sleepClock.setQuietWaitPatience(.milliseconds(200))
        let central = MockCentralManager(configuration: .realistic(seed: seed), bridge: bridge)
        _ = await central.waitForPoweredOn()
        return (bridge, central)
    }

    @Test(
        "A test reading a realistic central's events outside a run, with nothing moving time, is reported with the seed"
    )
    func readingEventsOutsideARunIsReported() async throws {
        let (bridge, central) = await Self.poweredCentral(seed: 41)
        let events = central.events()
        let reader = Task { await events.first { _ in true } }
        let reports = await bridge.sleepClock.quietWaitReports(atLeast: 1)
        #expect(reports.count == 1)
        #expect(
            reports.first?.hasPrefix(
                "a task reading the events of MockCentralManager \(central.identifier), on a MockBLEBridge (seed 41, "
                    + "realistic timing), has waited ") == true)
        // (At least the patience; more on a busy machine, as the check runs late.)
        #expect(reports.first?.contains(" s of wall time with virtual time standing at ") == true)
        // The wait goes on, and ends as its task is cancelled; nothing is left watched.
        reader.cancel()
        #expect(await reader.value == nil)
        #expect(bridge.sleepClock.lock.withLock { bridge.sleepClock.quiet.waits.entries.isEmpty })
        #expect(bridge.sleepClock.quietWaitReports.count == 1, "once per wait")
    }

    @Test("An event that ends a reported wait ends its watch")
    func anEventEndsTheWatch() async throws {
        let bridge = MockBLEBridge()
        bridge.sleepClock.setQuietWaitPatience(.milliseconds(200))
        let sensor = MockPeripheralManager(bridge: bridge)
        _ = await sensor.waitForPoweredOn()
        let central = MockCentralManager(bridge: bridge)
        _ = await central.waitForPoweredOn()
        let events = central.events()
        let reader = Task { await events.first { if case .discovered = $0 { true } else { false } } }
        // Reported (fast mode: nothing comes unless code calls the bridge), and still waiting.
        let reports = await bridge.sleepClock.quietWaitReports(atLeast: 1)
        #expect(
            reports.first?.contains(
                "in fast mode, an event comes only when code calls the bridge, so the event it waits for never comes")
                == true)
        try await sensor.startAdvertising(AdvertisementData(localName: "Sensor"))
        try await central.scanForPeripherals(withServices: nil)
        guard case .discovered(let found) = await reader.value else {
            Issue.record("the scan found nothing")
            return
        }
        #expect(found.identifier == sensor.identifier)
        #expect(bridge.sleepClock.lock.withLock { bridge.sleepClock.quiet.waits.entries.isEmpty })
        #expect(bridge.sleepClock.quietWaitReports.count == 1)
    }

    @Test("A test sleeping on a bridge's clock outside a run, with nothing moving time, is reported")
    func sleepingOnTheBridgesClockIsReported() async throws {
        let bridge = MockBLEBridge(seed: 5)
        let clock = bridge.clock
        clock.setQuietWaitPatience(.milliseconds(200))
        let sleeper = Task { try await clock.sleep(for: .seconds(2)) }
        let reports = await clock.quietWaitReports(atLeast: 1)
        #expect(
            reports.first?.hasPrefix("a task sleeping on the clock until 2s, on a MockBLEBridge (seed 5, fast mode)")
                == true)
        // Time moved by the test ends it.
        await bridge.advance(by: .seconds(2))
        try await sleeper.value
        #expect(clock.lock.withLock { clock.quiet.waits.entries.isEmpty })
    }

    @Test("A waitUntil outside a run whose condition does not hold is reported, and ends when its task is cancelled")
    func aWaitUntilOutsideARunIsReported() async throws {
        let bridge = MockBLEBridge(seed: 9)
        bridge.sleepClock.setQuietWaitPatience(.milliseconds(200))
        let waiter = Task { await bridge.waitUntil { $0.log.count > 1_000 } }
        let reports = await bridge.sleepClock.quietWaitReports(atLeast: 1)
        #expect(reports.first?.hasPrefix("a bridge.waitUntil { … }, on a MockBLEBridge (seed 9, fast mode)") == true)
        waiter.cancel()
        await waiter.value
        #expect(bridge.sleepClock.lock.withLock { bridge.sleepClock.quiet.waits.entries.isEmpty })
    }

    /// (It waited for ever without a word.)
    @Test("A waitForApp outside a run whose condition does not hold is reported with where it was called")
    func aWaitForAppOutsideARunIsReported() async throws {
        let bridge = MockBLEBridge(seed: 12)
        bridge.sleepClock.setQuietWaitPatience(.milliseconds(200))
        let line = #line + 1
        let waiter = Task { try await bridge.waitForApp { false } }
        let reports = await bridge.sleepClock.quietWaitReports(atLeast: 1)
        #expect(
            reports.first?.hasPrefix(
                "a bridge.waitForApp { … } at BLEMockKitTests/QuietWaitTests.swift:\(line), on a MockBLEBridge "
                    + "(seed 12, fast mode)") == true, "\(reports)")
        waiter.cancel()
        await #expect(throws: CancellationError.self) { try await waiter.value }
        #expect(bridge.sleepClock.lock.withLock { bridge.sleepClock.quiet.waits.entries.isEmpty })
    }

    /// (It reported `.clean`, and the wait went on for ever after it.)
    @Test("finish() lists a waitUntil whose condition never held, with the seed; cancelling its task ends it")
    func finishListsAWaitUntilThatNeverEnded() async throws {
        let bridge = MockBLEBridge(configuration: .realistic(seed: 77))
        bridge.sleepClock.setQuietWaitPatience(.milliseconds(50))
        let waiter = Task { await bridge.waitUntil { _ in false } }
        // Reported as a quiet wait: it has begun.
        _ = await bridge.sleepClock.quietWaitReports(atLeast: 1)
        #expect(
            await bridge.finish()
                == .leftovers([
                    .operation(
                        "bridge.waitUntil { … } (its condition never held)", central: nil, peripheral: nil,
                        characteristic: nil, since: .zero),
                    .seed(77),
                ]))
        waiter.cancel()
        await waiter.value
        #expect(await bridge.finish() == .clean)
    }

    @Test("A sleep on a clock of its own outside its run, with nothing advancing it, is reported without a seed")
    func sleepingOnAClockOfItsOwnIsReported() async throws {
        let clock = VirtualClock()
        clock.setQuietWaitPatience(.milliseconds(200))
        let sleeper = Task { try await clock.sleep(for: .seconds(1)) }
        let reports = await clock.quietWaitReports(atLeast: 1)
        #expect(
            reports.first?.hasPrefix("a task sleeping on the clock until 1s, on a VirtualClock, has waited") == true)
        await clock.advance(by: .seconds(1))
        try await sleeper.value
    }

    /// Makes `central` discover `sensor` (advertising), and stops its scan.
    static func discover(_ sensor: MockPeripheralManager, by central: MockCentralManager) async throws {
        try await sensor.startAdvertising(AdvertisementData(localName: "Sensor"))
        let events = central.events()
        try await central.scanForPeripherals(withServices: nil)
        _ = await events.first { if case .discovered = $0 { true } else { false } }
        await central.stopScan()
    }

    @Test("A connect outside a run to a peripheral that is not advertising is reported, and ends when it advertises")
    func aConnectThatCannotCompleteIsReported() async throws {
        let bridge = MockBLEBridge(seed: 21)
        bridge.sleepClock.setQuietWaitPatience(.milliseconds(200))
        let sensor = MockPeripheralManager(bridge: bridge)
        _ = await sensor.waitForPoweredOn()
        let central = MockCentralManager(bridge: bridge)
        try await Self.discover(sensor, by: central)
        await sensor.stopAdvertising()
        let connect = Task { try await central.connect(sensor.identifier) }
        let reports = await bridge.sleepClock.quietWaitReports(atLeast: 1)
        #expect(reports.count == 1)
        #expect(
            reports.first?.hasPrefix(
                "a task awaiting MockCentralManager \(central.identifier): connect on peripheral "
                    + "\(sensor.identifier.uuidString.prefix(8)), on a MockBLEBridge (seed 21, fast mode), has waited ")
                == true)
        #expect(
            reports.first?.contains(
                "It waits for the peripheral, which is not advertising, to become connectable, which outside a run "
                    + "only other code of the test brings about") == true)
        // The test acting on the bridge lets it go on; nothing is left watched.
        try await sensor.startAdvertising(AdvertisementData(localName: "Sensor"))
        try await connect.value
        #expect(await central.isConnected(sensor.identifier))
        #expect(bridge.sleepClock.lock.withLock { bridge.sleepClock.quiet.waits.entries.isEmpty })
        #expect(bridge.sleepClock.quietWaitReports.count == 1)
    }

    @Test(
        "A read waiting for a peripheral app's answer outside a run is reported with the request, and ends when cancelled"
    )
    func aReadWaitingForAnAnswerIsReported() async throws {
        let bridge = MockBLEBridge(seed: 22)
        bridge.sleepClock.setQuietWaitPatience(.milliseconds(200))
        let sensor = MockPeripheralManager(configuration: .init(requestHandling: .manual), bridge: bridge)
        let service = GATTService(
            uuid: BluetoothUUID("180D"),
            characteristics: [
                GATTCharacteristic(uuid: BluetoothUUID("2A38"), properties: [.read], permissions: [.readable])
            ])
        _ = try await sensor.add(service)
        let central = MockCentralManager(bridge: bridge)
        try await Self.discover(sensor, by: central)
        try await central.connect(sensor.identifier)
        let characteristic = try await central.discoverAll(for: sensor.identifier)[0]
        let read = Task { try await central.readValue(for: characteristic) }
        let reports = await bridge.sleepClock.quietWaitReports(atLeast: 1)
        #expect(reports.first?.hasPrefix("a task awaiting MockCentralManager \(central.identifier): ") == true)
        #expect(
            reports.first?.contains(
                "It waits for the peripheral's app to answer request 1 (`respond(to:withResult:value:)`)") == true,
            "\(reports)")
        read.cancel()
        await #expect(throws: CancellationError.self) { try await read.value }
        #expect(bridge.sleepClock.lock.withLock { bridge.sleepClock.quiet.waits.entries.isEmpty })
    }

    @Test("waitForPoweredOn outside a run on a central whose Bluetooth stays resetting is reported with its state")
    func waitingForPowerThatNeverComesIsReported() async throws {
        let bridge = MockBLEBridge(seed: 23)
        bridge.sleepClock.setQuietWaitPatience(.milliseconds(200))
        var configuration = MockCentralManager.Configuration.fast
        configuration.stateTransition = .stuck(.resetting)
        let central = MockCentralManager(configuration: configuration, bridge: bridge)
        let waiter = Task { await central.waitForPoweredOn() }
        let reports = await bridge.sleepClock.quietWaitReports(atLeast: 1)
        #expect(
            reports.first?.hasPrefix("a task awaiting MockCentralManager \(central.identifier): waitForPoweredOn, ")
                == true)
        #expect(
            reports.first?.contains("It waits for its Bluetooth to be powered on (it is resetting)") == true,
            "\(reports)")
        await central.simulateStateChange(.poweredOn)
        #expect(await waiter.value == .poweredOn)
        #expect(bridge.sleepClock.lock.withLock { bridge.sleepClock.quiet.waits.entries.isEmpty })
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test("Inside a run the same wait is not watched: the run reports it as a stall, with the seed")
    func insideARunTheRunReportsIt() async throws {
        let (bridge, central) = await Self.poweredCentral(seed: 41)
        await #expect(throws: MockBLEBridge.Stall.self) {
            try await bridge.run(stallPatience: .milliseconds(500)) {
                await central.stopScan()
                _ = await central.events().first { if case .disconnected = $0 { true } else { false } }
            }
        }
        #expect(bridge.sleepClock.quietWaitReports.isEmpty)
        #expect(bridge.sleepClock.lock.withLock { bridge.sleepClock.quiet.waits.entries.isEmpty })
    }
}
