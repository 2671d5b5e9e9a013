import BLECore
import Foundation
import Testing

@testable import BLEMockKit

/// Scans with `central` for `service` and connects the first peripheral found; returns it.
@available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
func connectToFirst(advertising service: BluetoothUUID, _ central: MockCentralManager) async throws -> UUID {
    let events = central.events()
    try await central.scanForPeripherals(withServices: [service])
    var found: UUID?
    for await event in events {
        if case .discovered(let peripheral) = event {
            found = peripheral.identifier
            break
        }
    }
    let peripheral = try #require(found)
    await central.stopScan()
    try await central.connect(peripheral)
    return peripheral
}

/// A body that connects a central to a sensor and reads it: fails when the link's ATT_MTU is
/// below 100 (a stand-in for an app that assumes a large MTU), and reads what the plan says
/// only through the link.
@available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
func readSensor(_ run: ExplorationRun) async throws {
    let sensor = MockPeripheralManager()
    let local = try await sensor.add(
        GATTService(
            uuid: "FFF0",
            characteristics: [
                GATTCharacteristic(uuid: "FFF1", properties: .read, permissions: .readable, value: Data([7]))
            ]))
    _ = local
    try await sensor.startAdvertising(AdvertisementData(localName: "Sensor", serviceUUIDs: ["FFF0"]))
    let central = MockCentralManager()
    let peripheral = try await connectToFirst(advertising: "FFF0", central)
    let length = try await central.maximumWriteValueLength(for: peripheral, type: .withoutResponse)
    try Exploration.require(length >= 97, "the app needs 97 bytes per packet; the link carries \(length)")
    let characteristics = try await central.discoverAll(for: peripheral)
    _ = try await central.readValue(for: characteristics[0])
}

/// A body that connects a central to a sensor and expects the link to be up 3 s later: a
/// stand-in for an app that never reconnects, which any fault that ends the link fails.
@available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
func stayConnected(_ run: ExplorationRun) async throws {
    let sensor = MockPeripheralManager()
    _ = try await sensor.add(GATTService(uuid: "FFF0", characteristics: []))
    try await sensor.startAdvertising(AdvertisementData(localName: "Sensor", serviceUUIDs: ["FFF0"]))
    let central = MockCentralManager()
    let peripheral = try await connectToFirst(advertising: "FFF0", central)
    try await run.bridge.clock.sleep(for: .seconds(3))
    try Exploration.require(await central.isConnected(peripheral), "the link is gone and the app never reconnects")
}

@Suite("Exploration: runs, reports, determinism and limits", .timeLimit(.minutes(10)))
struct ExplorationRunnerTests {
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test("A power cycle that ends an app's link is reported as a plain disconnect when disconnects are in the budget")
    func aPowerCycleShrinksToADisconnect() async throws {
        let budget = ExplorationBudget(
            faultKinds: [.powerCycle, .disconnect], faultCount: 1...1, window: .seconds(1) ... .seconds(2))
        // The first seed that draws a power cycle.
        let seed = try #require(
            (UInt64(0)..<100).first {
                ExplorationPlan.draw(seed: $0, budget: budget, window: budget.window!).faults.first?.kind == .powerCycle
            })
        let report = await Exploration(budget: budget, seeds: [seed]).run { try await stayConnected($0) }
        let failure = try #require(report.failures.first)
        #expect(failure.found.plan.faults.map(\.kind) == [.powerCycle])
        #expect(failure.minimal.plan.faults.map(\.kind) == [.disconnect])
        #expect(failure.steps.contains { $0.hasPrefix("a plain disconnect instead: ") })
        #expect(
            failure.minimal.error as? ExplorationFailure
                == ExplorationFailure("the link is gone and the app never reconnects"))
        // Power cycles only: the minimal plan keeps its kind.
        let cyclesOnly = ExplorationBudget(
            faultKinds: [.powerCycle], faultCount: 1...1, window: .seconds(1) ... .seconds(2))
        let kept = await Exploration(budget: cyclesOnly, seeds: 1).run { try await stayConnected($0) }
        #expect(try #require(kept.failures.first).minimal.plan.faults.map(\.kind) == [.powerCycle])
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(
        "It stops at the first failing seed in seed order and shrinks it to no faults and the largest failing ATT_MTU")
    func stopsAtTheFirstFailureAndShrinks() async throws {
        let report = await Exploration(budget: ExplorationBudget(faultKinds: [.fade]), seeds: 200).run {
            try await readSensor($0)
        }
        let failure = try #require(report.failures.first)
        #expect(report.failures.count == 1)
        // Every seed before it passes; it fails on its own.
        let mtus = (0..<failure.seed).map {
            ExplorationPlan.draw(seed: $0, budget: report.budget, window: report.window!).conditions.mtu
        }
        #expect(mtus.allSatisfy { $0 >= 100 })
        #expect(failure.found.plan.conditions.mtu < 100)
        #expect(report.seedsRun == Int(failure.seed) + 1 + (report.calibration == nil ? 0 : 0))
        #expect(failure.minimal.plan.faults.isEmpty)
        #expect(failure.minimal.plan.conditions.mtu == 99)
        #expect(
            failure.minimal.error as? ExplorationFailure
                == ExplorationFailure("the app needs 97 bytes per packet; the link carries 96"))
        #expect(failure.steps.last == "ATT_MTU raised to 99")
        let text = report.description
        #expect(text.hasPrefix("Explored \(report.seedsRun) of 200 seeds: 1 failure.\nSeed \(failure.seed) failed: "))
        #expect(text.contains("LinkConditions(mtu: 99)"))
        #expect(text.contains("Coverage over \(report.seedsRun) runs:"))
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test("One run at a time and two at once give the same report")
    func parallelismChangesNothing() async throws {
        let budget = ExplorationBudget(mtu: 23...200)
        let one = await Exploration(budget: budget, seeds: 60, parallelism: 1).run { try await readSensor($0) }
        let two = await Exploration(budget: budget, seeds: 60, parallelism: 2).run { try await readSensor($0) }
        #expect(one.seedsRun == two.seedsRun)
        #expect(one.failures.map(\.seed) == two.failures.map(\.seed))
        #expect(one.failures.map(\.minimal.plan) == two.failures.map(\.minimal.plan))
        #expect(one.failures.map(\.steps) == two.failures.map(\.steps))
        #expect(one.coverage == two.coverage)
        #expect(one.description == two.description)
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test("Told to keep going, it runs every seed and reports every failure in seed order")
    func keepsGoing() async throws {
        let report = await Exploration(
            budget: .conditionsOnly, seeds: 40, stopsAtFirstFailure: false, shrinks: false
        ).run { try await readSensor($0) }
        #expect(report.seedsRun == 40)
        let expected = (UInt64(0)..<40).filter {
            ExplorationPlan.draw(seed: $0, budget: .conditionsOnly, window: report.window!).conditions.mtu < 100
        }
        #expect(report.failures.map(\.seed) == expected)
        #expect(!expected.isEmpty)
        #expect(report.failures.allSatisfy { $0.shrinkRuns == 0 && $0.minimal.plan == $0.found.plan })
        #expect(report.coverage.runs == 40)
    }

    /// A body whose failure does not repeat under the same plan (it depends on something
    /// besides the bridge; here, a count of its runs) is reported as not reproducible and not
    /// shrunk: shrinking it kept steps at random and offered a replay that passed. A failure
    /// that repeats is shrunk as before.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test("A failure that does not repeat under the same plan is reported as not reproducible, unshrunk")
    func aFailureThatDoesNotRepeatIsReportedAsSuch() async throws {
        let runs = RunCount()
        let budget = ExplorationBudget(faultKinds: [.fade], mtu: 100...517)
        let report = await Exploration(budget: budget, seeds: 5, parallelism: 1).run { run in
            try await readSensor(run)
            if runs.next() == 3 { throw ExplorationFailure("the third run fails") }
        }
        let failure = try #require(report.failures.first)
        #expect(report.failures.count == 1)
        #expect(!failure.reproduces)
        #expect(failure.shrinkRuns == 0)
        #expect(failure.minimal.plan == failure.found.plan)
        #expect(failure.description.contains("not reproducible: run again with the same plan, it did not fail"))
        // A failure that repeats: shrunk, and nothing said of it.
        let repeats = await Exploration(budget: ExplorationBudget(mtu: 23...99), seeds: 1).run {
            try await readSensor($0)
        }
        let repeated = try #require(repeats.failures.first)
        #expect(repeated.reproduces)
        #expect(!repeated.description.contains("not reproducible"))
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test("A body that passes everywhere gets a clean report with coverage of what was drawn and fired")
    func cleanReportWithCoverage() async {
        // Fades only delay, and this body never pairs: it passes on every seed.
        let budget = ExplorationBudget(faultKinds: [.fade, .pairingRefused], mtu: 100...517)
        let report = await Exploration(budget: budget, seeds: 30).run { try await readSensor($0) }
        #expect(report.passed, "\(report)")
        #expect(report.seedsRun == 30)
        #expect(report.coverage.runs == 30)
        #expect(report.coverage.mtu.map { $0.lowerBound >= 100 } == true)
        let drawn = report.coverage.faults.values.map(\.drawn).reduce(0, +)
        #expect(drawn == report.coverage.runsByFaultCount.map { $0 * $1 }.reduce(0, +))
        // A refused pairing can never take effect here; fades did.
        #expect(report.coverage.neverFired(budget: report.budget) == [.pairingRefused])
        #expect((report.coverage.faults[.fade]?.fired ?? 0) > 0)
        #expect(report.description.contains("never took effect: pairingRefused"))
        #expect(report.description.hasPrefix("Explored 30 of 30 seeds: no failure.\nCoverage over 30 runs:"))
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test("Without a window, a fault-free run measures it; a given window is used as is")
    func windowIsMeasuredOrGiven() async throws {
        let measured = await Exploration(budget: ExplorationBudget(mtu: 100...517), seeds: 2).run {
            try await readSensor($0)
        }
        let calibration = try #require(measured.calibration)
        #expect(calibration.plan.faults.isEmpty && calibration.error == nil)
        #expect(measured.window == .zero...max(calibration.duration, .milliseconds(100)))
        let given = await Exploration(
            budget: ExplorationBudget(window: .seconds(1) ... .seconds(2), mtu: 100...517), seeds: 2
        ).run { try await readSensor($0) }
        #expect(given.calibration == nil)
        #expect(given.window == .seconds(1) ... .seconds(2))
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test("A body that fails without faults fails in the measuring run, and that is the failure reported")
    func calibrationFailureIsReported() async throws {
        let report = await Exploration(seeds: 10).run { _ in throw ExplorationFailure("always") }
        #expect(report.seedsRun == 1)
        let failure = try #require(report.failures.first)
        #expect(failure.found.plan.faults.isEmpty)
        #expect(failure.minimal.error as? ExplorationFailure == ExplorationFailure("always"))
        #expect(failure.minimal.plan.conditions == .roomy)
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test("A run that stalls fails with the stall, and the stall is the failure's signature")
    func stallIsAFailure() async throws {
        let report = await Exploration(
            budget: .conditionsOnly, seeds: 3, timeLimit: .seconds(5), stallPatience: .milliseconds(20)
        ).run { _ in
            let central = MockCentralManager()
            try await central.scanForPeripherals(withServices: nil)
            for await _ in central.events() {}
        }
        let failure = try #require(report.failures.first)
        #expect(failure.found.error is MockBLEBridge.Stall)
        #expect(
            failure.found.signature == "stall: timeLimitReached" || failure.found.signature == "stall: nothingScheduled"
        )
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(
        "A bad budget or parameter runs nothing and says why",
        arguments: [
            (
                Exploration(budget: ExplorationBudget(mtu: 1...2), seeds: 5),
                "ExplorationBudget.mtu.lowerBound: 1 is outside 23…517"
            ),
            (
                Exploration(seeds: 0),
                "Exploration(seeds: 0): a seed count of 0 is outside 1…, so no seed would be explored"
            ),
            (
                Exploration(seeds: -5),
                "Exploration(seeds: -5): a seed count of -5 is outside 1…, so no seed would be explored"
            ),
            (
                Exploration(seeds: []),
                "Exploration.seeds: the list is empty, so no seed would be explored; give at least one seed"
            ),
            (Exploration(seeds: 5, parallelism: 0), "Exploration.parallelism: 0 is outside 1…"),
            (Exploration(seeds: 5, maximumShrinkRuns: -1), "Exploration.maximumShrinkRuns: -1 is outside 0…"),
            (Exploration(seeds: 5, timeLimit: .zero), "Exploration.timeLimit: 0s is outside 0s… (exclusive)"),
            (
                Exploration(seeds: 5, stallPatience: .seconds(-1)),
                "Exploration.stallPatience: -1s is outside 0s…"
            ),
        ])
    func badParametersRunNothing(exploration: Exploration, message: String) async {
        let runs = Recorder<Int>()
        let report = await exploration.run { _ in runs.append(1) }
        #expect(report.problem == message)
        #expect(runs.entries.isEmpty)
        #expect(!report.passed)
        #expect(report.description == "Exploration could not run: \(message)")
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test("Progress is told after each run and once at the end, and counts seeds and failures")
    func progressIsReported() async {
        let notices = Recorder<ExplorationProgress>()
        _ = await Exploration(budget: ExplorationBudget(mtu: 23...60), seeds: 5, parallelism: 1).run(
            progress: { notices.append($0) }
        ) { try await readSensor($0) }
        let all = notices.entries
        #expect(all.last?.isFinished == true)
        #expect(all.last?.shrinking == nil)
        #expect(all.first?.seedsPlanned == 5)
        // The measuring run failed (ATT_MTU ≤ 60): shrinking is reported step by step.
        #expect(all.contains { $0.shrinking != nil })
        let done = all.map(\.seedsDone)
        #expect(done == done.sorted())
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test("Replaying a plan twice gives the same bridge log, faults and all")
    func replayIsDeterministic() async {
        let plan = ExplorationPlan.draw(
            seed: 11, budget: ExplorationBudget(faultKinds: [.fade, .attError], faultCount: 2...2, mtu: 100...517),
            window: .zero ... .milliseconds(300))
        let logs = Recorder<[String]>()
        for _ in 0..<2 {
            _ = await Exploration.replay(plan) { run in
                try? await readSensor(run)
                logs.append(await run.bridge.log.map { "\($0)" })
            }
        }
        #expect(logs.entries.count == 2)
        #expect(logs.entries[0] == logs.entries[1])
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test("Leftovers fail a run only when asked")
    func leftoversFailWhenAsked() async {
        let plan = ExplorationPlan(seed: 1)
        let body: Exploration.Body = { _ in _ = MockCentralManager().events() }
        let lenient = await Exploration.replay(plan, body)
        #expect(lenient.error == nil)
        // An injection that never fired is a leftover.
        let leaving: Exploration.Body = { run in
            await run.bridge.inject(ErrorInjection(.read, failure: .att(.unlikelyError)))
        }
        #expect(await Exploration.replay(plan, leaving).error == nil)
        let strict = await Exploration.replay(plan, failsOnLeftovers: true, leaving)
        #expect((strict.error as? ExplorationFailure)?.message.hasPrefix("leftovers: ") == true)
    }

    /// The report of an exploration of 100 seeds cancelled while its first run's `body` waits on
    /// a stream nothing feeds.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    static func explorationCancelledInItsFirstRun(
        _ body: @escaping @Sendable (AsyncStream<Int>) async throws -> Void
    ) async -> ExplorationReport {
        let (started, starting) = AsyncStream<Void>.makeStream()
        let exploration = Exploration(
            budget: ExplorationBudget(window: .zero ... .seconds(1)), seeds: 100, parallelism: 1,
            stallPatience: .seconds(3_600))
        let task = Task {
            await exploration.run { _ in
                starting.yield()
                let (never, _) = AsyncStream<Int>.makeStream()
                try await body(never)
            }
        }
        _ = await started.first { _ in true }
        task.cancel()
        return await task.value
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test("Cancelling an exploration ends the runs under way, starts no more, and reports the runs that ended")
    func cancellationEndsTheExploration() async throws {
        let report = await Self.explorationCancelledInItsFirstRun { never in
            // Waits for work from outside the run that never comes (until cancelled).
            for await _ in never {}
            try Task.checkCancellation()
        }
        // The run it cut short tells nothing about its seed: it is left out, and no other began.
        #expect(report.wasCancelled)
        #expect(report.seedsRun == 0)
        #expect(report.failures.isEmpty)
        #expect(report.description.hasPrefix("Explored 0 of 100 seeds (cancelled): no failure."))
        // Nothing was checked: a cancelled exploration does not pass (it did).
        #expect(!report.passed)
    }

    /// (It ran: an attError aimed at a connect failed mid-run with a message about
    /// MockBLEBridge.inject(_:), a call the test never made; a disconnect's operation was ignored.)
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test("A replayed plan with a fault that could not do what it says is refused before its body runs")
    func aPlanWithABadFaultIsRefusedBeforeItRuns() async throws {
        let runs = Recorder<Int>()
        let plan = ExplorationPlan(
            seed: 3,
            faults: [
                PlannedFault(.reset, at: .seconds(1)),
                PlannedFault(.disconnect, at: .seconds(2), operation: .read),
            ])
        #expect(
            plan.problem
                == "faults[1] (disconnect at 2s): operation: a disconnect fault does not read it (it reads "
                + "coreBluetoothError); leave it out")
        let outcome = await Exploration.replay(plan) { _ in runs.append(1) }
        #expect(runs.entries.isEmpty)
        #expect(outcome.faultsFired == [false, false])
        guard case .invalidConfiguration(let message) = outcome.error as? APIMisuseError else {
            Issue.record("expected invalidConfiguration, got \(String(describing: outcome.error))")
            return
        }
        #expect(message == "ExplorationPlan." + (plan.problem ?? ""))
    }

    /// (The run was reported as seed 0's failure, with a plan to replay, and the report failed.)
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test("A run the cancellation cut short is left out also when its body wraps the cancellation in an error")
    func aCancelledRunWhoseBodyWrapsTheErrorIsNotAFailure() async throws {
        let report = await Self.explorationCancelledInItsFirstRun { never in
            do {
                for await _ in never {}
                try Task.checkCancellation()
            } catch {
                // As an app's upload reports what stopped it.
                throw ExplorationFailure("upload aborted: \(error)")
            }
        }
        #expect(report.wasCancelled)
        #expect(report.seedsRun == 0)
        #expect(report.failures.isEmpty)
        #expect(!report.passed)
    }

    /// An exploration of a body that always fails, cancelled from inside its `cancelAtRun`th run
    /// (1: the failing seed, 2: the check that it fails again, 3 on: shrinking).
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    static func failingExplorationCancelled(atRun cancelAtRun: Int) async -> ExplorationReport {
        final class Box: @unchecked Sendable {
            // @unchecked Sendable: both fields are only touched with `lock` held.
            private let lock = NSLock()
            private var runs = 0
            var task: Task<ExplorationReport, Never>? {
                get { lock.withLock { stored } }
                set { lock.withLock { stored = newValue } }
            }
            private var stored: Task<ExplorationReport, Never>?
            func nextRun() -> Int {
                lock.withLock {
                    runs += 1; return runs
                }
            }
        }
        let box = Box()
        let exploration = Exploration(
            budget: ExplorationBudget(faultCount: 2...2, window: .zero ... .seconds(1)), seeds: 10, parallelism: 1,
            stallPatience: .seconds(3_600))
        let task = Task {
            await exploration.run { run in
                if box.nextRun() == cancelAtRun { box.task?.cancel() }
                try await run.bridge.clock.sleep(for: .seconds(2))
                throw ExplorationFailure("always")
            }
        }
        box.task = task
        return await task.value
    }

    /// (It reported the exploration not cancelled, and the failure as not reproducible: the
    /// check's run ended in the cancellation, not in the body's failure.)
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test("Cancelled while a failure is checked, an exploration says so and does not call the failure unreproducible")
    func cancelledWhileAFailureIsChecked() async throws {
        let report = await Self.failingExplorationCancelled(atRun: 2)
        #expect(report.wasCancelled)
        #expect(!report.passed)
        let failure = try #require(report.failures.first)
        #expect(failure.reproduces)
        #expect(failure.wasCutShort)
        #expect(failure.shrinkRuns == 0)
        #expect(!failure.description.contains("not reproducible"))
        #expect(failure.description.contains("cancelled while it was checked or shrunk"))
    }

    /// (It reported the exploration not cancelled, and the plan shrinking had reached as the
    /// minimal one.)
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test("Cancelled while a failure is shrunk, an exploration says so and that the plan may not be minimal")
    func cancelledWhileAFailureIsShrunk() async throws {
        let report = await Self.failingExplorationCancelled(atRun: 3)
        #expect(report.wasCancelled)
        let failure = try #require(report.failures.first)
        #expect(failure.reproduces)
        #expect(failure.wasCutShort)
        #expect(failure.artifacts == nil)
        #expect(failure.description.contains("cancelled while it was checked or shrunk"))
        // A failure that was not cut short says nothing of it.
        let uncancelled = await Exploration(
            budget: ExplorationBudget(faultCount: 2...2, window: .zero ... .seconds(1)), seeds: 1, parallelism: 1
        ).run { _ in throw ExplorationFailure("always") }
        #expect(uncancelled.failures.first?.wasCutShort == false)
        #expect(uncancelled.wasCancelled == false)
    }

    /// (It used to report that it passed, having explored nothing.)
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test("An exploration of no seeds runs nothing and does not pass, and a count set to seeds later is explored")
    func noSeeds() async {
        let runs = Recorder<Int>()
        var exploration = Exploration(seeds: 0)
        let report = await exploration.run { _ in runs.append(1) }
        #expect(report.seedsRun == 0 && !report.passed && runs.entries.isEmpty)
        exploration.seeds = [7]
        let later = await exploration.run { _ in runs.append(1) }
        #expect(later.problem == nil && later.passed && later.seedsRun == 1)
    }

    // MARK: Link limits

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test("A bridge's link limits cap the ATT_MTU and the queues whatever the managers prefer, and never raise them")
    func linkLimitsCapTheLink() async throws {
        var configuration = MockBLEBridge.Configuration.realistic(seed: 2)
        configuration.limits = LinkLimits(maximumMTU: 23, writeWithoutResponseQueueCapacity: 2, updateQueueCapacity: 50)
        let bridge = MockBLEBridge(configuration: configuration)
        try await bridge.run {
            let sensor = MockPeripheralManager(
                configuration: .init(mtu: .fixed(517), updateQueue: .realistic(capacity: 1)), bridge: bridge)
            _ = try await sensor.add(
                GATTService(
                    uuid: "FFF0",
                    characteristics: [
                        GATTCharacteristic(uuid: "FFF1", properties: .writeWithoutResponse, permissions: .writeable)
                    ]))
            try await sensor.startAdvertising(AdvertisementData(localName: "S", serviceUUIDs: ["FFF0"]))
            let central = MockCentralManager(configuration: .init(mtu: .fixed(517)), bridge: bridge)
            let events = central.events()
            try await central.scanForPeripherals(withServices: ["FFF0"])
            _ = await events.first { if case .discovered = $0 { true } else { false } }
            await central.stopScan()
            try await central.connect(sensor.identifier)
            #expect(try await central.maximumWriteValueLength(for: sensor.identifier, type: .withoutResponse) == 20)
            let data = try #require(try await central.discoverAll(for: sensor.identifier).first)
            try await central.writeValue(Data([1]), for: data, type: .withoutResponse)
            try await central.writeValue(Data([2]), for: data, type: .withoutResponse)
            #expect(await !central.canSendWriteWithoutResponse(to: sensor.identifier))
        }
        // The peripheral's own capacity (1) is below the limit (50): the limit does not raise it.
        #expect(LinkLimits.limit(.realistic(capacity: 1), to: 50) == .realistic(capacity: 1))
        #expect(LinkLimits.limit(.unlimited, to: 3) == .realistic(capacity: 3))
        #expect(LinkLimits.limit(.unlimited, to: nil) == .unlimited)
    }

    @Test(
        "Bad link limits make every manager on the bridge refuse calls, naming the field",
        arguments: [
            (LinkLimits(maximumMTU: 22), "MockBLEBridge.Configuration.limits.maximumMTU: 22 is outside 23…517"),
            (LinkLimits(maximumMTU: 600), "MockBLEBridge.Configuration.limits.maximumMTU: 600 is outside 23…517"),
            (
                LinkLimits(writeWithoutResponseQueueCapacity: 0),
                "MockBLEBridge.Configuration.limits.writeWithoutResponseQueueCapacity: 0 is outside 1…"
            ),
            (
                LinkLimits(updateQueueCapacity: -2),
                "MockBLEBridge.Configuration.limits.updateQueueCapacity: -2 is outside 1…"
            ),
        ])
    func badLinkLimitsAreRefused(limits: LinkLimits, message: String) async {
        let bridge = MockBLEBridge(configuration: MockBLEBridge.Configuration(limits: limits))
        let central = MockCentralManager(bridge: bridge)
        await #expect(throws: APIMisuseError.invalidConfiguration(message)) {
            try await central.scanForPeripherals(withServices: nil)
        }
        #expect(LinkLimits.none.problem(in: "x") == nil)
    }
}

/// Counts the runs of a body, from any task.
private final class RunCount: @unchecked Sendable {
    // @unchecked Sendable: `count` is only read and written with `lock` held.
    private let lock = NSLock()
    private var count = 0

    /// The number of this run (from 1).
    func next() -> Int {
        lock.withLock {
            count += 1
            return count
        }
    }
}

/// An exploration's coverage in words.
@Suite(.timeLimit(.minutes(10)))
struct ExplorationCoverageTextTests {
    /// A coverage with two fault kinds drawn, one never fired, and errors aimed at a 16-bit and a
    /// 128-bit characteristic.
    static let coverage: ExplorationCoverage = {
        var coverage = ExplorationCoverage()
        coverage.runs = 3
        coverage.faults = [.disconnect: .init(drawn: 2, fired: 1), .attError: .init(drawn: 3, fired: 0)]
        coverage.injections = [
            .init(.attError, PlannedFault.Target(.write, on: "FE03")): .init(drawn: 1, fired: 0),
            .init(.attError, PlannedFault.Target(.write, on: "7E570002-B5A3-F393-E0A9-E50E24DCCA9E")):
                .init(drawn: 2, fired: 0),
        ]
        coverage.runsByFaultCount = [1: 1, 2: 2]
        return coverage
    }()

    @Test func printedCoverageIsTheSummaryOfTheKindsItsRunsDrew() {
        let text = "\(Self.coverage)"
        #expect(text.hasPrefix("Coverage over 3 runs:\n  fault                drawn  fired\n"))
        #expect(text.contains("\n  never took effect: attError\n"))
        #expect(!text.contains("pairingRefused"))
        #expect(text == Self.coverage.description)
        let budget = ExplorationBudget(faultKinds: [.disconnect, .attError, .pairingRefused])
        #expect(Self.coverage.summary(budget: budget).contains("never took effect: attError, pairingRefused"))
        #expect(
            "\(ExplorationCoverage())"
                == "Coverage over 0 runs:\n  faults: none drawn\n  ATT_MTU - (runs per band: 23…64: 0, 65…184: 0, 185…255: 0, 256…517: 0)\n  runs by number of faults: -"
        )
    }

    @Test func theInjectedErrorColumnsLineUpWhateverTheLengthOfTheUUIDs() {
        let lines = Self.coverage.description.split(separator: "\n").map(String.init)
        let table = lines.drop { !$0.hasPrefix("  injected error, aimed at") }.prefix(3)
        #expect(table.count == 3)
        // Header and rows alike: the aim padded to the longest, then the two counts.
        #expect(Set(table.map(\.count)).count == 1, "\(table)")
        #expect(
            table.last?.hasSuffix("    2      0") == true || table.dropFirst().first?.hasSuffix("    2      0") == true)
    }
}
