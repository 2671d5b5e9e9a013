import BLECBM
import BLECore
import BLEMockKit
import Foundation
import Testing

/// A smartwatch companion app's view of its BLE layer: every central and peripheral callback as
/// text, with the peripheral's state as the callback reads it; hooks let a test act inside a
/// callback, before it returns (as an app does).
final class LifecycleJournal: NSObject, CBMCentralManagerDelegate, CBMPeripheralDelegate, @unchecked Sendable {
    // @unchecked Sendable: only touched on the main queue (the managers' queue in these tests).
    var entries: [String] = []
    var discovered: [CBMPeripheral] = []
    /// Runs inside `didDiscover`, before it returns.
    var onDiscover: ((CBMCentralManager, CBMPeripheral) -> Void)?
    /// Runs inside `didConnect`, before it returns.
    var onConnect: ((CBMCentralManager, CBMPeripheral) -> Void)?

    func centralManagerDidUpdateState(_ central: CBMCentralManager) { entries.append("state \(central.state)") }
    func centralManager(
        _ central: CBMCentralManager, didDiscover peripheral: CBMPeripheral, advertisementData: [String: Any],
        rssi: NSNumber
    ) {
        discovered.append(peripheral)
        peripheral.delegate = self
        entries.append("discover")
        onDiscover?(central, peripheral)
    }
    func centralManager(_ central: CBMCentralManager, didConnect peripheral: CBMPeripheral) {
        entries.append("connect \(peripheral.state)")
        onConnect?(central, peripheral)
    }
    func centralManager(
        _ central: CBMCentralManager, didFailToConnect peripheral: CBMPeripheral, error: (any Error)?
    ) {
        entries.append("fail \(peripheral.state) \(error.map { "\(($0 as NSError).code)" } ?? "nil")")
    }
    func centralManager(
        _ central: CBMCentralManager, didDisconnectPeripheral peripheral: CBMPeripheral, error: (any Error)?
    ) {
        let services = peripheral.services == nil ? "nil" : "\(peripheral.services!.count)"
        entries.append(
            "disconnect \(peripheral.state) services=\(services)" + (error == nil ? "" : " error"))
    }
    func peripheral(_ peripheral: CBMPeripheral, didDiscoverServices error: (any Error)?) {
        entries.append("services \(peripheral.state)" + (error == nil ? "" : " error"))
    }
    func peripheral(_ peripheral: CBMPeripheral, didDiscoverCharacteristicsFor service: CBMService, error: (any Error)?)
    {
        entries.append("characteristics" + (error == nil ? "" : " error"))
    }
    func peripheral(
        _ peripheral: CBMPeripheral, didUpdateValueFor characteristic: CBMCharacteristic, error: (any Error)?
    ) {
        entries.append("value" + (error == nil ? "" : " error"))
    }
    func peripheral(
        _ peripheral: CBMPeripheral, didWriteValueFor characteristic: CBMCharacteristic, error: (any Error)?
    ) {
        entries.append("wrote" + (error == nil ? "" : " error"))
    }
    func peripheral(
        _ peripheral: CBMPeripheral, didUpdateNotificationStateFor characteristic: CBMCharacteristic,
        error: (any Error)?
    ) {
        entries.append("notifying \(characteristic.isNotifying)" + (error == nil ? "" : " error"))
    }
}

/// The connection lifecycle of the central role through the CoreBluetooth-shaped API, both modes,
/// compared with what CoreBluetooth documents.
@Suite(.timeLimit(.minutes(10)))
struct CentralLifecycleProbeTests {
    /// Runs `body` with a powered-on manager and its journal, on a bridge with one sensor.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    private func withWatchApp<T: Sendable>(
        realistic: Bool, seed: UInt64,
        _ body: @escaping @MainActor @Sendable (MockBLEBridge, CBMCentralManager, LifecycleJournal) async throws -> T
    ) async throws -> T {
        let bridge = MockBLEBridge(configuration: realistic ? .realistic(seed: seed) : .init(seed: seed))
        _ = try await makeSensor(on: bridge)
        return try await bridge.run { @MainActor () -> T in
            let journal = LifecycleJournal()
            let manager = CBMCentralManager(delegate: journal, queue: nil)
            try await bridge.waitForApp { manager.state == .poweredOn }
            return try await body(bridge, manager, journal)
        }
    }

    /// Scans until the sensor is found; returns it (the scan stopped).
    @MainActor
    private func discover(_ manager: CBMCentralManager, _ journal: LifecycleJournal, _ bridge: MockBLEBridge)
        async throws -> CBMPeripheral
    {
        manager.scanForPeripherals(withServices: nil)
        try await bridge.waitForApp { !journal.discovered.isEmpty }
        manager.stopScan()
        return journal.discovered[0]
    }

    /// The entries from `count` on, once the simulation has had a few seconds more.
    @MainActor
    private func settled(_ journal: LifecycleJournal, from count: Int, _ bridge: MockBLEBridge) async throws
        -> [String]
    {
        try await bridge.clock.sleep(for: .seconds(5))
        return Array(journal.entries[count...])
    }

    // MARK: Cancelling a connection still pending

    /// CoreBluetooth: cancelling a pending connection calls `didDisconnectPeripheral` (and no
    /// `didConnect`). In fast mode the link came up as the connect reached the simulation, before
    /// the cancel did, and the app heard `didConnect` first.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(arguments: [false, true])
    func connectingThenCancellingInOneTurnReportsOnlyTheDisconnection(realistic: Bool) async throws {
        let (entries, connected, state) = try await withWatchApp(realistic: realistic, seed: 11) {
            bridge, manager, journal in
            let peripheral = try await discover(manager, journal, bridge)
            let count = journal.entries.count
            manager.connect(peripheral)
            #expect(peripheral.state == .connecting)
            manager.cancelPeripheralConnection(peripheral)
            try await bridge.waitForApp { journal.entries.count > count }
            let entries = try await settled(journal, from: count, bridge)
            return (entries, await manager.simulatedCentral!.isConnected(peripheral.identifier), peripheral.state)
        }
        #expect(entries == ["disconnect disconnected services=nil"])
        #expect(!connected)
        #expect(state == .disconnected)
    }

    /// The same, made inside `didDiscover` (as a watch app that connects to the first watch it
    /// sees, and cancels at once when it learns it is not the paired one); then connecting
    /// again works.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(arguments: [false, true])
    func connectingThenCancellingInsideACallbackReportsOnlyTheDisconnectionAndAConnectAfterItWorks(
        realistic: Bool
    ) async throws {
        let entries = try await withWatchApp(realistic: realistic, seed: 12) { bridge, manager, journal in
            journal.onDiscover = { manager, peripheral in
                manager.stopScan()
                manager.connect(peripheral)
                manager.cancelPeripheralConnection(peripheral)
            }
            manager.scanForPeripherals(withServices: nil)
            try await bridge.waitForApp { journal.entries.contains { $0.hasPrefix("disconnect") } }
            _ = try await settled(journal, from: 0, bridge)
            let peripheral = journal.discovered[0]
            journal.onDiscover = nil
            manager.connect(peripheral)
            try await bridge.waitForApp { peripheral.state == .connected }
            #expect(await manager.simulatedCentral!.isConnected(peripheral.identifier))
            return journal.entries
        }
        #expect(
            entries == [
                "state poweredOn", "discover", "disconnect disconnected services=nil", "connect connected",
            ])
    }

    /// A connect the peripheral refuses at once, cancelled in the same turn: the app hears
    /// `didFailToConnect` (its cancel finds nothing to cancel), and its next connect, which the
    /// peripheral accepts, brings `didConnect` (the cancel is answered, not held against it).
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(arguments: [false, true])
    func aConnectRefusedAtOnceAndCancelledLeavesTheNextConnectReported(realistic: Bool) async throws {
        let bridge = MockBLEBridge(configuration: realistic ? .realistic(seed: 21) : .init(seed: 21))
        let gate = RefusingOnce()
        let watch =
            CBMPeripheralSpec
            .simulatePeripheral(proximity: .near)
            .advertising(advertisementData: [CBMAdvertisementDataLocalNameKey: "Watch"], withInterval: 0.1)
            .connectable(name: "Watch", services: [], delegate: gate)
            .allowForRetrieval()
            .build()
        let entries = try await bridge.run { @MainActor () -> [String] in
            CBMCentralManagerMock.simulatePeripherals([watch])
            let journal = LifecycleJournal()
            let manager = CBMCentralManager(delegate: journal, queue: nil)
            try await bridge.waitForApp { manager.state == .poweredOn }
            let peripheral = try #require(manager.retrievePeripherals(withIdentifiers: [watch.identifier]).first)
            manager.connect(peripheral)
            manager.cancelPeripheralConnection(peripheral)
            try await bridge.waitForApp { journal.entries.count == 2 }
            manager.connect(peripheral)
            try await bridge.waitForApp { journal.entries.count == 3 }
            return try await settled(journal, from: 0, bridge)
        }
        #expect(
            entries == [
                "state poweredOn", "fail disconnected \(CBMError.Code.connectionFailed.rawValue)", "connect connected",
            ])
    }
}

/// A spec delegate that refuses the first connection request and accepts the others.
final class RefusingOnce: CBMPeripheralSpecDelegate, @unchecked Sendable {
    // @unchecked Sendable: `refused` is guarded by `lock`.
    private let lock = NSLock()
    private var refused = false

    func peripheralDidReceiveConnectionRequest(_ peripheral: CBMPeripheralSpec) -> Result<Void, any Error> {
        let first = lock.withLock { () -> Bool in
            defer { refused = true }
            return !refused
        }
        return first ? .failure(CBMError(.connectionFailed)) : .success(())
    }
}
