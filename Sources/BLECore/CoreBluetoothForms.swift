import Foundation  // NSNumber and NSError, which FoundationEssentials does not have

// The logic of the conversions between the kit's value types and CoreBluetooth's forms
// (advertisement dictionaries, error domains, UUID bytes, descriptor values), written over
// plain strings and generic UUID types so that it builds and is tested everywhere. The
// `CoreBluetooth/` extensions, which exist only where CoreBluetooth does, and BLECBM both
// call these with their own UUID types and key constants.

/// The keys of CoreBluetooth's advertisement dictionary.
@usableFromInline
package struct AdvertisementDictionaryKeys: Sendable, Hashable {
    @usableFromInline package var localName: String
    @usableFromInline package var txPowerLevel: String
    @usableFromInline package var serviceUUIDs: String
    @usableFromInline package var serviceData: String
    @usableFromInline package var manufacturerData: String
    @usableFromInline package var overflowServiceUUIDs: String
    @usableFromInline package var isConnectable: String
    @usableFromInline package var solicitedServiceUUIDs: String

    package init(
        localName: String, txPowerLevel: String, serviceUUIDs: String, serviceData: String,
        manufacturerData: String, overflowServiceUUIDs: String, isConnectable: String,
        solicitedServiceUUIDs: String
    ) {
        self.localName = localName
        self.txPowerLevel = txPowerLevel
        self.serviceUUIDs = serviceUUIDs
        self.serviceData = serviceData
        self.manufacturerData = manufacturerData
        self.overflowServiceUUIDs = overflowServiceUUIDs
        self.isConnectable = isConnectable
        self.solicitedServiceUUIDs = solicitedServiceUUIDs
    }

    /// The strings CoreBluetooth's `CBAdvertisementData…Key` constants hold.
    package static let coreBluetooth = AdvertisementDictionaryKeys(
        localName: "kCBAdvDataLocalName", txPowerLevel: "kCBAdvDataTxPowerLevel",
        serviceUUIDs: "kCBAdvDataServiceUUIDs", serviceData: "kCBAdvDataServiceData",
        manufacturerData: "kCBAdvDataManufacturerData", overflowServiceUUIDs: "kCBAdvDataOverflowServiceUUIDs",
        isConnectable: "kCBAdvDataIsConnectable", solicitedServiceUUIDs: "kCBAdvDataSolicitedServiceUUIDs")
}

extension AdvertisementDictionaryKeys {
    /// The keys of this platform: CoreBluetooth's own constants where it exists, the same
    /// strings elsewhere.
    package static var platform: AdvertisementDictionaryKeys {
        #if canImport(CoreBluetooth)
            framework
        #else
            coreBluetooth
        #endif
    }
}

extension AdvertisementData {
    /// Reads an advertisement from a dictionary in CoreBluetooth's form, whose UUIDs are of
    /// type `UUIDValue` (`CBUUID`, `CBMUUID`), converted with `uuid`. Keys it does not know and
    /// values of unexpected types are ignored; numbers may be `NSNumber`, `Int` or `Bool`.
    package init<UUIDValue: Hashable>(
        dictionary: [String: Any], keys: AdvertisementDictionaryKeys, uuid: (UUIDValue) -> BluetoothUUID
    ) {
        func uuids(_ key: String) -> [BluetoothUUID] { (dictionary[key] as? [UUIDValue])?.map(uuid) ?? [] }
        var serviceData: [BluetoothUUID: Data] = [:]
        for (key, data) in dictionary[keys.serviceData] as? [UUIDValue: Data] ?? [:] { serviceData[uuid(key)] = data }
        self.init(
            localName: dictionary[keys.localName] as? String,
            serviceUUIDs: uuids(keys.serviceUUIDs),
            overflowServiceUUIDs: uuids(keys.overflowServiceUUIDs),
            solicitedServiceUUIDs: uuids(keys.solicitedServiceUUIDs),
            manufacturerData: dictionary[keys.manufacturerData] as? Data,
            serviceData: serviceData,
            txPowerLevel: Self.number(dictionary[keys.txPowerLevel])?.intValue,
            isConnectable: Self.number(dictionary[keys.isConnectable])?.boolValue)
    }

    /// The advertisement in CoreBluetooth's dictionary form, with a key for each present
    /// field: UUIDs converted with `uuid`, numbers as `NSNumber`. (Inlinable: a caller in
    /// another module gets it specialized for its UUID type; unspecialized, the dictionary and
    /// the conversions went through generic code on every discovery.)
    @inlinable
    package func dictionary<UUIDValue: Hashable>(
        keys: AdvertisementDictionaryKeys, uuid: (BluetoothUUID) -> UUIDValue
    ) -> [String: Any] {
        var dictionary: [String: Any] = [:]
        if let localName { dictionary[keys.localName] = localName }
        if !serviceUUIDs.isEmpty { dictionary[keys.serviceUUIDs] = serviceUUIDs.map(uuid) }
        if !overflowServiceUUIDs.isEmpty { dictionary[keys.overflowServiceUUIDs] = overflowServiceUUIDs.map(uuid) }
        if !solicitedServiceUUIDs.isEmpty {
            dictionary[keys.solicitedServiceUUIDs] = solicitedServiceUUIDs.map(uuid)
        }
        if let manufacturerData { dictionary[keys.manufacturerData] = manufacturerData }
        if !serviceData.isEmpty {
            var converted: [UUIDValue: Data] = [:]
            for (key, data) in serviceData { converted[uuid(key)] = data }
            dictionary[keys.serviceData] = converted
        }
        if let txPowerLevel { dictionary[keys.txPowerLevel] = NSNumber(value: txPowerLevel) }
        if let isConnectable { dictionary[keys.isConnectable] = NSNumber(value: isConnectable) }
        return dictionary
    }

    /// A number from a dictionary value: an `NSNumber`, or a Swift `Int` or `Bool`.
    package static func number(_ value: Any?) -> NSNumber? {
        switch value {
        case let number as NSNumber: number
        case let integer as Int: NSNumber(value: integer)
        case let bool as Bool: NSNumber(value: bool)
        default: nil
        }
    }
}

extension BluetoothUUID {
    /// A UUID from CoreBluetooth's bytes (`CBUUID.data`: 2, 4 or 16 bytes) or, should they
    /// be of another length, from its string form; the nil UUID if neither parses.
    package init(coreBluetoothBytes bytes: [UInt8], string: String) {
        if let uuid = try? BluetoothUUID(bytes: bytes) {
            self = uuid
        } else {
            self = (try? BluetoothUUID(string: string)) ?? BluetoothUUID(high: 0, low: 0)
        }
    }
}

extension ATTError {
    /// The name of CoreBluetooth's ATT error domain (`CBATTErrorDomain`).
    package static let coreBluetoothDomain = "CBATTErrorDomain"

    /// The ATT error an error of `domain` carries: `nil` for other domains and codes outside 0…255.
    package init?(nsError error: any Error, domain: String) {
        let nsError = error as NSError
        guard nsError.domain == domain, let raw = UInt8(exactly: nsError.code) else { return nil }
        self.init(Code(rawValue: raw))
    }

    /// The error as an `NSError` of `domain`, with the same code and this error's description.
    package func nsError(domain: String) -> NSError {
        NSError(domain: domain, code: Int(code.rawValue), userInfo: [NSLocalizedDescriptionKey: description])
    }
}

extension CoreBluetoothError {
    /// The name of CoreBluetooth's error domain (`CBErrorDomain`).
    package static let coreBluetoothDomain = "CBErrorDomain"

    /// The CoreBluetooth error an error of `domain` carries: `nil` for other domains and
    /// unknown codes.
    package init?(nsError error: any Error, domain: String) {
        let nsError = error as NSError
        guard nsError.domain == domain, let code = Code(rawValue: nsError.code) else { return nil }
        self.init(code)
    }

    /// The error as an `NSError` of `domain`, with the same code and this error's description.
    package func nsError(domain: String) -> NSError {
        NSError(domain: domain, code: code.rawValue, userInfo: [NSLocalizedDescriptionKey: description])
    }
}

extension GATTDescriptor {
    /// The value as CoreBluetooth's `CBMutableDescriptor` takes it: a `String` for the User
    /// Description (`2901`), `Data` for every other descriptor.
    package var coreBluetoothValue: any Sendable {
        uuid == .characteristicUserDescription ? String(decoding: value, as: UTF8.self) : value
    }
}
