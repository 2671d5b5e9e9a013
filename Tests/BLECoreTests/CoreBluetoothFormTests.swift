import Foundation
import Testing

@testable import BLECore

/// A UUID type of another framework (as `CBUUID` is), to show the conversions apply the
/// caller's UUID conversion both ways.
private struct ForeignUUID: Hashable {
    var text: String
    init(_ uuid: BluetoothUUID) { text = "foreign:" + uuid.uuidString }
    var bluetoothUUID: BluetoothUUID { BluetoothUUID(stringLiteral: String(text.dropFirst("foreign:".count))) }
}

@Suite("CoreBluetooth forms: advertisement dictionaries", .timeLimit(.minutes(10)))
struct AdvertisementDictionaryTests {
    static let keys = AdvertisementDictionaryKeys.coreBluetooth

    static let full = AdvertisementData(
        localName: "Watch", serviceUUIDs: ["180D", "FE59"], overflowServiceUUIDs: ["180F"],
        solicitedServiceUUIDs: ["1812"], manufacturerData: Data([0x4C, 0x00, 0x01]),
        serviceData: ["FE59": Data([1, 2]), "180A": Data([3])], txPowerLevel: -8, isConnectable: false)

    @Test("The keys are CoreBluetooth's constant strings")
    func keysAreCoreBluetoothsStrings() {
        #expect(Self.keys.localName == "kCBAdvDataLocalName")
        #expect(Self.keys.txPowerLevel == "kCBAdvDataTxPowerLevel")
        #expect(Self.keys.serviceUUIDs == "kCBAdvDataServiceUUIDs")
        #expect(Self.keys.serviceData == "kCBAdvDataServiceData")
        #expect(Self.keys.manufacturerData == "kCBAdvDataManufacturerData")
        #expect(Self.keys.overflowServiceUUIDs == "kCBAdvDataOverflowServiceUUIDs")
        #expect(Self.keys.isConnectable == "kCBAdvDataIsConnectable")
        #expect(Self.keys.solicitedServiceUUIDs == "kCBAdvDataSolicitedServiceUUIDs")
    }

    @Test("Every field goes into its key with the caller's UUID type, and reads back the same")
    func everyFieldRoundTrips() throws {
        let dictionary = Self.full.dictionary(keys: Self.keys) { ForeignUUID($0) }
        #expect(dictionary.count == 8)
        #expect(dictionary[Self.keys.localName] as? String == "Watch")
        #expect(dictionary[Self.keys.serviceUUIDs] as? [ForeignUUID] == [ForeignUUID("180D"), ForeignUUID("FE59")])
        #expect(dictionary[Self.keys.overflowServiceUUIDs] as? [ForeignUUID] == [ForeignUUID("180F")])
        #expect(dictionary[Self.keys.solicitedServiceUUIDs] as? [ForeignUUID] == [ForeignUUID("1812")])
        #expect(dictionary[Self.keys.manufacturerData] as? Data == Data([0x4C, 0x00, 0x01]))
        #expect(
            dictionary[Self.keys.serviceData] as? [ForeignUUID: Data] == [
                ForeignUUID("FE59"): Data([1, 2]), ForeignUUID("180A"): Data([3]),
            ])
        #expect((dictionary[Self.keys.txPowerLevel] as? NSNumber)?.intValue == -8)
        #expect((dictionary[Self.keys.isConnectable] as? NSNumber)?.boolValue == false)

        let back = AdvertisementData(dictionary: dictionary, keys: Self.keys) { (uuid: ForeignUUID) in
            uuid.bluetoothUUID
        }
        #expect(back == Self.full)
    }

    @Test("Absent fields have no key, and an empty dictionary reads as an empty advertisement")
    func absentFieldsHaveNoKey() {
        let empty = AdvertisementData().dictionary(keys: Self.keys) { $0 }
        #expect(empty.isEmpty)
        let named = AdvertisementData(localName: "Tag").dictionary(keys: Self.keys) { $0 }
        #expect(Array(named.keys) == [Self.keys.localName])
        #expect(
            AdvertisementData(dictionary: [:], keys: Self.keys) { (uuid: BluetoothUUID) in uuid } == AdvertisementData()
        )
    }

    @Test("Unknown keys and values of the wrong type are ignored; numbers may be Swift Int or Bool")
    func wrongTypesAreIgnored() {
        let dictionary: [String: Any] = [
            Self.keys.localName: 42,
            Self.keys.serviceUUIDs: ["180D"],  // strings, not the caller's UUID type
            Self.keys.manufacturerData: "bytes",
            Self.keys.serviceData: ["180D": Data([1])],
            Self.keys.txPowerLevel: 4,
            Self.keys.isConnectable: true,
            "kCBAdvDataSomethingNew": Data([9]),
        ]
        let read = AdvertisementData(dictionary: dictionary, keys: Self.keys) { (uuid: ForeignUUID) in
            uuid.bluetoothUUID
        }
        #expect(read == AdvertisementData(txPowerLevel: 4, isConnectable: true))
        #expect(AdvertisementData.number("4") == nil)
        #expect(AdvertisementData.number(nil) == nil)
        #expect(AdvertisementData.number(NSNumber(value: 7))?.intValue == 7)
        #expect(AdvertisementData.number(false)?.boolValue == false)
    }
}

@Suite("CoreBluetooth forms: UUIDs, errors and descriptor values", .timeLimit(.minutes(10)))
struct CoreBluetoothFormTests {
    @Test("A UUID comes from CoreBluetooth's 2, 4 or 16 bytes, else from its string, else is the nil UUID")
    func uuidFromCoreBluetoothBytes() {
        #expect(BluetoothUUID(coreBluetoothBytes: [0x18, 0x0D], string: "ignored") == "180D")
        #expect(BluetoothUUID(coreBluetoothBytes: [0x12, 0x34, 0x56, 0x78], string: "ignored") == "12345678")
        let long: BluetoothUUID = "6E400001-B5A3-F393-E0A9-E50E24DCCA9E"
        #expect(BluetoothUUID(coreBluetoothBytes: long.bytes, string: "ignored") == long)
        #expect(BluetoothUUID(coreBluetoothBytes: [1, 2, 3], string: "2A37") == "2A37")
        #expect(
            BluetoothUUID(coreBluetoothBytes: [], string: "not a uuid")
                == BluetoothUUID(high: 0, low: 0))
    }

    @Test("An ATT error comes from an NSError of its domain with a code in 0…255, and goes back the same")
    func attErrorsCrossTheDomain() throws {
        let domain = ATTError.coreBluetoothDomain
        #expect(domain == "CBATTErrorDomain")
        let error = ATTError(.insufficientEncryption)
        let nsError = error.nsError(domain: domain)
        #expect(nsError.domain == domain)
        #expect(nsError.code == 0x0F)
        #expect(nsError.userInfo[NSLocalizedDescriptionKey] as? String == error.description)
        #expect(ATTError(nsError: nsError, domain: domain) == error)
        #expect(
            ATTError(nsError: NSError(domain: domain, code: 0x80), domain: domain) == ATTError(.init(rawValue: 0x80)))
        #expect(ATTError(nsError: NSError(domain: "CBErrorDomain", code: 3), domain: domain) == nil)
        #expect(ATTError(nsError: NSError(domain: domain, code: 256), domain: domain) == nil)
        #expect(ATTError(nsError: NSError(domain: domain, code: -1), domain: domain) == nil)
    }

    @Test("A CoreBluetooth error comes from an NSError of its domain with a known code, and goes back the same")
    func coreBluetoothErrorsCrossTheDomain() {
        let domain = CoreBluetoothError.coreBluetoothDomain
        #expect(domain == "CBErrorDomain")
        let error = CoreBluetoothError(.connectionTimeout)
        let nsError = error.nsError(domain: domain)
        #expect(nsError.domain == domain)
        #expect(nsError.code == 6)
        #expect(nsError.userInfo[NSLocalizedDescriptionKey] as? String == error.description)
        #expect(CoreBluetoothError(nsError: nsError, domain: domain) == error)
        #expect(CoreBluetoothError(nsError: NSError(domain: "CBATTErrorDomain", code: 6), domain: domain) == nil)
        #expect(CoreBluetoothError(nsError: NSError(domain: domain, code: 999), domain: domain) == nil)
        // Errors of other types bridge to NSError with their own domain: not ours.
        #expect(CoreBluetoothError(nsError: ATTError(.readNotPermitted), domain: domain) == nil)
    }

    @Test("A User Description is handed to CoreBluetooth as a string, every other descriptor as data")
    func descriptorValues() {
        #expect(GATTDescriptor.userDescription("Heart rate").coreBluetoothValue as? String == "Heart rate")
        let format = GATTDescriptor(uuid: "2904", value: Data([0x04, 0x00]))
        #expect(format.coreBluetoothValue as? Data == Data([0x04, 0x00]))
        #expect(format.coreBluetoothValue as? String == nil)
    }
}
