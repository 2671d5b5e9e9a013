import BLECore
import BLEMockKit
import Foundation
import Testing

@Suite("Bundled fixture files", .timeLimit(.minutes(10)))
struct FixtureFilesTests {
    @Test(
        "Every bundled profile loads, and a central can scan, connect, discover and read it",
        arguments: FixtureTestSupport.bundledFiles)
    func bundledProfileWorksEndToEnd(file: String) async throws {
        let profile = try FixtureTestSupport.bundled(file)
        let bridge = MockBLEBridge()
        let loaded = try await profile.makePeripheral(on: bridge)
        #expect(await loaded.manager.isAdvertising)
        #expect(loaded.services.map(\.uuid) == profile.services.map(\.uuid))
        let (central, remote) = try await FixtureTestSupport.connectedCentral(to: loaded, on: bridge)
        #expect(await central.isConnected(loaded.identifier))
        let described = profile.services.flatMap(\.characteristics)
        #expect(Set(remote.map(\.uuid)) == Set(described.map(\.uuid)))
        for characteristic in described {
            let local = try #require(loaded.characteristics.first { $0.uuid == characteristic.uuid })
            let match = try #require(remote.first { $0.handle == local.handle })
            #expect(match.properties == characteristic.properties.declared)
            guard let value = characteristic.value, characteristic.permissions.contains(.readable) else { continue }
            #expect(try await central.readValue(for: match) == value, "\(file): \(characteristic.uuid)")
        }
    }

    @Test(
        "Every characteristic a scenario would touch has an id, and ids resolve to published characteristics",
        arguments: FixtureTestSupport.bundledFiles)
    func idsResolve(file: String) async throws {
        let profile = try FixtureTestSupport.bundled(file)
        let loaded = try await profile.makePeripheral(on: MockBLEBridge())
        for id in profile.characteristicIDs {
            let local = try #require(loaded.characteristic(id: id))
            #expect(local.uuid == profile.characteristic(id: id)?.uuid)
            #expect(try loaded.characteristic(named: id) == local)
        }
        #expect(loaded.characteristicsByID.count == profile.characteristicIDs.count)
    }

    @Test("The heart-rate fixture matches the contract: names, advertisement, timing and MTU")
    func heartRateFields() throws {
        let profile = try FixtureTestSupport.bundled("heart-rate.json")
        #expect(profile.name == "Heart Rate Sensor")
        #expect(profile.advertisement?.localName == "HRM-1")
        #expect(profile.advertisement?.serviceUUIDs == ["180D", "180F"])
        #expect(profile.advertisingInterval == .milliseconds(100))
        #expect(profile.rssi == -60)
        #expect(profile.preferredMTU == 185)
        #expect(profile.characteristicIDs == ["hrm", "loc", "ctl", "battery"])
        #expect(profile.characteristic(id: "loc")?.value == Data([0x01]))
        #expect(profile.characteristic(id: "ctl")?.descriptors == [.userDescription("Control Point")])
    }

    @Test("The fitness watch publishes the Fossil Hybrid HR service and prefers ATT_MTU 247")
    func fitnessWatch() async throws {
        let profile = try FixtureTestSupport.bundled("fitness-watch.json")
        #expect(profile.preferredMTU == 247)
        let service = try #require(profile.services.first)
        #expect(service.uuid == "3DDA0001-957F-7D4A-34A6-74696673696D")
        let expected: [(String, BluetoothUUID, CharacteristicProperties)] = [
            ("deviceInfo", "3DDA0002-957F-7D4A-34A6-74696673696D", .read),
            ("fileOperations", "3DDA0003-957F-7D4A-34A6-74696673696D", [.write, .notify]),
            ("fileData", "3DDA0004-957F-7D4A-34A6-74696673696D", [.writeWithoutResponse, .notify]),
            ("configuration", "3DDA0005-957F-7D4A-34A6-74696673696D", [.read, .write]),
            ("command", "3DDA0006-957F-7D4A-34A6-74696673696D", [.write, .notify]),
        ]
        #expect(service.characteristics.map(\.id) == expected.map(\.0))
        #expect(service.characteristics.map(\.uuid) == expected.map(\.1))
        #expect(service.characteristics.map(\.properties) == expected.map(\.2))
        let bridge = MockBLEBridge()
        let loaded = try await profile.makePeripheral(on: bridge)
        let (central, _) = try await FixtureTestSupport.connectedCentral(to: loaded, on: bridge)
        #expect(try await central.maximumWriteValueLength(for: loaded.identifier, type: .withoutResponse) == 244)
    }

    @Test("Dynamic characteristics answer with the value set by id; notifications reach subscribers")
    func dynamicValuesAndNotifications() async throws {
        let bridge = MockBLEBridge()
        let loaded = try await FixtureTestSupport.bundled("nrf-blinky.json").makePeripheral(on: bridge)
        let (central, _) = try await FixtureTestSupport.connectedCentral(to: loaded, on: bridge)
        #expect(try await loaded.setValue(Data([0x01]), forCharacteristicID: "button"))
        #expect(try await loaded.setValue(Data([0x01]), forCharacteristicID: "nope") == false)
        let button = try await central.characteristic("00001524-1212-EFDE-1523-785FEABCD123", of: loaded.identifier)
        #expect(try await central.readValue(for: button) == Data([0x01]))
        try await central.setNotifyValue(true, for: button)
        let events = central.events()
        let local = try #require(loaded.characteristic(id: "button"))
        #expect(try await loaded.manager.updateValue(Data([0x00]), for: local, onSubscribedCentrals: nil))
        let received = await events.prefixArray(1)
        #expect(received.count == 1)
    }

    @Test("A missing file is a missingFile error naming the path")
    func missingFile() throws {
        let url = FixtureTestSupport.peripheralsFolder.appendingPathComponent("no-such-device.json")
        do {
            _ = try PeripheralProfile.load(contentsOf: url)
            Issue.record("expected missingFile")
        } catch {
            #expect(error.kind == .missingFile(url.path))
            #expect(error.file == url.path)
            #expect(
                error.description == "\(url.path): no such file: \(url.path); "
                    + "check the path (relative paths are resolved from the scenario)")
        }
    }
}
