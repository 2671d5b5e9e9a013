import BLECore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

extension Scenario {
    /// Values given outside the file (e.g. `mockble run --seed 7 --mode realistic`) that
    /// replace the file's own.
    public struct Overrides: Sendable, Hashable {
        /// Replaces `seed`.
        public var seed: UInt64?
        /// Replaces `mode`.
        public var mode: Mode?

        /// Creates overrides; `nil` keeps the file's value.
        public init(seed: UInt64? = nil, mode: Mode? = nil) {
            self.seed = seed
            self.mode = mode
        }
    }

    /// Reads a scenario file. A `peripheral` path is resolved from the file's directory.
    ///
    /// - Parameters:
    ///   - url: the scenario file.
    ///   - overrides: values that replace the file's `seed` and `mode`.
    /// - Throws: ``FixtureError`` naming the file (the scenario's, or the profile's when the
    ///   profile is at fault), the position, the problem and the fix.
    public static func load(contentsOf url: URL, overrides: Overrides = Overrides()) throws(FixtureError) -> Scenario {
        let data = try FixtureFile.read(url)
        return try Scenario(
            json: data, file: FixtureFile.label(url), baseDirectory: url.deletingLastPathComponent(),
            overrides: overrides)
    }

    /// Reads a scenario from UTF-8 JSON.
    ///
    /// - Parameters:
    ///   - json: the document.
    ///   - file: the file name (or path) errors show; its last part without `.json` is the default
    ///     name.
    ///   - baseDirectory: where a `peripheral` path is resolved from; without it, a path is
    ///     resolved from the current directory.
    ///   - overrides: values that replace the document's `seed` and `mode`.
    public init(
        json: Data, file: String? = nil, baseDirectory: URL? = nil, overrides: Overrides = Overrides()
    ) throws(FixtureError) {
        do throws(FixtureError) {
            let root = try FixtureJSON.parse(json)
            try self.init(node: root, file: file, profiles: .directory(baseDirectory), overrides: overrides)
        } catch {
            throw error.file == nil ? error.inFile(file) : error
        }
    }

    /// Where a scenario's `peripheral` path leads.
    enum ProfileSource {
        /// Profile files, relative to a directory (the current directory when `nil`).
        case directory(URL?)
        /// The bundled profiles, with the scenario in `Fixtures/scenarios`: the path
        /// `"../peripherals/NAME.json"` names ``BundledProfile`` `NAME`. No file is read.
        case bundled
    }

    /// Reads a scenario from a parsed document, finding a `peripheral` path in `profiles`.
    init(node: FixtureJSON, file: String?, profiles: ProfileSource, overrides: Overrides) throws(FixtureError) {
        let root = try FixtureObject(node, fields: Self.fields, example: #"{"peripheral": "…", "steps": []}"#)
        // The file's name without its folders (`file` may be a path) and without `.json`.
        let defaultName =
            file.map { path in
                let name = path.split(separator: "/", omittingEmptySubsequences: false).last.map(String.init) ?? path
                return name.hasSuffix(".json") ? String(name.dropLast(5)) : name
            } ?? "scenario"
        let name = try root.string("name", example: "\"heart-rate-basic\"") ?? defaultName
        let description = try root.string("description")
        var mode = Mode.fast
        if let value = root["mode"] { mode = try Self.choice(value, among: Mode.self, what: "mode") }
        var seed: UInt64?
        if let value = root["seed"] {
            guard let parsed = value.unsignedInteger else {
                throw FixtureError.wrongType(value, expected: "a seed", example: "a whole number from 0 to 2^64-1")
            }
            seed = parsed
        }
        mode = overrides.mode ?? mode
        seed = overrides.seed ?? seed
        if mode == .realistic, seed == nil {
            throw FixtureError(
                .missingField("seed"), at: node, message: "realistic mode needs a seed",
                fix: "add \"seed\": 42 (or pass --seed), so every run draws the same values")
        }
        var centralMTU: Int?
        var pairing: PairingBehavior?
        if let value = root["central"] {
            let central = try FixtureObject(
                value, fields: ["preferredMTU", "pairing"], example: #"{"preferredMTU": 185, "pairing": "never"}"#)
            // The shared format clamps the link's ATT_MTU to 23…517, so any integer is a preference.
            centralMTU = try central.clampedInteger("preferredMTU", to: PeripheralProfile.preferredMTURange)
            pairing = try central["pairing"].map { node throws(FixtureError) in try Self.pairing(node) }
        }
        var interval: Duration?
        var linkProfiles: (central: LinkProfile?, peripheral: LinkProfile?) = (nil, nil)
        if let value = root["link"] {
            let link = try FixtureObject(
                value, fields: ["connectionInterval", "centralProfile", "peripheralProfile"],
                example: #"{"connectionInterval": "30ms"}"#)
            for (field, central) in [("centralProfile", true), ("peripheralProfile", false)] {
                guard let node = link[field] else { continue }
                let profile = try Self.linkProfile(node)
                guard mode == .realistic else {
                    throw FixtureError(
                        .valueOutOfRange, at: node, message: "a link profile needs realistic mode",
                        fix: "set \"mode\": \"realistic\" and a seed, or leave out link.\(field)")
                }
                if central { linkProfiles.central = profile } else { linkProfiles.peripheral = profile }
            }
            if let node = link["connectionInterval"] {
                let parsed = try FixtureDuration.parse(node)
                guard Self.connectionIntervalRange.contains(parsed) else {
                    throw FixtureError.outOfRange(
                        node, what: "connectionInterval", value: FixtureDuration.string(parsed), range: "7.5ms…4s",
                        hint: "the Bluetooth connection interval range")
                }
                interval = parsed
                // With profiles each link's interval is what they negotiate: this one would
                // only time the connection's establishment, not fix the link's.
                if linkProfiles.central != nil || linkProfiles.peripheral != nil {
                    throw FixtureError(
                        .unknownField("connectionInterval"), at: node,
                        message: "link.connectionInterval cannot be given with a link profile: the profiles "
                            + "negotiate each link's interval",
                        fix: "leave out link.connectionInterval (the profiles choose the interval), or the profiles")
                }
            }
        }
        var plan: ExplorationPlan?
        if let value = root["plan"] {
            guard mode == .realistic, let seed else {
                // (A mode given from outside, `--mode fast`, is the one to change, not the file.)
                throw FixtureError(
                    .unknownField("plan"), at: value,
                    message: "a plan needs realistic mode"
                        + (overrides.mode == .fast ? ", and the run asks for fast mode (--mode fast)" : ""),
                    fix: overrides.mode == .fast
                        ? "run it in realistic mode (leave out --mode fast), or remove \"plan\""
                        : "add \"mode\": \"realistic\" and a seed, as mockble explore prints them")
            }
            plan = try Self.plan(value, seed: seed)
        }
        let peripheralNode = try root.required("peripheral", example: "\"../peripherals/heart-rate.json\"")
        let (profile, path) = try Self.profile(peripheralNode, from: profiles)
        let stepNodes = try root.required("steps", example: #"[{"op": "scan"}]"#)
        guard let elements = stepNodes.elements else {
            throw FixtureError.wrongType(stepNodes, expected: "an array", example: #"[{"op": "scan"}]"#)
        }
        let resolver = CharacteristicResolver(profile: profile)
        var steps: [ScenarioStep] = []
        for (index, element) in elements.enumerated() {
            steps.append(try ScenarioStep(node: element, index: index, resolver: resolver))
        }
        self.init(
            name: name, description: description, seed: seed, mode: mode, centralPreferredMTU: centralMTU,
            connectionInterval: interval, centralPairing: pairing, peripheral: profile, peripheralPath: path,
            steps: steps)
        self.plan = plan
        centralProfile = linkProfiles.central
        peripheralProfile = linkProfiles.peripheral
    }

    /// A named link profile (``LinkProfile``'s static properties, e.g. `"iPhoneiOS10"`).
    static func linkProfile(_ node: FixtureJSON) throws(FixtureError) -> LinkProfile {
        try choice(node, among: LinkProfile.named, named: \.name, what: "link profile").profile
    }

    /// `central.pairing`: `"never"`, `"onFirstAccess"`, or `{"after": "1s", "outcome":
    /// "succeeds"}` (outcome `succeeds`, `rejected` or `timesOut`; `after` defaults to 1 s).
    static func pairing(_ node: FixtureJSON) throws(FixtureError) -> PairingBehavior {
        let example = #""never", "onFirstAccess" or {"after": "1s", "outcome": "rejected"}"#
        if let text = node.string {
            switch text {
            case "never": return .never
            case "onFirstAccess": return .onFirstAccess
            default:
                throw FixtureError(
                    .unknownValue(text), at: node, message: "unknown pairing \"\(text)\"",
                    fix: FixtureError.choice(for: text, among: ["never", "onFirstAccess"]))
            }
        }
        guard node.members != nil else { throw FixtureError.wrongType(node, expected: "a pairing", example: example) }
        let object = try FixtureObject(node, fields: ["after", "outcome"], example: example)
        let after =
            try object["after"].map { node throws(FixtureError) in
                try FixtureDuration.parseWait(node, field: "after")
            } ?? .seconds(1)
        let outcomes: [(String, PairingBehavior.Outcome)] = [
            ("succeeds", .succeeds), ("rejected", .rejected), ("timesOut", .timesOut),
        ]
        let outcome = try object["outcome"].map { node throws(FixtureError) in
            try choice(node, among: outcomes, named: \.0, what: "pairing outcome").1
        }
        return .automatic(duration: after, outcome: outcome ?? .succeeds)
    }

    /// The profile a `peripheral` value names: a path (found in `profiles`), a bundled
    /// profile (`{"bundled": "heart-rate"}`), or an inline object.
    static func profile(_ node: FixtureJSON, from profiles: ProfileSource)
        throws(FixtureError) -> (PeripheralProfile, String?)
    {
        guard let path = node.string else {
            guard node.members != nil else {
                throw FixtureError.wrongType(
                    node, expected: "a profile path or object", example: "\"../peripherals/heart-rate.json\"")
            }
            if node.member("bundled") != nil { return (try bundledProfile(node), nil) }
            return (try PeripheralProfile(node: node), nil)
        }
        switch profiles {
        case .directory(let baseDirectory):
            return (try profile(at: path, node: node, baseDirectory: baseDirectory), path)
        case .bundled:
            return (try bundledProfile(at: path, node: node), path)
        }
    }

    /// The bundled profile `{"bundled": "NAME"}` names, `NAME` being a ``BundledProfile`` raw
    /// value (a file name of the kit's `Fixtures/peripherals` without `.json`): a scenario
    /// that needs no profile file of its own, wherever it is.
    static func bundledProfile(_ node: FixtureJSON) throws(FixtureError) -> PeripheralProfile {
        let object = try FixtureObject(node, fields: ["bundled"], example: #"{"bundled": "heart-rate"}"#)
        guard let name = object["bundled"] else {
            throw FixtureError.wrongType(node, expected: "a bundled profile", example: #"{"bundled": "heart-rate"}"#)
        }
        let profile = try choice(name, among: BundledProfile.self, what: "bundled profile")
        return try PeripheralProfile(json: profile.json, file: profile.fileName)
    }

    /// The profile file at `path`, relative to `baseDirectory` (or the current directory).
    static func profile(at path: String, node: FixtureJSON, baseDirectory: URL?) throws(FixtureError)
        -> PeripheralProfile
    {
        let fix = "give a path relative to the scenario's directory, e.g. \"../peripherals/heart-rate.json\""
        guard !path.isEmpty else {
            throw FixtureError(
                .wrongType(expected: "a profile's path"), at: node, message: "the peripheral's path is empty", fix: fix)
        }
        let url =
            path.hasPrefix("/")
            ? URL(fileURLWithPath: path)
            : (baseDirectory ?? URL(fileURLWithPath: FileManager.default.currentDirectoryPath))
                .appendingPathComponent(path)
        guard FileManager.default.fileExists(atPath: url.path) else {
            throw FixtureError(
                .missingFile(url.path), at: node, message: "no such profile: \(path) (looked for \(url.path))", fix: fix
            )
        }
        let data: Data
        do {
            data = try FixtureFile.read(url)
        } catch {
            // A file that cannot be read at all (a folder, say) is the scenario's field's fault:
            // said there, where its line and column are known.
            throw FixtureError(error.kind, at: node, message: error.message, fix: error.fix)
        }
        // An error inside the profile names it by its path from where the scenario was named
        // (`Fixtures/scenarios/../peripherals/p.json`), as ``FixtureFile/label(_:)`` does.
        let label = FixtureFile.label(url)
        let root: FixtureJSON
        do throws(FixtureError) {
            root = try FixtureJSON.parse(data)
        } catch {
            throw error.inFile(label)
        }
        if root.member("steps") != nil || root.member("peripheral") != nil {
            throw FixtureError(
                .wrongType(expected: "a profile's path"), at: node,
                message: "\(path) is a scenario, not a peripheral profile",
                fix: "name the profile file that scenario uses (its \"peripheral\"), or give the profile inline")
        }
        do throws(FixtureError) {
            return try PeripheralProfile(node: root)
        } catch {
            throw error.inFile(label)
        }
    }

    /// A string naming one case of `T`.
    static func choice<T: RawRepresentable & CaseIterable>(_ node: FixtureJSON, among: T.Type, what: String)
        throws(FixtureError) -> T where T.RawValue == String
    {
        try choice(node, among: Array(T.allCases), named: \.rawValue, what: what)
    }

    /// A string naming one of `cases`, each named by `name`.
    static func choice<T>(_ node: FixtureJSON, among cases: [T], named name: (T) -> String, what: String)
        throws(FixtureError) -> T
    {
        let names = cases.map(name)
        guard let text = node.string else {
            throw FixtureError.wrongType(node, expected: "a string", example: "one of " + names.joined(separator: ", "))
        }
        guard let value = cases.first(where: { name($0) == text }) else {
            throw FixtureError(
                .unknownValue(text), at: node, message: "unknown \(what) \"\(text)\"",
                fix: FixtureError.choice(for: text, among: names))
        }
        return value
    }
}

/// Reading fixture and scenario files.
enum FixtureFile {
    /// How errors name the file at `url`: its path as the caller named it (relative to the
    /// current directory when the URL was made from a relative path, `./` left off), not its
    /// file name alone, which a scenario and its profile, or two profiles, may share.
    static func label(_ url: URL) -> String {
        let path = url.relativePath
        return path.hasPrefix("./") ? String(path.dropFirst(2)) : path
    }

    /// The file's bytes.
    ///
    /// - Throws: ``FixtureError/Kind/missingFile(_:)`` or ``FixtureError/Kind/unreadableFile(_:)``.
    static func read(_ url: URL) throws(FixtureError) -> Data {
        do {
            return try Data(contentsOf: url)
        } catch {
            let path = url.path
            guard FileManager.default.fileExists(atPath: path) else {
                // A symbolic link is there, but no file at its end: it points at a missing file,
                // or round a loop of links.
                if (try? FileManager.default.destinationOfSymbolicLink(atPath: path)) != nil {
                    throw FixtureError(
                        .missingFile(path), file: label(url), line: 0, column: 0, path: "",
                        message: "no file at the end of the symbolic link \(path) (it points at a missing file, "
                            + "or round a loop of links)",
                        fix: "check where the link points (`ls -l \(path)`)")
                }
                throw FixtureError(
                    .missingFile(path), file: label(url), line: 0, column: 0, path: "",
                    message: "no such file: \(path)",
                    fix: "check the path (relative paths are resolved from the scenario)")
            }
            let (why, fix) =
                switch UnreadableFile(path: path) {
                case .folder: ("it is a folder", "give the path of a JSON file in it")
                case .notARegularFile: ("it is not a regular file", "give the path of a JSON file")
                case .notReadable: ("it is not readable", "check the file's permissions")
                }
            throw FixtureError(
                .unreadableFile(path), file: label(url), line: 0, column: 0, path: "",
                message: "cannot read \(path): \(why)", fix: fix)
        }
    }
}

/// Why a file that exists could not be read, for a message that says so: a folder, a device or
/// pipe, or a file its permissions keep closed.
package enum UnreadableFile: Sendable {
    case folder
    case notARegularFile
    case notReadable

    /// What is at `path` (checked when reading it failed).
    package init(path: String) {
        let type = (try? FileManager.default.attributesOfItem(atPath: path))?[.type] as? FileAttributeType
        if type == .typeDirectory {
            self = .folder
        } else if FileManager.default.isReadableFile(atPath: path) {
            self = .notARegularFile
        } else {
            self = .notReadable
        }
    }
}
