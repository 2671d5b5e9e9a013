import BLEMockKit

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// What an import writes — a profile and a scenario that replays against it — shared by the
/// capture importer and the recording importer: the documents as JSON, read back with the
/// kit's own decoders, and written side by side.
struct ImportedFiles: Sendable {
    /// A path that could not be written.
    struct UnwritablePath: Error {
        var path: String
    }

    var name: String
    var profile: PeripheralProfile
    var scenario: Scenario
    var profileJSON: String
    private var scenarioHeader: [JSONValue.Member]
    private var steps: [JSONValue]

    /// Checks the documents by reading them back.
    ///
    /// - Throws: the ``FixtureError`` a document's decoder reported (a bug of the importer).
    init(name: String, profileValue: JSONValue, scenarioHeader: [JSONValue.Member], steps: [JSONValue])
        throws(FixtureError)
    {
        self.name = name
        self.scenarioHeader = scenarioHeader
        self.steps = steps
        profileJSON = profileValue.text
        let inline = JSONValue.object(
            scenarioHeader + [(key: "peripheral", value: profileValue), (key: "steps", value: .array(steps))])
        profile = try PeripheralProfile(json: Data(profileJSON.utf8), file: "\(Self.fileStem(name)).peripheral.json")
        scenario = try Scenario(json: Data(inline.text.utf8), file: "\(Self.fileStem(name)).scenario.json")
    }

    var profileFileName: String { "\(Self.fileStem(name)).peripheral.json" }
    var scenarioFileName: String { "\(Self.fileStem(name)).scenario.json" }

    /// The stem of the files written for an import named `name`: the name, with each path
    /// separator (`/`, `\`) and NUL made `_` and its leading dots dropped, so the files land in
    /// the directory given and are not hidden; `import` when nothing is left.
    static func fileStem(_ name: String) -> String {
        var stem = String(name.map { "/\\\u{0}".contains($0) ? "_" : $0 })
        stem = String(stem.drop { $0 == "." })
        return stem.isEmpty ? "import" : stem
    }

    func scenarioJSON(peripheralPath: String?) -> String {
        JSONValue.object(
            scenarioHeader + [
                (key: "peripheral", value: .string(peripheralPath ?? profileFileName)),
                (key: "steps", value: .array(steps)),
            ]
        ).text
    }

    /// Writes both files into `directory` (creating it), replacing files of those names.
    func write(to directory: URL) throws(UnwritablePath) -> (profile: URL, scenario: URL) {
        let profileURL = directory.appendingPathComponent(profileFileName)
        let scenarioURL = directory.appendingPathComponent(scenarioFileName)
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        } catch {
            throw UnwritablePath(path: directory.path)
        }
        for (url, text) in [(profileURL, profileJSON), (scenarioURL, scenarioJSON(peripheralPath: nil))] {
            do {
                try Data(text.utf8).write(to: url)
            } catch {
                throw UnwritablePath(path: url.path)
            }
        }
        return (profileURL, scenarioURL)
    }
}
