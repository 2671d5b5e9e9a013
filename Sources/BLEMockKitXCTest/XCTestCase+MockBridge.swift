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
    /// variable narrows any such run to that seed).
    ///
    /// - Parameters:
    ///   - configuration: The bridge configuration; each seed replaces its seed. Defaults to fast.
    ///   - seeds: The seeds; `nil` runs once with the configuration's seed.
    ///   - timeLimit: The most virtual time one run may take.
    ///   - body: The test.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    public func runOnMockBridge(
        _ configuration: MockBLEBridge.Configuration = .fast, seeds: [UInt64]? = nil,
        timeLimit: Duration = .seconds(3_600), file: StaticString = #filePath, line: UInt = #line,
        _ body: @escaping @Sendable () async throws -> Void
    ) async throws {
        let plan = BridgeTestPlan(configuration: configuration, seeds: seeds, timeLimit: timeLimit)
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
            let rerun = "rerun only it: \(outcome.rerun(testName: name))"
            if let error = outcome.error {
                XCTFail("the test threw on bridge seed \(seed): \(error); \(rerun)", file: file, line: line)
            }
            if !outcome.finish.isClean {
                XCTFail(
                    "finish() found leftovers on bridge seed \(seed); \(rerun)\n\(outcome.finish)", file: file,
                    line: line)
            } else if outcome.error == nil, (testRun?.failureCount ?? 0) > failuresBefore, toRun.count > 1 {
                XCTFail("the failures above happened on bridge seed \(seed); \(rerun)", file: file, line: line)
            }
        }
    }

    /// The test's name as `swift test --filter` takes it: `Class/testMethod`.
    private var testNameForFilter: String {
        // `name` is "-[Class testMethod]" on Apple platforms and "Class.testMethod" elsewhere.
        var text = name
        if text.hasPrefix("-["), text.hasSuffix("]") { text = String(text.dropFirst(2).dropLast()) }
        let parts = text.split(whereSeparator: { $0 == " " || $0 == "." })
        return parts.count == 2 ? "\(parts[0])/\(parts[1])" : text
    }
}
