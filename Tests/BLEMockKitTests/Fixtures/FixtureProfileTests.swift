import BLECore
import BLEMockKit
import Foundation
import Testing

@Suite("Peripheral profiles: fields", .timeLimit(.minutes(10)))
struct FixtureProfileTests {
    @Test("Every profile field is read")
    func everyField() throws {
        let json = """
            {
              "name": "Heart Rate Sensor",
              "advertisement": {
                "localName": "HRM-1",
                "serviceUUIDs": ["180D"],
                "manufacturerData": {"hex": "4c000215"},
                "serviceData": {"180D": {"hex": "01"}},
                "txPowerLevel": -8,
                "isConnectable": true,
                "solicitedServiceUUIDs": ["1812"],
                "overflowServiceUUIDs": ["0000FEAA"]
              },
              "advertisingInterval": "100ms",
              "rssi": -60,
              "preferredMTU": 517,
              "services": [
                {"uuid": "180F", "primary": false, "characteristics": []},
                {
                  "uuid": "180D",
                  "includedServices": ["180F"],
                  "characteristics": [
                    {"id": "hrm", "uuid": "2A37", "properties": ["notify"], "permissions": []},
                    {"id": "loc", "uuid": "2A38", "properties": ["read"], "permissions": ["readable"],
                     "value": {"hex": "01"}},
                    {"uuid": "2A39", "properties": ["write"], "permissions": ["writeable"],
                     "descriptors": [{"uuid": "2901", "value": {"utf8": "Control Point"}}]}
                  ]
                }
              ]
            }
            """
        let profile = try PeripheralProfile(json: Data(json.utf8), file: "hr.json")
        #expect(profile.name == "Heart Rate Sensor")
        let expected = AdvertisementData(
            localName: "HRM-1", serviceUUIDs: ["180D"], overflowServiceUUIDs: ["FEAA"],
            solicitedServiceUUIDs: ["1812"], manufacturerData: Data([0x4C, 0x00, 0x02, 0x15]),
            serviceData: ["180D": Data([0x01])], txPowerLevel: -8, isConnectable: true)
        #expect(profile.advertisement == expected)
        #expect(profile.advertisingInterval == .milliseconds(100))
        #expect(profile.rssi == -60)
        #expect(profile.preferredMTU == 517)
        #expect(profile.services.map(\.uuid) == ["180F", "180D"])
        #expect(profile.services.map(\.isPrimary) == [false, true])
        #expect(profile.services[1].includedServices == ["180F"])
        let characteristics = profile.services[1].characteristics
        #expect(characteristics.map(\.id) == ["hrm", "loc", nil])
        #expect(characteristics.map(\.uuid) == ["2A37", "2A38", "2A39"])
        #expect(characteristics.map(\.properties) == [.notify, .read, .write])
        #expect(characteristics.map(\.permissions) == [[], .readable, .writeable])
        #expect(characteristics.map(\.value) == [nil, Data([0x01]), nil])
        #expect(characteristics.map(\.isStatic) == [false, true, false])
        #expect(characteristics[2].descriptors == [GATTDescriptor(uuid: "2901", value: Data("Control Point".utf8))])
    }

    @Test("Optional fields default: no name, advertisement, timing or services; services are primary")
    func defaults() throws {
        let empty = try PeripheralProfile(json: Data("{}".utf8))
        #expect(empty == PeripheralProfile())
        let minimal = try PeripheralProfile(
            json: Data(#"{"name": "X", "services": [{"uuid": "180F"}, {"uuid": "FFF0", "primary": false}]}"#.utf8))
        #expect(minimal.services.map(\.isPrimary) == [true, false])
        #expect(minimal.services[0].characteristics == [])
        #expect(minimal.defaultAdvertisement == AdvertisementData(localName: "X", serviceUUIDs: ["180F"]))
    }

    @Test("The profile's name, RSSI, interval and MTU override the configuration; the rest is kept")
    func configurationOverride() throws {
        let profile = PeripheralProfile(
            name: "P", advertisingInterval: .milliseconds(20), rssi: -90, preferredMTU: 23)
        let base = MockPeripheralManager.Configuration(name: "Base", rssiVariation: 3, advertisesOnce: true)
        let configuration = profile.configuration(overriding: base)
        #expect(configuration.name == "P")
        #expect(configuration.rssi == -90)
        #expect(configuration.advertisingInterval == .milliseconds(20))
        #expect(configuration.mtu == .fixed(23))
        #expect(configuration.rssiVariation == 3)
        #expect(configuration.advertisesOnce)
        let kept = PeripheralProfile().configuration(overriding: base)
        #expect(kept.name == "Base" && kept.mtu == .fixed(517) && kept.rssi == -50)
    }

    @Test("The kitchen sink's properties and permissions map to the right bits")
    func kitchenSinkBits() throws {
        let profile = try FixtureTestSupport.bundled("kitchen-sink.json")
        let all = profile.services.flatMap(\.characteristics)
        let properties = all.reduce(CharacteristicProperties()) { $0.union($1.properties) }
        let permissions = all.reduce(AttributePermissions()) { $0.union($1.permissions) }
        #expect(properties.rawValue == 0x3FF)
        #expect(properties.names == CharacteristicProperties.named.map(\.name))
        #expect(permissions.rawValue == 0x0F)
        let bits: [String: UInt] = [
            "staticPattern": 0x83, "staticHex": 0x02, "dynamicReadWrite": 0x4E, "dynamicNotify": 0x110,
            "dynamicIndicate": 0x222, "secureWrite": 0x08, "echo": 0x1A,
        ]
        for (id, raw) in bits {
            #expect(profile.characteristic(id: id)?.properties.rawValue == raw, "\(id)")
        }
        #expect(profile.characteristic(id: "staticZeros")?.permissions == .readEncryptionRequired)
        #expect(profile.characteristic(id: "secureWrite")?.permissions.rawValue == 0x08)
        #expect(profile.characteristic(id: "dynamicReadWrite")?.permissions.rawValue == 0x03)
    }

    @Test("The kitchen sink covers every byte form, UUID width and advertisement key")
    func kitchenSinkCoverage() throws {
        let profile = try FixtureTestSupport.bundled("kitchen-sink.json")
        #expect(profile.characteristic(id: "staticPattern")?.value == Data((0..<300).map { UInt8($0 % 256) }))
        #expect(profile.characteristic(id: "staticHex")?.value == Data([0xDE, 0xAD, 0xBE, 0xEF, 0x00]))
        #expect(profile.characteristic(id: "staticUTF8")?.value == Data("Kitchen \"sink\" é🔧".utf8))
        #expect(profile.characteristic(id: "staticZeros")?.value == Data(count: 8))
        let uuids = profile.services.map(\.uuid) + profile.services.flatMap { $0.characteristics.map(\.uuid) }
        #expect(Set(uuids.map(\.width)) == Set(BluetoothUUID.Width.allCases))
        #expect(profile.services[1].includedServices == ["1234ABCD"])
        #expect(profile.services[0].isPrimary == false)
        let advertisement = try #require(profile.advertisement)
        #expect(advertisement.localName == "Sink ✓")
        #expect(
            advertisement.serviceData == [
                "FFE0": Data([0, 1, 2, 3]), "A0B40001-926D-4D61-98DF-8C5C62EE53B3": Data(count: 2),
            ])
        #expect(advertisement.manufacturerData == Data([0xFF, 0xFF, 0x01, 0x02]))
        #expect(advertisement.overflowServiceUUIDs == ["FEAA"] && advertisement.solicitedServiceUUIDs == ["1812"])
        #expect(profile.advertisingInterval == .microseconds(152_500))
    }

    @Test("Lookup by UUID works when unambiguous, throws when several characteristics share it")
    func lookupByUUID() async throws {
        let json = #"""
            {"services": [
              {"uuid": "AAA1", "characteristics": [{"id": "a", "uuid": "2A19", "properties": ["read"], "permissions": ["readable"]}]},
              {"uuid": "AAA2", "characteristics": [{"id": "b", "uuid": "2A19", "properties": ["read"], "permissions": ["readable"]},
                                                   {"uuid": "2A1A", "properties": [], "permissions": []}]}
            ]}
            """#
        let loaded = try await PeripheralProfile(json: Data(json.utf8)).makePeripheral(on: MockBLEBridge())
        #expect(try loaded.characteristic(uuid: "2A1A")?.handle == loaded.services[1].characteristics[1].handle)
        #expect(try loaded.characteristic(uuid: "2A00") == nil)
        #expect(try loaded.characteristic(named: "2A1A") != nil)
        #expect(try loaded.characteristic(named: "b")?.serviceUUID == "AAA2")
        #expect(try loaded.characteristic(named: "nothing") == nil)
        let handles = loaded.characteristics.filter { $0.uuid == "2A19" }.map(\.handle)
        #expect(throws: APIMisuseError.ambiguousCharacteristic("2A19", peripheral: loaded.identifier, handles: handles))
        {
            try loaded.characteristic(named: "2A19")
        }
    }

    @Test("A peripheral that cannot power on is shut down and the error thrown")
    func makePeripheralFailure() async throws {
        let bridge = MockBLEBridge()
        let profile = PeripheralProfile(services: [PeripheralProfile.Service(uuid: "180F")])
        await #expect(throws: APIMisuseError.notPoweredOn(operation: "add", state: .poweredOff)) {
            try await profile.makePeripheral(on: bridge, configuration: .init(initialState: .poweredOff))
        }
        // The peripheral it made is shut down: it is off the air and finished its streams.
        let made = try #require(await bridge.log.first { $0.kind == .stateChanged && $0.detail == "shut down" })
        let peripheral = try #require(made.peripheral)
        #expect(
            await bridge.log.filter { $0.peripheral == peripheral && $0.kind == .stateChanged }.map(\.detail)
                == ["poweredOff", "shut down"])
    }
}
