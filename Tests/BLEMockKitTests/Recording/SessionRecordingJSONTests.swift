import BLECore
import Foundation
import Testing

@testable import BLEMockKit

/// The recording file: every event survives writing and reading, and every bad input is a
/// `FixtureError` naming its kind, line, column and field.
@Suite("The recording file", .timeLimit(.minutes(10)))
struct SessionRecordingJSONTests {
    static let watch = UUID(uuidString: "E4546FDA-DA9E-4A73-96DA-AEC92CD44D42")!

    /// One entry of every kind, with and without their optional parts.
    static var everyEvent: SessionRecording {
        let p = watch
        let events: [RecordedEvent] = [
            .scanStarted(services: ["180D", "3DDA0001-957F-7D4A-34A6-74696673696D"], allowDuplicates: true),
            .scanStarted(services: nil, allowDuplicates: false),
            .discovered(
                peripheral: p, name: "Hybrid HR",
                advertisement: AdvertisementData(
                    localName: "Hybrid HR", serviceUUIDs: ["180D"], overflowServiceUUIDs: ["180F"],
                    solicitedServiceUUIDs: ["1812"], manufacturerData: Data([0x4C, 0x00]),
                    serviceData: ["180D": Data([1])], txPowerLevel: -8, isConnectable: true),
                rssi: -64),
            .discovered(peripheral: p, name: nil, advertisement: AdvertisementData(), rssi: 127),
            .scanStopped,
            .connectionFailed(peripheral: p, error: RecordedError(domain: .coreBluetooth, code: 10)),
            .connected(peripheral: p, mtu: 185),
            .servicesDiscovered(
                peripheral: p, services: [RecordedService(uuid: "180D", isPrimary: true, handle: 1, endHandle: 9)]),
            .characteristicsDiscovered(
                peripheral: p, service: 1,
                characteristics: [RecordedCharacteristic(uuid: "2A37", properties: [.notify, .read], handle: 3)]),
            .descriptorsDiscovered(
                peripheral: p, characteristic: 3, descriptors: [RecordedDescriptor(uuid: "2902", handle: 4)]),
            .read(peripheral: p, handle: 3, result: .success(.bytes(Data([0x06, 0x48])))),
            .read(peripheral: p, handle: 3, result: .success(.placeholder("token"))),
            .read(peripheral: p, handle: 5, result: .failure(RecordedError(domain: .att, code: 2))),
            .write(peripheral: p, handle: 5, value: .bytes(Data([1])), withResponse: true, error: nil),
            .write(
                peripheral: p, handle: 5, value: .placeholder("key"), withResponse: false,
                error: RecordedError(domain: .kit, code: 1)),
            .notificationState(peripheral: p, handle: 3, enabled: true, error: nil),
            .notificationState(
                peripheral: p, handle: 3, enabled: false, error: RecordedError(domain: .att, code: 0x0F)),
            .valueUpdated(peripheral: p, handle: 3, value: .bytes(Data()), isIndication: false),
            .valueUpdated(peripheral: p, handle: 3, value: .bytes(Data([9])), isIndication: true),
            .disconnected(peripheral: p, error: RecordedError(domain: .coreBluetooth, code: 7)),
            .disconnected(peripheral: p, error: nil),
        ]
        return SessionRecording(
            entries: events.enumerated().map {
                SessionRecording.Entry(time: .milliseconds(7 * $0.offset) + .nanoseconds(1), event: $0.element)
            })
    }

    @Test func everyKindOfEventSurvivesTheFileUnchanged() throws {
        let recording = Self.everyEvent
        #expect(Set(recording.entries.map(\.event.name)) == Set(RecordedEvent.names))
        let text = recording.jsonText
        #expect(text.hasPrefix(#"{"format": "mockble-recording", "version": 1, "events": ["#))
        #expect(text.split(separator: "\n").count == recording.entries.count + 2)
        #expect(try SessionRecording(json: Data(text.utf8)) == recording)
        #expect(recording.placeholders == ["key", "token"])
        #expect(recording.connectedPeripherals == [Self.watch])
    }

    @Test func anEmptyRecordingIsOneLine() throws {
        let text = SessionRecording().jsonText
        #expect(text == #"{"format": "mockble-recording", "version": 1, "events": []}"# + "\n")
        #expect(try SessionRecording(json: Data(text.utf8)) == SessionRecording())
    }

    static let head = #"{"format": "mockble-recording", "version": 1, "events": ["#
    static let id = "E4546FDA-DA9E-4A73-96DA-AEC92CD44D42"

    /// A file of one event line (line 2).
    static func file(_ event: String) -> String { head + "\n" + event + "\n]}" }

    @Test(arguments: [
        ("{", FixtureError.Kind.invalidJSON, 1, 2, ""),
        ("[]", .wrongType(expected: "an object"), 1, 1, ""),
        (#"{"format": "mockble-recording", "version": 1}"#, .missingField("events"), 1, 1, ""),
        (#"{"version": 1, "events": []}"#, .missingField("format"), 1, 1, ""),
        (#"{"format": 1, "version": 1, "events": []}"#, .wrongType(expected: "a string"), 1, 12, "format"),
        (#"{"format": "btsnoop", "version": 1, "events": []}"#, .unknownValue("btsnoop"), 1, 12, "format"),
        (#"{"format": "mockble-recording", "version": 2, "events": []}"#, .valueOutOfRange, 1, 44, "version"),
        (#"{"format": "mockble-recording", "events": []}"#, .missingField("version"), 1, 1, ""),
        (
            #"{"format": "mockble-recording", "version": 1, "events": {}}"#, .wrongType(expected: "an array"), 1, 57,
            "events"
        ),
        (
            #"{"format": "mockble-recording", "version": 1, "events": [], "extra": 1}"#, .unknownField("extra"), 1,
            61, "extra"
        ),
    ])
    func aBadDocumentIsRefusedNamingWhereAndWhy(
        text: String, kind: FixtureError.Kind, line: Int, column: Int, path: String
    ) {
        #expect {
            try SessionRecording(json: Data(text.utf8), file: "bad.recording.json")
        } throws: { error in
            guard let error = error as? FixtureError else { return false }
            return error.kind == kind && error.line == line && error.column == column && error.path == path
                && error.file == "bad.recording.json"
        }
    }

    @Test(arguments: [
        ("1", FixtureError.Kind.wrongType(expected: "an object"), 1, "events[0]"),
        (#"{"time": "0s"}"#, .missingField("event"), 1, "events[0]"),
        (#"{"time": "0s", "event": 3}"#, .wrongType(expected: "a string"), 25, "events[0].event"),
        (#"{"time": "0s", "event": "conected"}"#, .unknownValue("conected"), 25, "events[0].event"),
        (#"{"event": "scanStopped"}"#, .missingField("time"), 1, "events[0]"),
        (#"{"time": "soon", "event": "scanStopped"}"#, .badDuration("soon"), 10, "events[0].time"),
        (
            #"{"time": "0s", "event": "scanStopped", "peripheral": "x"}"#, .unknownField("peripheral"), 40,
            "events[0].peripheral"
        ),
        (#"{"time": "0s", "event": "connected", "mtu": 23}"#, .missingField("peripheral"), 1, "events[0]"),
        (
            #"{"time": "0s", "event": "connected", "peripheral": "nope", "mtu": 23}"#,
            .wrongType(expected: "a UUID string"), 52, "events[0].peripheral"
        ),
        (
            #"{"time": "0s", "event": "connected", "peripheral": "\#(id)", "mtu": 22}"#, .valueOutOfRange, 99,
            "events[0].mtu"
        ),
        (#"{"time": "0s", "event": "connected", "peripheral": "\#(id)"}"#, .missingField("mtu"), 1, "events[0]"),
        (#"{"time": "0s", "event": "scanStarted"}"#, .missingField("allowDuplicates"), 1, "events[0]"),
        (
            #"{"time": "0s", "event": "scanStarted", "allowDuplicates": false, "services": ["1"]}"#,
            .badUUID(BluetoothUUID.ParseError(input: "1", reason: .invalidLength(1))), 79, "events[0].services[0]"
        ),
        (
            #"{"time": "0s", "event": "discovered", "peripheral": "\#(id)", "advertisement": {}}"#,
            .missingField("rssi"), 1, "events[0]"
        ),
        (
            #"{"time": "0s", "event": "discovered", "peripheral": "\#(id)", "rssi": 128, "advertisement": {}}"#,
            .valueOutOfRange, 101, "events[0].rssi"
        ),
        (
            #"{"time": "0s", "event": "read", "peripheral": "\#(id)", "handle": 3}"#, .missingField("value"), 1,
            "events[0]"
        ),
        (
            #"{"time": "0s", "event": "read", "peripheral": "\#(id)", "handle": 3, "value": {"hex": "01"}, "error": {"domain": "att", "code": 2}}"#,
            .unknownField("error"), 133, "events[0].error"
        ),
        (
            #"{"time": "0s", "event": "read", "peripheral": "\#(id)", "handle": 0, "value": {"hex": "01"}}"#,
            .valueOutOfRange, 97, "events[0].handle"
        ),
        (
            #"{"time": "0s", "event": "read", "peripheral": "\#(id)", "handle": 3, "error": {"domain": "ble", "code": 2}}"#,
            .unknownValue("ble"), 120, "events[0].error.domain"
        ),
        (
            #"{"time": "0s", "event": "read", "peripheral": "\#(id)", "handle": 3, "error": {"domain": "att", "code": 0}}"#,
            .valueOutOfRange, 135, "events[0].error.code"
        ),
        (
            #"{"time": "0s", "event": "read", "peripheral": "\#(id)", "handle": 3, "error": {"domain": "kit", "code": 2}}"#,
            .valueOutOfRange, 135, "events[0].error.code"
        ),
        (
            #"{"time": "0s", "event": "read", "peripheral": "\#(id)", "handle": 3, "value": {"placeholder": ""}}"#,
            .wrongType(expected: "a non-empty string"), 125, "events[0].value.placeholder"
        ),
        (
            #"{"time": "0s", "event": "read", "peripheral": "\#(id)", "handle": 3, "value": {"placeholder": "a", "hex": "01"}}"#,
            .unknownField("hex"), 130, "events[0].value.hex"
        ),
        (
            #"{"time": "0s", "event": "read", "peripheral": "\#(id)", "handle": 3, "value": {"hex": "0"}}"#,
            .badByteValue, 117, "events[0].value.hex"
        ),
        (
            #"{"time": "0s", "event": "write", "peripheral": "\#(id)", "handle": 3, "value": {"hex": "01"}}"#,
            .missingField("withResponse"), 1, "events[0]"
        ),
        (
            #"{"time": "0s", "event": "update", "peripheral": "\#(id)", "handle": 3, "value": {"hex": "01"}, "indication": "no"}"#,
            .wrongType(expected: "a boolean"), 140, "events[0].indication"
        ),
        (
            #"{"time": "0s", "event": "characteristics", "peripheral": "\#(id)", "service": 1, "characteristics": [{"uuid": "2A37", "properties": ["reed"], "handle": 3}]}"#,
            .unknownProperty("reed"), 164, "events[0].characteristics[0].properties[0]"
        ),
        (
            #"{"time": "0s", "event": "services", "peripheral": "\#(id)", "services": [{"uuid": "180D", "primary": true, "handle": 1}]}"#,
            .missingField("endHandle"), 104, "events[0].services[0]"
        ),
        (
            #"{"time": "0s", "event": "services", "peripheral": "\#(id)", "services": [{"uuid": "180D", "primary": true, "handle": 5, "endHandle": 4}]}"#,
            .valueOutOfRange, 164, "events[0].services[0].endHandle"
        ),
        (
            #"{"time": "0s", "event": "descriptors", "peripheral": "\#(id)", "characteristic": 3, "descriptors": {}}"#,
            .wrongType(expected: "an array"), 130, "events[0].descriptors"
        ),
    ])
    func aBadEventIsRefusedNamingItsLineColumnAndField(
        event: String, kind: FixtureError.Kind, column: Int, path: String
    ) {
        #expect {
            try SessionRecording(json: Data(Self.file(event).utf8))
        } throws: { error in
            guard let error = error as? FixtureError else { return false }
            return error.kind == kind && error.line == 2 && error.column == column && error.path == path
        }
    }

    @Test func timesThatRunBackwardsAreRefusedAtTheLaterEvent() {
        let text =
            Self.head + "\n" + #"{"time": "2s", "event": "scanStopped"},"# + "\n"
            + #"{"time": "1s", "event": "scanStopped"}"# + "\n]}"
        #expect {
            try SessionRecording(json: Data(text.utf8))
        } throws: { error in
            guard let error = error as? FixtureError else { return false }
            return error.kind == .valueOutOfRange && error.line == 3 && error.column == 10
                && error.path == "events[1].time"
                && error.description.contains("not before the previous event's")
        }
    }
}
