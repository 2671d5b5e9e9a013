extension FixtureJSONParser {
    /// Reads a string starting at its opening quote and returns it with escapes resolved.
    mutating func parseString() throws(FixtureError) -> String {
        let (startLine, startColumn) = (line, column)
        advance()  // the opening quote
        var utf8: [UInt8] = []
        while true {
            guard let byte = current else {
                throw error(
                    "unterminated string (it starts at line \(startLine), column \(startColumn))",
                    fix: "close the string with \"")
            }
            switch byte {
            case UInt8(ascii: "\""):
                advance()
                return String(decoding: utf8, as: UTF8.self)
            case UInt8(ascii: "\\"):
                let scalar = try parseEscape()
                utf8.append(contentsOf: String(Character(scalar)).utf8)
            case 0x00..<0x20:
                throw error(
                    "control character U+\(String.hex4(UInt32(byte))) in a string",
                    fix: "escape it (\\n, \\t, \\r or \\u\(String.hex4(UInt32(byte))))")
            case 0x20..<0x80:
                utf8.append(byte)
                advance()
            default:
                let start = index
                guard decodeScalar() != nil else {
                    throw error("invalid UTF-8 in a string", fix: "save the file as UTF-8")
                }
                utf8.append(contentsOf: bytes[start..<index])
            }
        }
    }

    /// Reads an escape sequence starting at its backslash; `\u` escapes may form a
    /// surrogate pair.
    mutating func parseEscape() throws(FixtureError) -> Unicode.Scalar {
        let (escapeLine, escapeColumn) = (line, column)
        advance()  // the backslash
        guard let byte = current else {
            throw error("unexpected end of input in an escape", fix: "the document is truncated: close the string")
        }
        let simple: [UInt8: Unicode.Scalar] = [
            UInt8(ascii: "\""): "\"", UInt8(ascii: "\\"): "\\", UInt8(ascii: "/"): "/", UInt8(ascii: "b"): "\u{08}",
            UInt8(ascii: "f"): "\u{0C}", UInt8(ascii: "n"): "\n", UInt8(ascii: "r"): "\r", UInt8(ascii: "t"): "\t",
        ]
        if let scalar = simple[byte] {
            advance()
            return scalar
        }
        guard byte == UInt8(ascii: "u") else {
            throw error(
                "invalid escape \"\\\(describeEscape(byte))\"",
                fix: "use one of \\\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX", line: escapeLine, column: escapeColumn)
        }
        advance()
        let first = try parseHex4(escapeLine: escapeLine, escapeColumn: escapeColumn)
        switch first {
        case 0xD800...0xDBFF:
            let (lowLine, lowColumn) = (line, column)
            guard current == UInt8(ascii: "\\"), index + 1 < bytes.count, bytes[index + 1] == UInt8(ascii: "u") else {
                throw error(
                    "unpaired high surrogate \\u\(String.hex4(first))",
                    fix: "follow it with a low surrogate \\uDC00…\\uDFFF, or escape the character itself",
                    line: escapeLine, column: escapeColumn)
            }
            advance()
            advance()
            let second = try parseHex4(escapeLine: lowLine, escapeColumn: lowColumn)
            guard (0xDC00...0xDFFF).contains(second) else {
                throw error(
                    "\\u\(String.hex4(second)) is not a low surrogate after \\u\(String.hex4(first))",
                    fix: "use a low surrogate \\uDC00…\\uDFFF", line: lowLine, column: lowColumn)
            }
            return Unicode.Scalar(0x10000 + ((first - 0xD800) << 10) + (second - 0xDC00))!
        case 0xDC00...0xDFFF:
            throw error(
                "unpaired low surrogate \\u\(String.hex4(first))",
                fix: "precede it with a high surrogate \\uD800…\\uDBFF", line: escapeLine, column: escapeColumn)
        default:
            return Unicode.Scalar(first)!
        }
    }

    func describeEscape(_ byte: UInt8) -> String {
        byte >= 0x21 && byte < 0x7F ? String(Character(UnicodeScalar(byte))) : "U+" + String.hex4(UInt32(byte))
    }

    /// Reads the four hex digits of a `\u` escape.
    mutating func parseHex4(escapeLine: Int, escapeColumn: Int) throws(FixtureError) -> UInt32 {
        var value: UInt32 = 0
        for _ in 0..<4 {
            guard let byte = current, let digit = Character(UnicodeScalar(byte)).hexDigitValue, byte < 0x80 else {
                throw error(
                    "\\u must be followed by four hexadecimal digits", fix: "write it as \\uXXXX, e.g. \\u00E9",
                    line: escapeLine, column: escapeColumn)
            }
            value = value << 4 | UInt32(digit)
            advance()
        }
        return value
    }

    /// Reads a number as written, checking RFC 8259's grammar:
    /// `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`.
    mutating func parseNumber() throws(FixtureError) -> String {
        let start = index
        func isDigit(_ byte: UInt8?) -> Bool { byte.map { $0 >= 0x30 && $0 <= 0x39 } ?? false }
        if current == UInt8(ascii: "-") { advance() }
        guard isDigit(current) else { throw unexpected(expected: "a digit after \"-\"") }
        if current == UInt8(ascii: "0") {
            advance()
            if isDigit(current) {
                throw error("leading zeros are not allowed in numbers", fix: "remove the leading zero")
            }
        } else {
            while isDigit(current) { advance() }
        }
        if current == UInt8(ascii: ".") {
            advance()
            guard isDigit(current) else { throw unexpected(expected: "a digit after the decimal point") }
            while isDigit(current) { advance() }
        }
        if current == UInt8(ascii: "e") || current == UInt8(ascii: "E") {
            advance()
            if current == UInt8(ascii: "+") || current == UInt8(ascii: "-") { advance() }
            guard isDigit(current) else { throw unexpected(expected: "a digit in the exponent") }
            while isDigit(current) { advance() }
        }
        return String(decoding: bytes[start..<index], as: UTF8.self)
    }

    /// Decodes one UTF-8 encoded scalar of two to four bytes at the cursor and moves past it;
    /// returns `nil` (leaving the cursor) for malformed, overlong or surrogate encodings.
    mutating func decodeScalar() -> Unicode.Scalar? {
        let lead = bytes[index]
        let (count, minimum): (Int, UInt32)
        switch lead {
        case 0xC2...0xDF: (count, minimum) = (2, 0x80)
        case 0xE0...0xEF: (count, minimum) = (3, 0x800)
        case 0xF0...0xF4: (count, minimum) = (4, 0x10000)
        default: return nil
        }
        guard index + count <= bytes.count else { return nil }
        var value = UInt32(lead) & (0xFF >> (count + 1))
        for offset in 1..<count {
            let byte = bytes[index + offset]
            guard byte & 0xC0 == 0x80 else { return nil }
            value = value << 6 | UInt32(byte & 0x3F)
        }
        guard value >= minimum, let scalar = Unicode.Scalar(value) else { return nil }
        for _ in 0..<count { advance() }
        return scalar
    }
}
