import BLECBM
import BLECore
import BLEMockKit
import Foundation
import Testing

@testable import BlinkyExample

/// Whatever a test made on a bridge is released once the test lets go of it: a bridge that the
/// CoreBluetooth-shaped layer kept alive would hold its world, its log and its managers for the
/// rest of the process (a suite of thousands of tests grew by tens of kilobytes a test).
@Suite(.timeLimit(.minutes(10)))
struct ReleaseTests {
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(arguments: [false, true])
    func aBridgeIsReleasedOnceACentralAppAndItsPeripheralObjectsAreLetGo(realistic: Bool) async throws {
        let alive = try await Self.aliveAfterABlinkyApp(seed: 61, realistic: realistic) { bridge, _, blinky in
            blinky.turnOnLED()
            try await bridge.waitForApp { blinky.ledWrites == 1 }
        }
        #expect(alive == [])
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(arguments: [false, true])
    func aBridgeIsReleasedAfterALinkDropsDuringAWriteAndTheAppReconnects(realistic: Bool) async throws {
        let alive = try await Self.aliveAfterABlinkyApp(seed: 64, realistic: realistic) { bridge, device, blinky in
            try await device.dropTheLinkDuringALEDWrite(of: blinky, on: bridge, realistic: realistic)
            // Realistic: the app's rediscovery still has operations in flight as the run ends.
            try await bridge.waitForApp { blinky.isReady && blinky.isLEDOn != nil }
        }
        #expect(alive == [])
    }

    /// Runs the Blinky app on a new bridge until its peripheral is ready, then `steps`; returns
    /// what is still alive of the app, its peripheral wrapper, the bridge and the simulated
    /// device once the test has let go of them.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    private static func aliveAfterABlinkyApp(
        seed: UInt64, realistic: Bool,
        _ steps: @escaping @MainActor @Sendable (MockBLEBridge, BlinkyDevice, BlinkyPeripheral) async throws -> Void
    ) async throws -> [String] {
        let watched = Watched()
        do {
            let bridge = MockBLEBridge(configuration: realistic ? .realistic(seed: seed) : .init(seed: seed))
            let device = try await BlinkyDevice.make(on: bridge, buttonPressed: true)
            try await bridge.run { @MainActor in
                let app = BlinkyManager()
                try await bridge.waitForApp { !app.discovered.isEmpty }
                let blinky = app.discovered[0]
                blinky.connect()
                try await bridge.waitForApp { blinky.isReady && blinky.isLEDOn != nil }
                try await steps(bridge, device, blinky)
                watched.add(app, "the app")
                watched.add(blinky, "the app's peripheral wrapper")
            }
            watched.add(bridge, "the bridge")
            watched.add(device.peripheral, "the simulated device")
        }
        return await watched.aliveAfterCleanUps()
    }

    /// An operation still in flight when the test ends never completes (time stops with the
    /// run): the completion the bridge keeps for it must not keep the bridge, or the app's
    /// manager, alive.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test func aBridgeIsReleasedWhenTheTestEndsWithAnOperationInFlight() async throws {
        let watched = Watched()
        do {
            let bridge = MockBLEBridge(configuration: .realistic(seed: 65))
            _ = try await BlinkyDevice.make(on: bridge, buttonPressed: true)
            try await bridge.run { @MainActor in
                let app = ConnectingApp(bridge: bridge)
                try await bridge.waitForApp { app.peripheral?.state == .connected }
                let peripheral = try #require(app.peripheral)
                peripheral.discoverServices(nil)
                await bridge.waitUntil { $0.pendingOperations.count == 1 }
                watched.add(app, "the app")
                watched.add(app.manager, "the central manager")
            }
            watched.add(bridge, "the bridge")
        }
        let alive = await watched.aliveAfterCleanUps()
        #expect(alive == [])
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test func aPeripheralObjectKeptByTheAppDoesNotKeepItsManagerAlive() async throws {
        let watched = Watched()
        let kept = try await { () async throws -> (CBMPeripheral, Int) in
            let bridge = MockBLEBridge(seed: 62)
            _ = try await BlinkyDevice.make(on: bridge)
            let kept = try await bridge.run { @MainActor () -> (CBMPeripheral, Int) in
                let app = ConnectingApp(bridge: bridge)
                try await bridge.waitForApp { app.peripheral?.state == .connected }
                watched.add(app, "the app")
                watched.add(app.manager, "the central manager")
                let peripheral = try #require(app.peripheral)
                return (peripheral, peripheral.maximumWriteValueLength(for: .withoutResponse))
            }
            watched.add(bridge, "the bridge")
            return kept
        }()
        #expect(await watched.aliveAfterCleanUps() == [])
        // The peripheral object outlives its manager, as a CBPeripheral can: it answers as one
        // whose manager is gone (disconnected, nothing sendable), and calls on it do nothing.
        let (peripheral, connectedLength) = kept
        #expect(connectedLength == 512)
        #expect(!peripheral.canSendWriteWithoutResponse)
        #expect(peripheral.maximumWriteValueLength(for: .withoutResponse) == 20)
        #expect(peripheral.maximumWriteValueLength(for: .withResponse) == 512)
        peripheral.discoverServices(nil)
        peripheral.readRSSI()
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test func aBridgeIsReleasedOnceAppsOfBothRolesAreLetGo() async throws {
        let watched = Watched()
        do {
            let bridge = MockBLEBridge(seed: 63)
            try await bridge.run { @MainActor in
                let (client, server) = try await openChannel(on: bridge)
                watched.add(server.manager, "the peripheral manager")
                watched.add(client.manager, "the central manager")
                watched.add(try #require(client.peripheral), "the central's peripheral object")
            }
            watched.add(bridge, "the bridge")
        }
        #expect(await watched.aliveAfterCleanUps() == [])
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test func aBridgeIsReleasedOnceTheSpecsSimulatedOnItAreLetGo() async throws {
        let watched = Watched()
        do {
            let bridge = MockBLEBridge(seed: 64)
            let watch =
                CBMPeripheralSpec
                .simulatePeripheral(proximity: .near)
                .advertising(
                    advertisementData: [CBMAdvertisementDataLocalNameKey: "Watch"], withInterval: 0.1
                )
                .connectable(name: "Watch", services: [], delegate: nil)
                .build()
            try await bridge.run { @MainActor in
                CBMCentralManagerMock.simulatePeripherals([watch])
                let app = ConnectingApp(manager: CBMCentralManagerMock())
                try await bridge.waitForApp { app.peripheral?.state == .connected }
                // A drop and a MAC address change: the spec's retired peripheral goes too.
                watch.simulateDisconnection()
                try await bridge.waitForApp { app.peripheral?.state == .disconnected }
                watch.simulateMacChange()
                watched.add(app.manager, "the central manager")
                watched.add(try #require(app.peripheral), "the peripheral object")
            }
            watched.add(bridge, "the bridge")
            watched.add(watch, "the spec")
        }
        #expect(await watched.aliveAfterCleanUps() == [])
    }
}

/// A central app that connects to the first peripheral it finds.
final class ConnectingApp: NSObject, CBMCentralManagerDelegate, @unchecked Sendable {
    // @unchecked Sendable: only touched on the main queue.
    var manager: CBMCentralManager!
    var peripheral: CBMPeripheral?

    init(bridge: MockBLEBridge) {
        super.init()
        manager = CBMCentralManager(bridge: bridge, delegate: self, queue: nil)
    }

    /// An app on a manager already made (a CoreBluetoothMock-style one, say).
    init(manager: CBMCentralManager) {
        super.init()
        self.manager = manager
        manager.delegate = self
    }

    func centralManagerDidUpdateState(_ central: CBMCentralManager) {
        if central.state == .poweredOn { central.scanForPeripherals(withServices: nil) }
    }

    func centralManager(
        _ central: CBMCentralManager, didDiscover peripheral: CBMPeripheral, advertisementData: [String: Any],
        rssi: NSNumber
    ) {
        guard self.peripheral == nil else { return }
        self.peripheral = peripheral
        central.stopScan()
        central.connect(peripheral)
    }
}

/// Weak references to what a test made, to check that nothing outlives it.
final class Watched: @unchecked Sendable {
    // @unchecked Sendable: `entries` is only read and written with `lock` held.
    private let lock = NSLock()
    private var entries: [(name: String, reference: @Sendable () -> AnyObject?)] = []

    func add(_ object: AnyObject, _ name: String) {
        nonisolated(unsafe) weak let weak = object
        lock.withLock { entries.append((name, { weak })) }
    }

    /// The names of the objects still alive.
    var alive: [String] { lock.withLock { entries.filter { $0.reference() != nil }.map(\.name) } }

    /// The names of the objects still alive after up to two seconds of wall time: time enough
    /// for clean-up work already started (a released manager's last command) to end; a leak
    /// stays.
    func aliveAfterCleanUps() async -> [String] {
        for _ in 0..<2_000 where !alive.isEmpty {
            try? await Task.sleep(for: .milliseconds(1))
        }
        return alive
    }
}
