import BLECore
import Foundation
import Testing

@testable import BLECapture

@Suite("Advertising data", .timeLimit(.minutes(10)))
struct AdvertisingDataParserTests {
    @Test func everyFollowedADTypeFillsItsField() {
        let custom = BluetoothUUID(stringLiteral: "A0B40001-926D-4D61-98DF-8C5C62EE53B3")
        let data: [UInt8] =
            [0x02, 0x01, 0x06]  // flags: skipped
            + [0x05, 0x09] + Array("Hi-1".utf8)  // complete local name
            + [0x05, 0x03, 0x1A, 0x18, 0x0D, 0x18]  // 16-bit UUIDs 181A, 180D
            + [0x05, 0x05, 0x78, 0x56, 0x34, 0x12]  // 32-bit UUID 12345678
            + [0x11, 0x07] + custom.bytes.reversed()  // 128-bit UUID
            + [0x02, 0x0A, 0xF8]  // TX power -8
            + [0x03, 0x14, 0x12, 0x18]  // solicited 1812
            + [0x05, 0x16, 0x1A, 0x18, 0x0A, 0x09]  // service data 181A: 0a09
            + [0x05, 0xFF, 0xFF, 0xFF, 0x01, 0x02]  // manufacturer data
            + [0x00]  // padding
        var advertisement = AdvertisementData()
        #expect(AdvertisingDataParser.merge(data, into: &advertisement) == nil)
        #expect(advertisement.localName == "Hi-1")
        #expect(advertisement.serviceUUIDs == ["181A", "180D", "12345678", custom])
        #expect(advertisement.txPowerLevel == -8)
        #expect(advertisement.solicitedServiceUUIDs == ["1812"])
        #expect(advertisement.serviceData == ["181A": Data([0x0A, 0x09])])
        #expect(advertisement.manufacturerData == Data([0xFF, 0xFF, 0x01, 0x02]))
    }

    @Test func aShortenedNameIsUsedWhenNoCompleteNameCame() {
        var advertisement = AdvertisementData()
        AdvertisingDataParser.merge([0x03, 0x08] + Array("Hi".utf8), into: &advertisement)
        #expect(advertisement.localName == "Hi")
        AdvertisingDataParser.merge(
            [0x05, 0x09] + Array("Hi-1".utf8) + [0x03, 0x08] + Array("Ho".utf8), into: &advertisement)
        #expect(advertisement.localName == "Hi-1")
    }

    @Test func aStructureLongerThanTheDataStopsReadingAndKeepsWhatCameBefore() {
        var advertisement = AdvertisementData()
        let problem = AdvertisingDataParser.merge([0x03, 0x09, 0x41, 0x42, 0x09, 0xFF, 0x01], into: &advertisement)
        #expect(problem == .truncatedStructure(offset: 4, length: 9, available: 2))
        #expect(advertisement.localName == "AB")
    }

    @Test func aUUIDListOfTheWrongLengthIsReported() {
        var advertisement = AdvertisementData()
        #expect(
            AdvertisingDataParser.merge([0x04, 0x03, 0x1A, 0x18, 0x0D], into: &advertisement)
                == .badUUIDList(type: 0x03, length: 3))
        #expect(
            AdvertisingDataParser.merge([0x02, 0x16, 0x1A], into: &advertisement) == .badUUIDList(type: 0x16, length: 1)
        )
        #expect(advertisement.serviceUUIDs.isEmpty)
    }
}
