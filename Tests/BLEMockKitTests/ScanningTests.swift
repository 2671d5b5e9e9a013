import BLECore
import BLEMockKit
import Foundation
import Testing

@Suite("Scanning", .timeLimit(.minutes(10)))
struct ScanningTests {
    /// Three peripherals: one advertising 180D, one with 180F in the overflow area, one
    /// soliciting 1812 and advertising nothing else.
    static func threePeripherals(on bridge: MockBLEBridge) async throws -> [MockPeripheralManager] {
        let advertisements = [
            AdvertisementData(
                localName: "HRM", serviceUUIDs: ["180D"], manufacturerData: Data([0x4C, 0x00, 0x02]),
                serviceData: ["180D": Data([0x01])], txPowerLevel: -8, isConnectable: true),
            AdvertisementData(localName: "Battery", overflowServiceUUIDs: ["180F"]),
            AdvertisementData(localName: "Keyboard", solicitedServiceUUIDs: ["1812"]),
        ]
        var peripherals: [MockPeripheralManager] = []
        for (index, advertisement) in advertisements.enumerated() {
            let peripheral = MockPeripheralManager(configuration: .init(rssi: -40 - index), bridge: bridge)
            try await peripheral.startAdvertising(advertisement)
            peripherals.append(peripheral)
        }
        return peripherals
    }

    static func discoveries(of central: MockCentralManager, on bridge: MockBLEBridge) async -> [DiscoveredPeripheral] {
        let events = central.events()
        _ = await bridge.finish()
        var result: [DiscoveredPeripheral] = []
        for await case .discovered(let discovery) in events { result.append(discovery) }
        return result
    }

    @Test("A scan without a filter reports every advertising peripheral with its full advertisement and RSSI")
    func unfilteredScan() async throws {
        let bridge = MockBLEBridge()
        let peripherals = try await Self.threePeripherals(on: bridge)
        let central = MockCentralManager(bridge: bridge)
        let events = central.events()
        try await central.scanForPeripherals(withServices: nil)
        #expect(await central.isScanning)
        let found = await events.prefixArray(4).compactMap { event -> DiscoveredPeripheral? in
            if case .discovered(let discovery) = event { return discovery }
            return nil
        }
        #expect(found.map(\.identifier) == peripherals.map(\.identifier))
        #expect(found.map(\.rssi) == [-40, -41, -42])
        let hrm = found[0].advertisementData
        #expect(hrm.localName == "HRM")
        #expect(hrm.manufacturerData == Data([0x4C, 0x00, 0x02]))
        #expect(hrm.serviceData == ["180D": Data([0x01])])
        #expect(hrm.txPowerLevel == -8)
        #expect(hrm.isConnectable == true)
        #expect(found[0].peripheral.name == "HRM")
    }

    @Test("A service filter matches advertised and overflow UUIDs only")
    func filteredScan() async throws {
        let bridge = MockBLEBridge()
        let peripherals = try await Self.threePeripherals(on: bridge)
        let central = MockCentralManager(bridge: bridge)
        try await central.scanForPeripherals(withServices: ["180F", "180D"])
        let found = await bridge.log.filter { $0.kind == .discovered }.map(\.peripheral)
        #expect(found == [peripherals[0].identifier, peripherals[1].identifier])
    }

    @Test("The solicited-services option also reports peripherals soliciting those services")
    func solicitedServices() async throws {
        let bridge = MockBLEBridge()
        let peripherals = try await Self.threePeripherals(on: bridge)
        let central = MockCentralManager(bridge: bridge)
        try await central.scanForPeripherals(
            withServices: ["180D"], options: ScanOptions(solicitedServiceUUIDs: ["1812"]))
        let found = await bridge.log.filter { $0.kind == .discovered }.map(\.peripheral)
        #expect(found == [peripherals[0].identifier, peripherals[2].identifier])
    }

    @Test("A peripheral that starts advertising during a scan is reported at once")
    func lateAdvertiser() async throws {
        let bridge = MockBLEBridge()
        let central = MockCentralManager(bridge: bridge)
        let events = central.events()
        try await central.scanForPeripherals(withServices: nil)
        let peripheral = MockPeripheralManager(bridge: bridge)
        try await peripheral.startAdvertising(AdvertisementData(localName: "Late"))
        let first = await events.prefixArray(2)
        #expect(first.first == .stateChanged(.poweredOn))
        guard case .discovered(let discovery) = first.last else {
            Issue.record("no discovery")
            return
        }
        #expect(discovery.identifier == peripheral.identifier)
    }

    @Test("Peripherals that stop advertising stop being discovered")
    func stoppedAdvertisers() async throws {
        let bridge = MockBLEBridge()
        let peripheral = MockPeripheralManager(bridge: bridge)
        try await peripheral.startAdvertising(AdvertisementData(localName: "Blinky"))
        let central = MockCentralManager(bridge: bridge)
        try await central.scanForPeripherals(withServices: nil, options: ScanOptions(allowDuplicates: true))
        await bridge.advance(by: .milliseconds(250))  // 0, 100, 200 ms
        await peripheral.stopAdvertising()
        #expect(await !peripheral.isAdvertising)
        await bridge.advance(by: .seconds(1))
        #expect(await bridge.log.filter { $0.kind == .discovered }.count == 3)
    }

    @Test("Stopping a scan stops discoveries and a new scan reports peripherals again")
    func stopAndRestart() async throws {
        let bridge = MockBLEBridge()
        let peripheral = MockPeripheralManager(bridge: bridge)
        try await peripheral.startAdvertising(AdvertisementData(localName: "A"))
        let central = MockCentralManager(bridge: bridge)
        try await central.scanForPeripherals(withServices: nil)
        await central.stopScan()
        #expect(await !central.isScanning)
        let other = MockPeripheralManager(bridge: bridge)
        try await other.startAdvertising(AdvertisementData(localName: "B"))
        try await central.scanForPeripherals(withServices: nil)
        let found = await bridge.log.filter { $0.kind == .discovered }.compactMap(\.peripheral)
        #expect(found == [peripheral.identifier, peripheral.identifier, other.identifier])
    }

    @Test("Each scanning central applies its own filter and duplicate option")
    func independentScanners() async throws {
        let bridge = MockBLEBridge()
        let peripherals = try await Self.threePeripherals(on: bridge)
        let all = MockCentralManager(bridge: bridge)
        let heartRateOnly = MockCentralManager(bridge: bridge)
        try await all.scanForPeripherals(withServices: nil, options: ScanOptions(allowDuplicates: true))
        try await heartRateOnly.scanForPeripherals(withServices: ["180D"])
        await bridge.advance(by: .milliseconds(100))
        let log = await bridge.log.filter { $0.kind == .discovered }
        #expect(log.filter { $0.central == all.identifier }.count == 6)
        #expect(log.filter { $0.central == heartRateOnly.identifier }.map(\.peripheral) == [peripherals[0].identifier])
    }
}
