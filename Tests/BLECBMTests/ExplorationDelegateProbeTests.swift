import BLECBM
import BLECore
import BLEMockKit
import BLEMockKitTesting
import Foundation
import Testing

@testable import BlinkyExample

/// One explored run of the upload: the watch and the companion (on a queue of its own) join
/// the run's bridge; the run fails unless the companion finished and the watch holds the file.
@available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
func exploredUpload(_ run: ExplorationRun, bug: ExploreBug?) async throws {
    let watch = ExploreWatchApp()
    let phone = ExploreCompanionApp(bug: bug, queue: DispatchQueue(label: "explore.phone"))
    try await run.bridge.waitForApp { phone.isSettled }
    let state = phone.snapshot
    try Exploration.require(state.phase == .done, "the phone ended \(state.phase): \(state.problems)")
    try Exploration.require(watch.receivedBytes == ExploreWatchService.file, "the watch's bytes differ")
}

/// The same, with the companion on the main queue (`queue: nil`), in a body on the main actor.
@available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
@MainActor
func exploredUploadOnTheMainQueue(_ run: ExplorationRun, bug: ExploreBug?) async throws {
    let watch = ExploreWatchApp()
    let phone = ExploreCompanionApp(bug: bug, queue: nil)
    try await run.bridge.waitForApp { phone.isSettled }
    let state = phone.snapshot
    try Exploration.require(state.phase == .done, "the phone ended \(state.phase): \(state.problems)")
    try Exploration.require(watch.receivedBytes == ExploreWatchService.file, "the watch's bytes differ")
}

/// A probe of exploration used as an iOS team would on its own delegate code: the companion app
/// of ExplorationDelegateProbeApps.swift, correct and with one planted bug at a time, explored
/// with every kind of fault. The correct app passes every seed, on its own queue and on the main
/// queue; each bug is found, shrunk to a plan of at most one fault, reported with its seed and
/// the code that replays it, and replayed to the same failure and the same log; explorations
/// repeat exactly. (Stalls wait 100 ms of wall-clock patience, not the default second: the apps
/// have no timers of their own.)
@Suite(.timeLimit(.minutes(10)))
struct ExplorationDelegateProbeTests {
    static let patience = Duration.milliseconds(100)

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test func theCorrectAppOnItsOwnQueuePassesEveryExploredSeed() async throws {
        let report = await Exploration(seeds: 100, stallPatience: Self.patience).run { run in
            try await exploredUpload(run, bug: nil)
        }
        #expect(report.passed, "\(report)")
        #expect(report.seedsRun == 100)
        // Every fault but a pairing refusal (the watch asks for no pairing) reached the app.
        #expect(report.coverage.neverFired(budget: ExplorationBudget()) == [.pairingRefused], "\(report.coverage)")
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test func theCorrectAppOnTheMainQueuePassesEveryExploredSeed() async throws {
        let report = await Exploration(seeds: 40, stallPatience: Self.patience).run { @MainActor run in
            try await exploredUploadOnTheMainQueue(run, bug: nil)
        }
        #expect(report.passed, "\(report)")
        #expect(report.seedsRun == 40)
    }

    /// What exploring one bug is expected to report.
    struct Finding: Sendable, CustomStringConvertible {
        var bug: ExploreBug
        /// The first failing seed.
        var seed: UInt64
        /// The minimal plan's faults.
        var faults: [PlannedFault.Kind]
        /// The minimal plan's ATT_MTU.
        var mtu: Int
        /// How the minimal plan fails: the start of the failure's words.
        var failure: String

        var description: String { bug.rawValue }
    }

    static let findings: [Finding] = [
        // Writes past the link's queue are lost: the calibration run (no faults) shows it.
        Finding(
            bug: .ignoresBackpressure, seed: 0, faults: [], mtu: 517,
            failure: "the phone ended failed: [\"the watch holds 2048 of 4096 bytes"),
        // 182-byte chunks are cut below ATT_MTU 185: the binary search finds 184.
        Finding(
            bug: .assumesMTU185, seed: 0, faults: [], mtu: 184,
            failure: "the phone ended failed: [\"the watch holds 4074 of 4096 bytes"),
        // The watch's progress after the last chunk comes before the commit's answer.
        Finding(
            bug: .notificationBeforeWriteResponseIsImpossible, seed: 0, faults: [], mtu: 517,
            failure: "the phone ended failed: [\"protocol violation: a notification (0xa0) before the write response, "
                + "while committing\"]"),
        // A lost link mid-upload: the resumed file is wrong. (At a larger ATT_MTU the upload ends
        // before the link is lost: 160 is the largest that still fails.)
        Finding(
            bug: .resumesFromZero, seed: 0, faults: [.disconnect], mtu: 160,
            failure: "the phone ended failed: [\"the watch holds 4096 of 4096 bytes"),
        // A lost link: the app waits for a notification for ever. (At a larger ATT_MTU the upload
        // ends before the link is lost.)
        Finding(
            bug: .noResubscribe, seed: 0, faults: [.disconnect], mtu: 173,
            failure: "MockBLEBridge.run stalled at"),
        // A refused connection: the app waits for ever.
        Finding(
            bug: .noRetryOnFailedConnect, seed: 6, faults: [.coreBluetoothError], mtu: 517,
            failure: "MockBLEBridge.run stalled at"),
    ]

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(arguments: findings)
    func eachPlantedBugIsFoundShrunkReportedAndReplayedExactly(_ finding: Finding) async throws {
        let bug = finding.bug
        let report = await Exploration(seeds: 40, stallPatience: Self.patience).run { run in
            try await exploredUpload(run, bug: bug)
        }
        let failure = try #require(report.failures.first, "\(report)")
        #expect(failure.seed == finding.seed)
        #expect(failure.reproduces)
        #expect(failure.minimal.plan.faults.map(\.kind) == finding.faults, "\(failure)")
        #expect(failure.minimal.plan.conditions.mtu == finding.mtu, "\(failure)")
        let minimalError = try #require(failure.minimal.error)
        #expect("\(minimalError)".hasPrefix(finding.failure), "\(failure)")
        // A stall (the app waits for ever) names the seed.
        if let stall = minimalError as? MockBLEBridge.Stall {
            #expect(stall.reason == .nothingScheduled)
            #expect(stall.seed == finding.seed)
            // The seed alone does not replay it: the plan's conditions and faults do.
            #expect(stall.isExplorationRun)
            #expect(
                "\(stall)".hasSuffix(
                    "Seed \(finding.seed), with an exploration's conditions and faults: replay its plan to "
                        + "reproduce (the seed alone does not)."), "\(stall)")
        }
        // The report names the seed and prints the code that replays the minimal plan.
        let text = failure.description
        #expect(text.hasPrefix("Seed \(finding.seed) failed: "), "\(text)")
        #expect(text.contains("  replay it with:\n    let plan = ExplorationPlan(\n        seed: \(finding.seed),\n"))
        #expect(text.contains("    let outcome = await Exploration.replay(plan) { run in\n"))
        // The replay fails the same way, with the same log, as the exploration's last run did.
        let replayed = await Exploration.replay(failure.minimal.plan, stallPatience: Self.patience) { run in
            try await exploredUpload(run, bug: bug)
        }
        #expect(replayed.error.map { "\($0)" } == "\(minimalError)")
        let logged = try #require(failure.artifacts?.logText)
        #expect(replayed.artifacts?.logText == logged)
    }

    /// A body that ends as a callback wakes it, at the instant a peripheral app answers a write
    /// from its own queue: the manager the body lets go of shuts down in the same place among the
    /// app's calls on every replay (it used to come before or after the watch's answer, by
    /// which thread got there first: the answer was logged on some replays and lost on others).
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test func aBodyEndingAsACallbackWakesItGivesTheSameSeedTheSameLog() async throws {
        let bug = ExploreBug.notificationBeforeWriteResponseIsImpossible
        let report = await Exploration(seeds: 40, stallPatience: Self.patience).run { run in
            try await exploredUpload(run, bug: bug)
        }
        let plan = try #require(report.failures.first, "\(report)").minimal.plan
        var logs: [String] = []
        for _ in 0..<12 {
            let replayed = await Exploration.replay(plan, stallPatience: Self.patience) { run in
                try await exploredUpload(run, bug: bug)
            }
            logs.append(try #require(replayed.artifacts?.logText))
        }
        #expect(Set(logs).count == 1)
        // The phone gave up on the notification; the watch's answer and the phone's shutting down
        // both happened at that instant.
        let log = try #require(logs.first)
        #expect(log.contains(" disconnected "))
    }

    /// The delegate apps' managers prefer what their devices do (185 for the phone, on a
    /// realistic bridge of their own): under an exploration's conditions, which describe the
    /// run's phone and watch, their links take the conditions' ATT_MTU, above 185 too, and the
    /// coverage counts every band.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(arguments: [23, 185, 300, 517])
    func theDelegateAppsLinksTakeTheConditionsMTU(mtu: Int) async throws {
        let plan = ExplorationPlan(seed: 7, conditions: LinkConditions(mtu: mtu))
        let outcome = await Exploration.replay(plan, stallPatience: Self.patience) { run in
            try await exploredUpload(run, bug: nil)
        }
        #expect(outcome.error == nil, "\(String(describing: outcome.error))")
        #expect(outcome.linkMTU == mtu)
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test func exploringTheDelegateAppsCoversEveryATTMTUBand() async throws {
        let report = await Exploration(seeds: 40, stallPatience: Self.patience).run { run in
            try await exploredUpload(run, bug: nil)
        }
        #expect(report.passed, "\(report)")
        for band in ExplorationCoverage.bands.map(\.name) {
            #expect(report.coverage.mtuBands[band, default: 0] > 0, "\(report.coverage)")
        }
        #expect(report.coverage.mtuBands.values.reduce(0, +) == 40)
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test func anExplorationRepeatsExactlyWhateverItsParallelism() async throws {
        func explore(_ parallelism: Int) async -> String {
            let report = await Exploration(seeds: 30, parallelism: parallelism, stallPatience: Self.patience).run {
                try await exploredUpload($0, bug: .resumesFromZero)
            }
            return "\(report)\n\(report.failures.first?.artifacts?.logText ?? "no log")"
        }
        let first = await explore(2)
        #expect(first.hasPrefix("Explored 1 of 30 seeds: 1 failure.\nSeed 0 failed: "), "\(first)")
        #expect(await explore(1) == first)
        #expect(await explore(4) == first)
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test func anAppOnTheMainQueueIsFoundAndReplayedExactly() async throws {
        let report = await Exploration(seeds: 20, stallPatience: Self.patience).run { @MainActor run in
            try await exploredUploadOnTheMainQueue(run, bug: .resumesFromZero)
        }
        let failure = try #require(report.failures.first, "\(report)")
        #expect(failure.seed == 0)
        #expect(failure.minimal.plan.faults.map(\.kind) == [.disconnect], "\(failure)")
        let replayed = await Exploration.replay(failure.minimal.plan, stallPatience: Self.patience) {
            @MainActor run in
            try await exploredUploadOnTheMainQueue(run, bug: .resumesFromZero)
        }
        #expect(replayed.error.map { "\($0)" } == failure.minimal.error.map { "\($0)" })
        #expect(replayed.artifacts?.logText == failure.artifacts?.logText)
    }

    /// An injected error aims at an operation the calibration run made; an app makes its
    /// connection once, at the start. Drawn anywhere in the window, a refused connection came
    /// after it in most seeds and never took effect (3 of 20 seeds found the app that does not
    /// retry); drawn before the instant the calibration run asked for the connection, every one
    /// does.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test func aRefusedConnectionIsDrawnBeforeTheAppsOneConnectionAndFindsTheAppThatDoesNotRetry() async throws {
        var budget = ExplorationBudget()
        budget.faultKinds = [.coreBluetoothError]
        budget.faultCount = 1...1
        let report = await Exploration(
            budget: budget, seeds: 20, stopsAtFirstFailure: false, shrinks: false, stallPatience: Self.patience
        ).run { run in
            try await exploredUpload(run, bug: .noRetryOnFailedConnect)
        }
        #expect(report.coverage.faults[.coreBluetoothError] == ExplorationCoverage.Count(drawn: 20, fired: 20))
        #expect(report.failures.count == 20)
        #expect(report.failures.allSatisfy { ($0.found.error as? MockBLEBridge.Stall)?.reason == .nothingScheduled })
    }

    /// The same for the subscription, made once per link: an error aimed at it is drawn before
    /// it, not before the unsubscription logged as the run ends (6 of 28 such errors took
    /// effect; 27 of 28 do).
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test func anErrorAimedAtTheOneSubscriptionIsDrawnBeforeIt() async throws {
        var budget = ExplorationBudget()
        budget.faultKinds = [.attError, .neverAnswered]
        budget.faultCount = 1...1
        let report = await Exploration(
            budget: budget, seeds: 100, stopsAtFirstFailure: false, shrinks: false, stallPatience: Self.patience
        ).run { run in
            try await exploredUpload(run, bug: nil)
        }
        #expect(report.passed, "\(report)")
        let subscription = PlannedFault.Target(.subscribe, on: ExploreWatchService.status.bluetoothUUID)
        let aimed = [PlannedFault.Kind.attError, .neverAnswered].map {
            report.coverage.injections[ExplorationCoverage.Injection($0, subscription)] ?? ExplorationCoverage.Count()
        }
        #expect(
            aimed == [ExplorationCoverage.Count(drawn: 11, fired: 11), ExplorationCoverage.Count(drawn: 17, fired: 16)])
    }
}
