import BLECore
import BLEMockKit
import Foundation
import Testing

@Suite("Background execution", .timeLimit(.minutes(10)))
struct BackgroundTests {
    static let full = AdvertisementData(
        localName: "Beacon", serviceUUIDs: ["180F"], manufacturerData: Data([0x4C, 0x00]),
        serviceData: ["180F": Data([0x64])], txPowerLevel: -4, isConnectable: true)

    /// The advertisements a new scan (of `services`) reports, after `advance`.
    static func discoveries(
        on bridge: MockBLEBridge, services: [BluetoothUUID]?, options: ScanOptions = ScanOptions(),
        advance: Duration = .zero, central: MockCentralManager? = nil
    ) async throws -> [DiscoveredPeripheral] {
        let central = central ?? MockCentralManager(bridge: bridge)
        _ = await central.state  // on the air before the stream opens: no initial state event in it
        let before = await bridge.log.filter { $0.kind == .discovered && $0.central == central.identifier }.count
        let events = central.events()
        try await central.scanForPeripherals(withServices: services, options: options)
        await bridge.advance(by: advance)
        await central.stopScan()
        let count =
            await bridge.log.filter { $0.kind == .discovered && $0.central == central.identifier }.count - before
        return await events.prefixArray(count).compactMap {
            if case .discovered(let discovery) = $0 { return discovery }
            return nil
        }
    }

    @Test func aBackgroundedPeripheralAdvertisesOnlyItsServicesInTheOverflowArea() async throws {
        let bridge = MockBLEBridge()
        let peripheral = MockPeripheralManager(bridge: bridge)
        try await peripheral.startAdvertising(Self.full)
        await peripheral.simulateBackgroundExecution(true)
        #expect(await bridge.log.last?.detail == "background")

        let seen = try await Self.discoveries(on: bridge, services: nil)
        #expect(seen.count == 1)
        let advertisement = try #require(seen.first?.advertisementData)
        #expect(advertisement.localName == nil)
        #expect(advertisement.manufacturerData == nil)
        #expect(advertisement.serviceData.isEmpty)
        #expect(advertisement.serviceUUIDs.isEmpty)
        // The overflow area is a hashed bit mask: a scan for all services cannot read it.
        #expect(advertisement.overflowServiceUUIDs.isEmpty)
        #expect(advertisement.txPowerLevel == -4)
        #expect(seen.first?.peripheral.name == nil)

        // A scan for the service finds it, and recognises it in the overflow area.
        let named = try await Self.discoveries(on: bridge, services: ["180F"])
        #expect(named.map(\.advertisementData.overflowServiceUUIDs) == [["180F"]])
        #expect(await peripheral.isAdvertising)  // the app's own view is unchanged

        await peripheral.simulateBackgroundExecution(false)
        let foreground = try await Self.discoveries(on: bridge, services: nil)
        #expect(foreground.first?.advertisementData == Self.full)
        #expect(foreground.first?.peripheral.name == "Beacon")
    }

    @Test func aBackgroundedCentralIgnoresAllowDuplicates() async throws {
        let bridge = MockBLEBridge()
        let peripheral = MockPeripheralManager(
            configuration: .init(advertisingInterval: .milliseconds(100)), bridge: bridge)
        try await peripheral.startAdvertising(Self.full)
        let central = MockCentralManager(bridge: bridge)
        let duplicates = ScanOptions(allowDuplicates: true)

        let foreground = try await Self.discoveries(
            on: bridge, services: nil, options: duplicates, advance: .milliseconds(450), central: central)
        #expect(foreground.count == 5)

        await central.simulateBackgroundExecution(true)
        // In the background a scan must name services: one for all discovers nothing.
        let unnamed = try await Self.discoveries(
            on: bridge, services: nil, options: duplicates, advance: .milliseconds(450), central: central)
        #expect(unnamed.isEmpty)
        let background = try await Self.discoveries(
            on: bridge, services: ["180F"], options: duplicates, advance: .milliseconds(450), central: central)
        #expect(background.count == 1)

        await central.simulateBackgroundExecution(false)
        #expect(await bridge.log.last?.detail == "foreground")
        let again = try await Self.discoveries(
            on: bridge, services: nil, options: duplicates, advance: .milliseconds(450), central: central)
        // From 1,350 ms: heard at once, then at the advertising events at 1,400 … 1,800 ms.
        #expect(again.count == 6)
    }

    @Test func aBackgroundedCentralKeepsItsLinks() async throws {
        let bridge = MockBLEBridge()
        let peripheral = MockPeripheralManager(bridge: bridge)
        try await peripheral.startAdvertising(Self.full)
        let central = MockCentralManager(bridge: bridge)
        try await central.scanForPeripherals(withServices: nil)
        try await central.connect(peripheral.identifier)
        await central.simulateBackgroundExecution(true)
        await peripheral.simulateBackgroundExecution(true)
        #expect(await central.isConnected(peripheral.identifier))
        #expect(try await central.readRSSI(for: peripheral.identifier) == -50)
    }

    @Test func settingTheSameExecutionStateTwiceIsLoggedOnce() async throws {
        let bridge = MockBLEBridge()
        let central = MockCentralManager(bridge: bridge)
        await central.simulateBackgroundExecution(true)
        await central.simulateBackgroundExecution(true)
        await central.simulateBackgroundExecution(false)
        let changes = await bridge.log.filter { $0.central == central.identifier && $0.kind == .stateChanged }
        #expect(changes.compactMap(\.detail) == ["poweredOn", "background", "foreground"])
    }
}
