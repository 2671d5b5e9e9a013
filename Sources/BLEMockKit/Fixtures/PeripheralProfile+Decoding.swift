import BLECore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

extension PeripheralProfile {
    /// Reads a profile from UTF-8 JSON.
    ///
    /// - Parameters:
    ///   - json: the document.
    ///   - file: the file name errors should show (e.g. `heart-rate.json`), if any.
    /// - Throws: ``FixtureError`` naming `file`, the position, the path, the problem and a fix.
    public init(json: Data, file: String? = nil) throws(FixtureError) {
        do throws(FixtureError) {
            try self.init(node: try FixtureJSON.parse(json))
        } catch {
            throw error.inFile(file)
        }
    }

    /// Reads a profile file; errors show the file's path as `url` names it.
    ///
    /// - Throws: ``FixtureError`` of kind ``FixtureError/Kind/missingFile(_:)`` if the file
    ///   does not exist, ``FixtureError/Kind/unreadableFile(_:)`` if it cannot be read, or
    ///   any error of ``init(json:file:)``.
    public static func load(contentsOf url: URL) throws(FixtureError) -> PeripheralProfile {
        let data = try FixtureFile.read(url)
        return try PeripheralProfile(json: data, file: FixtureFile.label(url))
    }

    /// Reads a profile from a parsed node — a whole file, or the inline `"peripheral"` of a
    /// scenario (errors then show the node's path within the scenario).
    public init(node: FixtureJSON) throws(FixtureError) {
        let root = try FixtureObject(node, fields: Self.fields, example: #"{"name": "Sensor", "services": []}"#)
        self.init()
        name = try root.string("name", example: "\"Heart Rate Sensor\"")
        if let value = root["advertisement"] { advertisement = try Self.advertisement(value) }
        if let value = root["advertisingInterval"] {
            let interval = try FixtureDuration.parse(value)
            guard Self.advertisingIntervalRange.contains(interval) else {
                throw FixtureError.outOfRange(
                    value, what: "advertisingInterval", value: FixtureDuration.string(interval),
                    range: "20ms…10.24s", hint: "the Bluetooth advertising interval range")
            }
            advertisingInterval = interval
        }
        rssi = try root.integer("rssi", in: Self.rssiRange, hint: "dBm, e.g. -60")
        // Any integer, clamped to 23…517 as the shared format clamps the link's ATT_MTU.
        preferredMTU = try root.clampedInteger("preferredMTU", to: Self.preferredMTURange)
        services = try Self.services(root.array("services", example: "[{\"uuid\": \"180D\"}]") ?? [])
    }

    /// Reads an `advertisement` object.
    static func advertisement(_ node: FixtureJSON) throws(FixtureError) -> AdvertisementData {
        let object = try FixtureObject(node, fields: advertisementFields, example: #"{"localName": "HRM-1"}"#)
        var advertisement = AdvertisementData()
        advertisement.localName = try object.string("localName", example: "\"HRM-1\"")
        advertisement.serviceUUIDs = try object.uuids("serviceUUIDs") ?? []
        advertisement.overflowServiceUUIDs = try object.uuids("overflowServiceUUIDs") ?? []
        advertisement.solicitedServiceUUIDs = try object.uuids("solicitedServiceUUIDs") ?? []
        if let value = object["manufacturerData"] { advertisement.manufacturerData = try FixtureBytes.parse(value) }
        if let value = object["serviceData"] {
            let example = #"{"180D": {"hex": "01"}}"#
            guard let members = value.members else {
                throw FixtureError.wrongType(value, expected: "an object of UUIDs to byte values", example: example)
            }
            for member in members {
                let keyNode = FixtureJSON(
                    value: .string(member.key), line: member.line, column: member.column,
                    path: FixtureJSON.path(value.path, key: member.key))
                let uuid = try FixtureObject.uuid(keyNode)
                guard advertisement.serviceData[uuid] == nil else {
                    throw FixtureError(
                        .duplicateUUID(uuid), at: keyNode,
                        message: "service data for \(uuid) is given twice (as two spellings of one UUID)",
                        fix: "keep one of them")
                }
                advertisement.serviceData[uuid] = try FixtureBytes.parse(member.value)
            }
        }
        advertisement.txPowerLevel = try object.integer("txPowerLevel", in: -127...127, hint: "dBm")
        advertisement.isConnectable = try object.bool("isConnectable")
        if let problem = advertisement.airProblem {
            throw FixtureError(
                .valueOutOfRange, at: node, message: problem,
                fix: "advertise less (a long value belongs in a characteristic)")
        }
        return advertisement
    }
}
