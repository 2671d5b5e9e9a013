import BLEMockKit

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Why a recording could not be imported (`mockble import` exits with status 2).
public enum RecordingImportError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The file does not exist.
    case missingFile(String)
    /// The file exists but could not be read.
    case unreadableFile(String)
    /// The file is not a valid recording: the error names the line, column and field.
    case invalidRecording(FixtureError)
    /// The recording shows no connection; `advertisers` lists the peripherals it heard.
    case noConnection(advertisers: [UUID])
    /// The recording has no connection to the requested peripheral; `connected` lists those it has.
    case peripheralNotFound(UUID, connected: [UUID])
    /// The recording holds a placeholder for a private value, and the importer was given no
    /// value for it; `supplied` lists the names it was given.
    case missingPlaceholder(String, supplied: [String])
    /// The importer produced a document the fixture format rejects (a bug in the importer).
    case invalidOutput(FixtureError)
    /// An output file or its directory could not be written; the payload is its path.
    case unwritableOutput(String)

    public var description: String {
        switch self {
        case .missingFile(let path): "no such file: \(path)"
        case .unreadableFile(let path): "cannot read \(path) (check its permissions)"
        case .invalidRecording(let error): "not a valid recording: \(error)"
        case .noConnection(let advertisers):
            "the recording shows no connection (it heard "
                + (advertisers.isEmpty ? "no advertisements" : advertisers.map(\.uuidString).joined(separator: ", "))
                + "); record a session that connects"
        case .peripheralNotFound(let peripheral, let connected):
            "the recording has no connection to \(peripheral.uuidString); it connected to "
                + connected.map(\.uuidString).joined(separator: ", ")
        case .missingPlaceholder(let name, let supplied):
            "the recording keeps the private value \"\(name)\" out; supply a value for it (e.g. mockble import "
                + "--placeholder \(name)=HEX)"
                + (supplied.isEmpty ? "" : "; supplied: " + supplied.joined(separator: ", "))
        case .invalidOutput(let error): "the importer wrote an invalid document (please report this): \(error)"
        case .unwritableOutput(let path): "cannot write \(path) (check the directory and its permissions)"
        }
    }
}
