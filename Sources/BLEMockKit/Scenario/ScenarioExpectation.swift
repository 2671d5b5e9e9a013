import BLECore

/// What a step's trace record must show: the `"expect"` object, field by field.
///
/// Matching is by value: numbers, strings and Booleans must be equal (hex strings ignore
/// case; UUIDs, in `discovered` and `reason`, match in any spelling of the same UUID:
/// `"180d"`, `"0000180D"`, `"0000180D-0000-1000-8000-00805F9B34FB"`); an expected object matches when each of its fields matches (so
/// `{"error": {"code": 3}}` need not spell out the domain); an expected string matches an
/// error by its name (`{"error": "writeNotPermitted"}`); arrays match element by element;
/// `null` matches a field the record does not have; a `time` matches the same instant in any
/// spelling of a duration (`"250ms"` matches the trace's `"0.25s"`). A value of a type its field
/// never has (`{"ok": "yes"}`, `{"value": {"hex": "01"}}`: the trace prints bytes as a hex
/// string), a value no trace shows (an error name, domain, manager state or op that does not
/// exist, a time that is no duration), and a key of an expected object that the field's objects
/// never have (`{"reason": {"centrl": null}}`), are errors in the file, reported with their
/// position when the scenario is read.
public struct ScenarioExpectation: Sendable, Hashable {
    /// The expected fields, in the order written.
    public var fields: [FixtureJSON.Member]

    /// Creates an expectation.
    public init(fields: [FixtureJSON.Member]) {
        self.fields = fields
    }

    /// Reads an `expect` object; every key must be a trace field (`step` and `op` too: the
    /// shared format's `expect` is an object of trace fields, compared with the record's).
    ///
    /// - Throws: ``FixtureError/Kind/unknownField(_:)`` at the first other key.
    init(node: FixtureJSON) throws(FixtureError) {
        _ = try FixtureObject(node, fields: ScenarioTrace.Record.fieldNames, example: #"{"ok": true}"#)
        fields = node.members ?? []
        for member in fields {
            try Self.checkType(of: member.value, for: member.key)
            if let shape = Shape.field(named: member.key) { try Self.checkKeys(of: member.value, against: shape) }
        }
    }

    /// The keys a structured trace field's objects have, for checking an expected object's:
    /// an unknown key (`{"reason": {"centrl": null}}`) is an error in the file, as everywhere
    /// else, not a `null` that matches the absent field.
    indirect enum Shape: Sendable {
        /// A value whose keys are not checked (a leaf).
        case value
        /// A UUID, in any spelling the format allows (compared as the UUID it names).
        case uuid
        /// A time, in any spelling of a duration the format allows (compared as the instant it
        /// names).
        case duration
        /// An object with these keys.
        case object([(name: String, shape: Shape)])
        /// An object whose keys are UUIDs (`serviceData`'s), each value of this shape.
        case map(Shape)
        /// An array of elements of this shape.
        case array(Shape)
        /// `discovered`: an object (a `discover`) or an array (a `scan`'s discoveries).
        case objectOrArray([(name: String, shape: Shape)], Shape)

        /// The shape of an array's elements (a leaf for any other shape).
        var element: Shape {
            switch self {
            case .array(let inner), .objectOrArray(_, let inner): inner
            default: .value
            }
        }

        /// The shape of an object's field `name` (a leaf when the shape does not list it).
        func field(_ name: String) -> Shape {
            switch self {
            case .object(let fields), .objectOrArray(let fields, _): fields.first { $0.name == name }?.shape ?? .value
            default: .value
            }
        }

        /// The shape of the structured trace field `name`, if it is one.
        ///
        /// Made when asked for (as a scenario's expectations are read and compared), not kept in
        /// a `static let`: an enum keeps its case in its references' spare bits, so a global
        /// holding one shows LeakSanitizer no pointer to what it holds, and every fuzzing run
        /// reported the shapes as leaked.
        static func field(named name: String) -> Shape? {
            let error = Shape.object([("domain", .value), ("code", .value), ("name", .value)])
            let uuids = Shape.array(.uuid)
            switch name {
            case "time":
                return .duration
            case "error":
                return error
            case "reason":
                return .object([("central", error), ("peripheral", .object([("unsubscribed", uuids)]))])
            case "discovered":
                let discovery = Shape.object([
                    ("name", .value), ("rssi", .value), ("localName", .value), ("serviceUUIDs", uuids),
                    ("overflowServiceUUIDs", uuids), ("solicitedServiceUUIDs", uuids), ("manufacturerData", .value),
                    ("serviceData", .map(.value)), ("txPowerLevel", .value), ("isConnectable", .value),
                ])
                let characteristic = Shape.object([("uuid", .uuid), ("properties", .value), ("descriptors", uuids)])
                let service = Shape.object([
                    ("uuid", .uuid), ("primary", .value), ("includedServices", uuids),
                    ("characteristics", .array(characteristic)),
                ])
                return .objectOrArray([("services", .array(service))], discovery)
            default:
                return nil
            }
        }
    }

    /// Checks that every key of an expected value's objects is one its trace field has.
    ///
    /// - Throws: ``FixtureError/Kind/unknownField(_:)`` at the first other key, naming the
    ///   allowed ones.
    static func checkKeys(of value: FixtureJSON, against shape: Shape) throws(FixtureError) {
        switch (shape, value.value) {
        case (.object(let fields), .object(let members)), (.objectOrArray(let fields, _), .object(let members)):
            let names = fields.map(\.name)
            for member in members {
                guard let field = fields.first(where: { $0.name == member.key }) else {
                    throw FixtureError(
                        .unknownField(member.key), line: member.line, column: member.column,
                        path: FixtureJSON.path(value.path, key: member.key),
                        message: "unknown field \"\(member.key)\"",
                        fix: FixtureError.choice(for: member.key, among: names))
                }
                try checkKeys(of: member.value, against: field.shape)
            }
        case (.map(let inner), .object(let members)):
            for member in members {
                // (Checked as a profile's `serviceData` keys are.)
                _ = try FixtureObject.uuid(
                    FixtureJSON(
                        value: .string(member.key), line: member.line, column: member.column,
                        path: FixtureJSON.path(value.path, key: member.key)))
                try checkKeys(of: member.value, against: inner)
            }
        case (.uuid, .string):
            _ = try FixtureObject.uuid(value)
        case (.array(let inner), .array(let elements)), (.objectOrArray(_, let inner), .array(let elements)):
            for element in elements { try checkKeys(of: element, against: inner) }
        default:
            break
        }
    }

    /// Checks that an expected value has a type its trace field can have (`null`, which
    /// expects the field absent, fits any): a value that never could match is an error in the
    /// file, not a failed expectation at run time.
    ///
    /// - Throws: ``FixtureError/Kind/wrongType(expected:)``.
    static func checkType(of value: FixtureJSON, for field: String) throws(FixtureError) {
        if case .null = value.value { return }
        switch field {
        case "ok":
            guard case .bool = value.value else {
                throw FixtureError.wrongType(value, expected: "true or false", example: "\"ok\": false")
            }
        case "step", "attError", "mtu", "maxWriteWithoutResponse", "maxWriteWithResponse", "attPDUs", "rssi":
            guard value.integer != nil else {
                throw FixtureError.wrongType(value, expected: "an integer", example: "\"\(field)\": 3")
            }
        case "time":
            guard case .string = value.value else {
                throw FixtureError.wrongType(value, expected: "a time as the trace prints it", example: "\"0.245s\"")
            }
            // Compared as the instant it names ("250ms" matches the trace's "0.25s").
            _ = try FixtureDuration.parse(value)
        case "state":
            guard case .string(let name) = value.value else {
                throw FixtureError.wrongType(value, expected: "a manager state", example: "\"poweredOn\"")
            }
            guard ManagerState(name: name) != nil else {
                throw FixtureError(
                    .unknownValue(name), at: value, message: "unknown manager state \"\(name)\"",
                    fix: FixtureError.choice(for: name, among: ManagerState.allCases.map(\.description)))
            }
        case "op":
            guard case .string(let name) = value.value else {
                throw FixtureError.wrongType(value, expected: "an op name", example: "\"read\"")
            }
            guard ScenarioStep.Operation.names.contains(name) else {
                throw FixtureError(
                    .unknownOp(name), at: value, message: "unknown op \"\(name)\"",
                    fix: FixtureError.choice(for: name, among: ScenarioStep.Operation.names))
            }
        case "value", "stored":
            guard case .string(let text) = value.value, isHex(text) else {
                throw FixtureError.wrongType(value, expected: "a string of hex digits", example: "\"0a1b\"")
            }
        case "received":
            guard case .array(let elements) = value.value,
                elements.allSatisfy({ if case .string(let text) = $0.value { isHex(text) } else { false } })
            else {
                throw FixtureError.wrongType(
                    value, expected: "an array of strings of hex digits", example: "[\"0a1b\"]")
            }
        case "error":
            switch value.value {
            case .string, .object: try checkError(value)
            default:
                throw FixtureError.wrongType(
                    value, expected: "an error's name or an object of its fields",
                    example: "\"writeNotPermitted\" or {\"domain\": \"att\", \"code\": 3}")
            }
        default:  // discovered, reason: structured values
            switch value.value {
            case .object(let members):
                // The error a central saw, in a disconnection's reason.
                if field == "reason", let central = members.first(where: { $0.key == "central" })?.value {
                    try checkError(central)
                }
            case .array: break
            default:
                throw FixtureError.wrongType(value, expected: "an object or an array", example: "{\"central\": null}")
            }
        }
    }

    /// Checks an expected error (a name, or an object of its fields) for names, domains and
    /// codes no trace shows; other types and keys are left to the field's checks.
    static func checkError(_ value: FixtureJSON) throws(FixtureError) {
        switch value.value {
        case .string: try checkErrorName(value, domain: nil)
        case .object(let members):
            // (Unknown keys are checked against the error's shape after this.)
            var domain: String?
            if let node = members.first(where: { $0.key == "domain" })?.value, !isNull(node) {
                guard case .string(let name) = node.value else {
                    throw FixtureError.wrongType(node, expected: "an error domain", example: "\"att\"")
                }
                guard TraceErrorNames.domains.contains(name) else {
                    throw FixtureError(
                        .unknownValue(name), at: node, message: "unknown error domain \"\(name)\"",
                        fix: FixtureError.choice(for: name, among: TraceErrorNames.domains))
                }
                domain = name
            }
            if let node = members.first(where: { $0.key == "code" })?.value, !isNull(node), node.integer == nil {
                throw FixtureError.wrongType(node, expected: "an integer", example: "\"code\": 3")
            }
            if let node = members.first(where: { $0.key == "name" })?.value, !isNull(node) {
                guard case .string = node.value else {
                    throw FixtureError.wrongType(node, expected: "an error's name", example: "\"writeNotPermitted\"")
                }
                try checkErrorName(node, domain: domain)
            }
        default: break
        }
    }

    private static func isNull(_ node: FixtureJSON) -> Bool {
        if case .null = node.value { return true }
        return false
    }

    /// Checks that an expected error name (a string node) is one a trace can show, in `domain`
    /// when given.
    ///
    /// - Throws: ``FixtureError/Kind/unknownValue(_:)``, suggesting the nearest name.
    static func checkErrorName(_ node: FixtureJSON, domain: String?) throws(FixtureError) {
        guard case .string(let name) = node.value else { return }
        let known = TraceErrorNames.names(domain: domain)
        guard !known.contains(name) else { return }
        let message =
            domain.map { "\"\(name)\" is not the name of an error of domain \"\($0)\"" }
            ?? "unknown error name \"\(name)\""
        let fix =
            FixtureError.suggestion(for: name, among: known).map { "did you mean \"\($0)\"? " } ?? ""
        throw FixtureError(
            .unknownValue(name), at: node, message: message,
            fix: fix + "use an ATT error's name (\"readNotPermitted\"), a CoreBluetooth error's (\"connectionFailed\") "
                + "or the kit's (\"notPoweredOn\"), as the trace prints them")
    }

    /// The mismatches between this expectation and a record, one message per field.
    public func mismatches(in record: ScenarioTrace.Record) -> [String] {
        let actual = record.fields
        return fields.compactMap { member in
            let found = actual.first { $0.key == member.key }?.value
            let shape = Shape.field(named: member.key) ?? .value
            guard !Self.matches(member.value, found, shape: shape) else { return nil }
            let shown = found.map { $0.json } ?? "nothing"
            return "expected \(member.key) \(Self.render(member.value)), got \(shown)"
        }
    }

    /// Whether an expected value matches a record's, the trace field's `shape` saying where
    /// strings are UUIDs (compared as the UUIDs they name: `"180d"`, `"0000180D"` and the full
    /// 128-bit form are one UUID).
    static func matches(_ expected: FixtureJSON, _ actual: TraceValue?, shape: Shape = .value) -> Bool {
        guard let actual else {
            if case .null = expected.value { return true }
            return false
        }
        switch (expected.value, actual) {
        case (.null, .null): return true
        case (.bool(let a), .bool(let b)): return a == b
        case (.number, .int(let b)): return expected.integer == b
        case (.string(let a), .string(let b)):
            if case .uuid = shape { return sameUUID(a, b) }
            if case .duration = shape, case .success(let left) = FixtureDuration.parse(text: a),
                case .success(let right) = FixtureDuration.parse(text: b)
            {
                return left == right
            }
            return a == b || (a.lowercased() == b.lowercased() && isHex(b))
        case (.string(let name), .object(let members)):
            return members.contains { $0.key == "name" && $0.value == .string(name) }
        case (.array(let a), .array(let b)):
            return a.count == b.count && zip(a, b).allSatisfy { matches($0, $1, shape: shape.element) }
        case (.object(let expectedMembers), .object(let members)):
            return expectedMembers.allSatisfy { member in
                if case .map(let inner) = shape {
                    return matches(member.value, members.first { sameUUID(member.key, $0.key) }?.value, shape: inner)
                }
                return matches(
                    member.value, members.first { $0.key == member.key }?.value, shape: shape.field(member.key))
            }
        default: return false
        }
    }

    /// Whether two strings name one UUID (else, when either is no UUID, whether they are equal).
    static func sameUUID(_ a: String, _ b: String) -> Bool {
        guard let first = try? BluetoothUUID(string: a), let second = try? BluetoothUUID(string: b) else {
            return a == b
        }
        return first == second
    }

    static func isHex(_ text: String) -> Bool {
        text.allSatisfy { $0.isHexDigit }
    }

    /// The expected value as compact JSON, for messages.
    static func render(_ node: FixtureJSON) -> String {
        switch node.value {
        case .null: "null"
        case .bool(let value): value ? "true" : "false"
        case .number(let text): text
        case .string(let text): TraceValue.string(text).json
        case .array(let elements): "[" + elements.map(render).joined(separator: ",") + "]"
        case .object(let members):
            "{" + members.map { TraceValue.string($0.key).json + ":" + render($0.value) }.joined(separator: ",") + "}"
        }
    }
}

/// The error names a trace shows, by domain (see ``ScenarioTrace/TraceError``).
enum TraceErrorNames {
    /// The domains, as the trace spells them.
    static let domains = ["att", "cb", "kit"]

    /// Every name of `domain` (of every domain when `nil`): an ATT code's for each of the 256
    /// (`application(0x80)` and `reserved(0x20)` for those without one of their own), a
    /// CoreBluetooth error's, the kit's.
    static func names(domain: String?) -> [String] {
        let att = (0...255).map { ATTError.Code(rawValue: UInt8($0)).name }
        let cb = CoreBluetoothError.Code.allCases.map(\.description)
        let kit = ScenarioTrace.TraceError.kitNames
        switch domain {
        case "att": return att
        case "cb": return cb
        case "kit": return kit
        default: return att + cb + kit
        }
    }
}
