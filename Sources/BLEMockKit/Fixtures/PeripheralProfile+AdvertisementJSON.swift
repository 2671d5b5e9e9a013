import BLECore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

extension PeripheralProfile {
    /// An advertisement as the profile format writes it (the fields it carries, in the
    /// format's order), which ``advertisement(_:)`` reads back. The capture importer and the
    /// session recording both write advertisements this way.
    package static func advertisementValue(_ advertisement: AdvertisementData) -> TraceValue {
        var members: [(key: String, value: TraceValue)] = []
        func add(_ key: String, _ value: TraceValue) { members.append((key: key, value: value)) }
        let uuids: ([BluetoothUUID]) -> TraceValue = { .array($0.map { .string($0.description) }) }
        let bytes: (Data) -> TraceValue = { .object([(key: "hex", value: .string(FixtureBytes.hexString($0)))]) }
        if let name = advertisement.localName { add("localName", .string(name)) }
        if !advertisement.serviceUUIDs.isEmpty { add("serviceUUIDs", uuids(advertisement.serviceUUIDs)) }
        if let data = advertisement.manufacturerData { add("manufacturerData", bytes(data)) }
        if !advertisement.serviceData.isEmpty {
            let sorted = advertisement.serviceData.sorted { $0.key < $1.key }
            add("serviceData", .object(sorted.map { (key: $0.key.description, value: bytes($0.value)) }))
        }
        if let power = advertisement.txPowerLevel { add("txPowerLevel", .int(power)) }
        if let connectable = advertisement.isConnectable { add("isConnectable", .bool(connectable)) }
        if !advertisement.solicitedServiceUUIDs.isEmpty {
            add("solicitedServiceUUIDs", uuids(advertisement.solicitedServiceUUIDs))
        }
        if !advertisement.overflowServiceUUIDs.isEmpty {
            add("overflowServiceUUIDs", uuids(advertisement.overflowServiceUUIDs))
        }
        return .object(members)
    }
}
