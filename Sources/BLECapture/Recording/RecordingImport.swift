import BLECore
import BLEMockKit

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// What ``RecordingImporter`` made of a recording: a peripheral profile, a scenario that
/// replays the session, the link figures observed, and the warnings about what it skipped.
public struct RecordingImport: Sendable {
    /// Something the importer skipped or adjusted.
    public struct Warning: Sendable, Hashable, CustomStringConvertible {
        /// What was skipped or adjusted, and why.
        public var message: String
        /// The 1-based number of the recording's event it concerns, if one.
        public var event: Int?

        init(_ warning: CaptureWarning) {
            var unplaced = warning
            unplaced.packet = nil
            message = unplaced.description
            event = warning.packet
        }

        /// `event N: message`, or the message alone.
        public var description: String { (event.map { "event \($0): " } ?? "") + message }
    }

    /// The peripheral whose session the outputs replay.
    public var peripheral: UUID
    /// What was skipped or adjusted, in recording order.
    public var warnings: [Warning]
    /// What the link did in the session: its ATT_MTU, connection events and throughput,
    /// which can seed a realistic `LinkTiming` (`LinkFigures.linkTiming`).
    public var linkFigures: LinkFigures

    private var files: ImportedFiles

    init(files: ImportedFiles, peripheral: UUID, warnings: [Warning], linkFigures: LinkFigures) {
        self.files = files
        self.peripheral = peripheral
        self.warnings = warnings
        self.linkFigures = linkFigures
    }

    /// The name the outputs carry.
    public var name: String { files.name }
    /// The peripheral, as a profile.
    public var profile: PeripheralProfile { files.profile }
    /// The scenario, with the profile inline, ready for `ScenarioRunner`.
    public var scenario: Scenario { files.scenario }
    /// The profile as the JSON ``profileFileName`` holds.
    public var profileJSON: String { files.profileJSON }
    /// The profile's file name: `NAME.peripheral.json`, where `NAME` is the import's name with
    /// each path separator (`/`, `\`) and NUL made `_` and its leading dots dropped (`import`
    /// when nothing is left), so the files land in the directory they are written to and are
    /// not hidden.
    public var profileFileName: String { files.profileFileName }
    /// The scenario's file name: `NAME.scenario.json` (`NAME` as in ``profileFileName``).
    public var scenarioFileName: String { files.scenarioFileName }

    /// The scenario as JSON whose `peripheral` is `peripheralPath` (relative to the
    /// scenario's directory; ``profileFileName`` by default).
    public func scenarioJSON(peripheralPath: String? = nil) -> String {
        files.scenarioJSON(peripheralPath: peripheralPath)
    }

    /// Writes ``profileFileName`` and ``scenarioFileName`` into `directory` (creating it),
    /// replacing files of those names.
    ///
    /// - Returns: the two files' URLs.
    /// - Throws: ``RecordingImportError/unwritableOutput(_:)`` naming the path that could not be written.
    @discardableResult
    public func write(to directory: URL) throws(RecordingImportError) -> (profile: URL, scenario: URL) {
        do throws(ImportedFiles.UnwritablePath) {
            return try files.write(to: directory)
        } catch {
            throw .unwritableOutput(error.path)
        }
    }
}
