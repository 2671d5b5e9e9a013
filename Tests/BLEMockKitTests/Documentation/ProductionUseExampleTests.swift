import BLECore
import BLECoreBluetooth
import BLEMockKit
import Foundation
import Testing

// README's "Production use" examples, verbatim (checked by `everyDocumentedSwiftBlockIsCompiled`).

/// The examples run with the suite-wide time limit, like every other suite.
@Suite(.timeLimit(.minutes(10)))
struct ProductionUseExampleTests {
    /// App code: it knows only the role protocol.
    actor BatteryMonitor {
        let central: any CentralManaging

        init(central: any CentralManaging) {
            self.central = central
        }

        /// Connects to a battery-powered device and reads its level (0–100).
        func level(of device: UUID) async throws -> Int {
            try await central.connect(device, timeout: .seconds(5))
            try await central.discoverAll(for: device)
            let level = try await central.characteristic("2A19", of: device)
            return Int(try await central.readValue(for: level).first ?? 0)
        }
    }

    #if canImport(CoreBluetooth)
        /// In the app: the CoreBluetooth-backed central.
        func makeBatteryMonitor() -> BatteryMonitor {
            BatteryMonitor(central: CoreBluetoothCentralManager(configuration: .init(restoreIdentifier: "battery")))
        }
    #endif

    @Test func theBatteryMonitorReadsTheLevelFromAMock() async throws {
        // In tests: a mock central and a simulated device on one bridge.
        let bridge = MockBLEBridge()
        let tag = MockPeripheralManager(bridge: bridge)
        _ = try await tag.add(
            GATTService(
                uuid: "180F",
                characteristics: [
                    GATTCharacteristic(uuid: "2A19", properties: .read, permissions: .readable, value: Data([76]))
                ]))
        try await tag.startAdvertising(AdvertisementData(localName: "Tag", serviceUUIDs: ["180F"]))
        let central = MockCentralManager(bridge: bridge)
        try await central.scanForPeripherals(withServices: ["180F"])

        let monitor = BatteryMonitor(central: central)
        #expect(try await monitor.level(of: tag.identifier) == 76)
    }
}
