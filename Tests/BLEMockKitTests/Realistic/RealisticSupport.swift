import BLECore
import BLEMockKit
import Foundation
import Testing

/// Set-ups for realistic-mode tests, which work on bridges with real link timing as well as
/// fast ones: a scan there only discovers a peripheral at its next advertising event, so
/// connecting advances virtual time until the discovery instead of assuming it is instant.
enum Realistic {
    /// Link timing without jitter, so every connection event takes exactly 30 ms.
    static let steadyTiming = LinkTiming(jitter: .zero)

    /// A bridge with realistic, jitter-free timing.
    static func steadyBridge(seed: UInt64 = 1) -> MockBLEBridge {
        MockBLEBridge(configuration: .init(seed: seed, timing: steadyTiming))
    }

    /// The test service (see ``Rig/testService``) plus a static 300-byte characteristic.
    static let longValue: BluetoothUUID = "FFF5"

    static var service: GATTService {
        var service = Rig.testService
        service.characteristics.append(
            GATTCharacteristic(uuid: longValue, properties: .read, permissions: .readable, value: testBytes(300)))
        return service
    }

    /// A powered-on peripheral publishing ``service`` and advertising it (connectable).
    static func advertisingPeripheral(
        on bridge: MockBLEBridge, configuration: MockPeripheralManager.Configuration = .init(name: "Sensor")
    ) async throws -> (MockPeripheralManager, LocalService) {
        let peripheral = MockPeripheralManager(configuration: configuration, bridge: bridge)
        let local = try await peripheral.add(service)
        try await peripheral.startAdvertising(AdvertisementData(localName: "Sensor", serviceUUIDs: [RigUUID.service]))
        return (peripheral, local)
    }

    /// Scans until `peripheral` is discovered (advancing virtual time in steps of 10 ms when
    /// the bridge's timing is realistic), then stops scanning.
    static func discover(_ peripheral: MockPeripheralManager, by central: MockCentralManager, on bridge: MockBLEBridge)
        async throws
    {
        try await central.scanForPeripherals(withServices: nil)
        for _ in 0..<200 {
            let found = await bridge.log.contains {
                $0.kind == .discovered && $0.central == central.identifier && $0.peripheral == peripheral.identifier
            }
            if found { break }
            await bridge.advance(by: .milliseconds(10))
        }
        await central.stopScan()
    }

    /// A central that discovered and connected to `peripheral` and discovered every attribute.
    static func connectedCentral(
        to peripheral: MockPeripheralManager, on bridge: MockBLEBridge,
        configuration: MockCentralManager.Configuration = .init()
    ) async throws -> (MockCentralManager, [RemoteCharacteristic]) {
        let central = MockCentralManager(configuration: configuration, bridge: bridge)
        try await discover(peripheral, by: central, on: bridge)
        try await central.connect(peripheral.identifier)
        let characteristics = try await central.discoverAll(for: peripheral.identifier)
        return (central, characteristics)
    }

    /// The time elapsed on the bridge while `body` ran.
    static func elapsed(on bridge: MockBLEBridge, _ body: () async throws -> Void) async rethrows -> Duration {
        let start = await bridge.now
        try await body()
        return start.duration(to: await bridge.now)
    }

    /// The virtual time `duration` after the bridge's start.
    static func at(_ duration: Duration) -> VirtualClock.Instant {
        VirtualClock.Instant(offset: duration)
    }

    /// The ATT_MTU of every link in the log, in the order the links came up.
    static func linkMTUs(in log: [BridgeLogEntry]) -> [Int] {
        log.filter { $0.kind == .connected }.compactMap { entry in
            entry.detail.flatMap { Int($0.dropFirst("mtu=".count)) }
        }
    }

    /// Every element of a stream after the bridge finished (which ends the streams).
    static func drain<Element>(_ stream: AsyncStream<Element>) async -> [Element] {
        var all: [Element] = []
        for await element in stream { all.append(element) }
        return all
    }
}

extension Array where Element == CentralEvent {
    /// The discoveries among the events.
    var discoveries: [DiscoveredPeripheral] {
        compactMap { event in
            if case .discovered(let discovery) = event { return discovery }
            return nil
        }
    }

    /// The values received as notifications or indications.
    var updatedValues: [Data] {
        compactMap { event in
            if case .valueUpdated(_, let value) = event { return value }
            return nil
        }
    }
}

extension Array where Element == PeripheralEvent {
    /// The values of every write request received, in order.
    var writtenValues: [Data] {
        flatMap { event -> [Data] in
            if case .writeRequests(let requests) = event { return requests.compactMap(\.value) }
            return []
        }
    }
}
