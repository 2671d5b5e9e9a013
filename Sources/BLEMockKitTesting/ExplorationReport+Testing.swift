import BLEMockKit
import Testing

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

extension ExplorationReport {
    /// Records the report as test issues: one per failure (in words, with its replay code),
    /// with the minimal failing run's timeline page and bridge log attached to the test
    /// (`NAME-seed-17-timeline.html`, `NAME-seed-17-log.txt`), and one for a problem with the
    /// exploration's parameters. A report that passed records nothing.
    ///
    /// ```swift
    /// let report = await Exploration(seeds: 200).run { run in … }
    /// report.recordIssues()
    /// ```
    ///
    /// Where attachments are not available, or when `folder` (or the `BLEMOCKKIT_ARTIFACTS`
    /// variable) names a folder, the files are written there and an issue names them.
    ///
    /// - Parameters:
    ///   - name: What the files' names start with; the current test's name by default.
    ///   - folder: A folder to write the files into as well.
    public func recordIssues(
        name: String? = nil, writingFailuresTo folder: String? = nil,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        if let problem {
            Issue.record(Comment(rawValue: "the exploration did not run: \(problem)"), sourceLocation: sourceLocation)
        }
        let title = name ?? Test.current.map(MockBridgeTrait.name(of:))
        let folder = folder ?? ProcessInfo.processInfo.environment[RunArtifacts.folderVariable]
        for failure in failures {
            Issue.record(Comment(rawValue: failure.description), sourceLocation: sourceLocation)
            guard var artifacts = failure.artifacts else { continue }
            if let title { artifacts.title = title }
            MockBridgeTrait.record(artifacts, folder: folder, at: sourceLocation)
        }
    }
}
