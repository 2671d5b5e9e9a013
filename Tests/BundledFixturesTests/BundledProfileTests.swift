import BLECore
import BLEMockKit
import Foundation
import Testing

/// The bundled profiles as a user of the package sees them: loaded by their typed names,
/// with no path and no `@testable` access.
@Suite("Bundled profiles", .timeLimit(.minutes(10)))
struct BundledProfileTests {
    @Test func theKitBundlesTheEightProfilesTheIssueNames() {
        let expected: Set<BundledProfile> = [
            .battery, .deviceInformation, .environmentalSensing, .fitnessWatch, .heartRate, .kitchenSink,
            .nordicUART, .nrfBlinky,
        ]
        #expect(expected.isSubset(of: Set(BundledProfile.allCases)))
    }

    @Test func aProfileIsNamedAfterItsFile() {
        #expect(BundledProfile.heartRate.rawValue == "heart-rate")
        #expect(BundledProfile.heartRate.fileName == "heart-rate.json")
        #expect(BundledProfile(rawValue: "nordic-uart") == .nordicUART)
        #expect(BundledProfile(rawValue: "heart-rate.json") == nil)
    }

    @Test(arguments: BundledProfile.allCases)
    func everyBundledProfileLoadsByName(_ name: BundledProfile) throws {
        let profile = PeripheralProfile.bundled(name)
        #expect(!profile.services.isEmpty, "\(name.fileName)")
        #expect(profile == (try PeripheralProfile(json: name.json, file: name.fileName)))
    }

    @Test(arguments: BundledProfile.allCases)
    func everyBundledProfileBecomesAPeripheralACentralDiscovers(_ name: BundledProfile) async throws {
        let profile = PeripheralProfile.bundled(name)
        let bridge = MockBLEBridge()
        let peripheral = try await profile.makePeripheral(on: bridge)
        #expect(await peripheral.manager.isAdvertising)
        for id in profile.characteristicIDs {
            #expect(peripheral.characteristic(id: id)?.uuid == profile.characteristic(id: id)?.uuid, "\(id)")
        }

        let central = MockCentralManager(bridge: bridge)
        try await central.scanForPeripherals(withServices: nil)
        await central.stopScan()
        try await central.connect(peripheral.identifier)
        let discovered = try await central.discoverAll(for: peripheral.identifier)
        let primary = profile.services.filter(\.isPrimary)
        #expect(await central.services(of: peripheral.identifier).map(\.uuid) == primary.map(\.uuid))
        #expect(discovered.map(\.uuid) == primary.flatMap(\.characteristics).map(\.uuid))
        for (remote, described) in zip(discovered, primary.flatMap(\.characteristics)) {
            #expect(remote.properties == described.properties.declared, "\(name.fileName): \(described.uuid)")
            guard let value = described.value, described.permissions.contains(.readable) else { continue }
            #expect(try await central.readValue(for: remote) == value, "\(name.fileName): \(described.uuid)")
        }
    }

    @Test func theHeartRateProfileIsTheSensorTheFixturesDescribe() async throws {
        let profile = PeripheralProfile.bundled(.heartRate)
        #expect(profile.name == "Heart Rate Sensor")
        #expect(profile.preferredMTU == 185)
        #expect(profile.characteristicIDs == ["hrm", "loc", "ctl", "battery"])

        let bridge = MockBLEBridge()
        let sensor = try await profile.makePeripheral(on: bridge)
        let central = MockCentralManager(bridge: bridge)
        try await central.scanForPeripherals(withServices: ["180D"])
        try await central.connect(sensor.identifier)
        try await central.discoverAll(for: sensor.identifier)
        let location = try await central.characteristic("2A38", of: sensor.identifier)
        #expect(try await central.readValue(for: location) == Data([0x01]))
    }

    @Test func aBundledProfileTakesAConfigurationAndKeepsItsOwnFields() async throws {
        var configuration = MockPeripheralManager.Configuration()
        configuration.name = "Renamed"
        configuration.strictLengths = true
        let battery = try await PeripheralProfile.bundled(.battery).makePeripheral(
            on: MockBLEBridge(), configuration: configuration)
        #expect(battery.manager.configuration.name == "Battery Tag")
        #expect(battery.manager.configuration.rssi == -72)
        #expect(battery.manager.configuration.strictLengths)
    }
}
