import BLECore
import BLEMockKit
import Foundation
import Testing

@Suite("Peripheral profiles: errors", .timeLimit(.minutes(10)))
struct FixtureErrorTests {
    struct Case: Sendable, CustomTestStringConvertible {
        var json: String
        var kind: FixtureError.Kind
        var line: Int
        var column: Int
        var path: String
        var fix: String
        var testDescription: String { "\(kind)" }
    }

    static let characteristic = "services[0].characteristics[0]"

    static let cases: [Case] = [
        Case(
            json: #"{"name": "x",}"#, kind: .invalidJSON, line: 1, column: 13, path: "",
            fix: "remove the comma after the last member"),
        Case(
            json: #"{"nmae": "x"}"#, kind: .unknownField("nmae"), line: 1, column: 2, path: "nmae",
            fix: #"did you mean "name"?"#),
        Case(
            json: FixtureTestSupport.withCharacteristic(#"{"uuid": "2A37", "propertys": [], "permissions": []}"#),
            kind: .unknownField("propertys"), line: 2, column: 18, path: characteristic + ".propertys",
            fix: #"did you mean "properties"? use one of id, uuid, properties, permissions, value, descriptors, "#
                + "initialValue, handle, valueHandle"),
        Case(
            json: FixtureTestSupport.withCharacteristic(#"{"properties": [], "permissions": []}"#),
            kind: .missingField("uuid"), line: 2, column: 1, path: characteristic, fix: #"add it, e.g. "uuid": "2A37""#),
        Case(
            json: FixtureTestSupport.withCharacteristic(#"{"uuid": "2A37", "properties": []}"#),
            kind: .missingField("permissions"), line: 2, column: 1, path: characteristic,
            fix: #""permissions": ["readable"]"#),
        Case(
            json: #"{"rssi": "-60"}"#, kind: .wrongType(expected: "an integer"), line: 1, column: 10, path: "rssi",
            fix: "write a whole number in -127…0"),
        Case(
            json: #"{"services": {}}"#, kind: .wrongType(expected: "an array"), line: 1, column: 14, path: "services",
            fix: "write ["),
        Case(
            json: #"{"advertisement": {"isConnectable": "yes"}}"#, kind: .wrongType(expected: "a boolean"), line: 1,
            column: 37,
            path: "advertisement.isConnectable", fix: "write true or false"),
        Case(
            json: #"{"services": [{"uuid": "180G"}]}"#,
            kind: .badUUID(BluetoothUUID.ParseError(input: "180G", reason: .invalidCharacter("G", offset: 3))), line: 1,
            column: 24, path: "services[0].uuid", fix: "write a 16-bit (\"180D\")"),
        Case(
            json: FixtureTestSupport.withCharacteristic(
                #"{"uuid": "2A37", "properties": ["read", "reed"], "permissions": []}"#),
            kind: .unknownProperty("reed"), line: 2, column: 41, path: characteristic + ".properties[1]",
            fix: #"did you mean "read"? use one of broadcast, read, writeWithoutResponse, write, notify, indicate, "#
                + "authenticatedSignedWrites, extendedProperties, notifyEncryptionRequired, indicateEncryptionRequired"),
        Case(
            json: FixtureTestSupport.withCharacteristic(
                #"{"uuid": "2A37", "properties": [], "permissions": ["readible"]}"#),
            kind: .unknownPermission("readible"), line: 2, column: 52, path: characteristic + ".permissions[0]",
            fix:
                #"did you mean "readable"? use one of readable, writeable, readEncryptionRequired, writeEncryptionRequired"#
        ),
        Case(
            json: #"{"advertisement": {"manufacturerData": {"hex": "4c0"}}}"#, kind: .badByteValue, line: 1, column: 48,
            path: "advertisement.manufacturerData.hex", fix: "write two digits per byte"),
        Case(
            json: #"{"advertisingInterval": "100"}"#, kind: .badDuration("100"), line: 1, column: 25,
            path: "advertisingInterval", fix: "add one of ns, us, ms or s"),
        Case(
            json: #"{"rssi": 10}"#, kind: .valueOutOfRange, line: 1, column: 10, path: "rssi",
            fix: "use a value in -127…0"),
        Case(
            json: #"{"preferredMTU": 22.5}"#, kind: .wrongType(expected: "an integer"), line: 1, column: 18,
            path: "preferredMTU", fix: "write a whole number (one outside 23…517 counts as the nearer end)"),
        Case(
            json: #"{"advertisingInterval": "19.9ms"}"#, kind: .valueOutOfRange, line: 1, column: 25,
            path: "advertisingInterval", fix: "use a value in 20ms…10.24s"),
        Case(
            json: #"{"advertisingInterval": "10.25s"}"#, kind: .valueOutOfRange, line: 1, column: 25,
            path: "advertisingInterval", fix: "use a value in 20ms…10.24s"),
        Case(
            json: #"{"advertisement": {"txPowerLevel": 128}}"#, kind: .valueOutOfRange, line: 1, column: 36,
            path: "advertisement.txPowerLevel", fix: "use a value in -127…127"),
        Case(
            json: FixtureTestSupport.withCharacteristic(
                #"{"uuid": "2A38", "properties": ["read"], "permissions": [], "value": {"zeros": 513}}"#),
            kind: .valueOutOfRange, line: 2, column: 70, path: characteristic + ".value",
            fix: "an attribute value holds at most 512 bytes"),
        Case(
            json: FixtureTestSupport.withCharacteristic(
                #"{"id": "x", "uuid": "2A37", "properties": [], "permissions": []},"# + "\n"
                    + #"{"id": "x", "uuid": "2A38", "properties": [], "permissions": []}"#),
            kind: .duplicateCharacteristicID("x"), line: 3, column: 8, path: "services[0].characteristics[1].id",
            fix: "give each characteristic a unique id"),
        Case(
            json: FixtureTestSupport.withCharacteristic(
                #"{"uuid": "2A37", "properties": ["read", "notify"], "permissions": ["readable"], "value": {"hex": "00"}}"#
            ),
            kind: .staticValueNotReadOnly, line: 2, column: 90, path: characteristic + ".value",
            fix: #"remove "value" to make it dynamic"#),
        Case(
            json: FixtureTestSupport.withCharacteristic(
                #"{"uuid": "2A37", "properties": ["notify"], "permissions": [], "descriptors": [{"uuid": "2902", "value": {"hex": "0000"}}]}"#
            ),
            kind: .managedDescriptor, line: 2, column: 88, path: characteristic + ".descriptors[0].uuid",
            fix: "remove it; it is added for characteristics that notify or indicate"),
        Case(
            json: #"{"services": [{"uuid": "180D", "includedServices": ["180F"]}]}"#,
            kind: .unknownIncludedService("180F"), line: 1, column: 53, path: "services[0].includedServices[0]",
            fix: #"add a service with uuid "180F" earlier in "services""#),
        Case(
            json: #"{"services": [{"uuid": "180D"}, {"uuid": "1800"}]}"#, kind: .valueOutOfRange, line: 1, column: 42,
            path: "services[1].uuid", fix: "leave it out; every simulated peripheral has it"),
        Case(
            json: #"{"services": [{"uuid": "00001801-0000-1000-8000-00805F9B34FB"}]}"#, kind: .valueOutOfRange,
            line: 1, column: 24, path: "services[0].uuid", fix: "leave it out"),
        Case(
            json: #"{"advertisement": {"serviceData": {"180D": {"hex": ""}, "0000180D": {"hex": ""}}}}"#,
            kind: .duplicateUUID("180D"), line: 1, column: 57, path: #"advertisement.serviceData["0000180D"]"#,
            fix: "keep one of them"),
    ]

    @Test("Each error kind names the file, exact position, path and a fix", arguments: cases)
    func errorKind(_ testCase: Case) throws {
        let error = try #require(FixtureTestSupport.profileError(testCase.json))
        #expect(error.kind == testCase.kind)
        #expect(error.file == "test.json")
        #expect((error.line, error.column) == (testCase.line, testCase.column), "\(error)")
        #expect(error.path == testCase.path)
        #expect(error.fix.contains(testCase.fix), "\(error.fix)")
        let prefix =
            "test.json:\(testCase.line):\(testCase.column): " + (testCase.path.isEmpty ? "" : testCase.path + ": ")
        #expect(error.description.hasPrefix(prefix), "\(error.description)")
        #expect(error.description.hasSuffix("; " + error.fix))
    }

    /// A profile whose services need more attribute handles than a GATT database has could
    /// never be set up (it used to pass validation and fail at the run's set-up).
    @Test("Services needing more than 65535 attribute handles are refused at the service that overflows")
    func moreAttributeHandlesThanADatabaseHas() throws {
        // Each service: 1 handle, plus 3 for a notifying characteristic (declaration, value,
        // configuration): 16,384 a service of 5,461 characteristics; the fourth overflows.
        let characteristic = #"{"uuid": "2A37", "properties": ["notify"], "permissions": []}"#
        let service =
            #"{"uuid": "180D", "characteristics": ["#
            + Array(repeating: characteristic, count: 5_461).joined(separator: ",") + "]}"
        let fits = #"{"services": ["# + Array(repeating: service, count: 3).joined(separator: ",") + "]}"
        #expect(throws: Never.self) { try PeripheralProfile(json: Data(fits.utf8), file: "test.json") }
        let json = #"{"services": ["# + Array(repeating: service, count: 4).joined(separator: ",") + "]}"
        let error = try #require(FixtureTestSupport.profileError(json))
        #expect(error.kind == .valueOutOfRange)
        #expect(error.path == "services[3]")
        #expect(error.message == "the services up to this one need 65536 attribute handles; a GATT database has 65535")
    }

    @Test("An unknown property reads as the format's example message")
    func unknownPropertyDescription() throws {
        let json = FixtureTestSupport.withCharacteristic(
            #"{"uuid": "2A37", "properties": ["reed"], "permissions": []}"#)
        let error = try #require(FixtureTestSupport.profileError(json, file: "heart-rate.json"))
        #expect(
            error.description
                == #"heart-rate.json:2:33: services[0].characteristics[0].properties[0]: unknown property "reed"; "#
                + #"did you mean "read"? use one of broadcast, read, writeWithoutResponse, write, notify, indicate, "#
                + "authenticatedSignedWrites, extendedProperties, notifyEncryptionRequired, indicateEncryptionRequired")
    }

    @Test("A bad UUID carries the UUID parser's message")
    func badUUIDMessage() throws {
        let error = try #require(
            FixtureTestSupport.profileError(#"{"advertisement": {"serviceUUIDs": ["180D", "18"]}}"#))
        #expect(error.kind == .badUUID(BluetoothUUID.ParseError(input: "18", reason: .invalidLength(2))))
        #expect(error.path == "advertisement.serviceUUIDs[1]")
        #expect(error.message.hasPrefix(#""18" is not a Bluetooth UUID: it has 2 characters"#))
    }

    @Test("Errors without a file omit it; a directory is an unreadable file")
    func fileAttribution() throws {
        let error = try #require(FixtureTestSupport.profileError(#"{"rssi": 1}"#, file: nil))
        #expect(error.description.hasPrefix("1:10: rssi: rssi 1 is out of range; use a value in -127…0"))
        do {
            _ = try PeripheralProfile.load(contentsOf: FixtureTestSupport.peripheralsFolder)
            Issue.record("expected an error")
        } catch {
            #expect(error.kind == .unreadableFile(FixtureTestSupport.peripheralsFolder.path))
            #expect((error.line, error.column) == (0, 0))
        }
    }
}
