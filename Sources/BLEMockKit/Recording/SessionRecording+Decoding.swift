import BLECore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

extension SessionRecording {
    /// Reads a recording file (UTF-8 JSON, as ``jsonText`` writes it), strictly: an unknown
    /// field or event, a missing field, a value of the wrong type or out of range, another
    /// format or version, or times that run backwards are errors naming the line, column and
    /// field.
    ///
    /// - Parameters:
    ///   - json: the file's bytes.
    ///   - file: the file's name, for error messages.
    /// - Throws: ``FixtureError``: e.g. ``FixtureError/Kind/unknownValue(_:)`` for another
    ///   `format` or an unknown `event`, ``FixtureError/Kind/valueOutOfRange`` for another
    ///   `version` or a time before the previous event's.
    public init(json: Data, file: String? = nil) throws(FixtureError) {
        do throws(FixtureError) {
            let root = try FixtureJSON.parse(json)
            let object = try FixtureObject(
                root, fields: ["format", "version", "events"],
                example: #"{"format": "mockble-recording", "version": 1, "events": []}"#)
            let format = try object.required("format", example: "\"\(Self.formatName)\"")
            guard let name = format.string else {
                throw FixtureError.wrongType(format, expected: "a string", example: "\"\(Self.formatName)\"")
            }
            guard name == Self.formatName else {
                throw FixtureError(
                    .unknownValue(name), at: format, message: "\"\(name)\" is not a recording format",
                    fix: "a recording file starts with \"format\": \"\(Self.formatName)\"")
            }
            let versionNode = try object.required("version", example: "\(Self.version)")
            _ = try FixtureObject.integer(
                versionNode, what: "version", in: Self.version...Self.version,
                hint: "this kit reads version \(Self.version) recordings")
            guard let events = try object.array("events", example: #"[{"time": "0s", "event": "scanStopped"}]"#)
            else {
                throw FixtureError(
                    .missingField("events"), at: root, message: "missing field \"events\"",
                    fix: "add it, e.g. \"events\": []")
            }
            var entries: [Entry] = []
            for node in events {
                let entry = try Self.entry(node)
                if let last = entries.last, entry.time < last.time, let time = node.member("time") {
                    throw FixtureError.outOfRange(
                        time, what: "time", value: FixtureDuration.string(entry.time),
                        range: "\(FixtureDuration.string(last.time))… (not before the previous event's)",
                        hint: "events are listed in the order they happened")
                }
                entries.append(entry)
            }
            self.init(entries: entries)
        } catch {
            throw error.inFile(file)
        }
    }

    /// The fields each event has besides `time`, `event` and `peripheral`.
    static let eventFields: [String: [String]] = [
        "scanStarted": ["services", "allowDuplicates"], "scanStopped": [],
        "discovered": ["name", "rssi", "advertisement"], "connected": ["mtu"], "connectionFailed": ["error"],
        "disconnected": ["error"], "services": ["services"], "characteristics": ["service", "characteristics"],
        "descriptors": ["characteristic", "descriptors"], "read": ["handle", "value", "error"],
        "write": ["handle", "value", "withResponse", "error"], "notificationState": ["handle", "enabled", "error"],
        "update": ["handle", "value", "indication"],
    ]

    static let example = #"{"time": "0.1s", "event": "read", "peripheral": "…", "handle": 3, "value": {"hex": "01"}}"#

    /// One event object.
    static func entry(_ node: FixtureJSON) throws(FixtureError) -> Entry {
        guard node.members != nil else { throw FixtureError.wrongType(node, expected: "an object", example: example) }
        guard let nameNode = node.member("event") else {
            throw FixtureError(
                .missingField("event"), at: node, message: "missing field \"event\"",
                fix: "add it, e.g. \"event\": \"read\"")
        }
        guard let name = nameNode.string else {
            throw FixtureError.wrongType(nameNode, expected: "a string", example: "\"read\"")
        }
        guard let specific = eventFields[name] else {
            throw FixtureError(
                .unknownValue(name), at: nameNode, message: "unknown event \"\(name)\"",
                fix: FixtureError.choice(for: name, among: RecordedEvent.names))
        }
        let hasPeripheral = !["scanStarted", "scanStopped"].contains(name)
        let object = try FixtureObject(
            node, fields: ["time", "event"] + (hasPeripheral ? ["peripheral"] : []) + specific, example: example)
        let time = try FixtureDuration.parse(object.required("time", example: "\"0.1s\""))
        var peripheral = UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))
        if hasPeripheral {
            let peripheralNode = try object.required("peripheral", example: "\"E621E1F8-C36C-495A-93FC-0C247A3E6E5F\"")
            guard let text = peripheralNode.string, let parsed = UUID(uuidString: text) else {
                throw FixtureError(
                    .wrongType(expected: "a UUID string"), at: peripheralNode,
                    message: "expected a peripheral identifier, found \(peripheralNode.typeName)",
                    fix: "write a UUID such as \"E621E1F8-C36C-495A-93FC-0C247A3E6E5F\"")
            }
            peripheral = parsed
        }
        return Entry(time: time, event: try event(name, object, peripheral: peripheral))
    }

    private static func event(_ name: String, _ object: FixtureObject, peripheral: UUID) throws(FixtureError)
        -> RecordedEvent
    {
        switch name {
        case "scanStarted":
            let allowDuplicates = try requiredBool(object, "allowDuplicates")
            return .scanStarted(services: try object.uuids("services"), allowDuplicates: allowDuplicates)
        case "scanStopped":
            return .scanStopped
        case "discovered":
            guard let rssi = try object.integer("rssi", in: -127...127, hint: "dBm; 127 when unknown") else {
                throw missing(object, "rssi", example: "-60")
            }
            let advertisement = try PeripheralProfile.advertisement(
                object.required("advertisement", example: #"{"localName": "HRM-1"}"#))
            return .discovered(
                peripheral: peripheral, name: try object.string("name"), advertisement: advertisement, rssi: rssi)
        case "connected":
            let range = PeripheralProfile.preferredMTURange
            let mtu = try FixtureObject.integer(object.required("mtu", example: "185"), what: "mtu", in: range)
            return .connected(peripheral: peripheral, mtu: mtu)
        case "connectionFailed":
            return .connectionFailed(
                peripheral: peripheral, error: try error(object.required("error", example: errorExample)))
        case "disconnected":
            return .disconnected(peripheral: peripheral, error: try optionalError(object))
        case "services":
            var services: [RecordedService] = []
            for element in try requiredArray(object, "services", example: #"[{"uuid": "180D", "primary": true}]"#) {
                let service = try FixtureObject(
                    element, fields: ["uuid", "primary", "handle", "endHandle"],
                    example: #"{"uuid": "180D", "primary": true, "handle": 1, "endHandle": 5}"#)
                let first = try handle(service, "handle")
                let last = try handle(service, "endHandle")
                if last < first, let node = service["endHandle"] {
                    throw FixtureError.outOfRange(
                        node, what: "endHandle", value: "\(last)", range: "\(first)…65535",
                        hint: "a service's end handle is not before its handle")
                }
                services.append(
                    RecordedService(
                        uuid: try FixtureObject.uuid(service.required("uuid", example: "\"180D\"")),
                        isPrimary: try requiredBool(service, "primary"), handle: first, endHandle: last))
            }
            return .servicesDiscovered(peripheral: peripheral, services: services)
        case "characteristics":
            var characteristics: [RecordedCharacteristic] = []
            for element in try requiredArray(object, "characteristics", example: #"[{"uuid": "2A37"}]"#) {
                let characteristic = try FixtureObject(
                    element, fields: ["uuid", "properties", "handle"],
                    example: #"{"uuid": "2A37", "properties": ["notify"], "handle": 3}"#)
                characteristics.append(
                    RecordedCharacteristic(
                        uuid: try FixtureObject.uuid(characteristic.required("uuid", example: "\"2A37\"")),
                        properties: try PeripheralProfile.properties(
                            characteristic.required("properties", example: "[\"read\"]")),
                        handle: try handle(characteristic, "handle")))
            }
            return .characteristicsDiscovered(
                peripheral: peripheral, service: try handle(object, "service"), characteristics: characteristics)
        case "descriptors":
            var descriptors: [RecordedDescriptor] = []
            for element in try requiredArray(object, "descriptors", example: #"[{"uuid": "2902", "handle": 4}]"#) {
                let descriptor = try FixtureObject(
                    element, fields: ["uuid", "handle"], example: #"{"uuid": "2902", "handle": 4}"#)
                descriptors.append(
                    RecordedDescriptor(
                        uuid: try FixtureObject.uuid(descriptor.required("uuid", example: "\"2902\"")),
                        handle: try handle(descriptor, "handle")))
            }
            return .descriptorsDiscovered(
                peripheral: peripheral, characteristic: try handle(object, "characteristic"), descriptors: descriptors)
        case "read":
            let handle = try handle(object, "handle")
            switch (object["value"], object["error"]) {
            case (let value?, nil):
                return .read(peripheral: peripheral, handle: handle, result: .success(try self.value(value)))
            case (nil, let error?):
                return .read(peripheral: peripheral, handle: handle, result: .failure(try self.error(error)))
            case (_?, let error?):
                throw FixtureError(
                    .unknownField("error"), at: error, message: "a read has a value or an error, not both",
                    fix: "remove \"error\" for a read that succeeded, or \"value\" for one that failed")
            case (nil, nil):
                throw missing(object, "value", example: #"{"hex": "01"}"#)
            }
        case "write":
            return .write(
                peripheral: peripheral, handle: try handle(object, "handle"),
                value: try value(object.required("value", example: #"{"hex": "01"}"#)),
                withResponse: try requiredBool(object, "withResponse"), error: try optionalError(object))
        case "notificationState":
            return .notificationState(
                peripheral: peripheral, handle: try handle(object, "handle"),
                enabled: try requiredBool(object, "enabled"), error: try optionalError(object))
        default:  // "update": `eventFields` lists no other name
            return .valueUpdated(
                peripheral: peripheral, handle: try handle(object, "handle"),
                value: try value(object.required("value", example: #"{"hex": "01"}"#)),
                isIndication: try requiredBool(object, "indication"))
        }
    }

    static let errorExample = #"{"domain": "att", "code": 2}"#

    private static func missing(_ object: FixtureObject, _ key: String, example: String) -> FixtureError {
        FixtureError(
            .missingField(key), at: object.node, message: "missing field \"\(key)\"",
            fix: "add it, e.g. \"\(key)\": \(example)")
    }

    private static func requiredBool(_ object: FixtureObject, _ key: String) throws(FixtureError) -> Bool {
        guard let value = try object.bool(key) else { throw missing(object, key, example: "true") }
        return value
    }

    private static func requiredArray(_ object: FixtureObject, _ key: String, example: String) throws(FixtureError)
        -> [FixtureJSON]
    {
        guard let value = try object.array(key, example: example) else { throw missing(object, key, example: example) }
        return value
    }

    private static func handle(_ object: FixtureObject, _ key: String) throws(FixtureError) -> UInt16 {
        guard let handle = try PeripheralProfile.handle(object, key) else { throw missing(object, key, example: "3") }
        return handle
    }

    private static func optionalError(_ object: FixtureObject) throws(FixtureError) -> RecordedError? {
        guard let node = object["error"] else { return nil }
        return try error(node)
    }

    /// `{"domain": "att" | "cb" | "kit", "code": N}`.
    static func error(_ node: FixtureJSON) throws(FixtureError) -> RecordedError {
        let object = try FixtureObject(node, fields: ["domain", "code"], example: errorExample)
        let domainNode = try object.required("domain", example: "\"att\"")
        guard let name = domainNode.string else {
            throw FixtureError.wrongType(domainNode, expected: "a string", example: "\"att\"")
        }
        let names = RecordedError.Domain.allCases.map(\.rawValue)
        guard let domain = RecordedError.Domain(rawValue: name) else {
            throw FixtureError(
                .unknownValue(name), at: domainNode, message: "unknown error domain \"\(name)\"",
                fix: FixtureError.choice(for: name, among: names))
        }
        let range =
            switch domain {
            case .att: 1...255
            case .coreBluetooth: 0...Int(Int32.max)
            case .kit: 0...RecordedError.cancelledCode
            }
        let code = try FixtureObject.integer(object.required("code", example: "2"), what: "code", in: range)
        return RecordedError(domain: domain, code: code)
    }

    /// `{"hex": …}` (or another byte form of the fixture format), or `{"placeholder": "name"}`.
    static func value(_ node: FixtureJSON) throws(FixtureError) -> RecordedValue {
        guard node.member("placeholder") != nil else { return .bytes(try FixtureBytes.parse(node)) }
        let object = try FixtureObject(node, fields: ["placeholder"], example: #"{"placeholder": "token"}"#)
        guard let name = try object.string("placeholder", example: "\"token\""), !name.isEmpty else {
            throw FixtureError.wrongType(
                object["placeholder"] ?? node, expected: "a non-empty string", example: "\"token\"")
        }
        return .placeholder(name)
    }
}
