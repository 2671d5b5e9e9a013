extension BluetoothUUID {
    /// Why a string or byte sequence is not a Bluetooth UUID.
    public struct ParseError: Error, Hashable, Sendable, CustomStringConvertible {
        /// The rejected input, exactly as given.
        public var input: String
        /// What is wrong with it.
        public var reason: Reason

        /// Creates a parse error for an input and a reason.
        public init(input: String, reason: Reason) {
            self.input = input
            self.reason = reason
        }

        /// The specific problem found in the input.
        public enum Reason: Hashable, Sendable {
            /// The string is empty.
            case empty
            /// The string has a length that is neither 4, 8 nor 36 characters.
            case invalidLength(Int)
            /// A character that is not a hexadecimal digit, at this zero-based offset.
            case invalidCharacter(Character, offset: Int)
            /// A 36-character UUID lacks a hyphen at offset 8, 13, 18 or 23, or has one
            /// elsewhere; the offset is the first misplaced position.
            case misplacedHyphen(offset: Int)
            /// Bytes given to ``BluetoothUUID/init(bytes:)`` that are not 2, 4 or 16 long.
            case invalidByteCount(Int)
        }

        public var description: String {
            let quoted = "\"\(input)\""
            let expected =
                "expected 4 hex digits (16-bit, e.g. \"180D\"), 8 hex digits (32-bit, e.g. \"0000180D\") "
                + "or 36 characters (128-bit, e.g. \"6E400001-B5A3-F393-E0A9-E50E24DCCA9E\")"
            switch reason {
            case .empty:
                return "An empty string is not a Bluetooth UUID: \(expected)."
            case .invalidLength(let length):
                return "\(quoted) is not a Bluetooth UUID: it has \(length) characters; \(expected)."
            case .invalidCharacter(let character, let offset):
                // (A bad digit after a "0x" prefix: a prefix the parser took, as `CBMUUID`'s does.)
                let fix =
                    input.hasPrefix("0x") && offset >= 2
                    ? "remove spaces and braces" : "remove spaces, braces and prefixes such as \"0x\""
                return "\(quoted) is not a Bluetooth UUID: \"\(character)\" at offset \(offset) is not a "
                    + "hexadecimal digit (0-9, A-F); \(fix)."
            case .misplacedHyphen(let offset):
                return "\(quoted) is not a Bluetooth UUID: the 128-bit form needs hyphens at offsets 8, 13, "
                    + "18 and 23 (8-4-4-4-12 digits); offset \(offset) is wrong."
            case .invalidByteCount(let count):
                return "\(input) is not a Bluetooth UUID: it has \(count) bytes; a UUID is 2 (16-bit), "
                    + "4 (32-bit) or 16 (128-bit) bytes, big-endian."
            }
        }
    }

    /// Parses a UUID string: 4 hex digits (16-bit), 8 hex digits (32-bit) or the 36-character
    /// hyphenated 128-bit form, in any letter case.
    ///
    /// - Throws: ``ParseError`` naming the input and what is wrong with it.
    public init(string: String) throws(ParseError) {
        func fail(_ reason: ParseError.Reason) -> ParseError { ParseError(input: string, reason: reason) }
        let characters = Array(string)
        let hyphenOffsets: Set<Int> = characters.count == 36 ? [8, 13, 18, 23] : []
        guard [4, 8, 36].contains(characters.count) else {
            throw fail(characters.isEmpty ? .empty : .invalidLength(characters.count))
        }
        var high: UInt64 = 0
        var low: UInt64 = 0
        var digitCount = 0
        for (offset, character) in characters.enumerated() {
            if hyphenOffsets.contains(offset) || character == "-" {
                guard character == "-", hyphenOffsets.contains(offset) else {
                    throw fail(.misplacedHyphen(offset: offset))
                }
                continue
            }
            guard let nibble = character.hexDigitValue, character.isASCII else {
                throw fail(.invalidCharacter(character, offset: offset))
            }
            if digitCount < 16 {
                high = high << 4 | UInt64(nibble)
            } else {
                low = low << 4 | UInt64(nibble)
            }
            digitCount += 1
        }
        if digitCount == 32 {
            self.init(high: high, low: low)
        } else {
            self.init(UInt32(truncatingIfNeeded: high))
        }
    }
}

extension BluetoothUUID: ExpressibleByStringLiteral {
    /// Creates a UUID from a string literal such as `"180D"`.
    ///
    /// Use literals for constants and tests. An unparseable literal is a programming error
    /// and stops the program with a message naming it (as `CBUUID(string:)` does); parse
    /// strings that come from input with ``init(string:)``, which throws instead.
    public init(stringLiteral value: String) {
        do {
            try self.init(string: value)
        } catch {
            preconditionFailure("Invalid BluetoothUUID literal: \(error)")
        }
    }
}

extension BluetoothUUID: ExpressibleByIntegerLiteral {
    /// Creates a 16- or 32-bit UUID from an integer literal such as `0x180D` (Heart Rate),
    /// expanded with the base UUID: `BluetoothUUID(0x180D)` and `let heartRate: BluetoothUUID =
    /// 0x180D` are the UUID `"180D"`.
    public init(integerLiteral value: UInt32) {
        self.init(value)
    }
}

extension BluetoothUUID: Codable {
    /// Decodes a UUID from its string form (any of the forms ``init(string:)`` accepts).
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let string = try container.decode(String.self)
        do {
            try self.init(string: string)
        } catch {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: error.description)
        }
    }

    /// Encodes the UUID as its canonical string (``uuidString``).
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(uuidString)
    }
}
