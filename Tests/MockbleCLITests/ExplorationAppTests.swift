import BLECore
import BLEMockKit
import Foundation
import Testing

@testable import MockbleCLI

/// Exploration against an app-shaped client: a watch file upload, correct and with each
/// planted bug.
@Suite("Exploring seeds and faults finds planted bugs in app-shaped clients", .timeLimit(.minutes(10)))
struct ExplorationAppTests {
    static let file = FileTransferRig.file(4_096)

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    static func explore(_ bugs: FileTransferRig.Bugs, seeds: Int, parallelism: Int? = nil) async -> ExplorationReport {
        await Exploration(seeds: seeds, parallelism: parallelism).run { run in
            try await FileTransferRig.transfer(file, bugs: bugs, bridge: run.bridge)
        }
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test("The correct uploader passes on every seed, faults on")
    func correctUploaderPasses() async {
        let report = await Self.explore([], seeds: 1_000)
        #expect(report.passed, "\(report)")
        #expect(report.seedsRun == 1_000)
        print(report)
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(
        "Each planted bug is found within 1,000 seeds and shrunk to at most two faults",
        arguments: [
            (FileTransferRig.Bugs.chunkAssumesMTU185, 0), (.ignoresCanSend, 0), (.noReconnect, 1),
            (.receiptInOneNotification, 0), (.subscribesAfterCommit, 0),
        ])
    func plantedBugIsFound(bug: FileTransferRig.Bugs, maximumFaults: Int) async throws {
        let report = await Self.explore(bug, seeds: 1_000)
        let failure = try #require(report.failures.first, "bug \(bug.rawValue) not found: \(report)")
        print(report)
        #expect(failure.minimal.plan.faults.count <= maximumFaults, "\(report)")
        // The minimal plan replays the same failure.
        let replayed = await Exploration.replay(failure.minimal.plan) { run in
            try await FileTransferRig.transfer(Self.file, bugs: bug, bridge: run.bridge)
        }
        #expect(replayed.signature == failure.found.signature)
    }

    /// Whether the commit write failed, its error ignored, when `plan` is replayed on the
    /// uploader that ignores that error.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    static func commitFails(replaying plan: ExplorationPlan) async -> Bool {
        let failed = CommitOutcome()
        _ = await Exploration.replay(plan) { run in
            _ = try await FileTransferWatch.start(bridge: run.bridge)
            let app = FileTransferApp(
                central: MockCentralManager(bridge: run.bridge), clock: run.bridge.clock, bugs: .ignoresCommitError)
            _ = try await app.upload(Self.file)
            failed.record(await app.ignoredCommitError != nil)
        }
        return failed.outcomes == [true]
    }

    /// Whether each replay's commit failed (written by the replay's body, read after it).
    final class CommitOutcome: @unchecked Sendable {
        // @unchecked Sendable: `values` is only touched with `lock` held.
        private let lock = NSLock()
        private var values: [Bool] = []
        var outcomes: [Bool] { lock.withLock { values } }
        func record(_ failed: Bool) { lock.withLock { values.append(failed) } }
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(
        "An uploader that ignores the error of its one commit write, made after many writes without response, is found within 200 seeds and shrunk to one fault that fails that write"
    )
    func anIgnoredErrorOfTheRareCommitIsFound() async throws {
        let report = await Self.explore(.ignoresCommitError, seeds: 200)
        // The calibration run's operations are what injected errors aim at: the commit among them.
        let commit = PlannedFault.Target(.write, on: FileTransferRig.control)
        #expect(report.targets.contains(commit), "\(report.targets)")
        #expect(report.coverage.injections.keys.contains { $0.target == commit })
        let failure = try #require(report.failures.first, "\(report)")
        #expect(failure.minimal.plan.faults.count == 1, "\(report)")
        #expect(await Self.commitFails(replaying: failure.minimal.plan), "\(report)")
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(
        "With injected errors alone, the ignored commit error is found within 200 seeds by an error aimed at the commit's characteristic"
    )
    func anErrorAimedAtTheRareCommitFindsIt() async throws {
        let budget = ExplorationBudget(faultKinds: [.attError, .neverAnswered])
        let report = await Exploration(budget: budget, seeds: 200).run { run in
            try await FileTransferRig.transfer(Self.file, bugs: .ignoresCommitError, bridge: run.bridge)
        }
        let failure = try #require(report.failures.first, "\(report)")
        let minimal = failure.minimal.plan.faults
        #expect(minimal.count == 1, "\(report)")
        #expect(minimal.first?.operation == .write, "\(report)")
        #expect(minimal.first?.characteristic == FileTransferRig.control, "\(report)")
        #expect(await Self.commitFails(replaying: failure.minimal.plan), "\(report)")
    }

    /// The link faults a subscriber meets (requests never answered are explored on their own,
    /// below).
    static let subscriberBudget = ExplorationBudget(
        faultKinds: [.disconnect, .outOfRange, .fade, .reset, .powerCycle, .attError, .coreBluetoothError])

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test("A subscriber that subscribes again after each reconnection passes on every seed")
    func reconnectingSubscriberPasses() async {
        let report = await Exploration(budget: Self.subscriberBudget, seeds: 300, timeLimit: .seconds(120)).run {
            try await SubscriberRig.collect(30, resubscribes: true, bridge: $0.bridge)
        }
        #expect(report.passed, "\(report)")
        #expect(report.seedsRun == 300)
        #expect(report.coverage.neverFired(budget: report.budget).isEmpty, "\(report)")
    }

    /// Requests never answered, alone: each ends at the ATT transaction timeout, which drops the
    /// link (LinkTiming.attTransactionTimeout), so an app recovers as from any drop.
    static let neverAnsweredBudget = ExplorationBudget(faultKinds: [.neverAnswered], faultCount: 1...2)

    /// Requests never answered end at the ATT transaction timeout: an uploader that reconnects
    /// and retries, and a subscriber with no timeouts of its own that subscribes again after
    /// each reconnection, both recover.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(
        "An app that recovers from a dropped link passes 300 seeds of requests never answered",
        arguments: ["uploader", "subscriber"])
    func neverAnsweredRequestsTimeOutAndTheAppRecovers(app: String) async {
        let report = await Exploration(budget: Self.neverAnsweredBudget, seeds: 300, timeLimit: .seconds(300)).run {
            if app == "uploader" {
                try await FileTransferRig.transfer(Self.file, bugs: [], bridge: $0.bridge)
            } else {
                try await SubscriberRig.collect(30, resubscribes: true, bridge: $0.bridge)
            }
        }
        #expect(report.passed, "\(report)")
        #expect(report.seedsRun == 300)
        #expect(report.coverage.neverFired(budget: report.budget).isEmpty, "\(report)")
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test("A subscriber that forgets to subscribe again after a reconnection is found and shrunk to one fault")
    func subscriberThatForgetsIsFound() async throws {
        let report = await Exploration(budget: Self.subscriberBudget, seeds: 1_000, timeLimit: .seconds(120)).run {
            try await SubscriberRig.collect(30, resubscribes: false, bridge: $0.bridge)
        }
        let failure = try #require(report.failures.first, "\(report)")
        #expect(failure.minimal.plan.faults.count == 1, "\(report)")
        #expect(failure.minimal.error is MockBLEBridge.Stall, "\(report)")
    }
}
