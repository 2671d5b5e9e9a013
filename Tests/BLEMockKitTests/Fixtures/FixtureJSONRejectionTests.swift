import BLEMockKit
import Foundation
import Testing

@Suite("Fixture JSON reader: rejections", .timeLimit(.minutes(10)))
struct FixtureJSONRejectionTests {
    /// Bad input, the expected line and column, and a fragment of the message.
    static let cases: [(json: String, line: Int, column: Int, message: String)] = [
        ("", 1, 1, "the document is empty"),
        ("   ", 1, 4, "the document is empty"),
        ("\u{FEFF}\n", 2, 1, "the document is empty"),
        ("  [", 1, 4, "unexpected end of input; expected a value"),
        ("[1, 2,]", 1, 6, "trailing comma before \"]\""),
        ("{\"a\": 1,\n }", 1, 8, "trailing comma before \"}\""),
        ("{\"a\": 1, \"a\": 2}", 1, 10, "duplicate key \"a\" (first at line 1, column 2)"),
        ("[1] // note", 1, 5, "comments are not allowed"),
        ("{\n  /* c */ \"a\": 1}", 2, 3, "comments are not allowed"),
        ("{'a': 1}", 1, 2, "strings must be in double quotes"),
        ("[\"a\tb\"]", 1, 4, "control character U+0009 in a string"),
        ("[\"a\nb\"]", 1, 4, "control character U+000A in a string"),
        ("[\"abc", 1, 6, "unterminated string (it starts at line 1, column 2)"),
        ("{\"a\": [1, 2", 1, 12, "unexpected end of input; expected \",\" or \"]\""),
        ("{\"a\" 1}", 1, 6, "expected \":\" after the key"),
        ("{1: 2}", 1, 2, "expected a key in double quotes"),
        ("[1 2]", 1, 4, "expected \",\" or \"]\""),
        ("[01]", 1, 3, "leading zeros are not allowed"),
        ("[1.]", 1, 4, "expected a digit after the decimal point"),
        ("[.5]", 1, 2, "unexpected character \".\""),
        ("[-]", 1, 3, "expected a digit after \"-\""),
        ("[1e]", 1, 4, "expected a digit in the exponent"),
        ("[+1]", 1, 2, "unexpected character \"+\""),
        ("[tru]", 1, 2, "invalid literal; expected true"),
        ("[True]", 1, 2, "unexpected character \"T\""),
        ("[NaN]", 1, 2, "unexpected character \"N\""),
        ("[\"\\x\"]", 1, 3, "invalid escape \"\\x\""),
        ("[\"\\u12G4\"]", 1, 3, "\\u must be followed by four hexadecimal digits"),
        ("[\"\\ud83d\"]", 1, 3, "unpaired high surrogate \\uD83D"),
        ("[\"\\ud83d\\u0041\"]", 1, 9, "\\u0041 is not a low surrogate after \\uD83D"),
        ("[\"\\udd27\"]", 1, 3, "unpaired low surrogate \\uDD27"),
        ("{} {}", 1, 4, "unexpected content after the document"),
        ("[1]\n\n  x", 3, 3, "unexpected content after the document"),
        ("{\"é\": x}", 1, 7, "unexpected character \"x\""),
    ]

    @Test("Each malformed document is rejected at the exact line and column", arguments: 0..<cases.count)
    func rejection(index: Int) throws {
        let (json, line, column, message) = Self.cases[index]
        let error = try #require(FixtureTestSupport.jsonError(json))
        #expect(error.kind == .invalidJSON)
        #expect((error.line, error.column) == (line, column), "\(json.debugDescription): \(error)")
        #expect(error.message.contains(message), "\(error.message)")
        #expect(!error.fix.isEmpty)
    }

    @Test("Invalid UTF-8 is rejected inside and outside strings")
    func invalidUTF8() throws {
        let inString = try #require(FixtureTestSupport.jsonError(bytes: Array("[\"a".utf8) + [0xC3, 0x28, 0x22, 0x5D]))
        #expect((inString.line, inString.column, inString.message) == (1, 4, "invalid UTF-8 in a string"))
        let overlong = try #require(FixtureTestSupport.jsonError(bytes: [0x5B, 0x22, 0xC0, 0xAF, 0x22, 0x5D]))
        #expect(overlong.message == "invalid UTF-8 in a string")
        let surrogate = try #require(FixtureTestSupport.jsonError(bytes: [0x22, 0xED, 0xA0, 0x80, 0x22]))
        #expect(surrogate.message == "invalid UTF-8 in a string")
        let outside = try #require(FixtureTestSupport.jsonError(bytes: [0x5B, 0xFF, 0x5D]))
        #expect(outside.message.hasPrefix("unexpected invalid UTF-8 byte 0xFF"))
        #expect((outside.line, outside.column) == (1, 2))
    }

    @Test("Nesting one level beyond the maximum is rejected where it starts, without recursion")
    func tooDeep() throws {
        let depth = FixtureJSON.maximumDepth + 1
        let error = try #require(FixtureTestSupport.jsonError(String(repeating: "[", count: depth)))
        #expect((error.line, error.column) == (1, depth))
        #expect(error.message == "nesting deeper than 512 levels")
        let huge = try #require(FixtureTestSupport.jsonError(String(repeating: "{\"a\":", count: 100_000)))
        #expect(huge.message == "nesting deeper than 512 levels")
    }

    @Test("Truncating a valid document at any point never crashes and always fails")
    func everyTruncation() throws {
        let json = Array(#"{"a": [1, -2.5e3, "x\u00e9\n", true, false, null, {"b": {}}]}"#.utf8)
        for end in 0..<json.count {
            let error = try #require(FixtureTestSupport.jsonError(bytes: Array(json[..<end])))
            #expect(error.kind == .invalidJSON)
            #expect(error.line == 1 && error.column >= 1 && error.column <= end + 1)
        }
        #expect(try FixtureJSON.parse(Data(json)).member("a")?.elements?.count == 7)
    }

    @Test("The description gives line, column, message and fix")
    func description() throws {
        let error = try #require(FixtureTestSupport.jsonError("[1,]"))
        #expect(error.description == "1:3: trailing comma before \"]\"; remove the comma after the last element")
        #expect(
            error.inFileDescription("x.json")
                == "x.json:1:3: trailing comma before \"]\"; remove the comma after the last element")
    }
}

extension FixtureError {
    /// The description as it reads when the error is attributed to `file`.
    func inFileDescription(_ file: String) -> String {
        var copy = self
        copy.file = file
        return copy.description
    }
}
