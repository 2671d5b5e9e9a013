import BLECore
import Foundation
import Testing

@Suite("BluetoothUUID", .timeLimit(.minutes(10)))
struct BluetoothUUIDTests {
    @Test("A 16-bit UUID equals its 32-bit and 128-bit expansions and hashes alike")
    func shortFormsEqualTheirExpansions() throws {
        let short: BluetoothUUID = "180D"
        let thirtyTwo = try BluetoothUUID(string: "0000180D")
        let full = try BluetoothUUID(string: "0000180d-0000-1000-8000-00805f9b34fb")
        #expect(short == thirtyTwo)
        #expect(short == full)
        #expect(Set([short, thirtyTwo, full]).count == 1)
        #expect(short == BluetoothUUID(UInt16(0x180D)))
        #expect(short == BluetoothUUID(UInt32(0x180D)))
    }

    @Test("An integer literal is a 16- or 32-bit UUID, as its doc comment writes one")
    func integerLiteralsAreShortUUIDs() {
        #expect(BluetoothUUID(0x180D) == "180D")
        let heartRate: BluetoothUUID = 0x180D
        #expect(heartRate == BluetoothUUID(UInt16(0x180D)))
        #expect(BluetoothUUID(0x1234_5678) == "12345678")
        let services: [BluetoothUUID] = [0x180D, 0x180F]
        #expect(services.map(\.uuidString) == ["180D", "180F"])
    }

    @Test("The canonical string is the shortest uppercase form")
    func canonicalStringIsShortestUppercase() throws {
        #expect(try BluetoothUUID(string: "2a37").uuidString == "2A37")
        #expect(try BluetoothUUID(string: "0000180f-0000-1000-8000-00805F9B34FB").uuidString == "180F")
        #expect(try BluetoothUUID(string: "1234abcd").uuidString == "1234ABCD")
        #expect(try BluetoothUUID(string: "1234ABCD-0000-1000-8000-00805F9B34FB").uuidString == "1234ABCD")
        let nus = try BluetoothUUID(string: "6e400001-b5a3-f393-e0a9-e50e24dcca9e")
        #expect(nus.uuidString == "6E400001-B5A3-F393-E0A9-E50E24DCCA9E")
        #expect(nus.description == nus.uuidString)
        #expect(nus.debugDescription == "BluetoothUUID(6E400001-B5A3-F393-E0A9-E50E24DCCA9E)")
    }

    @Test("The full string always has 36 characters")
    func fullStringExpandsShortForms() {
        #expect(BluetoothUUID(UInt16(0x2902)).fullString == "00002902-0000-1000-8000-00805F9B34FB")
        #expect(BluetoothUUID(UInt32(0xDEAD_BEEF)).fullString == "DEADBEEF-0000-1000-8000-00805F9B34FB")
    }

    @Test("Width and short values follow the base UUID")
    func widthAndShortValues() throws {
        let sixteen: BluetoothUUID = "180D"
        #expect(sixteen.width == .bits16)
        #expect(sixteen.value16 == 0x180D)
        #expect(sixteen.value32 == 0x180D)
        let thirtyTwo: BluetoothUUID = "0001180D"
        #expect(thirtyTwo.width == .bits32)
        #expect(thirtyTwo.value16 == nil)
        #expect(thirtyTwo.value32 == 0x0001_180D)
        // Same leading bits as a base-range UUID but a different tail: a full 128-bit UUID.
        let custom = try BluetoothUUID(string: "0000180D-0000-1000-8000-00805F9B34FC")
        #expect(custom.width == .bits128)
        #expect(custom.value32 == nil)
        #expect(custom != sixteen)
    }

    @Test("Bytes are the big-endian shortest form and round-trip")
    func bytesRoundTrip() throws {
        let sixteen: BluetoothUUID = "180D"
        #expect(sixteen.bytes == [0x18, 0x0D])
        #expect(try BluetoothUUID(bytes: [0x18, 0x0D]) == sixteen)
        let thirtyTwo: BluetoothUUID = "12345678"
        #expect(thirtyTwo.bytes == [0x12, 0x34, 0x56, 0x78])
        #expect(try BluetoothUUID(bytes: thirtyTwo.bytes) == thirtyTwo)
        let full: BluetoothUUID = "3DDA0001-957F-7D4A-34A6-74696673696D"
        #expect(full.bytes.count == 16)
        #expect(full.bytes.first == 0x3D)
        #expect(full.bytes.last == 0x6D)
        #expect(try BluetoothUUID(bytes: full.bytes) == full)
    }

    @Test("Byte sequences of other lengths are rejected naming the bytes", arguments: [0, 1, 3, 5, 15, 17])
    func badByteCountsAreRejected(count: Int) {
        let bytes = [UInt8](repeating: 0xAB, count: count)
        #expect(
            throws: BluetoothUUID.ParseError(
                input: "0x" + String(repeating: "AB", count: count), reason: .invalidByteCount(count))
        ) {
            try BluetoothUUID(bytes: bytes)
        }
    }

    @Test("Foundation UUIDs convert both ways")
    func foundationUUIDRoundTrip() throws {
        let foundation = try #require(UUID(uuidString: "6E400001-B5A3-F393-E0A9-E50E24DCCA9E"))
        let uuid = BluetoothUUID(foundation)
        #expect(uuid.uuidString == "6E400001-B5A3-F393-E0A9-E50E24DCCA9E")
        #expect(uuid.uuid == foundation)
        let base = BluetoothUUID(UInt16(0x180D))
        #expect(BluetoothUUID(base.uuid) == base)
        #expect(base.uuid.uuidString == "0000180D-0000-1000-8000-00805F9B34FB")
    }

    @Test("Codable encodes the canonical string and decodes any form")
    func codableRoundTrip() throws {
        let values: [BluetoothUUID] = ["180D", "0001180D", "6E400001-B5A3-F393-E0A9-E50E24DCCA9E"]
        let encoded = try JSONEncoder().encode(values)
        #expect(
            String(decoding: encoded, as: UTF8.self) == #"["180D","0001180D","6E400001-B5A3-F393-E0A9-E50E24DCCA9E"]"#)
        #expect(try JSONDecoder().decode([BluetoothUUID].self, from: encoded) == values)
        let long = Data(#"["0000180d-0000-1000-8000-00805f9b34fb"]"#.utf8)
        #expect(try JSONDecoder().decode([BluetoothUUID].self, from: long) == ["180D"])
    }

    @Test("Decoding a bad string fails with the parse message")
    func decodingBadStringFails() {
        let json = Data(#"["18G0"]"#.utf8)
        do {
            _ = try JSONDecoder().decode([BluetoothUUID].self, from: json)
            Issue.record("decoding should fail")
        } catch let DecodingError.dataCorrupted(context) {
            #expect(context.debugDescription.contains("\"18G0\" is not a Bluetooth UUID"))
        } catch {
            Issue.record("unexpected error \(error)")
        }
    }

    @Test("Ordering is by the 128-bit value")
    func ordering() {
        let sorted: [BluetoothUUID] = ["2A38", "180D", "6E400001-B5A3-F393-E0A9-E50E24DCCA9E", "180F"].sorted()
        #expect(sorted.map(\.uuidString) == ["180D", "180F", "2A38", "6E400001-B5A3-F393-E0A9-E50E24DCCA9E"])
    }

    @Test("Well-known descriptor UUIDs have their assigned numbers")
    func wellKnownDescriptors() {
        #expect(BluetoothUUID.characteristicExtendedProperties.uuidString == "2900")
        #expect(BluetoothUUID.characteristicUserDescription.uuidString == "2901")
        #expect(BluetoothUUID.clientCharacteristicConfiguration.uuidString == "2902")
        #expect(BluetoothUUID.serverCharacteristicConfiguration.uuidString == "2903")
        #expect(BluetoothUUID.characteristicFormat.uuidString == "2904")
        #expect(BluetoothUUID.characteristicAggregateFormat.uuidString == "2905")
    }
}

@Suite("BluetoothUUID parsing errors", .timeLimit(.minutes(10)))
struct BluetoothUUIDParsingTests {
    struct Case: Sendable, CustomTestStringConvertible {
        var input: String
        var reason: BluetoothUUID.ParseError.Reason
        var testDescription: String { "\"\(input)\"" }
    }

    static let cases: [Case] = [
        Case(input: "", reason: .empty),
        Case(input: "18D", reason: .invalidLength(3)),
        Case(input: "180D0", reason: .invalidLength(5)),
        Case(input: "6E400001B5A3F393E0A9E50E24DCCA9E", reason: .invalidLength(32)),
        Case(input: "{6E400001-B5A3-F393-E0A9-E50E24DCCA9E}", reason: .invalidLength(38)),
        Case(input: "18G0", reason: .invalidCharacter("G", offset: 2)),
        Case(input: "0x18", reason: .invalidCharacter("x", offset: 1)),
        Case(input: " 180", reason: .invalidCharacter(" ", offset: 0)),
        Case(input: "18é0", reason: .invalidCharacter("é", offset: 2)),
        Case(input: "１８０Ｄ", reason: .invalidCharacter("１", offset: 0)),
        Case(input: "18-D", reason: .misplacedHyphen(offset: 2)),
        Case(input: "6E4000011-B5A-F393-E0A9-E50E24DCCA9E", reason: .misplacedHyphen(offset: 8)),
        Case(input: "6E400001-B5A3-F393-E0A9E-50E24DCCA9E", reason: .misplacedHyphen(offset: 23)),
        Case(input: "6E400001-B5A3-F393-E0A9-E50E24DCCA9Z", reason: .invalidCharacter("Z", offset: 35)),
    ]

    @Test("Bad strings are rejected with a typed error naming the input", arguments: cases)
    func badStringsAreRejected(testCase: Case) {
        #expect(throws: BluetoothUUID.ParseError(input: testCase.input, reason: testCase.reason)) {
            try BluetoothUUID(string: testCase.input)
        }
    }

    @Test("Every parse error message names the input and the expected forms", arguments: cases)
    func messagesNameInputAndFix(testCase: Case) {
        let message = BluetoothUUID.ParseError(input: testCase.input, reason: testCase.reason).description
        #expect(message.contains("not a Bluetooth UUID"))
        if !testCase.input.isEmpty { #expect(message.contains("\"\(testCase.input)\"")) }
    }

    @Test("Messages explain each reason")
    func messagesExplainReasons() {
        #expect(
            BluetoothUUID.ParseError(input: "18G0", reason: .invalidCharacter("G", offset: 2)).description
                == "\"18G0\" is not a Bluetooth UUID: \"G\" at offset 2 is not a hexadecimal digit (0-9, A-F); "
                + "remove spaces, braces and prefixes such as \"0x\".")
        #expect(
            BluetoothUUID.ParseError(input: "18D", reason: .invalidLength(3)).description.contains(
                "it has 3 characters; expected 4 hex digits (16-bit, e.g. \"180D\")"))
        #expect(
            BluetoothUUID.ParseError(input: "x", reason: .misplacedHyphen(offset: 4)).description.contains(
                "hyphens at offsets 8, 13, 18 and 23"))
        #expect(BluetoothUUID.ParseError(input: "", reason: .empty).description.hasPrefix("An empty string"))
        #expect(
            BluetoothUUID.ParseError(input: "0xAB", reason: .invalidByteCount(1)).description
                .contains("it has 1 bytes; a UUID is 2 (16-bit), 4 (32-bit) or 16 (128-bit) bytes"))
    }
}
