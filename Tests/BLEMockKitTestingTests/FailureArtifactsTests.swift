import BLECore
import BLEMockKit
import BLEMockKitTesting
import Foundation
import Testing

/// What a failed run leaves for a person: its timeline and bridge log, attached to the test
/// and written where asked, named with the test and the seed; a passing run leaves nothing.
@Suite("Failed runs carry their picture", .timeLimit(.minutes(10)))
struct FailureArtifactsTests {
    /// A folder of this test's own (removed first), under the temporary folder.
    static func freshFolder(_ name: String) -> String {
        let folder = FileManager.default.temporaryDirectory
            .appendingPathComponent("BLEMockKitTests-\(ProcessInfo.processInfo.processIdentifier)-\(name)").path
        try? FileManager.default.removeItem(atPath: folder)
        return folder
    }

    /// The files in `folder`, sorted; empty when it does not exist.
    static func files(in folder: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).sorted()
    }

    #if compiler(>=6.2)
        /// The comments of the issues recorded in a scope, which are then dropped.
        final class Captured: @unchecked Sendable {
            // @unchecked Sendable: `stored` is only touched under `lock`.
            private let lock = NSLock()
            private var stored: [[String]] = []
            func add(_ comments: [String]) { lock.withLock { stored.append(comments) } }
            var comments: [[String]] { lock.withLock { stored } }

            /// Runs `body` with every issue it records captured instead of failing the test.
            func capturing(_ body: @escaping @Sendable () async throws -> Void) async throws {
                let test = try #require(Test.current)
                let capture = IssueHandlingTrait.compactMapIssues { issue in
                    self.add(issue.comments.map(\.rawValue))
                    return nil
                }
                try await capture.provideScope(for: test, testCase: Test.Case.current, performing: body)
            }
        }

        @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
        @Test func aFailedTraitRunWritesItsTimelineAndLogNamedWithTheTestAndTheSeed() async throws {
            let folder = Self.freshFolder("trait-failed")
            let trait = MockBridgeTrait.mockBridge(seeds: [17]).writingFailures(to: folder)
            let test = try #require(Test.current)
            let captured = Captured()
            try await captured.capturing {
                try await trait.provideScope(for: test, testCase: Test.Case.current) {
                    let sensor = MockPeripheralManager()
                    try await sensor.startAdvertising(AdvertisementData(localName: "Watch"))
                    let central = MockCentralManager()
                    try await central.scanForPeripherals(withServices: nil)
                    Issue.record("the watch face did not arrive")
                    await central.stopScan()
                }
            }
            let base = "aFailedTraitRunWritesItsTimelineAndLogNamedWithTheTestAndTheSeed-seed-17"
            #expect(Self.files(in: folder) == [base + "-log.txt", base + "-timeline.html"])
            let page = try String(contentsOfFile: folder + "/" + base + "-timeline.html", encoding: .utf8)
            #expect(page.hasPrefix("<!DOCTYPE html>"))
            #expect(page.contains("<svg"))
            #expect(page.contains("<b>seed</b> 17"))
            // Why it failed, under the header, drawn as a failure.
            #expect(page.contains(#"<div class="verdict bad">"#))
            #expect(page.contains("the watch face did not arrive"))
            let log = try String(contentsOfFile: folder + "/" + base + "-log.txt", encoding: .utf8)
            #expect(log.contains(" advertisingStarted "))
            #expect(log.contains(" scanStarted "))
            // The failure says what the run leaves; then an issue names the written files.
            #expect(
                captured.comments == [
                    [
                        "the watch face did not arrive",
                        "the run's timeline and bridge log are attached to the test as \(base)-timeline.html and "
                            + "\(base)-log.txt (swift test --attachments-path DIR saves them, into a folder that exists: mkdir -p DIR first)",
                    ],
                    [
                        "the timeline and bridge log of bridge seed 17 are in \(folder): \(base)-timeline.html, \(base)-log.txt"
                    ],
                ])
            try? FileManager.default.removeItem(atPath: folder)
        }

        @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
        @Test(arguments: ["watch"])
        func theCasesOfAParameterizedTestWriteFilesOfTheirOwn(device: String) async throws {
            let folder = Self.freshFolder("trait-parameterized")
            let trait = MockBridgeTrait.mockBridge(seeds: [5]).writingFailures(to: folder)
            let test = try #require(Test.current)
            let testCase = try #require(Test.Case.current)
            #expect(testCase.isParameterized)
            let captured = Captured()
            // Two cases of the test on the same seed (the trait runs each case this way), both failing.
            for _ in 1...2 {
                try await captured.capturing {
                    try await trait.provideScope(for: test, testCase: testCase) {
                        Issue.record("the \(device) did not answer")
                    }
                }
            }
            let base = "theCasesOfAParameterizedTestWriteFilesOfTheirOwn-case-"
            #expect(
                Self.files(in: folder) == [
                    base + "1-seed-5-log.txt", base + "1-seed-5-timeline.html",
                    base + "2-seed-5-log.txt", base + "2-seed-5-timeline.html",
                ])
            #expect(
                captured.comments.map { $0.last ?? "" } == [
                    "the run's timeline and bridge log are attached to the test as \(base)1-seed-5-timeline.html and "
                        + "\(base)1-seed-5-log.txt (swift test --attachments-path DIR saves them, into a folder that exists: mkdir -p DIR first)",
                    "the timeline and bridge log of bridge seed 5 are in \(folder): \(base)1-seed-5-timeline.html, \(base)1-seed-5-log.txt",
                    "the run's timeline and bridge log are attached to the test as \(base)2-seed-5-timeline.html and "
                        + "\(base)2-seed-5-log.txt (swift test --attachments-path DIR saves them, into a folder that exists: mkdir -p DIR first)",
                    "the timeline and bridge log of bridge seed 5 are in \(folder): \(base)2-seed-5-timeline.html, \(base)2-seed-5-log.txt",
                ])
            try? FileManager.default.removeItem(atPath: folder)
        }

        @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
        @Test func aPassingTraitRunRecordsNothingAndWritesNoFiles() async throws {
            let folder = Self.freshFolder("trait-passed")
            let trait = MockBridgeTrait.mockBridge(seeds: [3, 4]).writingFailures(to: folder)
            let test = try #require(Test.current)
            let captured = Captured()
            try await captured.capturing {
                try await trait.provideScope(for: test, testCase: Test.Case.current) {
                    let central = MockCentralManager()
                    _ = await central.waitForPoweredOn()
                }
            }
            #expect(captured.comments.isEmpty)
            #expect(!FileManager.default.fileExists(atPath: folder))
        }

        @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
        @Test func onlyTheSeedThatThrewOrLeftSomethingOverLeavesFiles() async throws {
            let folder = Self.freshFolder("trait-some-seeds")
            let trait = MockBridgeTrait.mockBridge(seeds: [1, 2, 3], timing: .instant).writingFailures(to: folder)
            let test = try #require(Test.current)
            struct LostChunk: Error {}
            try await Captured().capturing {
                try await trait.provideScope(for: test, testCase: Test.Case.current) {
                    let bridge = try #require(MockBLEBridge.current)
                    switch bridge.configuration.seed {
                    case 2: throw LostChunk()
                    case 3: await bridge.inject(ErrorInjection(.read, failure: .att(.readNotPermitted)))
                    default: break
                    }
                }
            }
            let base = "onlyTheSeedThatThrewOrLeftSomethingOverLeavesFiles-seed-"
            #expect(
                Self.files(in: folder) == [
                    base + "2-log.txt", base + "2-timeline.html", base + "3-log.txt", base + "3-timeline.html",
                ])
            try? FileManager.default.removeItem(atPath: folder)
        }

        @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
        @Test func anExplorationsFailureRecordsAnIssueAndTheMinimalRunsFiles() async throws {
            let folder = Self.freshFolder("exploration")
            let report = await Exploration(budget: .conditionsOnly, seeds: 10).run { run in
                let central = MockCentralManager()
                _ = await central.waitForPoweredOn()
                try Exploration.require(run.plan.conditions.mtu >= 103, "ATT_MTU \(run.plan.conditions.mtu)")
            }
            let failure = try #require(report.failures.first)
            let artifacts = try #require(failure.artifacts)
            #expect(artifacts.seed == failure.minimal.plan.seed)
            #expect(artifacts.title == "exploration seed \(failure.minimal.plan.seed)")
            #expect(artifacts.timelineHTML.contains("<svg"))
            #expect(artifacts.logText.contains(" stateChanged "))
            let captured = Captured()
            try await captured.capturing { report.recordIssues(name: "upload", writingFailuresTo: folder) }
            let seed = failure.minimal.plan.seed
            #expect(Self.files(in: folder) == ["upload-seed-\(seed)-log.txt", "upload-seed-\(seed)-timeline.html"])
            #expect(captured.comments.count == 2)
            #expect(captured.comments.first == [failure.description])
            #expect(
                captured.comments.last == [
                    "the timeline and bridge log of bridge seed \(seed) are in \(folder): "
                        + "upload-seed-\(seed)-timeline.html, upload-seed-\(seed)-log.txt"
                ])
            try? FileManager.default.removeItem(atPath: folder)
        }

        @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
        @Test func aPassingExplorationRecordsNothing() async throws {
            let folder = Self.freshFolder("exploration-passed")
            let report = await Exploration(budget: .conditionsOnly, seeds: 3).run { _ in
                _ = await MockCentralManager().waitForPoweredOn()
            }
            let captured = Captured()
            try await captured.capturing { report.recordIssues(writingFailuresTo: folder) }
            #expect(captured.comments.isEmpty)
            #expect(!FileManager.default.fileExists(atPath: folder))
        }

        @Test func anExplorationWithBadParametersRecordsItsProblem() async throws {
            let report = await Exploration(seeds: 1, parallelism: 0).run { _ in }
            let captured = Captured()
            try await captured.capturing { report.recordIssues() }
            #expect(
                captured.comments == [["the exploration did not run: Exploration.parallelism: 0 is outside 1…"]])
        }
    #endif

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test func anExploredScenariosFailureKeepsTheScenariosTimeline() async throws {
        let json = """
            {"name": "battery level", "peripheral": {"bundled": "battery"}, "steps": [
              {"op": "scan", "for": "1s"}, {"op": "connect"}, {"op": "discover"},
              {"op": "read", "char": "2A19", "expect": {"value": "fffe"}}]}
            """
        let scenario = try Scenario(json: Data(json.utf8))
        let report = await Exploration(budget: .conditionsOnly, seeds: 2).run(scenario: scenario)
        let failure = try #require(report.failures.first)
        let artifacts = try #require(failure.artifacts)
        #expect(artifacts.title == "battery level (exploration)")
        #expect(artifacts.seed == failure.minimal.plan.seed)
        #expect(artifacts.timelineHTML.contains("<table"))
        #expect(artifacts.logText.contains(" read 2A19"))
        // A passing replay keeps nothing; a failing one keeps its files.
        var passing = scenario
        passing.steps.removeLast()
        #expect(await Exploration.replay(failure.minimal.plan, scenario: passing).artifacts == nil)
        #expect(await Exploration.replay(failure.minimal.plan, scenario: scenario).artifacts == artifacts)
    }

    @Test func theFilesAreNamedForTheTestAndSeedWithUnsafeCharactersReplaced() {
        let artifacts = RunArtifacts(title: "Suite/upload (retry) ü", seed: 42, timelineHTML: "<p>", logText: "x\n")
        #expect(
            artifacts.files == [
                RunArtifacts.File(name: "Suite-upload--retry----seed-42-timeline.html", text: "<p>"),
                RunArtifacts.File(name: "Suite-upload--retry----seed-42-log.txt", text: "x\n"),
            ])
        #expect(
            RunArtifacts(title: "", seed: 0, timelineHTML: "", logText: "").files.map(\.name) == [
                "run-seed-0-timeline.html", "run-seed-0-log.txt",
            ])
    }

    @Test func theFolderIsTheVariablesElseOneInTheTemporaryFolder() {
        #expect(RunArtifacts.folder(environment: ["BLEMOCKKIT_ARTIFACTS": "/data/ble"]) == "/data/ble")
        #expect(
            RunArtifacts.folder(environment: ["BLEMOCKKIT_ARTIFACTS": " ", "TMPDIR": "/t/"]) == "/t/BLEMockKit-failures"
        )
        #expect(RunArtifacts.folder(environment: ["TMPDIR": "/var/tmp"]) == "/var/tmp/BLEMockKit-failures")
        #expect(RunArtifacts.folder(environment: [:]) == "/tmp/BLEMockKit-failures")
    }

    @Test func writingMakesTheFolderAndReturnsThePaths() throws {
        let folder = Self.freshFolder("write") + "/nested/deeper"
        let artifacts = RunArtifacts(title: "t", seed: 5, timelineHTML: "<html>", logText: "line\n")
        let paths = try artifacts.write(into: folder)
        #expect(paths == [folder + "/t-seed-5-timeline.html", folder + "/t-seed-5-log.txt"])
        #expect(try String(contentsOfFile: paths[0], encoding: .utf8) == "<html>")
        #expect(try String(contentsOfFile: paths[1], encoding: .utf8) == "line\n")
        // Into a path that is a file: the file system's error.
        #expect(throws: (any Error).self) { try artifacts.write(into: paths[0]) }
        try? FileManager.default.removeItem(atPath: Self.freshFolder("write"))
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test func aBridgesArtifactsHoldItsTimelineAndOneLinePerLogEntry() async throws {
        let bridge = MockBLEBridge(configuration: .realistic(seed: 11))
        let empty = await bridge.runArtifacts(title: "empty")
        #expect(empty.logText == "(nothing was logged)\n")
        try await bridge.run {
            let sensor = MockPeripheralManager()
            try await sensor.startAdvertising(AdvertisementData(localName: "Tag"))
        }
        let artifacts = await bridge.runArtifacts(title: "tag")
        let log = await bridge.log
        #expect(artifacts.seed == 11)
        #expect(artifacts.logText == log.map { "\($0)\n" }.joined())
        #expect(artifacts.timelineHTML == (await bridge.timelinePage(title: "tag")).html)
    }
}
