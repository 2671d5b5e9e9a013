import BLECBM
import BLEMockKit
import BLEMockKitXCTest
import XCTest

@testable import BlinkyExample

// MIGRATION.md, "From wall-clock time to a bridge per test": the first two steps, as XCTest
// classes (the third is in Tests/BLECBMTests/Documentation/CoreBluetoothAppExampleTests.swift).

final class CompanionOnTheSystemTests: XCTestCase {
    func testTheCompanionSendsItsCommandsAndReadsTheVersion() throws {
        try installSimulatedSystem(.realistic(seed: 7))
        let finished = expectation(description: "the companion read the version")
        let watch = WatchPeripheralApp()
        let companion = WatchCompanionApp(commandCount: 3) { finished.fulfill() }
        wait(for: [finished], timeout: 10)
        XCTAssertEqual(companion.notifiedStatuses, [1, 2, 3])
        XCTAssertEqual(watch.receivedCommands, [1, 2, 3])
    }
}

@available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
final class CompanionInVirtualTimeTests: XCTestCase {
    func testTheCompanionSendsItsCommandsAndReadsTheVersion() async throws {
        let bridge = try installSimulatedSystem(.realistic(seed: 7), time: .virtual).bridge
        try await bridge.run {
            let watch = WatchPeripheralApp()
            let companion = WatchCompanionApp(commandCount: 3)
            try await bridge.waitForApp(pausingSimulation: true) { watch.hasManager && companion.hasManager }
            try await bridge.waitForApp { companion.firmwareVersion != nil }
            XCTAssertEqual(watch.receivedCommands, [1, 2, 3])
        }
        let report = await bridge.finish()
        XCTAssertEqual(report, .clean)
    }
}
