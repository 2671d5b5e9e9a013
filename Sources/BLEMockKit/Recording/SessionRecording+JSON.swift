import BLECore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

extension SessionRecording {
    /// The recording as a file: `{"format": "mockble-recording", "version": 1, "events": […]}`
    /// with one event per line, ending with a newline. ``init(json:file:)`` reads it back.
    public var jsonText: String {
        var text =
            "{\"format\": \(TraceValue.string(Self.formatName).json), \"version\": \(Self.version), \"events\": ["
        for (index, entry) in entries.enumerated() {
            text += (index == 0 ? "\n  " : ",\n  ") + Self.value(of: entry).json
        }
        return text + (entries.isEmpty ? "]}\n" : "\n]}\n")
    }

    /// One entry as JSON: `time`, `event`, then the event's fields.
    static func value(of entry: Entry) -> TraceValue {
        var members: [(key: String, value: TraceValue)] = [
            (key: "time", value: .string(FixtureDuration.string(entry.time)))
        ]
        func add(_ key: String, _ value: TraceValue) { members.append((key: key, value: value)) }
        func add(_ key: String, _ error: RecordedError?) {
            if let error {
                add(
                    key,
                    .object([
                        (key: "domain", value: .string(error.domain.rawValue)), (key: "code", value: .int(error.code)),
                    ]))
            }
        }
        let event = entry.event
        add("event", .string(event.name))
        if let peripheral = event.peripheral { add("peripheral", .string(peripheral.uuidString)) }
        switch event {
        case .scanStarted(let services, let allowDuplicates):
            if let services { add("services", .array(services.map { .string($0.description) })) }
            add("allowDuplicates", .bool(allowDuplicates))
        case .scanStopped:
            break
        case .discovered(_, let name, let advertisement, let rssi):
            if let name { add("name", .string(name)) }
            add("rssi", .int(rssi))
            add("advertisement", PeripheralProfile.advertisementValue(advertisement))
        case .connected(_, let mtu):
            add("mtu", .int(mtu))
        case .connectionFailed(_, let error):
            add("error", error)
        case .disconnected(_, let error):
            add("error", error)
        case .servicesDiscovered(_, let services):
            add(
                "services",
                .array(
                    services.map { service in
                        .object([
                            (key: "uuid", value: .string(service.uuid.description)),
                            (key: "primary", value: .bool(service.isPrimary)),
                            (key: "handle", value: .int(Int(service.handle))),
                            (key: "endHandle", value: .int(Int(service.endHandle))),
                        ])
                    }))
        case .characteristicsDiscovered(_, let service, let characteristics):
            add("service", .int(Int(service)))
            add(
                "characteristics",
                .array(
                    characteristics.map { characteristic in
                        .object([
                            (key: "uuid", value: .string(characteristic.uuid.description)),
                            (key: "properties", value: .array(characteristic.properties.names.map { .string($0) })),
                            (key: "handle", value: .int(Int(characteristic.handle))),
                        ])
                    }))
        case .descriptorsDiscovered(_, let characteristic, let descriptors):
            add("characteristic", .int(Int(characteristic)))
            add(
                "descriptors",
                .array(
                    descriptors.map { descriptor in
                        .object([
                            (key: "uuid", value: .string(descriptor.uuid.description)),
                            (key: "handle", value: .int(Int(descriptor.handle))),
                        ])
                    }))
        case .read(_, let handle, let result):
            add("handle", .int(Int(handle)))
            switch result {
            case .success(let value): add("value", Self.value(of: value))
            case .failure(let error): add("error", error)
            }
        case .write(_, let handle, let value, let withResponse, let error):
            add("handle", .int(Int(handle)))
            add("value", Self.value(of: value))
            add("withResponse", .bool(withResponse))
            add("error", error)
        case .notificationState(_, let handle, let enabled, let error):
            add("handle", .int(Int(handle)))
            add("enabled", .bool(enabled))
            add("error", error)
        case .valueUpdated(_, let handle, let value, let isIndication):
            add("handle", .int(Int(handle)))
            add("value", Self.value(of: value))
            add("indication", .bool(isIndication))
        }
        return .object(members)
    }

    /// A value as JSON: `{"hex": "…"}`, or `{"placeholder": "name"}`.
    static func value(of value: RecordedValue) -> TraceValue {
        switch value {
        case .bytes(let bytes): .object([(key: "hex", value: .string(FixtureBytes.hexString(bytes)))])
        case .placeholder(let name): .object([(key: "placeholder", value: .string(name))])
        }
    }
}

extension RecordedEvent {
    /// The event's name in a recording file.
    public var name: String {
        switch self {
        case .scanStarted: "scanStarted"
        case .scanStopped: "scanStopped"
        case .discovered: "discovered"
        case .connected: "connected"
        case .connectionFailed: "connectionFailed"
        case .disconnected: "disconnected"
        case .servicesDiscovered: "services"
        case .characteristicsDiscovered: "characteristics"
        case .descriptorsDiscovered: "descriptors"
        case .read: "read"
        case .write: "write"
        case .notificationState: "notificationState"
        case .valueUpdated: "update"
        }
    }

    /// Every event name a recording file may use, in the order ``RecordedEvent`` lists them.
    public static let names = [
        "scanStarted", "scanStopped", "discovered", "connected", "connectionFailed", "disconnected", "services",
        "characteristics", "descriptors", "read", "write", "notificationState", "update",
    ]
}
