import BLECore

/// Why a fixture or scenario file was rejected: what is wrong, where, and how to fix it.
///
/// Every error names the file (when known), the 1-based line and column, and the path of
/// the offending value, then says what is wrong and what to do instead:
///
/// ```text
/// heart-rate.json:12:9: services[0].characteristics[1].properties[0]: unknown property "reed";
/// use one of broadcast, read, writeWithoutResponse, …
/// ```
///
/// Check ``kind`` to tell errors apart in code.
public struct FixtureError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What kind of problem was found.
    public enum Kind: Hashable, Sendable {
        /// The text is not valid JSON (RFC 8259), or nests too deeply.
        case invalidJSON
        /// An object has a field the format does not define.
        case unknownField(String)
        /// A required field is absent.
        case missingField(String)
        /// A value has the wrong JSON type; the payload names the expected type.
        case wrongType(expected: String)
        /// A string is not a Bluetooth UUID.
        case badUUID(BluetoothUUID.ParseError)
        /// A characteristic property name is not one of the ten the format lists.
        case unknownProperty(String)
        /// An attribute permission name is not one of the four the format lists.
        case unknownPermission(String)
        /// A byte value (`{"hex": …}`, `{"utf8": …}`, `{"zeros": N}`, `{"pattern": N}`) is malformed.
        case badByteValue
        /// A duration string is malformed (e.g. no unit, unknown unit, negative).
        case badDuration(String)
        /// A number or length lies outside the range the field allows.
        case valueOutOfRange
        /// Two characteristics of one profile have the same `id`.
        case duplicateCharacteristicID(String)
        /// A characteristic with a static `value` can be written or subscribed to.
        case staticValueNotReadOnly
        /// A descriptor is one the stack manages itself (`2902`).
        case managedDescriptor
        /// A UUID is given twice where it must be unique (two spellings of one service data key).
        case duplicateUUID(BluetoothUUID)
        /// An `includedServices` entry names no service listed before it.
        case unknownIncludedService(BluetoothUUID)
        /// The file does not exist; the payload is its path.
        case missingFile(String)
        /// The file exists but could not be read; the payload is its path.
        case unreadableFile(String)
        /// A scenario step's `op` is not one the format defines.
        case unknownOp(String)
        /// A name is not one of the values a field allows (a mode, state, fault kind, role…).
        case unknownValue(String)
        /// A step names a characteristic the peripheral does not have (by id or UUID).
        case unknownCharacteristic(String)
        /// A step names a characteristic by a UUID that several characteristics share.
        case ambiguousCharacteristic(String)
        /// No longer thrown (an `expect` that names a field traces do not have is an
        /// ``unknownField(_:)``, and `step` and `op` may be expected); kept so that code that
        /// switches over the kinds still compiles.
        case unknownTraceField(String)
    }

    /// What kind of problem was found.
    public var kind: Kind
    /// The file, if the input came from one: the `file` given to a reader of JSON, or, for a
    /// file read from a URL, its path as the caller named it (relative to the current directory
    /// when the URL was made from a relative path), so that a scenario and its profile, or two
    /// files of one name in different folders, are told apart.
    public var file: String?
    /// The 1-based line of the offending value, or 0 when the error concerns the whole file.
    public var line: Int
    /// The 1-based column of the offending value, or 0 when the error concerns the whole file.
    public var column: Int
    /// The path of the offending value, e.g. `services[0].uuid`; empty for the document root.
    public var path: String
    /// What is wrong, e.g. `unknown property "reed"`.
    public var message: String
    /// How to fix it, e.g. `use one of broadcast, read, …`.
    public var fix: String

    /// Creates an error.
    public init(
        _ kind: Kind, file: String? = nil, line: Int, column: Int, path: String, message: String, fix: String
    ) {
        self.kind = kind
        self.file = file
        self.line = line
        self.column = column
        self.path = path
        self.message = message
        self.fix = fix
    }

    /// Creates an error about a node, at its position and path.
    init(_ kind: Kind, at node: FixtureJSON, message: String, fix: String) {
        self.init(kind, line: node.line, column: node.column, path: node.path, message: message, fix: fix)
    }

    /// `file:line:column: path: message; fix`, leaving out the parts that do not apply.
    public var description: String {
        var location = file ?? ""
        if line > 0 {
            location += (location.isEmpty ? "" : ":") + "\(line):\(column)"
        }
        var parts: [String] = []
        if !location.isEmpty { parts.append(location) }
        if !path.isEmpty { parts.append(path) }
        parts.append(message + (fix.isEmpty ? "" : "; " + fix))
        return parts.joined(separator: ": ")
    }

    /// The same error, attributed to `file`.
    func inFile(_ file: String?) -> FixtureError {
        var copy = self
        copy.file = file
        return copy
    }
}

extension FixtureError {
    /// A value of the wrong JSON type.
    static func wrongType(_ node: FixtureJSON, expected: String, example: String) -> FixtureError {
        FixtureError(
            .wrongType(expected: expected), at: node, message: "expected \(expected), found \(node.typeName)",
            fix: "write \(example)")
    }

    /// A value outside `range`.
    static func outOfRange(
        _ node: FixtureJSON, what: String, value: String, range: String, hint: String = ""
    ) -> FixtureError {
        FixtureError(
            .valueOutOfRange, at: node, message: "\(what) \(value) is out of range",
            fix: "use a value in \(range)" + (hint.isEmpty ? "" : " (\(hint))"))
    }

    /// The known name closest to `name`, if it is close enough to be a likely typo.
    static func suggestion(for name: String, among candidates: [String]) -> String? {
        let scored = candidates.map { (candidate: $0, distance: editDistance(name.lowercased(), $0.lowercased())) }
        guard let best = scored.min(by: { $0.distance < $1.distance }) else { return nil }
        return best.distance <= max(1, min(3, name.count / 3)) ? best.candidate : nil
    }

    /// The edit distance between two strings, counting an insertion, deletion, substitution
    /// or swap of adjacent characters as one edit (optimal string alignment).
    static func editDistance(_ a: String, _ b: String) -> Int {
        let a = Array(a)
        let b = Array(b)
        guard !a.isEmpty else { return b.count }
        var beforePrevious: [Int] = []
        var previous = Array(0...b.count)
        for i in 1...a.count {
            var current = [i] + Array(repeating: 0, count: b.count)
            for j in stride(from: 1, through: b.count, by: 1) {
                let substitution = previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)
                current[j] = min(previous[j] + 1, current[j - 1] + 1, substitution)
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] {
                    current[j] = min(current[j], beforePrevious[j - 2] + 1)
                }
            }
            beforePrevious = previous
            previous = current
        }
        return previous[b.count]
    }

    /// `did you mean "x"? ` followed by `use one of a, b, c`.
    static func choice(for name: String, among candidates: [String]) -> String {
        let list = "use one of " + candidates.joined(separator: ", ")
        guard let best = suggestion(for: name, among: candidates) else { return list }
        return "did you mean \"\(best)\"? " + list
    }
}
