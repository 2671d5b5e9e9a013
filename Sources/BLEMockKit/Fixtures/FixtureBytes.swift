#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The byte values of fixture and scenario files: one-field objects naming how the bytes
/// are written.
///
/// | form | bytes |
/// | --- | --- |
/// | `{"hex": "0a1B"}` | the bytes of an even number of hex digits, any case, no spaces or `0x` |
/// | `{"utf8": "Hi"}` | the string's UTF-8 encoding |
/// | `{"zeros": N}` | N zero bytes |
/// | `{"pattern": N}` | N bytes counting up, byte `i` being `i % 256` |
///
/// Every form yields at most ``maximumCount`` bytes. Shared by peripheral profiles (static
/// values, descriptors, advertisement data) and scenario steps (`write`, `notify`, ...).
public enum FixtureBytes {
    /// The most bytes a byte value may hold (64 KiB), enough for any transport test.
    public static let maximumCount = 65_536

    /// The forms a byte value can take, as the keys of its object.
    public static let forms = ["hex", "utf8", "zeros", "pattern"]

    /// Reads a byte value node.
    ///
    /// - Throws: ``FixtureError`` of kind ``FixtureError/Kind/badByteValue`` for a malformed
    ///   value, ``FixtureError/Kind/unknownField(_:)`` for an unknown form,
    ///   ``FixtureError/Kind/valueOutOfRange`` for a count beyond ``maximumCount``, or
    ///   ``FixtureError/Kind/wrongType(expected:)``.
    public static func parse(_ node: FixtureJSON) throws(FixtureError) -> Data {
        let example = "{\"hex\": \"0102\"}"
        let object = try FixtureObject(node, fields: forms, example: example)
        let present = forms.filter { object[$0] != nil }
        guard present.count == 1, let form = present.first, let value = object[form] else {
            let found = present.isEmpty ? "has none" : "has " + present.map { "\"\($0)\"" }.joined(separator: " and ")
            throw FixtureError(
                .badByteValue, at: node,
                message: "a byte value needs exactly one of hex, utf8, zeros or pattern; it \(found)",
                fix: "write e.g. \(example), {\"utf8\": \"text\"}, {\"zeros\": 4} or {\"pattern\": 16}")
        }
        switch form {
        case "hex":
            guard let text = value.string else {
                throw FixtureError.wrongType(value, expected: "a string of hex digits", example: "\"0a1b\"")
            }
            return try hex(text, node: value)
        case "utf8":
            guard let text = value.string else {
                throw FixtureError.wrongType(value, expected: "a string", example: "\"text\"")
            }
            let bytes = Data(text.utf8)
            try checkCount(bytes.count, node: value)
            return bytes
        default:
            let count = try FixtureObject.integer(
                value, what: "byte count", in: 0...maximumCount, hint: "a byte value holds at most 64 KiB")
            if form == "zeros" { return Data(count: count) }
            return Data((0..<count).map { UInt8(truncatingIfNeeded: $0) })
        }
    }

    /// Decodes hex digits (any case, even count, nothing else) into bytes.
    ///
    /// - Throws: ``FixtureError/Kind/badByteValue`` at `node`, naming the first bad
    ///   character's offset.
    static func hex(_ text: String, node: FixtureJSON) throws(FixtureError) -> Data {
        let bytes: Data
        do throws(HexProblem) {
            bytes = try self.bytes(hex: text)
        } catch {
            switch error {
            case .notADigit(let character, let offset):
                let shown = character == " " ? "a space" : "\"\(character)\""
                throw FixtureError(
                    .badByteValue, at: node, message: "\(shown) at offset \(offset) is not a hex digit",
                    fix: "write only the digits 0-9 and a-f, two per byte, without spaces or 0x")
            case .oddCount(let count):
                throw FixtureError(
                    .badByteValue, at: node, message: "odd number of hex digits (\(count))",
                    fix: "write two digits per byte, e.g. \"0f\" rather than \"f\"")
            }
        }
        try checkCount(bytes.count, node: node)
        return bytes
    }

    /// Why text is not hex bytes.
    package enum HexProblem: Error {
        /// `character`, at `offset`, is not a hex digit.
        case notADigit(Character, offset: Int)
        /// There is an odd number of digits (`count` characters).
        case oddCount(Int)
    }

    /// Decodes hex digits (any case, even count, nothing else: no sign, space or `0x`) into
    /// bytes.
    package static func bytes(hex text: some StringProtocol) throws(HexProblem) -> Data {
        var bytes = Data()
        bytes.reserveCapacity(text.utf8.count / 2)
        var high: UInt8?
        for (offset, character) in text.enumerated() {
            guard character.isASCII, let digit = character.hexDigitValue else {
                throw .notADigit(character, offset: offset)
            }
            if let first = high {
                bytes.append(first << 4 | UInt8(digit))
                high = nil
            } else {
                high = UInt8(digit)
            }
        }
        guard high == nil else { throw .oddCount(text.count) }
        return bytes
    }

    static func checkCount(_ count: Int, node: FixtureJSON) throws(FixtureError) {
        guard count <= maximumCount else {
            throw FixtureError.outOfRange(
                node, what: "byte value length", value: "\(count)", range: "0…\(maximumCount)",
                hint: "a byte value holds at most 64 KiB")
        }
    }

    /// The bytes as lowercase hexadecimal, the `hex` form's spelling (and the trace's).
    public static func hexString(_ bytes: some Sequence<UInt8>) -> String {
        let digits = Array("0123456789abcdef")
        var result = ""
        for byte in bytes {
            result.append(digits[Int(byte >> 4)])
            result.append(digits[Int(byte & 0x0F)])
        }
        return result
    }
}
