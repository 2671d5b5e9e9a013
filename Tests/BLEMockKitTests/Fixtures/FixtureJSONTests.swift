import BLEMockKit
import Foundation
import Testing

@Suite("Fixture JSON reader: valid documents", .timeLimit(.minutes(10)))
struct FixtureJSONTests {
    @Test("Scalars parse to their values, with numbers kept as written")
    func scalars() throws {
        #expect(try FixtureJSON.parse(Data("true".utf8)).value == .bool(true))
        #expect(try FixtureJSON.parse(Data(" false ".utf8)).value == .bool(false))
        #expect(try FixtureJSON.parse(Data("null".utf8)).value == .null)
        #expect(try FixtureJSON.parse(Data("\"hi\"".utf8)).value == .string("hi"))
        for number in ["0", "-0", "42", "-8", "1.5", "-0.25", "1e3", "2E-2", "6.02e+23"] {
            #expect(try FixtureJSON.parse(Data(number.utf8)).value == .number(number))
        }
    }

    @Test("Integers are exact when the number is whole and fits, and nil otherwise")
    func integers() throws {
        #expect(try FixtureJSON.parse(Data("-60".utf8)).integer == -60)
        #expect(try FixtureJSON.parse(Data("1e3".utf8)).integer == 1000)
        #expect(try FixtureJSON.parse(Data("2.0".utf8)).integer == 2)
        #expect(try FixtureJSON.parse(Data("9223372036854775807".utf8)).integer == Int.max)
        #expect(try FixtureJSON.parse(Data("1.5".utf8)).integer == nil)
        #expect(try FixtureJSON.parse(Data("1e30".utf8)).integer == nil)
        #expect(try FixtureJSON.parse(Data("1.5".utf8)).double == 1.5)
        #expect(try FixtureJSON.parse(Data("\"1\"".utf8)).integer == nil)
    }

    @Test("Every escape resolves, including surrogate pairs")
    func escapes() throws {
        let json = #""\" \\ \/ \b \f \n \r \t \u0041 \u00e9 \u2713 \ud83d\udd27""#
        let node = try FixtureJSON.parse(Data(json.utf8))
        #expect(node.string == "\" \\ / \u{08} \u{0C} \n \r \t A é ✓ 🔧")
    }

    @Test("Raw UTF-8 in strings is kept, and columns count Unicode scalars")
    func utf8Columns() throws {
        let node = try FixtureJSON.parse(Data(#"{"é✓": "🔧", "b": 1}"#.utf8))
        #expect(node.member("é✓")?.string == "🔧")
        let b = try #require(node.members?.last)
        #expect((b.line, b.column) == (1, 13))
        #expect(b.value.column == 18)
    }

    @Test("Every node carries its line, column and path")
    func positionsAndPaths() throws {
        let json = """
            {
              "services": [
                {"uuid": "180D",
                 "characteristics": [{"uuid": "2A37"}, {"uuid": "2A38"}]}
              ],
              "serviceData": {"180D": {"hex": "01"}},
              "a b": []
            }
            """
        let root = try FixtureJSON.parse(Data(json.utf8))
        #expect((root.line, root.column, root.path) == (1, 1, ""))
        let service = try #require(root.member("services")?.elements?.first)
        #expect((service.line, service.column, service.path) == (3, 5, "services[0]"))
        let uuid = try #require(service.member("characteristics")?.elements?[1].member("uuid"))
        #expect((uuid.line, uuid.column) == (4, 53))
        #expect(uuid.path == "services[0].characteristics[1].uuid")
        let hex = try #require(root.member("serviceData")?.member("180D")?.member("hex"))
        #expect(hex.path == #"serviceData["180D"].hex"#)
        #expect(root.member("a b")?.path == #"["a b"]"#)
        let member = try #require(root.members?.first)
        #expect((member.key, member.line, member.column) == ("services", 2, 3))
    }

    @Test("CRLF and CR line breaks each count as one line; a byte order mark is skipped")
    func lineBreaksAndBOM() throws {
        let crlf = try FixtureJSON.parse(Data("[\r\n1,\r2]".utf8))
        #expect(crlf.elements?.map(\.line) == [2, 3])
        let bom = try FixtureJSON.parse(Data([0xEF, 0xBB, 0xBF] + Array("[7]".utf8)))
        #expect(bom.elements?.first?.integer == 7)
        #expect(bom.column == 1)
    }

    @Test("Empty containers, nested arrays and members keep file order")
    func containers() throws {
        let node = try FixtureJSON.parse(Data(#"{"z": [], "a": {}, "m": [[1], [2, [3]]]}"#.utf8))
        #expect(node.members?.map(\.key) == ["z", "a", "m"])
        #expect(node.member("z")?.elements == [])
        #expect(node.member("a")?.members == [])
        #expect(node.member("m")?.elements?[1].elements?[1].elements?.first?.path == "m[1][1][0]")
        #expect(node.typeName == "object")
        #expect(node.member("z")?.typeName == "array")
    }

    @Test("Nesting up to the maximum depth is accepted")
    func maximumDepth() throws {
        let depth = FixtureJSON.maximumDepth
        let json = String(repeating: "[", count: depth) + String(repeating: "]", count: depth)
        var node = try FixtureJSON.parse(Data(json.utf8))
        var levels = 1
        while let inner = node.elements?.first {
            node = inner
            levels += 1
        }
        #expect(levels == depth)
    }
}
