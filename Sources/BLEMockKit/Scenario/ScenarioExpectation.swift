import BLECore

/// What a step's trace record must show: the `"expect"` object, field by field.
///
/// Matching is by value: numbers, strings and Booleans must be equal (hex strings ignore
/// case; UUIDs, in `discovered` and `reason`, match in any spelling of the same UUID:
/// `"180d"`, `"0000180D"`, `"0000180D-0000-1000-8000-00805F9B34FB"`); an expected object matches when each of its fields matches (so
/// `{"error": {"code": 3}}` need not spell out the domain); an expected string matches an
/// error by its name (`{"error": "writeNotPermitted"}`); arrays match element by element;
/// `null` matches a field the record does not have. A value of a type its field never has
/// (`{"ok": "yes"}`, `{"value": {"hex": "01"}}`: the trace prints bytes as a hex string), and a
/// key of an expected object that the field's objects never have (`{"reason": {"centrl":
/// null}}`), are errors in the file, reported with their position when the scenario is read.
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
        case "state":
            guard case .string = value.value else {
                throw FixtureError.wrongType(value, expected: "a manager state", example: "\"poweredOn\"")
            }
        case "op":
            guard case .string = value.value else {
                throw FixtureError.wrongType(value, expected: "an op name", example: "\"read\"")
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
            case .string, .object: break
            default:
                throw FixtureError.wrongType(
                    value, expected: "an error's name or an object of its fields",
                    example: "\"writeNotPermitted\" or {\"domain\": \"att\", \"code\": 3}")
            }
        default:  // discovered, reason: structured values
            switch value.value {
            case .object, .array: break
            default:
                throw FixtureError.wrongType(value, expected: "an object or an array", example: "{\"central\": null}")
            }
        }
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
