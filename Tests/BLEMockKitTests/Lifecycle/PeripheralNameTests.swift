import BLECore
import BLEMockKit
import Foundation
import Testing

/// A peripheral's name as centrals see it: the system keeps the local name it heard (as
/// CoreBluetooth keeps a `CBPeripheral`'s name), so it does not vanish when the peripheral stops
/// advertising, and changes only with a `nameUpdated` event or a new advertisement heard.
@Suite("Peripheral names as centrals know them", .timeLimit(.minutes(10)))
struct PeripheralNameTests {
    @Test(
        "A watch that stops advertising once connected keeps its name in retrieval, disconnection and connection events",
        arguments: [false, true])
    func aNameHeardIsKeptWhenAdvertisingStops(shutsDown: Bool) async throws {
        let bridge = MockBLEBridge()
        let watch = MockPeripheralManager(bridge: bridge)
        try await watch.startAdvertising(AdvertisementData(localName: "Watch"))
        let central = MockCentralManager(bridge: bridge)
        let events = central.events()
        try await central.scanForPeripherals(withServices: nil)
        await central.stopScan()
        try await central.connect(watch.identifier)
        await watch.stopAdvertising()
        let retrieved = await central.retrievePeripherals(withIdentifiers: [watch.identifier])
        if shutsDown {
            await watch.shutDown()
        } else {
            await watch.simulateDisconnection(of: central.identifier)
        }
        _ = await bridge.finish()
        var connected: RemotePeripheral?
        var disconnected: RemotePeripheral?
        var nameEvents = 0
        for await event in events {
            switch event {
            case .connected(let peripheral): connected = peripheral
            case .disconnected(let peripheral, _): disconnected = peripheral
            case .nameUpdated: nameEvents += 1
            default: break
            }
        }
        let expected = RemotePeripheral(identifier: watch.identifier, name: "Watch")
        #expect(connected == expected)
        #expect(retrieved == [expected])
        #expect(disconnected == expected)
        #expect(nameEvents == 0)
    }

    @Test("A name no central heard is not known: a backgrounded advertiser scanned for stays nameless")
    func aNameNobodyHeardIsNotKnown() async throws {
        let bridge = MockBLEBridge()
        let peripheral = MockPeripheralManager(bridge: bridge)
        try await peripheral.startAdvertising(AdvertisementData(localName: "Quiet", serviceUUIDs: ["180F"]))
        await peripheral.simulateBackgroundExecution(true)
        let central = MockCentralManager(bridge: bridge)
        let events = central.events()
        try await central.scanForPeripherals(withServices: nil)
        await central.stopScan()
        await peripheral.stopAdvertising()
        let retrieved = await central.retrievePeripherals(withIdentifiers: [peripheral.identifier])
        #expect(retrieved == [RemotePeripheral(identifier: peripheral.identifier, name: nil)])
        _ = await bridge.finish()
        var discovered: [RemotePeripheral] = []
        for await event in events { if case .discovered(let found) = event { discovered.append(found.peripheral) } }
        #expect(discovered == [RemotePeripheral(identifier: peripheral.identifier, name: nil)])
    }

    @Test("A new local name heard replaces the one kept; a name-less advertisement keeps it")
    func aNewNameHeardReplacesTheOneKept() async throws {
        let bridge = MockBLEBridge()
        let peripheral = MockPeripheralManager(bridge: bridge)
        try await peripheral.startAdvertising(AdvertisementData(localName: "First"))
        let central = MockCentralManager(bridge: bridge)
        try await central.scanForPeripherals(withServices: nil)
        await central.stopScan()
        await peripheral.stopAdvertising()
        try await peripheral.startAdvertising(AdvertisementData(serviceUUIDs: ["180F"]))
        try await central.scanForPeripherals(withServices: nil)
        await central.stopScan()
        #expect(await central.retrievePeripherals(withIdentifiers: [peripheral.identifier]).map(\.name) == ["First"])
        await peripheral.stopAdvertising()
        try await peripheral.startAdvertising(AdvertisementData(localName: "Second"))
        try await central.scanForPeripherals(withServices: nil)
        await central.stopScan()
        await peripheral.stopAdvertising()
        #expect(await central.retrievePeripherals(withIdentifiers: [peripheral.identifier]).map(\.name) == ["Second"])
    }
}
