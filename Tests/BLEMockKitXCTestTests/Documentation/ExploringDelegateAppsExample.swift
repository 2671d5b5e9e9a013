import BLECBM
import BLEMockKit
import XCTest

@testable import BlinkyExample

// TestingCoreBluetoothApps.md (BLECBM), "Exploring such apps".

@available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
final class ExploringDelegateAppsExample: XCTestCase {
    func testTheFileTransferAppsPassEveryExploredSeed() async throws {
        let file: [UInt8] = (0..<20_000).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        var budget = ExplorationBudget()
        budget.faultKinds = [.disconnect, .outOfRange, .fade, .reset]
        let report = await Exploration(budget: budget, seeds: 40, parallelism: 1).run { run in
            let system = try SimulatedSystem.install(on: run.bridge)
            defer { system.uninstall() }
            let watch = FileReceiverApp(progressEvery: 4_000)
            let phone = FileSenderApp(file: file)
            try await run.bridge.waitForApp(pausingSimulation: true) { watch.hasManager && phone.hasManager }
            try await run.bridge.waitForApp { phone.isFinished || !phone.problems.isEmpty }
            try Exploration.require(watch.receivedBytes == file, "the watch got \(watch.receivedBytes.count) bytes")
        }
        XCTAssertTrue(report.passed, "\(report)")
        XCTAssertEqual(report.seedsRun, 40)
        // The faults reached the apps.
        XCTAssertGreaterThan(report.coverage.faults.values.reduce(0) { $0 + $1.fired }, 10, "\(report.coverage)")
    }
}
