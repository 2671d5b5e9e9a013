import BLECore
import BLEMockKit
import Foundation
import Testing

@testable import BLECBM

/// A `CBMPeripheral`'s name is the system's, as CoreBluetooth's is: the local name the device last
/// advertised until the system has connected to it, then its GAP device name, kept from then on
/// (also when the device advertises another name: an app that lists devices by their current
/// advertised name reads `CBAdvertisementDataLocalNameKey`).
@Suite(.timeLimit(.minutes(10)))
struct PeripheralNameTests {
    private let watch = UUID(uuidString: "6A1E0000-0000-4000-8000-00000000A7C1")!

    @Test func aPeripheralNeverConnectedIsNamedByItsLastAdvertisedName() {
        var names = SystemPeripheralNames()
        let gap = RemotePeripheral(identifier: watch, name: "Hybrid Watch")
        #expect(names.naming(gap).name == nil)
        names.noteAdvertisement("Watch-AB12", of: watch)
        #expect(names.naming(gap).name == "Watch-AB12")
        names.noteAdvertisement(nil, of: watch)
        #expect(names.naming(gap).name == "Watch-AB12")
        names.noteAdvertisement("Watch-CD34", of: watch)
        #expect(names.naming(gap).name == "Watch-CD34")
        #expect(!names.hasConnected(watch))
    }

    @Test func onceConnectedAPeripheralKeepsItsGAPNameWhateverItAdvertises() {
        var names = SystemPeripheralNames()
        names.noteAdvertisement("Watch-AB12", of: watch)
        names.noteConnected(watch)
        #expect(names.naming(RemotePeripheral(identifier: watch, name: "Hybrid Watch")).name == "Hybrid Watch")
        names.noteAdvertisement("Watch-CD34", of: watch)
        #expect(names.naming(RemotePeripheral(identifier: watch, name: "Hybrid Watch")).name == "Hybrid Watch")
        // A device whose GAP name the simulation does not know keeps the advertised one.
        #expect(names.naming(RemotePeripheral(identifier: watch, name: nil)).name == "Watch-CD34")
        #expect(names.hasConnected(watch))
    }

    @Test func aPeripheralRetrievedWithoutAnAdvertisedNameIsKnownFromAnEarlierConnection() {
        var names = SystemPeripheralNames()
        let gap = RemotePeripheral(identifier: watch, name: "Hybrid Watch")
        names.noteRetrieved(watch)
        #expect(names.naming(gap).name == "Hybrid Watch")
        var heard = SystemPeripheralNames()
        heard.noteAdvertisement("Watch-AB12", of: watch)
        heard.noteRetrieved(watch)
        #expect(heard.naming(gap).name == "Watch-AB12")
        #expect(!heard.hasConnected(watch))
    }

    @Test(arguments: [false, true])
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    func aScannedWatchIsNamedAsAdvertisedThenByItsGAPNameForEveryManager(realistic: Bool) async throws {
        let bridge = MockBLEBridge(configuration: realistic ? .realistic(seed: 31) : .init(seed: 31))
        var configuration: MockPeripheralManager.Configuration = realistic ? .realistic(seed: 31) : .fast
        configuration.name = "Hybrid Watch"
        let device = MockPeripheralManager(configuration: configuration, bridge: bridge)
        let names = try await bridge.run { @MainActor () -> [String?] in
            #expect(await device.waitForPoweredOn() == .poweredOn)
            try await device.startAdvertising(AdvertisementData(localName: "Watch-AB12"))
            let (manager, journal, peripheral) = try await Self.scanned(on: bridge)
            var seen = [peripheral.name]
            manager.connect(peripheral)
            try await bridge.waitForApp { journal.entries.contains("connect") }
            seen.append(peripheral.name)
            manager.cancelPeripheralConnection(peripheral)
            try await bridge.waitForApp { journal.entries.contains("disconnect") }
            seen.append(peripheral.name)
            // The device advertises another name: the system keeps the GAP name it read, for this
            // manager's object and for a second manager's (one system per phone).
            await device.stopAdvertising()
            try await device.startAdvertising(AdvertisementData(localName: "Watch-CD34"))
            let (other, second, found) = try await Self.scanned(on: bridge)
            seen.append(found.name)
            seen.append(other.retrievePeripherals(withIdentifiers: [peripheral.identifier]).first?.name)
            withExtendedLifetime(second) {}
            return seen
        }
        #expect(names == ["Watch-AB12", "Hybrid Watch", "Hybrid Watch", "Hybrid Watch", "Hybrid Watch"])
    }

    @Test @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    func aPeripheralThatAdvertisesNoNameHasNoneUntilConnected() async throws {
        let bridge = MockBLEBridge(seed: 32)
        var configuration = MockPeripheralManager.Configuration.fast
        configuration.name = "Hybrid Watch"
        let device = MockPeripheralManager(configuration: configuration, bridge: bridge)
        try await device.startAdvertising(AdvertisementData(serviceUUIDs: ["180F"]))
        let names = try await bridge.run { @MainActor () -> [String?] in
            let (manager, journal, peripheral) = try await Self.scanned(on: bridge)
            let before = peripheral.name
            manager.connect(peripheral)
            try await bridge.waitForApp { journal.entries.contains("connect") }
            return [before, peripheral.name]
        }
        #expect(names == [nil, "Hybrid Watch"])
    }

    /// A new manager on `bridge` (with its delegate, which it holds weakly), once it has found a
    /// peripheral by scanning (the scan stopped), and that peripheral.
    @MainActor
    private static func scanned(on bridge: MockBLEBridge) async throws -> (CBMCentralManager, Journal, CBMPeripheral) {
        let journal = Journal()
        let manager = CBMCentralManager(bridge: bridge, delegate: journal, queue: nil)
        try await bridge.waitForApp { manager.state == .poweredOn }
        manager.scanForPeripherals(withServices: nil)
        try await bridge.waitForApp { !journal.discovered.isEmpty }
        manager.stopScan()
        return (manager, journal, journal.discovered[0])
    }
}
