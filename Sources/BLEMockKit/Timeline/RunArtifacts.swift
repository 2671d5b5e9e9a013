#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// What a failed run leaves for a person to look at: its timeline page and its bridge log,
/// as files named after the test and the seed.
///
/// The `.mockBridge` trait, `runOnMockBridge` and an exploration's failures make these for
/// the failing run and attach them to the test (Swift Testing attachments; `XCTAttachment`
/// where XCTest has it), or write them to a folder the failure message names:
/// `NAME-seed-17-timeline.html` (open it in a browser) and `NAME-seed-17-log.txt` (one line
/// per ``BridgeLogEntry``).
public struct RunArtifacts: Sendable, Hashable {
    /// One file: its name and its UTF-8 text.
    public struct File: Sendable, Hashable {
        /// The file's name, without a folder.
        public var name: String
        /// The file's text.
        public var text: String

        /// Creates a file.
        public init(name: String, text: String) {
            self.name = name
            self.text = text
        }
    }

    /// The environment variable naming a folder to write failed runs' files into, in addition
    /// to attaching them: `BLEMOCKKIT_ARTIFACTS=/tmp/ble swift test`.
    public static let folderVariable = "BLEMOCKKIT_ARTIFACTS"

    /// What the run is called (a test's name): the files' names start with it.
    public var title: String
    /// The run's seed: the files' names carry it.
    public var seed: UInt64
    /// The run's timeline page (``TimelinePage/html``).
    public var timelineHTML: String
    /// The run's bridge log, one entry per line.
    public var logText: String

    /// Creates the artifacts of a run.
    public init(title: String, seed: UInt64, timelineHTML: String, logText: String) {
        self.title = title
        self.seed = seed
        self.timelineHTML = timelineHTML
        self.logText = logText
    }

    /// The files: `NAME-seed-SEED-timeline.html` and `NAME-seed-SEED-log.txt`, where `NAME`
    /// is the title with every character other than a letter, digit, `.`, `_` or `-` made `-`.
    public var files: [File] {
        let names = Self.fileNames(title: title, seed: seed)
        return [File(name: names.timeline, text: timelineHTML), File(name: names.log, text: logText)]
    }

    /// The names ``files`` gives a run's two files.
    package static func fileNames(title: String, seed: UInt64) -> (timeline: String, log: String) {
        let base = "\(fileNamePart(title))-seed-\(seed)"
        return (base + "-timeline.html", base + "-log.txt")
    }

    /// Writes ``files`` into `folder` (creating it, and any folder above it, if needed) and
    /// returns their paths, in the order of ``files``.
    ///
    /// - Throws: What the file system throws when the folder cannot be made or a file cannot
    ///   be written.
    @discardableResult
    public func write(into folder: String) throws -> [String] {
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        return try files.map { file in
            let path = folder.hasSuffix("/") ? folder + file.name : folder + "/" + file.name
            try Data(file.text.utf8).write(to: URL(fileURLWithPath: path))
            return path
        }
    }

    /// The folder failed runs' files go to when they cannot be attached, or when
    /// ``folderVariable`` asks for them: the variable's value when it is set and not empty,
    /// else `BLEMockKit-failures` in the system's temporary folder.
    public static func folder(environment: [String: String]) -> String {
        if let given = environment[folderVariable]?.trimmingCharacters(in: .whitespaces), !given.isEmpty {
            return given
        }
        let temporary = environment["TMPDIR"].flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp"
        return (temporary.hasSuffix("/") ? temporary : temporary + "/") + "BLEMockKit-failures"
    }

    /// A log as text: one ``BridgeLogEntry/description`` per line.
    static func text(of log: [BridgeLogEntry]) -> String {
        log.isEmpty ? "(nothing was logged)\n" : log.map(\.description).joined(separator: "\n") + "\n"
    }

    /// `text` with every character a file name should not hold made `-` (an empty text is
    /// `run`).
    static func fileNamePart(_ text: String) -> String {
        let allowed = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-")
        let part = String(text.map { allowed.contains($0) ? $0 : "-" })
        return part.isEmpty ? "run" : part
    }
}

extension MockBLEBridge {
    /// The artifacts of this bridge's run so far: its ``timelinePage(title:)`` and its log,
    /// named after `title` and the bridge's seed.
    ///
    /// - Parameters:
    ///   - title: What the run is called (a test's name).
    ///   - failures: Why the run failed, a line each (the test's issues), shown under the
    ///     page's header.
    public func runArtifacts(title: String, failures: [String] = []) -> RunArtifacts {
        var page = timelinePage(title: title)
        page.verdict = failures
        page.verdictIsFailure = true
        return RunArtifacts(
            title: title, seed: configuration.seed, timelineHTML: page.html, logText: RunArtifacts.text(of: world.log))
    }
}
