#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

extension FixtureJSON {
    /// Parses a UTF-8 JSON document (RFC 8259), recording every node's position and path.
    ///
    /// A leading UTF-8 byte order mark is skipped. Duplicate keys, trailing commas,
    /// comments, control characters in strings, invalid UTF-8, truncated input and nesting
    /// deeper than ``maximumDepth`` are rejected.
    ///
    /// - Throws: ``FixtureError`` of kind ``FixtureError/Kind/invalidJSON`` at the exact
    ///   line and column of the problem.
    public static func parse(_ data: Data) throws(FixtureError) -> FixtureJSON {
        var parser = FixtureJSONParser(bytes: Array(data))
        return try parser.parseDocument()
    }
}

/// The reader behind ``FixtureJSON/parse(_:)``: a byte cursor with line and column
/// tracking and an explicit stack of open containers, so nesting never recurses.
struct FixtureJSONParser {
    /// An array or object being read.
    struct Frame {
        var isObject: Bool
        var line: Int
        var column: Int
        var path: String
        var elements: [FixtureJSON] = []
        var members: [FixtureJSON.Member] = []
        /// Keys seen so far, with where each was first written.
        var keys: [String: (line: Int, column: Int)] = [:]
        /// The key whose value is being read, with its position.
        var pendingKey: (key: String, line: Int, column: Int)?
    }

    let bytes: [UInt8]
    var index = 0
    var line = 1
    var column = 1

    init(bytes: [UInt8]) {
        self.bytes = bytes
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { index = 3 }
    }

    var current: UInt8? { index < bytes.count ? bytes[index] : nil }

    /// Moves past one byte, keeping the line and column (in Unicode scalars) up to date.
    mutating func advance() {
        let byte = bytes[index]
        index += 1
        if byte == UInt8(ascii: "\n") {
            if index >= 2, bytes[index - 2] == UInt8(ascii: "\r") { return }
            line += 1
            column = 1
        } else if byte == UInt8(ascii: "\r") {
            line += 1
            column = 1
        } else if byte & 0xC0 != 0x80 {
            column += 1
        }
    }

    mutating func skipWhitespace() {
        while let byte = current, byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D { advance() }
    }

    func error(_ message: String, fix: String, line: Int? = nil, column: Int? = nil) -> FixtureError {
        FixtureError(
            .invalidJSON, line: line ?? self.line, column: column ?? self.column, path: "", message: message,
            fix: fix)
    }

    /// The error for the byte at the cursor when something else was expected.
    func unexpected(expected: String) -> FixtureError {
        guard let byte = current else {
            // Nothing but white space (and a byte order mark): an empty file, not a cut one.
            let start = bytes.starts(with: [0xEF, 0xBB, 0xBF]) ? 3 : 0
            if bytes[start...].allSatisfy({ [0x20, 0x09, 0x0A, 0x0D].contains($0) }) {
                return error("the document is empty", fix: "write the JSON object the file is for")
            }
            return error(
                "unexpected end of input; expected \(expected)",
                fix: "the document is truncated: close every string, array and object")
        }
        switch byte {
        case UInt8(ascii: "/"):
            return error("comments are not allowed in JSON", fix: "remove the comment")
        case UInt8(ascii: "'"):
            return error("strings must be in double quotes", fix: "replace the single quotes with \"")
        default:
            return error("unexpected \(describe(byte)); expected \(expected)", fix: "check the syntax here")
        }
    }

    /// A byte as shown in messages: the character in quotes, or its code.
    func describe(_ byte: UInt8) -> String {
        if byte >= 0x21, byte < 0x7F { return "character \"\(Character(UnicodeScalar(byte)))\"" }
        if byte < 0x80 { return "character U+" + String.hex4(UInt32(byte)) }
        var copy = self
        if let scalar = copy.decodeScalar() { return "character \"\(Character(scalar))\"" }
        return "invalid UTF-8 byte 0x" + String(byte, radix: 16, uppercase: true)
    }

    mutating func parseDocument() throws(FixtureError) -> FixtureJSON {
        var stack: [Frame] = []
        while true {
            skipWhitespace()
            let path = stack.last.map(Self.childPath) ?? ""
            guard var value = try parseValueStart(path: path, stack: &stack) else { continue }
            // Attach the finished value to its container; close containers that end here.
            while true {
                guard !stack.isEmpty else {
                    skipWhitespace()
                    guard current == nil else {
                        if current == UInt8(ascii: "/") { throw unexpected(expected: "the end of the document") }
                        throw error("unexpected content after the document", fix: "remove it, or wrap both in an array")
                    }
                    return value
                }
                let top = stack.count - 1
                if stack[top].isObject {
                    let key = stack[top].pendingKey!
                    stack[top].members.append(
                        FixtureJSON.Member(key: key.key, line: key.line, column: key.column, value: value))
                    stack[top].pendingKey = nil
                } else {
                    stack[top].elements.append(value)
                }
                skipWhitespace()
                let close = UInt8(ascii: stack[top].isObject ? "}" : "]")
                if current == UInt8(ascii: ",") {
                    let comma = (line, column)
                    advance()
                    skipWhitespace()
                    if current == close {
                        throw error(
                            "trailing comma before \"\(Character(UnicodeScalar(close)))\"",
                            fix: "remove the comma after the last \(stack[top].isObject ? "member" : "element")",
                            line: comma.0, column: comma.1)
                    }
                    if stack[top].isObject { try readKey(into: &stack[top]) }
                    break
                } else if current == close {
                    advance()
                    value = Self.close(stack.removeLast())
                } else {
                    throw unexpected(expected: "\",\" or \"\(Character(UnicodeScalar(close)))\"")
                }
            }
        }
    }

    /// Reads the start of a value at the cursor: a scalar (returned), or an opening bracket
    /// (pushed; an empty container is returned at once, otherwise `nil`).
    mutating func parseValueStart(path: String, stack: inout [Frame]) throws(FixtureError) -> FixtureJSON? {
        let (startLine, startColumn) = (line, column)
        func node(_ value: FixtureJSON.Value) -> FixtureJSON {
            FixtureJSON(value: value, line: startLine, column: startColumn, path: path)
        }
        let expected = "a value (object, array, string, number, true, false or null)"
        guard let byte = current else { throw unexpected(expected: expected) }
        switch byte {
        case UInt8(ascii: "{"), UInt8(ascii: "["):
            let isObject = byte == UInt8(ascii: "{")
            guard stack.count < FixtureJSON.maximumDepth else {
                throw error(
                    "nesting deeper than \(FixtureJSON.maximumDepth) levels", fix: "flatten the document")
            }
            advance()
            var frame = Frame(isObject: isObject, line: startLine, column: startColumn, path: path)
            skipWhitespace()
            if current == UInt8(ascii: isObject ? "}" : "]") {
                advance()
                return Self.close(frame)
            }
            if isObject { try readKey(into: &frame) }
            stack.append(frame)
            return nil
        case UInt8(ascii: "\""):
            return node(.string(try parseString()))
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            return node(.number(try parseNumber()))
        case UInt8(ascii: "t"):
            try parseLiteral("true")
            return node(.bool(true))
        case UInt8(ascii: "f"):
            try parseLiteral("false")
            return node(.bool(false))
        case UInt8(ascii: "n"):
            try parseLiteral("null")
            return node(.null)
        default:
            throw unexpected(expected: expected)
        }
    }

    /// Reads `"key"` and `:` into an object frame, rejecting duplicate keys.
    mutating func readKey(into frame: inout Frame) throws(FixtureError) {
        guard current == UInt8(ascii: "\"") else { throw unexpected(expected: "a key in double quotes") }
        let (keyLine, keyColumn) = (line, column)
        let key = try parseString()
        if let first = frame.keys[key] {
            throw error(
                "duplicate key \"\(key)\" (first at line \(first.line), column \(first.column))",
                fix: "remove one of them", line: keyLine, column: keyColumn)
        }
        frame.keys[key] = (keyLine, keyColumn)
        skipWhitespace()
        guard current == UInt8(ascii: ":") else { throw unexpected(expected: "\":\" after the key") }
        advance()
        frame.pendingKey = (key, keyLine, keyColumn)
    }

    mutating func parseLiteral(_ word: String) throws(FixtureError) {
        let (startLine, startColumn) = (line, column)
        for expected in word.utf8 {
            guard current == expected else {
                throw error(
                    "invalid literal; expected \(word)", fix: "write true, false or null in lowercase",
                    line: startLine, column: startColumn)
            }
            advance()
        }
    }

    static func childPath(of frame: Frame) -> String {
        if frame.isObject { return FixtureJSON.path(frame.path, key: frame.pendingKey?.key ?? "") }
        return FixtureJSON.path(frame.path, index: frame.elements.count)
    }

    static func close(_ frame: Frame) -> FixtureJSON {
        FixtureJSON(
            value: frame.isObject ? .object(frame.members) : .array(frame.elements), line: frame.line,
            column: frame.column, path: frame.path)
    }
}

extension String {
    /// A number as at least four uppercase hexadecimal digits, e.g. `000A`.
    static func hex4(_ value: UInt32) -> String {
        let digits = String(value, radix: 16, uppercase: true)
        return String(repeating: "0", count: Swift.max(0, 4 - digits.count)) + digits
    }
}
