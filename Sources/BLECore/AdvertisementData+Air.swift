extension AdvertisementData {
    /// The most advertising data a device sends in one advertisement: 1,650 bytes, with
    /// Bluetooth 5's extended advertising (Core, Vol 4, Part E, 7.8.54); legacy advertising
    /// carries 31 bytes and 31 more in a scan response.
    package static let maximumAirLength = 1_650

    /// The most data one AD structure carries after its type byte: 254 bytes, as its length
    /// byte counts the type too (Core Specification Supplement, Part A, 1).
    package static let maximumFieldLength = 254

    /// The bytes the advertisement's AD structures take on the air, each with its length and
    /// type: the flags (3), the local name, the service and solicited UUID lists (one structure
    /// per width), the manufacturer data, each service data entry and the transmit power level
    /// (3). Overflow-area UUIDs are not counted: they are iOS's own, carried in Apple's
    /// manufacturer data by the system.
    package var airLength: Int {
        func list(_ uuids: [BluetoothUUID]) -> Int {
            BluetoothUUID.Width.allCases.reduce(0) { total, width in
                let count = uuids.reduce(0) { $0 + ($1.width == width ? 1 : 0) }
                return total + (count == 0 ? 0 : 2 + count * width.rawValue / 8)
            }
        }
        var length = 3 + list(serviceUUIDs) + list(solicitedServiceUUIDs)
        if let localName { length += 2 + localName.utf8.count }
        if let manufacturerData { length += 2 + manufacturerData.count }
        for (uuid, data) in serviceData { length += 2 + uuid.width.rawValue / 8 + data.count }
        if txPowerLevel != nil { length += 3 }
        return length
    }

    /// Why no device could send this advertisement (a field too long for an AD structure, or
    /// more than extended advertising carries), or `nil`.
    package var airProblem: String? {
        let limit = Self.maximumFieldLength
        func tooLong(_ field: String, _ count: Int, _ room: Int = limit) -> String {
            "\(field) is \(count) bytes; one AD structure carries at most \(room) (its length byte counts its type "
                + "too)"
        }
        if let localName, localName.utf8.count > limit { return tooLong("localName", localName.utf8.count) }
        if let manufacturerData, manufacturerData.count > limit {
            return tooLong("manufacturerData", manufacturerData.count)
        }
        for (uuid, data) in serviceData.sorted(by: { $0.key.uuidString < $1.key.uuidString })
        where uuid.width.rawValue / 8 + data.count > limit {
            return tooLong("serviceData[\(uuid)]", data.count, limit - uuid.width.rawValue / 8)
        }
        let length = airLength
        guard length > Self.maximumAirLength else { return nil }
        return "the advertisement takes \(length) bytes on the air; a device sends at most "
            + "\(Self.maximumAirLength) (extended advertising; legacy advertising carries 31, and 31 more in a "
            + "scan response)"
    }
}
