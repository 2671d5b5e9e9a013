import BLECore
import BLEMockKit
import BLEMockKitXCTest
import Foundation
import XCTest

#if !canImport(Darwin)
    /// Where XCTest has no attachments (Linux), a failed run's timeline and log are written as
    /// files and a failure names them; a passing run writes none. The failures are captured
    /// rather than failing this test.
    final class FailureFilesXCTests: XCTestCase {
        /// The failures recorded, captured instead of failing the test.
        private let captured = Captured()

        final class Captured: @unchecked Sendable {
            // @unchecked Sendable: `stored` is only touched under `lock`.
            private let lock = NSLock()
            private var stored: [String] = []
            func add(_ text: String) { lock.withLock { stored.append(text) } }
            var texts: [String] { lock.withLock { stored } }
        }

        override func recordFailure(
            withDescription description: String, inFile filePath: String, atLine lineNumber: Int, expected: Bool
        ) {
            captured.add(description)
        }

        /// The folder the helper writes to here (`BLEMOCKKIT_ARTIFACTS`, else the temporary one).
        private var folder: String { RunArtifacts.folder(environment: ProcessInfo.processInfo.environment) }

        func testAFailedRunWritesItsTimelineAndLogAndAFailureNamesThem() async throws {
            guard #available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *) else {
                throw XCTSkip("needs macOS 15")
            }
            struct LostChunk: Error {}
            try await runOnMockBridge(.realistic(seed: 0), seeds: [23]) {
                let sensor = MockPeripheralManager()
                try await sensor.startAdvertising(AdvertisementData(localName: "Watch"))
                throw LostChunk()
            }
            let base = "FailureFilesXCTests-testAFailedRunWritesItsTimelineAndLogAndAFailureNamesThem-seed-23"
            let paths = [folder + "/" + base + "-timeline.html", folder + "/" + base + "-log.txt"]
            let texts = captured.texts
            XCTAssertEqual(texts.count, 2, "\(texts)")
            XCTAssertTrue(texts.first?.hasPrefix("the test threw on bridge seed 23: LostChunk()") ?? false)
            XCTAssertEqual(
                texts.last,
                "the timeline and bridge log of bridge seed 23 are in \(folder): " + paths.joined(separator: ", "))
            let page = try String(contentsOfFile: paths[0], encoding: .utf8)
            XCTAssertTrue(page.contains("<svg"))
            let log = try String(contentsOfFile: paths[1], encoding: .utf8)
            XCTAssertTrue(log.contains(" advertisingStarted "))
            for path in paths { try? FileManager.default.removeItem(atPath: path) }
        }

        func testAnErrorOfSeveralLinesIsFollowedByTheRerunCommandOnALineOfItsOwn() async throws {
            guard #available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *) else {
                throw XCTSkip("needs macOS 15")
            }
            struct Report: Error, CustomStringConvertible {
                var description: String { "the watch went quiet.\nSeed 31: rerun with the same seed." }
            }
            try await runOnMockBridge(seeds: [31]) { throw Report() }
            let first = captured.texts.first ?? ""
            XCTAssertTrue(
                first.hasPrefix(
                    "the test threw on bridge seed 31: the watch went quiet.\nSeed 31: rerun with the same seed.\n"
                        + "rerun only it: "), first)
            let base = "FailureFilesXCTests-testAnErrorOfSeveralLinesIsFollowedByTheRerunCommandOnALineOfItsOwn-seed-31"
            for suffix in ["-timeline.html", "-log.txt"] {
                try? FileManager.default.removeItem(atPath: folder + "/" + base + suffix)
            }
        }

        func testAPassingRunWritesNoFiles() async throws {
            guard #available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *) else {
                throw XCTSkip("needs macOS 15")
            }
            try await runOnMockBridge(.realistic(seed: 0), seeds: [24]) {
                _ = await MockCentralManager().waitForPoweredOn()
            }
            XCTAssertEqual(captured.texts, [])
            let base = "FailureFilesXCTests-testAPassingRunWritesNoFiles-seed-24"
            XCTAssertFalse(FileManager.default.fileExists(atPath: folder + "/" + base + "-log.txt"))
        }

        func testAnExplorationsFailureFailsTheTestAndWritesTheMinimalRunsFiles() async throws {
            guard #available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *) else {
                throw XCTSkip("needs macOS 15")
            }
            let report = await Exploration(budget: .conditionsOnly, seeds: 10).run { run in
                try Exploration.require(run.plan.conditions.mtu >= 103, "ATT_MTU \(run.plan.conditions.mtu)")
            }
            let failure = try XCTUnwrap(report.failures.first)
            recordFailures(of: report)
            let seed = failure.minimal.plan.seed
            let base =
                "FailureFilesXCTests-testAnExplorationsFailureFailsTheTestAndWritesTheMinimalRunsFiles-seed-\(seed)"
            let paths = [folder + "/" + base + "-timeline.html", folder + "/" + base + "-log.txt"]
            XCTAssertEqual(
                captured.texts,
                [
                    failure.description,
                    "the timeline and bridge log of bridge seed \(seed) are in \(folder): "
                        + paths.joined(separator: ", "),
                ])
            for path in paths {
                XCTAssertTrue(FileManager.default.fileExists(atPath: path), path)
                try? FileManager.default.removeItem(atPath: path)
            }
        }
    }
#endif
