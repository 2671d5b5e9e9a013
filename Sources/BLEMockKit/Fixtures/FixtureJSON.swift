#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A JSON value read from a fixture or scenario file, with where it came from.
///
/// Foundation's `JSONDecoder` cannot say where a value is in the file, nor reject fields it
/// does not know, so fixtures are read with this strict RFC 8259 reader instead. Every node
/// carries its 1-based ``line`` and ``column`` (counted in Unicode scalars) and its ``path``
/// from the document root, such as `services[0].characteristics[2].uuid`, so error messages
/// can point at the exact spot:
///
/// ```swift
/// let document = try FixtureJSON.parse(Data(#"{"rssi": -60}"#.utf8))
/// let rssi = document.member("rssi")
/// // rssi?.line == 1, rssi?.column == 10, rssi?.path == "rssi"
/// ```
///
/// The reader rejects everything RFC 8259 does not allow — trailing commas, comments, single
/// quotes, control characters in strings, unpaired surrogates, invalid UTF-8, leading zeros,
/// content after the document — and also duplicate object keys and nesting deeper than
/// ``maximumDepth``. It never recurses, so adversarial input cannot overflow the stack.
public struct FixtureJSON: Hashable, Sendable {
    /// The deepest nesting of arrays and objects the reader accepts.
    public static let maximumDepth = 512

    /// A JSON value; containers hold nodes, which carry their own positions.
    public enum Value: Hashable, Sendable {
        /// An object, with its members in file order (keys are unique).
        case object([Member])
        /// An array.
        case array([FixtureJSON])
        /// A string, with escapes resolved.
        case string(String)
        /// A number, kept as written (e.g. `-1.5e3`) so no precision is lost; see
        /// ``FixtureJSON/integer`` and ``FixtureJSON/double``.
        case number(String)
        /// `true` or `false`.
        case bool(Bool)
        /// `null`.
        case null
    }

    /// A member of an object: a key, where the key is written, and the value.
    public struct Member: Hashable, Sendable {
        /// The key, with escapes resolved.
        public var key: String
        /// The line of the key's opening quote.
        public var line: Int
        /// The column of the key's opening quote.
        public var column: Int
        /// The member's value.
        public var value: FixtureJSON

        /// Creates a member.
        public init(key: String, line: Int, column: Int, value: FixtureJSON) {
            self.key = key
            self.line = line
            self.column = column
            self.value = value
        }
    }

    /// The value.
    public var value: Value
    /// The 1-based line where the value starts.
    public var line: Int
    /// The 1-based column where the value starts, in Unicode scalars.
    public var column: Int
    /// Where the value is in the document: `""` for the root, then `.key` and `[index]`
    /// steps (`services[0].uuid`); keys that are not identifiers are quoted (`serviceData["180D"]`).
    public var path: String

    /// Creates a node.
    public init(value: Value, line: Int, column: Int, path: String) {
        self.value = value
        self.line = line
        self.column = column
        self.path = path
    }

    /// The name of the value's JSON type, for messages: `object`, `array`, `string`,
    /// `number`, `boolean` or `null`.
    public var typeName: String {
        switch value {
        case .object: return "object"
        case .array: return "array"
        case .string: return "string"
        case .number: return "number"
        case .bool: return "boolean"
        case .null: return "null"
        }
    }

    /// The members, if the value is an object.
    public var members: [Member]? {
        if case .object(let members) = value { return members }
        return nil
    }

    /// The elements, if the value is an array.
    public var elements: [FixtureJSON]? {
        if case .array(let elements) = value { return elements }
        return nil
    }

    /// The string, if the value is a string.
    public var string: String? {
        if case .string(let string) = value { return string }
        return nil
    }

    /// The Boolean, if the value is `true` or `false`.
    public var bool: Bool? {
        if case .bool(let bool) = value { return bool }
        return nil
    }

    /// The number as an `Int`, if the value is a number with an exact integer value that
    /// fits (`42`, `-8`, `1e3` and `2.0` do; `1.5` and `1e30` do not).
    public var integer: Int? {
        guard case .number(let text) = value else { return nil }
        if let exact = Int(text) { return exact }
        guard let double = Double(text), double.rounded() == double, abs(double) <= 9_007_199_254_740_992 else {
            return nil
        }
        return Int(double)
    }

    /// The number as a `UInt64`, if it is a whole number from 0 to 2^64 − 1 in any JSON
    /// spelling (`42`, `42.0`, `4.2e1`), read exactly: through a `Double` a number above 2^53
    /// (a seed) would be rounded.
    public var unsignedInteger: UInt64? {
        guard case .number(let text) = value else { return nil }
        if let exact = UInt64(text) { return exact }
        var mantissa = Substring(text)
        var exponent = 0
        if let marker = text.firstIndex(where: { $0 == "e" || $0 == "E" }) {
            guard let parsed = Int(text[text.index(after: marker)...]) else { return nil }
            exponent = parsed
            mantissa = text[..<marker]
        }
        let negative = mantissa.hasPrefix("-")
        if negative { mantissa = mantissa.dropFirst() }
        let parts = mantissa.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
        let digits = parts.joined()
        guard !digits.isEmpty, digits.allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
        let significant = digits.drop { $0 == "0" }
        // Zero in any spelling (`0.0`, `-0`, `0e5`).
        guard !significant.isEmpty else { return 0 }
        // (Past these exponents a number that is not zero is too large, or not whole.)
        guard !negative, (-100...100).contains(exponent) else { return nil }
        // Where the decimal point falls in `digits`; a whole number has only zeros after it.
        let point = parts[0].count + exponent
        let leadingZeros = digits.count - significant.count
        // (2^64 − 1 has 20 digits: a point further right overflows, one left of the first
        // significant digit leaves a fraction.)
        guard point > leadingZeros, point - leadingZeros <= 20 else { return nil }
        let whole = String(significant.prefix(point - leadingZeros))
        let fraction = significant.dropFirst(point - leadingZeros)
        guard fraction.allSatisfy({ $0 == "0" }) else { return nil }
        return UInt64(whole + String(repeating: "0", count: max(0, point - leadingZeros - whole.count)))
    }

    /// The number as a `Double`, if the value is a number.
    public var double: Double? {
        guard case .number(let text) = value else { return nil }
        return Double(text)
    }

    /// The value of the member named `key`, if the value is an object that has one.
    public func member(_ key: String) -> FixtureJSON? {
        members?.first { $0.key == key }?.value
    }

    /// The path of a member `key` of the value at `path`.
    static func path(_ path: String, key: String) -> String {
        let isIdentifier =
            key.first.map { $0.isLetter || $0 == "_" } == true
            && key.allSatisfy { ($0.isLetter || $0.isNumber || $0 == "_") && $0.isASCII }
        if isIdentifier { return path.isEmpty ? key : path + "." + key }
        var escaped = ""
        for character in key {
            if character == "\\" || character == "\"" { escaped.append("\\") }
            escaped.append(character)
        }
        return path + "[\"" + escaped + "\"]"
    }

    /// The path of element `index` of the array at `path`.
    static func path(_ path: String, index: Int) -> String {
        path + "[\(index)]"
    }
}
