import BLECBM
import BLECore
import BLEMockKit
import Foundation
import Testing

/// A central app that connects the first peripheral it discovers, keeping it or (the classic
/// CoreBluetooth bug) not.
private final class ForgetfulCentral: NSObject, CBMCentralManagerDelegate, @unchecked Sendable {
    // @unchecked Sendable: only touched on the main queue.
    let keeps: Bool
    var manager: CBMCentralManager!
    var kept: CBMPeripheral?
    var identifier: UUID?
    var calls: [String] = []

    /// An app whose manager is CoreBluetooth's (on `bridge`), or CoreBluetoothMock's
    /// (`coreBluetoothMock`, on the current run's bridge).
    init(bridge: MockBLEBridge, keeps: Bool, coreBluetoothMock: Bool = false) {
        self.keeps = keeps
        super.init()
        manager =
            coreBluetoothMock
            ? CBMCentralManagerMock(delegate: self, queue: nil)
            : CBMCentralManager(bridge: bridge, delegate: self, queue: nil)
    }

    func centralManagerDidUpdateState(_ central: CBMCentralManager) {
        if central.state == .poweredOn { central.scanForPeripherals(withServices: nil) }
    }

    func centralManager(
        _ central: CBMCentralManager, didDiscover peripheral: CBMPeripheral, advertisementData: [String: Any],
        rssi: NSNumber
    ) {
        guard identifier == nil else { return }
        identifier = peripheral.identifier
        central.stopScan()
        if keeps { kept = peripheral }
        central.connect(peripheral)
    }

    func centralManager(_ central: CBMCentralManager, didConnect peripheral: CBMPeripheral) {
        calls.append("didConnect")
    }

    func centralManager(_ central: CBMCentralManager, didFailToConnect peripheral: CBMPeripheral, error: (any Error)?) {
        calls.append("didFailToConnect")
    }

    func centralManager(
        _ central: CBMCentralManager, didDisconnectPeripheral peripheral: CBMPeripheral, error: (any Error)?
    ) {
        calls.append("didDisconnect")
    }
}

@Suite("Peripherals the app does not keep", .timeLimit(.minutes(10)))
struct UnusedPeripheralTests {
    /// A watch advertising on `bridge`.
    static func advertisingWatch(on bridge: MockBLEBridge) async throws -> MockPeripheralManager {
        let watch = MockPeripheralManager(bridge: bridge)
        try await watch.startAdvertising(AdvertisementData(localName: "Watch"))
        return watch
    }

    /// Whether the bridge's last word on a link to `peripheral` is that it is up.
    static func linkIsUp(to peripheral: UUID, on bridge: MockBLEBridge) async -> Bool {
        let ends: Set<BridgeLogEntry.Kind> = [.connected, .disconnected, .connectionFailed]
        return await bridge.log.last { $0.peripheral == peripheral && ends.contains($0.kind) }?.kind == .connected
    }

    static func misuse(_ identifier: UUID, while state: String) -> String {
        "API MISUSE: Cancelling connection for unused peripheral \(identifier), Did you forget to keep a reference to "
            + "it? (the app let go of its CBMPeripheral while \(state))"
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(
        "Connecting a peripheral the app does not keep is cancelled, as CoreBluetooth cancels it, and noted",
        arguments: [false, true])
    func anUnkeptPeripheralIsNeverConnected(realistic: Bool) async throws {
        let bridge = MockBLEBridge(configuration: realistic ? .realistic(seed: 91) : .init(seed: 91))
        let watch = try await Self.advertisingWatch(on: bridge)
        let (calls, misuses, identifier) = try await bridge.run { @MainActor in
            let app = ForgetfulCentral(bridge: bridge, keeps: false)
            try await bridge.waitForApp { app.identifier != nil }
            try await bridge.clock.sleep(for: .seconds(2))
            return (app.calls, app.manager.apiMisuses, app.identifier)
        }
        #expect(identifier == watch.identifier)
        // No callback: the app has no object for CoreBluetooth to call it about.
        #expect(calls.isEmpty)
        // Fast mode connects at once, before the app's release reaches the bridge; realistic
        // mode is still connecting.
        #expect(misuses == [Self.misuse(watch.identifier, while: realistic ? "connecting" : "connected")])
        #expect(await !Self.linkIsUp(to: watch.identifier, on: bridge))
        #expect(await bridge.log.contains { $0.kind == .connecting && $0.peripheral == watch.identifier })
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test("A peripheral the app keeps connects, and letting go of it later cancels its link", arguments: [false, true])
    func aKeptPeripheralConnectsUntilLetGoOf(realistic: Bool) async throws {
        let bridge = MockBLEBridge(configuration: realistic ? .realistic(seed: 92) : .init(seed: 92))
        let watch = try await Self.advertisingWatch(on: bridge)
        try await bridge.run { @MainActor in
            let app = ForgetfulCentral(bridge: bridge, keeps: true)
            try await bridge.waitForApp { app.calls == ["didConnect"] }
            #expect(app.manager.apiMisuses.isEmpty)
            #expect(await Self.linkIsUp(to: watch.identifier, on: bridge))
            // Let go of: the link is cancelled, with no callback, and noted.
            app.kept = nil
            try await bridge.waitForApp { app.manager.apiMisuses.count == 1 }
            try await bridge.clock.sleep(for: .seconds(1))
            #expect(app.calls == ["didConnect"])
            #expect(app.manager.apiMisuses == [Self.misuse(watch.identifier, while: "connected")])
            #expect(await !Self.linkIsUp(to: watch.identifier, on: bridge))
        }
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(
        "CoreBluetoothMock's manager keeps the peripherals it hands out, as CoreBluetoothMock's does",
        arguments: [false, true])
    func coreBluetoothMocksManagerKeepsItsPeripherals(realistic: Bool) async throws {
        let bridge = MockBLEBridge(configuration: realistic ? .realistic(seed: 93) : .init(seed: 93))
        let watch = try await Self.advertisingWatch(on: bridge)
        try await bridge.run { @MainActor in
            let app = ForgetfulCentral(bridge: bridge, keeps: false, coreBluetoothMock: true)
            try await bridge.waitForApp { app.calls == ["didConnect"] }
            try await bridge.clock.sleep(for: .seconds(1))
            #expect(app.calls == ["didConnect"])
            #expect(app.manager.apiMisuses.isEmpty)
            #expect(await Self.linkIsUp(to: watch.identifier, on: bridge))
        }
    }
}

extension UnusedPeripheralTests {
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(
        "A peripheral let go of, then a power cycle: a new object for it connects and hears didConnect",
        arguments: [false, true])
    func aPowerCycleEndsTheWithholdingOfAnUnkeptPeripheral(realistic: Bool) async throws {
        let bridge = MockBLEBridge(configuration: realistic ? .realistic(seed: 94) : .init(seed: 94))
        let watch = try await Self.advertisingWatch(on: bridge)
        try await bridge.run { @MainActor in
            let app = ForgetfulCentral(bridge: bridge, keeps: true)
            try await bridge.waitForApp { app.calls == ["didConnect"] }
            let central = app.manager.simulatedCentral!.identifier
            // Let go of (its callbacks withheld until its link's end), then Bluetooth off and on:
            // nothing withheld outlives the power cycle (which reports no link's end).
            app.kept = nil
            try await bridge.waitForApp { app.manager.apiMisuses.count == 1 }
            await bridge.simulate(.centralState(central, .poweredOff))
            try await bridge.waitForApp { app.manager.state == .poweredOff }
            await bridge.simulate(.centralState(central, .poweredOn))
            try await bridge.waitForApp { app.manager.state == .poweredOn }
            // A new object for the same peripheral, kept this time, connects and is told so.
            let again = try #require(app.manager.retrievePeripherals(withIdentifiers: [watch.identifier]).first)
            app.kept = again
            app.manager.connect(again)
            try await bridge.waitForApp { app.calls.last == "didConnect" && app.calls.count > 1 }
            #expect(again.state == .connected)
            #expect(await Self.linkIsUp(to: watch.identifier, on: bridge))
        }
    }
}

extension UnusedPeripheralTests {
    /// An app connects a peripheral that went out of range since it was discovered, then lets go
    /// of it: the attempt ends with no callback, and besides the misuse, the calls that got no
    /// callback name the connect, since when it waited and why it had not completed, for a test
    /// that then waits for the connection in vain.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(
        "Letting go of a peripheral still connecting names the attempt, since when it waited and why",
        arguments: [false, true])
    func lettingGoOfAPeripheralStillConnectingNamesTheAttempt(realistic: Bool) async throws {
        let bridge = MockBLEBridge(configuration: realistic ? .realistic(seed: 93) : .init(seed: 93))
        let watch = try await Self.advertisingWatch(on: bridge)
        // (Written in the run's body, read once the run has ended.)
        nonisolated(unsafe) var central = ""
        let stalled = try await #require(throws: MockBLEBridge.Stall.self) {
            try await bridge.run(timeLimit: .seconds(60), stallPatience: .zero) { @MainActor in
                let journal = Journal()
                let manager = CBMCentralManager(bridge: bridge, delegate: journal, queue: nil)
                central = String(try #require(manager.simulatedCentral).identifier.uuidString.prefix(8))
                try await bridge.waitForApp { manager.state == .poweredOn }
                manager.scanForPeripherals(withServices: nil)
                try await bridge.waitForApp { !journal.discovered.isEmpty }
                manager.stopScan()
                await watch.simulateProximityChange(.outOfRange)
                manager.connect(journal.discovered[0])
                await bridge.waitUntil { bridge in bridge.log.contains { $0.kind == .connecting } }
                journal.discovered.removeAll()
                try await bridge.waitForApp { !manager.apiMisuses.isEmpty }
                try await bridge.waitForApp { journal.entries.contains("connect") }
            }
        }
        let connecting = try #require(await bridge.log.first { $0.kind == .connecting }?.time)
        let peripheral = watch.identifier.uuidString
        #expect(
            stalled.unansweredCalls == [
                "CBMCentralManager \(central), unanswered: connect on peripheral \(peripheral.prefix(8)): the app let "
                    + "go of the peripheral while it was still connecting (since \(connecting)), to a peripheral which "
                    + "is out of range (the attempt ends with it, with no callback)",
                "CBMCentralManager \(central), ignored: \(Self.misuse(watch.identifier, while: "connecting"))",
            ])
    }
}

/// A central app on its own queue that connects the first peripheral it discovers without
/// keeping it, and holds its queue in `didDiscover` until `resume` is signalled.
private final class HeldForgetfulCentral: NSObject, CBMCentralManagerDelegate, @unchecked Sendable {
    // @unchecked Sendable: `calls`, `identifier` and `resumed` are only touched on `queue`
    // (read from a block on it once the app is done); `resume` and `connectCalled` are
    // thread-safe.
    let queue = DispatchQueue(label: "HeldForgetfulCentral")
    let resume = DispatchSemaphore(value: 0)
    /// Yields once `didDiscover` has connected and is about to wait.
    let connectCalled = AsyncStream<Void>.makeStream()
    var manager: CBMCentralManager!
    var identifier: UUID?
    var calls: [String] = []
    /// Whether `didDiscover` waited for `resume` in time.
    var resumed = false

    init(bridge: MockBLEBridge) {
        super.init()
        manager = CBMCentralManager(bridge: bridge, delegate: self, queue: queue)
    }

    func centralManagerDidUpdateState(_ central: CBMCentralManager) {
        if central.state == .poweredOn { central.scanForPeripherals(withServices: nil) }
    }

    func centralManager(
        _ central: CBMCentralManager, didDiscover peripheral: CBMPeripheral, advertisementData: [String: Any],
        rssi: NSNumber
    ) {
        guard identifier == nil else { return }
        identifier = peripheral.identifier
        central.stopScan()
        central.connect(peripheral)
        connectCalled.continuation.yield()
        // (Bounded: a test that never signals fails, it does not hang.)
        resumed = resume.wait(timeout: .now() + 10) == .success
    }

    func centralManager(_ central: CBMCentralManager, didConnect peripheral: CBMPeripheral) {
        calls.append("didConnect")
    }

    func centralManager(
        _ central: CBMCentralManager, didDisconnectPeripheral peripheral: CBMPeripheral, error: (any Error)?
    ) {
        calls.append("didDisconnect")
    }
}

extension UnusedPeripheralTests {
    /// The app's queue is held in `didDiscover` until the connect it made there has completed
    /// (fast mode: the body's next call on the bridge applies it) and the `didConnect` is queued
    /// behind it; then the callback returns and the peripheral it did not keep goes. The
    /// `didConnect` runs before the release's cancellation reaches the bridge, and is not
    /// delivered: the app has no object for it (CoreBluetooth cancels as the object goes). In a
    /// run, where the bridge's work never waits for the app's queue: outside one, the bridge may
    /// be applying the app's calls from that held queue.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test("A didConnect on its way when the app lets go of the peripheral is not delivered")
    func aDidConnectOnItsWayWhenThePeripheralGoesIsNotDelivered() async throws {
        let bridge = MockBLEBridge(seed: 94)
        let watch = try await Self.advertisingWatch(on: bridge)
        let (calls, resumed, misuses) = try await bridge.run { () -> ([String], Bool, [String]) in
            let app = HeldForgetfulCentral(bridge: bridge)
            var connectCalled = app.connectCalled.stream.makeAsyncIterator()
            await connectCalled.next()
            // A direct call on the bridge applies the app's calls made so far (its queue is held).
            await bridge.advance(by: .zero)
            #expect(await bridge.log.contains { $0.kind == .connected })
            app.resume.signal()
            await bridge.waitUntil { bridge in bridge.log.contains { $0.kind == .disconnected } }
            // (Anything the app's queue had queued has run.)
            let seen = await withCheckedContinuation { continuation in
                app.queue.async { continuation.resume(returning: (app.calls, app.resumed, app.manager.apiMisuses)) }
            }
            withExtendedLifetime(app) {}
            return seen
        }
        #expect(resumed)
        #expect(calls.isEmpty)
        #expect(misuses == [Self.misuse(watch.identifier, while: "connected")])
    }
}
