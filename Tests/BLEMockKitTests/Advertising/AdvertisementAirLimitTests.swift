import BLECore
import Foundation
import Testing

@testable import BLEMockKit

/// An advertisement no device could send (a field longer than one AD structure carries, or more
/// than extended advertising carries in all) is refused where it is given; everything a device
/// can send is accepted and heard whole.
@Suite("Advertisements: what no device could send is refused", .timeLimit(.minutes(10)))
struct AdvertisementAirLimitTests {
    @Test("The air length counts each AD structure with its length and type, one list per UUID width")
    func theAirLengthCountsEachStructure() {
        #expect(AdvertisementData().airLength == 3)
        #expect(AdvertisementData(localName: "HRM-1").airLength == 3 + 2 + 5)
        // 180D and 180F share a 16-bit list; a 128-bit UUID takes a list of its own.
        let services: [BluetoothUUID] = ["180D", "180F", "6E400001-B5A3-F393-E0A9-E50E24DCCA9E"]
        #expect(AdvertisementData(serviceUUIDs: services).airLength == 3 + (2 + 4) + (2 + 16))
        #expect(AdvertisementData(solicitedServiceUUIDs: ["1812"]).airLength == 3 + 4)
        #expect(AdvertisementData(manufacturerData: Data([0xFF, 0xFF, 1])).airLength == 3 + 5)
        #expect(AdvertisementData(serviceData: ["FEAA": Data([1, 2])]).airLength == 3 + 2 + 2 + 2)
        #expect(AdvertisementData(txPowerLevel: -4).airLength == 3 + 3)
        // Overflow-area UUIDs are iOS's own, in Apple's manufacturer data.
        #expect(AdvertisementData(overflowServiceUUIDs: services).airLength == 3)
    }

    @Test(
        "A field longer than one AD structure carries is refused, naming the field and its length",
        arguments: [
            (AdvertisementData(manufacturerData: Data(count: 255)), "manufacturerData is 255 bytes", 254),
            (AdvertisementData(localName: String(repeating: "é", count: 128)), "localName is 256 bytes", 254),
            (AdvertisementData(serviceData: ["FEAA": Data(count: 253)]), "serviceData[FEAA] is 253 bytes", 252),
            (
                AdvertisementData(serviceData: ["6E400001-B5A3-F393-E0A9-E50E24DCCA9E": Data(count: 239)]),
                "serviceData[6E400001-B5A3-F393-E0A9-E50E24DCCA9E] is 239 bytes", 238
            ),
        ])
    func aFieldTooLongForOneStructureIsRefused(advertisement: AdvertisementData, field: String, room: Int) async {
        let peripheral = MockPeripheralManager(bridge: MockBLEBridge())
        await #expect(
            throws: APIMisuseError.invalidArgument(
                "MockPeripheralManager.startAdvertising(_:): \(field); one AD structure carries at most \(room) (its "
                    + "length byte counts its type too)")
        ) {
            try await peripheral.startAdvertising(advertisement)
        }
        #expect(await !peripheral.isAdvertising)
    }

    @Test("More than the 1,650 bytes of extended advertising in all is refused with the length")
    func moreThanExtendedAdvertisingCarriesIsRefused() async {
        var fields: [BluetoothUUID: Data] = [:]
        for index in 0..<7 { fields[BluetoothUUID(UInt16(0xFE00 + index))] = Data(count: 252) }
        let advertisement = AdvertisementData(serviceData: fields)
        #expect(advertisement.airLength == 3 + 7 * 256)
        let peripheral = MockPeripheralManager(bridge: MockBLEBridge())
        await #expect(
            throws: APIMisuseError.invalidArgument(
                "MockPeripheralManager.startAdvertising(_:): the advertisement takes 1795 bytes on the air; a device "
                    + "sends at most 1650 (extended advertising; legacy advertising carries 31, and 31 more in a scan "
                    + "response)")
        ) {
            try await peripheral.startAdvertising(advertisement)
        }
    }

    @Test("The longest fields a device can send are accepted and heard whole")
    func theLongestFieldsAreHeardWhole() async throws {
        let bridge = MockBLEBridge()
        let advertisement = AdvertisementData(
            localName: String(repeating: "w", count: 254), manufacturerData: Data(repeating: 7, count: 254),
            serviceData: ["FEAA": Data(repeating: 1, count: 252)])
        #expect(advertisement.airProblem == nil)
        let peripheral = MockPeripheralManager(bridge: bridge)
        try await peripheral.startAdvertising(advertisement)
        let central = MockCentralManager(bridge: bridge)
        let events = central.events()
        try await central.scanForPeripherals(withServices: nil)
        for await event in events {
            guard case .discovered(let discovery) = event else { continue }
            #expect(discovery.advertisementData.manufacturerData == advertisement.manufacturerData)
            #expect(discovery.advertisementData.localName == advertisement.localName)
            #expect(discovery.advertisementData.serviceData == advertisement.serviceData)
            break
        }
    }

    @Test("A profile file advertising more than a device can send is rejected where its advertisement is")
    func aProfileFileAdvertisingTooMuchIsRejected() throws {
        let json = """
            {
              "advertisement": {"localName": "W", "manufacturerData": {"zeros": 65536}}
            }
            """
        do {
            _ = try PeripheralProfile(json: Data(json.utf8), file: "watch.json")
            Issue.record("expected the profile to be rejected")
        } catch {
            #expect(error.kind == .valueOutOfRange)
            #expect(error.line == 2 && error.path == "advertisement")
            #expect(
                error.message
                    == "manufacturerData is 65536 bytes; one AD structure carries at most 254 (its length byte counts "
                    + "its type too)")
        }
    }
}
