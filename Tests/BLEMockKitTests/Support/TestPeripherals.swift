import BLECore
import BLEMockKit
import Foundation

/// Shared set-ups for end-to-end tests: a heart-rate style peripheral on a fresh bridge.
enum TestPeripherals {
    static let heartRateService: BluetoothUUID = "180D"
    static let measurement: BluetoothUUID = "2A37"
    static let bodyLocation: BluetoothUUID = "2A38"
    static let controlPoint: BluetoothUUID = "2A39"

    /// Heart Rate: a notifying measurement, a static body location, a writable control point
    /// with a user description.
    static var heartRate: GATTService {
        GATTService(
            uuid: heartRateService,
            characteristics: [
                GATTCharacteristic(uuid: measurement, properties: [.notify, .read], permissions: [.readable]),
                GATTCharacteristic(uuid: bodyLocation, properties: .read, permissions: .readable, value: Data([0x01])),
                GATTCharacteristic(
                    uuid: controlPoint, properties: [.write, .writeWithoutResponse], permissions: .writeable,
                    descriptors: [.userDescription("Control Point")]),
            ])
    }

    /// A powered-on peripheral publishing Heart Rate and advertising it.
    static func advertisingHeartRate(
        on bridge: MockBLEBridge, configuration: MockPeripheralManager.Configuration = .init(name: "HRM-1")
    ) async throws -> (MockPeripheralManager, LocalService) {
        let peripheral = MockPeripheralManager(configuration: configuration, bridge: bridge)
        let service = try await peripheral.add(heartRate)
        try await peripheral.startAdvertising(AdvertisementData(localName: "HRM-1", serviceUUIDs: [heartRateService]))
        return (peripheral, service)
    }

    /// A central connected to `peripheral` with everything discovered.
    static func connectedCentral(
        to peripheral: MockPeripheralManager, on bridge: MockBLEBridge,
        configuration: MockCentralManager.Configuration = .init()
    ) async throws -> (MockCentralManager, [RemoteCharacteristic]) {
        let central = MockCentralManager(configuration: configuration, bridge: bridge)
        try await central.scanForPeripherals(withServices: [heartRateService])
        await central.stopScan()
        try await central.connect(peripheral.identifier)
        let characteristics = try await central.discoverAll(for: peripheral.identifier)
        return (central, characteristics)
    }
}

extension AsyncStream {
    /// The next `count` elements (fewer if the stream ends first).
    func prefixArray(_ count: Int) async -> [Element] {
        var result: [Element] = []
        guard count > 0 else { return result }
        for await element in self {
            result.append(element)
            if result.count == count { break }
        }
        return result
    }
}
