import BLECore
import BLEMockKit

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// What ``CaptureImporter`` made of a capture: a peripheral profile, a scenario that replays
/// the followed connection, and the warnings about what it skipped.
public struct CaptureImport: Sendable {
    /// The name the outputs carry (the capture's file name without its extension).
    public var name: String
    /// The format the capture was read in.
    public var format: CaptureFormat
    /// The device the followed connection went to.
    public var peer: BluetoothAddress
    /// The followed connection's handle.
    public var connectionHandle: UInt16
    /// Whether the capturing device was the central of the connection.
    public var isLocalCentral: Bool
    /// The peripheral, as a profile.
    public var profile: PeripheralProfile { files.profile }
    /// The scenario, with the profile inline, ready for `ScenarioRunner`.
    public var scenario: Scenario { files.scenario }
    /// What was skipped or adjusted, in capture order.
    public var warnings: [CaptureWarning]
    /// The profile as the JSON ``profileFileName`` holds.
    public var profileJSON: String { files.profileJSON }

    private var files: ImportedFiles

    init(
        name: String, format: CaptureFormat, peer: BluetoothAddress, connectionHandle: UInt16, isLocalCentral: Bool,
        profileValue: JSONValue,
        scenarioHeader: [JSONValue.Member], steps: [JSONValue], warnings: [CaptureWarning]
    ) throws(CaptureImportError) {
        self.name = name
        self.format = format
        self.peer = peer
        self.connectionHandle = connectionHandle
        self.isLocalCentral = isLocalCentral
        self.warnings = warnings
        do throws(FixtureError) {
            files = try ImportedFiles(
                name: name, profileValue: profileValue, scenarioHeader: scenarioHeader, steps: steps)
        } catch {
            throw .invalidOutput(error)
        }
    }

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
    /// - Throws: ``CaptureImportError/unwritableOutput(_:)`` naming the path that could not be written.
    @discardableResult
    public func write(to directory: URL) throws(CaptureImportError) -> (profile: URL, scenario: URL) {
        do throws(ImportedFiles.UnwritablePath) {
            return try files.write(to: directory)
        } catch {
            throw .unwritableOutput(error.path)
        }
    }
}
