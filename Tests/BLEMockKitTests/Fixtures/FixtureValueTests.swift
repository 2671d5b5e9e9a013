import BLEMockKit
import Foundation
import Testing

@Suite("Fixture values: bytes and durations", .timeLimit(.minutes(10)))
struct FixtureValueTests {
    func bytes(_ json: String) throws -> Data {
        try FixtureBytes.parse(FixtureJSON.parse(Data(json.utf8)))
    }

    func bytesError(_ json: String) throws -> FixtureError {
        do {
            let value = try FixtureBytes.parse(FixtureJSON.parse(Data(json.utf8)))
            Issue.record("expected an error, got \(value as NSData)")
            return FixtureError(.invalidJSON, line: 0, column: 0, path: "", message: "", fix: "")
        } catch {
            return error
        }
    }

    @Test("Each byte-value form yields its bytes")
    func byteForms() throws {
        #expect(try bytes(#"{"hex": "0a1Bff"}"#) == Data([0x0A, 0x1B, 0xFF]))
        #expect(try bytes(#"{"hex": ""}"#) == Data())
        #expect(try bytes(#"{"utf8": "Hé"}"#) == Data([0x48, 0xC3, 0xA9]))
        #expect(try bytes(#"{"zeros": 3}"#) == Data(count: 3))
        #expect(try bytes(#"{"pattern": 258}"#) == Data((0..<258).map { UInt8(truncatingIfNeeded: $0) }))
        #expect(try bytes(#"{"pattern": 65536}"#).count == 65_536)
        #expect(try bytes(#"{"zeros": 0}"#) == Data())
        #expect(FixtureBytes.hexString([0x00, 0xAB, 0x7F]) == "00ab7f")
    }

    @Test("Malformed byte values are rejected with the kind, position and a fix")
    func byteRejections() throws {
        let odd = try bytesError(#"{"hex": "abc"}"#)
        #expect(odd.kind == .badByteValue)
        #expect((odd.line, odd.column, odd.path) == (1, 9, "hex"))
        #expect(
            odd.description
                == #"1:9: hex: odd number of hex digits (3); write two digits per byte, e.g. "0f" rather than "f""#)
        let space = try bytesError(#"{"hex": "01 02"}"#)
        #expect(space.message == "a space at offset 2 is not a hex digit")
        #expect(try bytesError(#"{"hex": "0x01"}"#).message == "\"x\" at offset 1 is not a hex digit")
        let two = try bytesError(#"{"hex": "01", "zeros": 2}"#)
        #expect(two.kind == .badByteValue)
        #expect(two.message.hasSuffix(#"it has "hex" and "zeros""#))
        #expect(try bytesError("{}").message.hasSuffix("it has none"))
        let unknown = try bytesError(#"{"base64": "AQ=="}"#)
        #expect(unknown.kind == .unknownField("base64"))
        #expect(unknown.fix == "use one of hex, utf8, zeros, pattern")
        #expect(try bytesError(#"{"hexx": "01"}"#).fix == #"did you mean "hex"? use one of hex, utf8, zeros, pattern"#)
        let big = try bytesError(#"{"zeros": 65537}"#)
        #expect(big.kind == .valueOutOfRange)
        #expect(big.fix == "use a value in 0…65536 (a byte value holds at most 64 KiB)")
        #expect(try bytesError(#"{"pattern": -1}"#).kind == .valueOutOfRange)
        #expect(try bytesError(#"{"pattern": 1.5}"#).kind == .wrongType(expected: "an integer"))
        #expect(try bytesError(#"{"hex": 1}"#).kind == .wrongType(expected: "a string of hex digits"))
        #expect(try bytesError(#""0102""#).kind == .wrongType(expected: "an object"))
    }

    @Test("Durations in every unit, whole and decimal, convert exactly")
    func durations() throws {
        let cases: [(String, Duration)] = [
            ("0s", .zero), ("100ms", .milliseconds(100)), ("1.5s", .milliseconds(1500)), ("7.5ms", .microseconds(7500)),
            ("250us", .microseconds(250)), ("12ns", .nanoseconds(12)), ("0.5ns", .nanoseconds(1) / 2),
            ("10.24s", .milliseconds(10_240)), ("2500ms", .milliseconds(2500)), ("3600s", .seconds(3600)),
            ("0.000000000000000001s", Duration(secondsComponent: 0, attosecondsComponent: 1)),
        ]
        for (text, expected) in cases {
            #expect(FixtureDuration.parse(text: text) == .success(expected), "\(text)")
        }
        #expect(FixtureDuration.string(.milliseconds(245)) == "0.245s")
        #expect(FixtureDuration.string(.seconds(10)) == "10s")
        // Negative durations (configuration errors name them) keep their sign in one place.
        #expect(FixtureDuration.string(.milliseconds(-1)) == "-0.001s")
        #expect(FixtureDuration.string(.milliseconds(-2500)) == "-2.5s")
        #expect(FixtureDuration.string(.seconds(-3)) == "-3s")
        #expect(
            FixtureDuration.parse(text: FixtureDuration.string(.microseconds(7500))) == .success(.microseconds(7500)))
    }

    @Test("Malformed durations name their problem")
    func durationRejections() throws {
        let cases: [(String, FixtureDuration.Problem)] = [
            ("", .empty), ("-5ms", .negative), ("100", .missingUnit), ("5min", .unknownUnit("min")),
            ("5 ms", .unknownUnit(" ms")), ("ms", .malformedNumber), (".5s", .malformedNumber),
            ("5.s", .malformedNumber),
            ("1.2.3s", .malformedNumber), ("+1s", .malformedNumber), ("1e3ms", .unknownUnit("e3ms")),
            ("0.0000000001ns", .tooPrecise), ("1234567890123456s", .tooLarge),
        ]
        for (text, problem) in cases {
            #expect(FixtureDuration.parse(text: text) == .failure(problem), "\(text)")
        }
        let node = try FixtureJSON.parse(Data(#"{"for": "-1s"}"#.utf8))
        let value = try #require(node.member("for"))
        do {
            _ = try FixtureDuration.parse(value)
            Issue.record("expected an error")
        } catch {
            #expect(error.kind == .badDuration("-1s"))
            #expect(
                error.description
                    == #"1:9: for: "-1s" is not a duration: durations cannot be negative; use zero or a positive value, e.g. "0s""#
            )
        }
    }
}
