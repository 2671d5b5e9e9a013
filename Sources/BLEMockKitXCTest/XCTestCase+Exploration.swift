import BLEMockKit
import XCTest

extension XCTestCase {
    /// Fails the test for each failure of an exploration (in words, with its replay code),
    /// keeping the minimal failing run's timeline page and bridge log: attached to the test
    /// where XCTest has attachments (Apple platforms); elsewhere, or when
    /// `BLEMOCKKIT_ARTIFACTS` names a folder, written to that folder (else
    /// `BLEMockKit-failures` in the temporary folder) with a failure naming the files. Also
    /// fails for a problem with the exploration's parameters; a report that passed does
    /// nothing.
    ///
    /// ```swift
    /// func testUploadSurvivesFaults() async {
    ///     let report = await Exploration(seeds: 200).run { run in … }
    ///     recordFailures(of: report)
    /// }
    /// ```
    public func recordFailures(of report: ExplorationReport, file: StaticString = #filePath, line: UInt = #line) {
        if let problem = report.problem {
            XCTFail("the exploration did not run: \(problem)", file: file, line: line)
        }
        for failure in report.failures {
            XCTFail(failure.description, file: file, line: line)
            guard var artifacts = failure.artifacts else { continue }
            artifacts.title = testNameForFilter
            keep(artifacts, file: file, line: line)
        }
    }
}
