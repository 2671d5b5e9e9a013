import BLECore

/// A JSON object read field by field against the fields a format defines.
///
/// Creating one checks that the node is an object and that every key is allowed, so an
/// unknown or misspelt field is an error at its own position rather than silently ignored.
/// The scenario engine reads its objects the same way.
///
/// ```swift
/// let object = try FixtureObject(node, fields: ["uuid", "value"], example: #"{"uuid": "2901"}"#)
/// let uuid = try object.uuid("uuid")
/// ```
struct FixtureObject {
    /// The object node.
    let node: FixtureJSON
    /// Its members by key.
    private let values: [String: FixtureJSON]

    /// Reads `node` as an object whose keys must all be in `fields`.
    ///
    /// - Parameter example: a short example of a valid object, for the wrong-type message.
    /// - Throws: ``FixtureError/Kind/wrongType(expected:)`` if it is not an object,
    ///   ``FixtureError/Kind/unknownField(_:)`` at the first key not in `fields`.
    init(_ node: FixtureJSON, fields: [String], example: String) throws(FixtureError) {
        guard let members = node.members else {
            throw FixtureError.wrongType(node, expected: "an object", example: example)
        }
        for member in members where !fields.contains(member.key) {
            throw FixtureError(
                .unknownField(member.key), line: member.line, column: member.column,
                path: FixtureJSON.path(node.path, key: member.key), message: "unknown field \"\(member.key)\"",
                fix: FixtureError.choice(for: member.key, among: fields))
        }
        self.node = node
        var values: [String: FixtureJSON] = [:]
        for member in members { values[member.key] = member.value }
        self.values = values
    }

    /// The value of a field, if present.
    subscript(_ key: String) -> FixtureJSON? { values[key] }

    /// The value of a required field.
    ///
    /// - Throws: ``FixtureError/Kind/missingField(_:)`` at the object's opening brace.
    func required(_ key: String, example: String) throws(FixtureError) -> FixtureJSON {
        guard let value = values[key] else {
            throw FixtureError(
                .missingField(key), at: node, message: "missing field \"\(key)\"",
                fix: "add it, e.g. \"\(key)\": \(example)")
        }
        return value
    }

    /// An optional string field.
    func string(_ key: String, example: String = "\"text\"") throws(FixtureError) -> String? {
        guard let value = values[key] else { return nil }
        guard let string = value.string else {
            throw FixtureError.wrongType(value, expected: "a string", example: example)
        }
        return string
    }

    /// An optional Boolean field.
    func bool(_ key: String) throws(FixtureError) -> Bool? {
        guard let value = values[key] else { return nil }
        guard let bool = value.bool else {
            throw FixtureError.wrongType(value, expected: "a boolean", example: "true or false")
        }
        return bool
    }

    /// An optional integer field whose value must lie in `range`.
    func integer(_ key: String, in range: ClosedRange<Int>, hint: String = "") throws(FixtureError) -> Int? {
        guard let value = values[key] else { return nil }
        return try Self.integer(value, what: key, in: range, hint: hint)
    }

    /// An optional integer field brought into `range`: any integer is accepted, and one outside
    /// the range counts as the range's nearer end (an ATT_MTU preference of 600 is 517, one of
    /// 10 is 23), as the shared format clamps the negotiated ATT_MTU.
    ///
    /// - Throws: ``FixtureError/Kind/wrongType(expected:)`` when the value is not an integer.
    func clampedInteger(_ key: String, to range: ClosedRange<Int>) throws(FixtureError) -> Int? {
        guard let value = values[key] else { return nil }
        if let integer = value.integer { return min(max(integer, range.lowerBound), range.upperBound) }
        // An integer too large for `Int` (`1e30`) is past either end.
        if case .number(let text) = value.value, let double = Double(text), double.rounded() == double {
            return double < 0 ? range.lowerBound : range.upperBound
        }
        let fix = "a whole number (one outside \(range.lowerBound)…\(range.upperBound) counts as the nearer end)"
        if case .number(let text) = value.value {
            throw FixtureError(
                .wrongType(expected: "an integer"), at: value, message: "expected an integer, found \(text)",
                fix: "write " + fix)
        }
        throw FixtureError.wrongType(value, expected: "an integer", example: fix)
    }

    /// An integer node whose value must lie in `range`.
    static func integer(
        _ value: FixtureJSON, what: String, in range: ClosedRange<Int>, hint: String = ""
    ) throws(FixtureError) -> Int {
        guard let integer = value.integer else {
            if case .number(let text) = value.value {
                throw FixtureError(
                    .wrongType(expected: "an integer"), at: value, message: "expected an integer, found \(text)",
                    fix: "write a whole number in \(range.lowerBound)…\(range.upperBound)")
            }
            throw FixtureError.wrongType(
                value, expected: "an integer", example: "a whole number in \(range.lowerBound)…\(range.upperBound)")
        }
        guard range.contains(integer) else {
            throw FixtureError.outOfRange(
                value, what: what, value: "\(integer)", range: "\(range.lowerBound)…\(range.upperBound)", hint: hint)
        }
        return integer
    }

    /// An optional array field.
    func array(_ key: String, example: String) throws(FixtureError) -> [FixtureJSON]? {
        guard let value = values[key] else { return nil }
        guard let elements = value.elements else {
            throw FixtureError.wrongType(value, expected: "an array", example: example)
        }
        return elements
    }

    /// A UUID string node.
    ///
    /// - Throws: ``FixtureError/Kind/badUUID(_:)`` carrying the parse error's message.
    static func uuid(_ value: FixtureJSON) throws(FixtureError) -> BluetoothUUID {
        guard let string = value.string else {
            throw FixtureError.wrongType(value, expected: "a UUID string", example: "\"180D\"")
        }
        do {
            return try BluetoothUUID(string: string)
        } catch {
            throw FixtureError(
                .badUUID(error), at: value,
                message: error.description.hasSuffix(".") ? String(error.description.dropLast()) : error.description,
                fix: "write a 16-bit (\"180D\"), 32-bit (\"0000180D\") or 128-bit UUID")
        }
    }

    /// An optional array of UUID strings.
    func uuids(_ key: String) throws(FixtureError) -> [BluetoothUUID]? {
        guard let elements = try array(key, example: "[\"180D\"]") else { return nil }
        var result: [BluetoothUUID] = []
        for element in elements { result.append(try Self.uuid(element)) }
        return result
    }
}
