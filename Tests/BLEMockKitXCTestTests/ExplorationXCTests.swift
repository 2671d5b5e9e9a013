import BLECore
import BLEMockKit
import XCTest

/// An exploration from an XCTest case: the report is checked after it, with XCTest's asserts.
final class ExplorationXCTests: XCTestCase {
    func testAnExplorationRunsFromXCTestAndItsReportIsCheckedAfterIt() async throws {
        guard #available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *) else {
            throw XCTSkip("needs macOS 15")
        }
        let report = await Exploration(budget: .conditionsOnly, seeds: 40).run { run in
            let central = MockCentralManager()  // joins the run's bridge
            _ = await central.waitForPoweredOn()
            try Exploration.require(central.bridge === run.bridge, "the central is on another bridge")
            // Fails on links that carry fewer than 100 bytes per write.
            try Exploration.require(run.plan.conditions.mtu >= 103, "ATT_MTU \(run.plan.conditions.mtu)")
        }
        let failure = try XCTUnwrap(report.failures.first, "\(report)")
        XCTAssertEqual(failure.minimal.plan.conditions.mtu, 102)
        XCTAssertEqual(failure.minimal.plan.faults, [])
        XCTAssertTrue(report.description.contains("LinkConditions(mtu: 102)"))
    }
}
