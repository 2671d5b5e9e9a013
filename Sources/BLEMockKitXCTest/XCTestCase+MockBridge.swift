import BLECBM
import BLECore
import BLEMockKit
import XCTest

extension XCTestCase {
    /// Runs `body` on a mock bridge, once per seed — the XCTest form of the Swift Testing
    /// trait in `BLEMockKitTesting`.
    ///
    /// ```swift
    /// func testUploadSurvivesReconnects() async throws {
    ///     try await runOnMockBridge(.realistic(seed: 0), seeds: Array(0..<20)) {
    ///         let sensor = MockPeripheralManager()   // joins the run's bridge
    ///         …
    ///     }
    /// }
    /// ```
    ///
    /// Each seed gets a fresh bridge, and `body` runs in its
    /// ``MockBLEBridge/run(timeLimit:stallPatience:_:)`` scope: virtual time drives itself,
    /// managers created without a bridge join it, and ``MockBLEBridge/current`` is it. A run
    /// that throws, cannot end (``MockBLEBridge/Stall``), leaves something over
    /// (``MockBLEBridge/finish()``) or records a failure fails the test with a message naming
    /// the seed and how to rerun only it (`BLEMOCKKIT_SEED=17 swift test --filter name`; the
    /// variable narrows any such run to that seed). A failed run's timeline page and bridge log
    /// are attached to the test where XCTest has attachments (Apple platforms); elsewhere, or
    /// when `BLEMOCKKIT_ARTIFACTS` names a folder, they are written as files
    /// (`Class-testName-seed-17-timeline.html`, `…-log.txt`) to that folder (else
    /// `BLEMockKit-failures` in the temporary folder), and a failure names them. A failure also
    /// lists the calls the app made through the CoreBluetooth-shaped API that got no callback,
    /// as with CoreBluetooth (a scan before the manager was powered on, a read the link's drop
    /// ended), when there were any: the callback the test waited for may be one of theirs. A body
    /// that throws `XCTSkip` skips the test: no other seed runs, and the skip is thrown on. Once
    /// a seed's run has ended, the `CBMCentralManagerMock` peripheral objects on its bridge hold
    /// their delegates weakly, so a CoreBluetoothMock-style app that is its peripheral's
    /// delegate goes with the test rather than keeping itself and the bridge alive.
    ///
    /// - Parameters:
    ///   - configuration: The bridge configuration; each seed replaces its seed. Defaults to fast.
    ///   - seeds: The seeds; `nil` runs once with the configuration's seed. An empty list runs
    ///     nothing: the test fails (``BridgeTestPlan/EmptyPlan``) and the body does not run.
    ///   - timeLimit: The most virtual time one run may take.
    ///   - stallPatience: How long, in wall-clock time, a run waits for work from outside it
    ///     before it reports a stall (``BridgeTestPlan/stallPatience``).
    ///   - body: The test.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    public func runOnMockBridge(
        _ configuration: MockBLEBridge.Configuration = .fast, seeds: [UInt64]? = nil,
        timeLimit: Duration = .seconds(3_600), stallPatience: Duration = .seconds(1), file: StaticString = #filePath,
        line: UInt = #line, _ body: @escaping @Sendable () async throws -> Void
    ) async throws {
        let plan = BridgeTestPlan(
            configuration: configuration, seeds: seeds, timeLimit: timeLimit, stallPatience: stallPatience)
        let toRun: [UInt64]
        do {
            toRun = try plan.seedsToRun(environment: ProcessInfo.processInfo.environment)
        } catch {
            return XCTFail("\(error)", file: file, line: line)
        }
        let name = testNameForFilter
        for seed in toRun {
            let failuresBefore = testRun?.failureCount ?? 0
            let outcome = await plan.run(seed: seed, body)
            // The test is over on this bridge: CoreBluetoothMock-style apps it made go with it.
            TestEnd.release(outcome.bridge)
            // A body that skips the test skips it, whatever its run left over.
            if let skip = outcome.error as? XCTSkip { throw skip }
            let rerun = "rerun only it: \(outcome.rerun(testName: name))"
            if let error = outcome.error {
                // (An error of several lines, a stall report, ends with a sentence: the command
                // goes on a line of its own.)
                let thrown = "\(error)"
                let separator = thrown.contains("\n") ? "\n" : "; "
                XCTFail("the test threw on bridge seed \(seed): \(thrown)\(separator)\(rerun)", file: file, line: line)
            }
            if !outcome.finish.isClean {
                XCTFail(
                    "finish() found leftovers on bridge seed \(seed); \(rerun)\n\(outcome.finish)", file: file,
                    line: line)
            } else if outcome.error == nil, (testRun?.failureCount ?? 0) > failuresBefore {
                // (With one seed too: the body's failures say nothing of the seed, and the
                // artifacts, attached on Apple platforms, name it nowhere in the log.)
                XCTFail("the failures above happened on bridge seed \(seed); \(rerun)", file: file, line: line)
            }
            if !outcome.isClean || (testRun?.failureCount ?? 0) > failuresBefore {
                // The callback the test waited for may be one of the calls that got none.
                if let note = outcome.unansweredCallsNote { XCTFail(note, file: file, line: line) }
                keep(await outcome.bridge.runArtifacts(title: name), file: file, line: line)
            }
        }
    }

    /// Keeps a failed run's timeline and bridge log: attached to the test where XCTest has
    /// attachments (Apple platforms), and written to a folder — the one
    /// `BLEMOCKKIT_ARTIFACTS` names, else `BLEMockKit-failures` in the temporary folder —
    /// where it does not or when the variable asks for it, with a failure naming the files.
    func keep(_ artifacts: RunArtifacts, file: StaticString = #filePath, line: UInt = #line) {
        let environment = ProcessInfo.processInfo.environment
        #if canImport(Darwin)
            for item in artifacts.files {
                let attachment = XCTAttachment(string: item.text)
                attachment.name = item.name
                attachment.lifetime = .keepAlways
                add(attachment)
            }
            guard environment[RunArtifacts.folderVariable] != nil else { return }
        #endif
        let folder = RunArtifacts.folder(environment: environment)
        do {
            let paths = try artifacts.write(into: folder)
            XCTFail(
                "the timeline and bridge log of bridge seed \(artifacts.seed) are in \(folder): "
                    + paths.joined(separator: ", "), file: file, line: line)
        } catch {
            XCTFail(
                "could not write the timeline and log of bridge seed \(artifacts.seed) to \(folder): \(error)",
                file: file, line: line)
        }
    }

    /// The test's name as `swift test --filter` takes it: `Class/testMethod`.
    var testNameForFilter: String {
        // `name` is "-[Class testMethod]" on Apple platforms and "Class.testMethod" elsewhere.
        var text = name
        if text.hasPrefix("-["), text.hasSuffix("]") { text = String(text.dropFirst(2).dropLast()) }
        let parts = text.split(whereSeparator: { $0 == " " || $0 == "." })
        return parts.count == 2 ? "\(parts[0])/\(parts[1])" : text
    }
}
