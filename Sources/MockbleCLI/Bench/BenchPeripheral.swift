import BLECore
import BLEMockKit
import Foundation

/// The simulated heart-rate sensor the suites use: measurement (notify), body sensor location
/// (read) and control point (write), plus a throughput characteristic for the single operations.
enum BenchPeripheral {
    static let service: BluetoothUUID = "180D"
    static let measurement: BluetoothUUID = "2A37"
    static let location: BluetoothUUID = "2A38"
    static let controlPoint: BluetoothUUID = "2A39"
    static let throughput: BluetoothUUID = "F00D"

    static let heartRate = GATTService(
        uuid: service,
        characteristics: [
            GATTCharacteristic(uuid: measurement, properties: .notify, permissions: []),
            GATTCharacteristic(uuid: location, properties: .read, permissions: .readable, value: Data([0x01])),
            GATTCharacteristic(uuid: controlPoint, properties: .write, permissions: .writeable),
            GATTCharacteristic(
                uuid: throughput, properties: [.read, .write, .writeWithoutResponse, .notify],
                permissions: [.readable, .writeable]),
        ])

    static let advertisement = AdvertisementData(localName: "HRM", serviceUUIDs: [service])

    /// `count` sensors on `bridge`, each with the heart-rate service, advertising it.
    static func advertisingSensors(_ count: Int, on bridge: MockBLEBridge) async throws -> [MockPeripheralManager] {
        var sensors: [MockPeripheralManager] = []
        sensors.reserveCapacity(count)
        for _ in 0..<count {
            let sensor = MockPeripheralManager(bridge: bridge)
            _ = try await sensor.add(heartRate)
            try await sensor.startAdvertising(advertisement)
            sensors.append(sensor)
        }
        return sensors
    }

    /// A central connected to a sensor, with every characteristic discovered and the
    /// measurement and throughput characteristics subscribed.
    struct ConnectedPair {
        let bridge: MockBLEBridge
        let sensor: MockPeripheralManager
        let central: MockCentralManager
        let local: LocalService
        let remote: [BluetoothUUID: RemoteCharacteristic]

        func localCharacteristic(_ uuid: BluetoothUUID) -> LocalCharacteristic {
            local.characteristics.first { $0.uuid == uuid }!
        }
    }

    /// Builds a connected, subscribed pair in fast mode.
    static func connectedPair() async throws -> ConnectedPair {
        let bridge = MockBLEBridge()
        let sensor = MockPeripheralManager(bridge: bridge)
        let local = try await sensor.add(heartRate)
        try await sensor.startAdvertising(advertisement)
        let central = MockCentralManager(bridge: bridge)
        try await central.scanForPeripherals(withServices: [service])
        try await central.connect(sensor.identifier)
        let characteristics = try await central.discoverAll(for: sensor.identifier)
        let remote = Dictionary(uniqueKeysWithValues: characteristics.map { ($0.uuid, $0) })
        try await central.setNotifyValue(true, for: remote[measurement]!)
        try await central.setNotifyValue(true, for: remote[throughput]!)
        return ConnectedPair(bridge: bridge, sensor: sensor, central: central, local: local, remote: remote)
    }
}

/// A failure inside a bench suite (the simulation did not do what the workload expects).
struct BenchFailure: Error, CustomStringConvertible {
    let description: String
}
