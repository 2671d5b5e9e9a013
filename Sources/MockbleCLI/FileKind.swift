import BLECapture
import BLEMockKit
import Foundation

/// What a path on `mockble`'s command line names, so a command given the wrong kind of thing
/// can say what it was given and what it expects.
///
/// Scenarios and peripheral profiles are told apart as `FixtureDocument` tells them apart: a
/// scenario is a JSON object with a `"steps"` or a `"peripheral"` member, any other JSON object
/// is a profile.
enum FileKind: Equatable {
    /// Nothing is at the path.
    case missing
    /// A folder.
    case folder
    /// A JSON object with `"steps"` or `"peripheral"`: a scenario.
    case scenario
    /// Any other JSON object: a peripheral profile.
    case profile
    /// A Bluetooth capture for `mockble import`: a btsnoop file (it starts with the format's
    /// `btsnoop` magic) or an Apple PacketLogger file (`.pklg`, or, as that format has no magic,
    /// a file that is not JSON and whose first record reads whole).
    case capture
    /// A session an app recorded, for `mockble import`: a JSON object whose `"format"` is
    /// `"mockble-recording"`.
    case recording
    /// Any other file: not JSON, not an object, or unreadable.
    case other

    /// The kind of what `path` names.
    init(path: String) {
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isFolder) else {
            self = .missing
            return
        }
        guard !isFolder.boolValue else {
            self = .folder
            return
        }
        if path.lowercased().hasSuffix(".pklg") {
            self = .capture
            return
        }
        guard let data = FileManager.default.contents(atPath: path) else {
            self = .other
            return
        }
        self.init(contents: data)
    }

    /// The kind of a file with these contents.
    init(contents data: Data) {
        if data.starts(with: Array("btsnoop\0".utf8)) {
            self = .capture
        } else if let object = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] {
            if object["format"] as? String == SessionRecording.formatName {
                self = .recording
            } else {
                self = object["steps"] == nil && object["peripheral"] == nil ? .profile : .scenario
            }
        } else if PacketLoggerFile.isPacketLogger(Array(data)) {
            self = .capture
        } else {
            self = .other
        }
    }
}

/// What a command that runs a scenario (`run`, `explore`) says when the file it was given is
/// something else.
enum ScenarioArgument {
    /// The complaint about `file` before it is loaded (a folder, a capture, a recording), or
    /// `nil` when it may be a scenario.
    static func mismatch(_ file: String, command: String) -> String? {
        switch FileKind(path: file) {
        case .folder:
            "mockble \(command): `\(file)` is a folder; `\(command)` expects a scenario file (.json)"
        case .capture:
            "mockble \(command): `\(file)` is a Bluetooth capture; `\(command)` expects a scenario — "
                + "`mockble import \(file)` makes one from it"
        case .recording:
            "mockble \(command): `\(file)` is a recording; `\(command)` expects a scenario — "
                + "`mockble import \(file)` makes one from it"
        default: nil
        }
    }

    /// What to say when `file` did not load as a scenario with `error`: that it is a peripheral
    /// profile, when it loads as one, else the error.
    static func loadFailure(_ file: String, _ error: FixtureError, command: String) -> String {
        if FileKind(path: file) == .profile,
            (try? PeripheralProfile.load(contentsOf: URL(fileURLWithPath: file))) != nil
        {
            return "mockble \(command): `\(file)` is a peripheral profile; `\(command)` expects a scenario — "
                + "`validate` checks profiles"
        }
        return "mockble \(command): \(error)"
    }
}
