import BLECBM
import BLEMockKit
import XCTest

@testable import BlinkyExample

/// Exploring unchanged CoreBluetooth delegate apps, which create their managers on their own
/// queues: the simulated system is installed on each run's bridge, so they join it, and the
/// exploration's faults and link conditions reach them (the passing exploration is the example
/// in Documentation/ExploringDelegateAppsExample.swift).
final class DelegateAppExplorationXCTests: XCTestCase {
    /// One run of the file transfer on `run`'s bridge: the watch and the phone apps join it
    /// through the system installed there; the run fails unless the file arrives whole.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    static func transfer(_ run: ExplorationRun, handlingPowerCycles: Bool = false) async throws {
        let system = try SimulatedSystem.install(on: run.bridge, installedBy: "DelegateAppExplorationXCTests")
        defer { system.uninstall() }
        let watch = FileReceiverApp(progressEvery: 4_000)
        let phone = FileSenderApp(file: FileTransferXCTests.file, handlesPowerCycles: handlingPowerCycles)
        try await run.bridge.waitForApp(pausingSimulation: true) { watch.hasManager && phone.hasManager }
        try await run.bridge.waitForApp { phone.isFinished || !phone.problems.isEmpty || !watch.problems.isEmpty }
        let problems = phone.problems + watch.problems
        try Exploration.require(problems.isEmpty, "problems: \(problems)")
        try Exploration.require(watch.receivedBytes == FileTransferXCTests.file, "the watch's bytes differ")
    }

    func testAnExplorationFindsThatThePhoneNeverReconnectsAfterBluetoothIsTurnedOffAndOn() async throws {
        guard #available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *) else {
            throw XCTSkip("explorations need task executors (macOS 15)")
        }
        // The phone app keeps the peripheral it found, and scans again once Bluetooth is back on
        // (no link survived), but never connects the peripheral it kept, and ignores the watch
        // when it finds it again: a bug of the app, which only a power cycle during the transfer
        // shows.
        // Lost links and power cycles may be drawn (injected errors find another bug first: see
        // below). The phone scans on for ever, so the run ends at its time limit (two minutes of
        // virtual time here).
        var budget = ExplorationBudget()
        budget.faultKinds = [.disconnect, .outOfRange, .fade, .reset, .powerCycle]
        let report = await Exploration(budget: budget, seeds: 40, parallelism: 1, timeLimit: .seconds(120)).run {
            try await Self.transfer($0)
        }
        let failure = try XCTUnwrap(report.failures.first, "\(report)")
        XCTAssertEqual(failure.minimal.plan.faults.map(\.kind), [.powerCycle], "\(failure)")
        let stall = try XCTUnwrap(failure.minimal.error as? MockBLEBridge.Stall, "\(failure)")
        XCTAssertEqual(stall.reason, .timeLimitReached)
    }

    func testAnExplorationFindsThatThePhoneGivesUpWhenItsOneServiceDiscoveryFails() async throws {
        guard #available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *) else {
            throw XCTSkip("explorations need task executors (macOS 15)")
        }
        // The phone discovers the watch's service once per link and takes a failed discovery
        // for a watch without the service. Every kind of fault may be drawn (the default
        // budget): an injected error aimed at the service discovery is drawn before the
        // calibration run made it, so the first seed that draws one finds the bug.
        let report = await Exploration(seeds: 40, parallelism: 1, timeLimit: .seconds(120)).run {
            try await Self.transfer($0)
        }
        let failure = try XCTUnwrap(report.failures.first, "\(report)")
        XCTAssertEqual(failure.seed, 0, "\(failure)")
        XCTAssertEqual(failure.minimal.plan.faults.map(\.kind), [.attError], "\(failure)")
        XCTAssertEqual(failure.minimal.plan.faults.first?.operation, .serviceDiscovery, "\(failure)")
        XCTAssertEqual(failure.minimal.error as? ExplorationFailure, ExplorationFailure("problems: [\"no service\"]"))
    }

    /// The same app fixed (it starts over from the scan when Bluetooth is back, and resumes the
    /// transfer where the watch got to) passes power cycles mixed with the other faults.
    func testTheAppFixedToStartOverAfterAPowerCyclePassesAnExplorationWithPowerCyclesAmongTheFaults() async throws {
        guard #available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *) else {
            throw XCTSkip("explorations need task executors (macOS 15)")
        }
        var budget = ExplorationBudget()
        budget.faultKinds = [.powerCycle, .disconnect, .outOfRange, .fade, .reset]
        budget.faultCount = 1...4
        let report = await Exploration(budget: budget, seeds: 60, parallelism: 1, timeLimit: .seconds(120)).run {
            try await Self.transfer($0, handlingPowerCycles: true)
        }
        XCTAssertTrue(report.passed, "\(report)")
        XCTAssertGreaterThan(report.coverage.faults[.powerCycle]?.fired ?? 0, 2, "\(report.coverage)")
    }

    func testAnExplorationOfBluetoothResetsFindsThatThePhoneNeverConnectsAgain() async throws {
        guard #available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *) else {
            throw XCTSkip("explorations need task executors (macOS 15)")
        }
        // A reset of the phone's Bluetooth invalidates the peripheral object the plain app keeps,
        // as a power cycle ends its link: it never connects again, and the run reaches its time
        // limit. Resets alone, so the shrinker has no plainer fault to put in its place.
        var budget = ExplorationBudget()
        budget.faultKinds = [.bluetoothReset]
        let report = await Exploration(budget: budget, seeds: 20, parallelism: 1, timeLimit: .seconds(120)).run {
            try await Self.transfer($0)
        }
        let failure = try XCTUnwrap(report.failures.first, "\(report)")
        XCTAssertEqual(failure.minimal.plan.faults.map(\.kind), [.bluetoothReset], "\(failure)")
        let stall = try XCTUnwrap(failure.minimal.error as? MockBLEBridge.Stall, "\(failure)")
        XCTAssertEqual(stall.reason, .timeLimitReached)
        XCTAssertTrue("\(failure)".contains("a central's Bluetooth resets for"), "\(failure)")
    }

    /// The app fixed to start over once Bluetooth is back passes resets drawn among the other
    /// faults, each seed's reset drawn apart from them.
    func testTheFixedAppPassesAnExplorationWithBluetoothResetsAmongTheFaults() async throws {
        guard #available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *) else {
            throw XCTSkip("explorations need task executors (macOS 15)")
        }
        var budget = ExplorationBudget()
        budget.faultKinds = [.bluetoothReset, .powerCycle, .disconnect, .outOfRange, .fade, .reset]
        budget.faultCount = 1...3
        let report = await Exploration(budget: budget, seeds: 60, parallelism: 1, timeLimit: .seconds(120)).run {
            try await Self.transfer($0, handlingPowerCycles: true)
        }
        XCTAssertTrue(report.passed, "\(report)")
        XCTAssertGreaterThan(report.coverage.faults[.bluetoothReset]?.fired ?? 0, 2, "\(report.coverage)")
    }
}
