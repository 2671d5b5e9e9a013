import BLECBM
import BLEMockKit
import Foundation
import Testing

/// A spec delegate that notes what it hears of connections, with the errors' domains and codes.
final class ConnectionWatcher: CBMPeripheralSpecDelegate, @unchecked Sendable {
    // @unchecked Sendable: `notes` is guarded by `lock`.
    private let lock = NSLock()
    private var notes: [String] = []

    var heard: [String] { lock.withLock { notes } }

    private func note(_ what: String) { lock.withLock { notes.append(what) } }

    func peripheralDidReceiveConnectionRequest(_ peripheral: CBMPeripheralSpec) -> Result<Void, Error> {
        note("connect")
        return .success(())
    }

    func peripheral(_ peripheral: CBMPeripheralSpec, didDisconnect error: Error?) {
        note("disconnected \(ParityApp.describe(error))")
    }

    func reset() { note("reset") }
}

/// A known, connectable spec (built `.connected(…)` when `byAnotherApp`), advertising every 100 ms.
func makeSensor(_ delegate: ConnectionWatcher, byAnotherApp: Bool = false) -> CBMPeripheralSpec {
    let builder = CBMPeripheralSpec.simulatePeripheral(proximity: .near)
        .advertising(advertisementData: [CBMAdvertisementDataLocalNameKey: "Sensor"], withInterval: 0.100)
    let services = [CBMServiceMock(type: .batteryService, primary: true, characteristics: batteryLevelMock())]
    return byAnotherApp
        ? builder.connected(name: "Sensor", services: services, delegate: delegate).build()
        : builder.connectable(name: "Sensor", services: services, delegate: delegate).allowForRetrieval().build()
}

// CoreBluetoothMock's model: the device has one physical connection, which the phone's apps (its
// central managers, and "another app" of a spec built `.connected(…)`) share. CBMCentralManagerMock.swift,
// CBMPeripheralMock's connect(completion:) asks peripheralDidReceiveConnectionRequest only when
// the device is not connected yet, and disconnect(completion:) calls peripheral(_:didDisconnect:)
// only when the last connection ends; CBMPeripheralSpec.swift's simulateDisconnection(withError:)
// tells the delegate once, and simulateReset() calls only reset().
@Suite("A spec's one connection", .timeLimit(.minutes(10)), .finishesOwnBridges)
struct SpecConnectionTests {
    /// A powered-on app with its manager, and the spec's peripheral retrieved by it.
    @MainActor
    static func app(for spec: CBMPeripheralSpec, on bridge: MockBLEBridge) async throws -> (ParityApp, CBMPeripheral) {
        let app = ParityApp()
        let manager = CBMCentralManagerMock(delegate: app, queue: nil)
        app.manager = manager
        try await bridge.waitForApp { manager.state == .poweredOn }
        return (app, try #require(manager.retrievePeripherals(withIdentifiers: [spec.identifier]).first))
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(arguments: [false, true])
    func twoCentralsShareOneConnectionTheSpecDelegateHearsOfOnce(realistic: Bool) async throws {
        let bridge = CoreBluetoothMockParityTests.bridge(realistic: realistic, seed: 80)
        let watcher = ConnectionWatcher()
        let sensor = makeSensor(watcher)
        let (whileTheSecondIsConnected, lines) = try await bridge.run { @MainActor () -> ([String], [String]) in
            CBMCentralManagerMock.simulatePeripherals([sensor])
            let (first, one) = try await Self.app(for: sensor, on: bridge)
            let (second, other) = try await Self.app(for: sensor, on: bridge)
            first.manager?.connect(one)
            try await bridge.waitForApp { one.state == .connected }
            second.manager?.connect(other)
            try await bridge.waitForApp { other.state == .connected }
            first.manager?.cancelPeripheralConnection(one)
            try await bridge.waitForApp { first.lines.count == 2 }
            let heard = watcher.heard
            second.manager?.cancelPeripheralConnection(other)
            try await bridge.waitForApp { second.lines.count == 2 }
            return (heard, first.lines + second.lines)
        }
        #expect(lines == ["connected", "disconnected nil", "connected", "disconnected nil"])
        #expect(whileTheSecondIsConnected == ["connect"])
        #expect(watcher.heard == ["connect", "disconnected nil"])
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(arguments: [false, true])
    func anAppJoiningAnotherAppsConnectionIsNotAskedAboutAndItsCancelEndsNothing(realistic: Bool) async throws {
        let bridge = CoreBluetoothMockParityTests.bridge(realistic: realistic, seed: 81)
        let watcher = ConnectionWatcher()
        let sensor = makeSensor(watcher, byAnotherApp: true)
        let (afterCancel, stillConnected, lines) = try await bridge.run {
            @MainActor () -> ([String], Bool, [String]) in
            CBMCentralManagerMock.simulatePeripherals([sensor])
            let (app, peripheral) = try await Self.app(for: sensor, on: bridge)
            app.manager?.connect(peripheral)
            try await bridge.waitForApp { peripheral.state == .connected }
            app.manager?.cancelPeripheralConnection(peripheral)
            try await bridge.waitForApp { app.lines.count == 2 }
            let afterCancel = watcher.heard
            let stillConnected = sensor.isConnected
            // The device drops the other app's connection: its delegate hears the error once.
            sensor.simulateDisconnection(withError: CBMATTError(.insufficientEncryption))
            return (afterCancel, stillConnected, app.lines)
        }
        #expect(lines == ["connected", "disconnected nil"])
        #expect(afterCancel == [])
        #expect(stillConnected)
        #expect(
            watcher.heard == ["disconnected \(CBMATTErrorDomain) \(CBMATTError.Code.insufficientEncryption.rawValue)"])
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(arguments: [false, true])
    func aDisconnectionOfTwoCentralsReachesTheSpecDelegateOnceAndAResetOnlyAsAReset(realistic: Bool) async throws {
        let bridge = CoreBluetoothMockParityTests.bridge(realistic: realistic, seed: 82)
        let watcher = ConnectionWatcher()
        let sensor = makeSensor(watcher)
        let (afterDisconnection, lines) = try await bridge.run { @MainActor () -> ([String], [String]) in
            CBMCentralManagerMock.simulatePeripherals([sensor])
            let (first, one) = try await Self.app(for: sensor, on: bridge)
            let (second, other) = try await Self.app(for: sensor, on: bridge)
            for (app, peripheral) in [(first, one), (second, other)] {
                app.manager?.connect(peripheral)
                try await bridge.waitForApp { peripheral.state == .connected }
            }
            sensor.simulateDisconnection(withError: CBMError(.peripheralDisconnected))
            try await bridge.waitForApp { first.lines.count == 2 && second.lines.count == 2 }
            let afterDisconnection = watcher.heard
            for (app, peripheral) in [(first, one), (second, other)] {
                app.manager?.connect(peripheral)
                try await bridge.waitForApp { peripheral.state == .connected }
            }
            sensor.simulateReset()
            try await bridge.waitForApp { first.lines.count == 4 && second.lines.count == 4 }
            return (afterDisconnection, first.lines + second.lines)
        }
        let disconnected = "disconnected \(CBMErrorDomain) \(CBMError.Code.peripheralDisconnected.rawValue)"
        let timedOut = "disconnected \(CBMErrorDomain) \(CBMError.Code.connectionTimeout.rawValue)"
        #expect(
            lines == ["connected", disconnected, "connected", timedOut] + [
                "connected", disconnected, "connected", timedOut,
            ])
        #expect(afterDisconnection == ["connect", disconnected])
        #expect(watcher.heard == ["connect", disconnected, "connect", "reset"])
    }

    // CoreBluetoothMock's CBMPeripheralSpec.swift: `isConnected` is `virtualConnections > 0`, and
    // CBMPeripheralMock's connect(completion:) adds one for each central manager's connection before
    // the app's didConnect (disconnect(completion:) takes it away before the app's callback), as
    // simulateDisconnection(withError:) and simulateReset() set it to 0: a spec is connected
    // while an app's manager is, not only while another app is.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(
        "A spec is connected while a central manager's link to it is up, until the last one ends or the device drops it",
        arguments: [false, true])
    func aSpecIsConnectedWhileAnAppIs(realistic: Bool) async throws {
        let bridge = CoreBluetoothMockParityTests.bridge(realistic: realistic, seed: 87)
        let sensor = makeSensor(ConnectionWatcher())
        let seen = try await bridge.run { @MainActor () -> [String] in
            CBMCentralManagerMock.simulatePeripherals([sensor])
            let (first, one) = try await Self.app(for: sensor, on: bridge)
            let watching = IsConnectedWatcher(sensor)
            let manager = CBMCentralManagerMock(delegate: watching, queue: nil)
            try await bridge.waitForApp { manager.state == .poweredOn }
            let other = try #require(manager.retrievePeripherals(withIdentifiers: [sensor.identifier]).first)
            watching.seen.append("before \(sensor.isConnected)")
            manager.connect(other)
            try await bridge.waitForApp { other.state == .connected }
            first.manager?.connect(one)
            try await bridge.waitForApp { one.state == .connected }
            manager.cancelPeripheralConnection(other)
            try await bridge.waitForApp { watching.seen.count == 3 }
            watching.seen.append("another manager's link is up: \(sensor.isConnected)")
            first.manager?.cancelPeripheralConnection(one)
            try await bridge.waitForApp { first.lines.count == 2 }
            watching.seen.append("the last link ended: \(sensor.isConnected)")
            manager.connect(other)
            try await bridge.waitForApp { other.state == .connected }
            sensor.simulateDisconnection()
            watching.seen.append("the device dropped it: \(sensor.isConnected)")
            try await bridge.waitForApp { watching.seen.count == 8 }
            manager.connect(other)
            try await bridge.waitForApp { other.state == .connected }
            sensor.simulateReset()
            watching.seen.append("the device reset: \(sensor.isConnected)")
            return watching.seen
        }
        #expect(
            seen == [
                "before false", "didConnect true", "didDisconnect true", "another manager's link is up: true",
                "the last link ended: false", "didConnect true", "the device dropped it: false", "didDisconnect false",
                "didConnect true", "the device reset: false",
            ])
    }

    // CoreBluetoothMock's CBMCentralManagerMock.swift, peripheralDidConnect(_:), which
    // simulateConnection() calls, starts with "Is the peripheral simulated?": for a spec the last
    // simulatePeripherals(_:) did not list it does nothing, so listed again the spec is not
    // connected, and no app finds it among the connected peripherals.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(
        "simulateConnection() on a spec off the air does nothing: listed again, it is not connected",
        arguments: [false, true])
    func anotherAppCannotConnectToASpecOffTheAir(realistic: Bool) async throws {
        let bridge = CoreBluetoothMockParityTests.bridge(realistic: realistic, seed: 88)
        let sensor = makeSensor(ConnectionWatcher())
        let beacon = CBMPeripheralSpec.simulatePeripheral(proximity: .near)
            .advertising(advertisementData: [CBMAdvertisementDataLocalNameKey: "Beacon"], withInterval: 0.100)
            .build()
        let (offTheAir, listedAgain, retrieved, found) = try await bridge.run {
            @MainActor () -> (Bool, Bool, Int, Bool) in
            CBMCentralManagerMock.simulatePeripherals([sensor])
            CBMCentralManagerMock.simulatePeripherals([beacon])
            sensor.simulateConnection()
            let offTheAir = sensor.isConnected
            CBMCentralManagerMock.simulatePeripherals([sensor])
            let listedAgain = sensor.isConnected
            let (manager, counter) = try await ScanParityTests.manager(on: bridge)
            let retrieved = manager.retrieveConnectedPeripherals(withServices: [.batteryService]).count
            // (Not connected, it advertises: a scan finds it.)
            manager.scanForPeripherals(withServices: nil, options: nil)
            try await bridge.waitForApp { !counter.found.isEmpty }
            return (offTheAir, listedAgain, retrieved, counter.found.contains(sensor.identifier))
        }
        #expect(!offTheAir)
        #expect(!listedAgain)
        #expect(retrieved == 0)
        #expect(found)
    }
}

/// A central manager's delegate that notes whether a spec is connected as it hears of its
/// connections.
final class IsConnectedWatcher: NSObject, CBMCentralManagerDelegate {
    let spec: CBMPeripheralSpec
    var seen: [String] = []

    init(_ spec: CBMPeripheralSpec) { self.spec = spec }

    func centralManagerDidUpdateState(_ central: CBMCentralManager) {}

    func centralManager(_ central: CBMCentralManager, didConnect peripheral: CBMPeripheral) {
        seen.append("didConnect \(spec.isConnected)")
    }

    func centralManager(
        _ central: CBMCentralManager, didDisconnectPeripheral peripheral: CBMPeripheral, error: Error?
    ) {
        seen.append("didDisconnect \(spec.isConnected)")
    }
}

extension CoreBluetoothMockParityTests {
    /// What an app connected to `watch` hears as the watch's services become the battery service
    /// and its name "Watch 2".
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    static func linesOfAServiceChange(of watch: CBMPeripheralSpec, on bridge: MockBLEBridge) async throws -> [String] {
        try await bridge.run { @MainActor () -> [String] in
            CBMCentralManagerMock.simulatePeripherals([watch])
            let app = ParityApp()
            _ = try await Self.connect(watch, app: app, on: bridge)
            let battery = CBMServiceMock(type: .batteryService, primary: true, characteristics: batteryLevelMock())
            watch.simulateServiceChange(newName: "Watch 2", newServices: [battery])
            try await bridge.waitForApp { app.lines.contains("name Watch 2") }
            try await bridge.clock.sleep(for: .seconds(1))
            return app.lines
        }
    }

    /// ``linesOfAServiceChange(of:on:)`` for a watch built by `makeWatch`.
    static let serviceChangeLines = [
        "connected", "modified [\"\(CBMUUID.transferService.uuidString)\"]", "name Watch 2",
    ]

    // CBMCentralManagerMock.swift, notifyServicesChanged() then notifyNameChanged(): a service
    // change is one peripheral(_:didModifyServices:) with the invalidated services, then the name.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(arguments: [false, true])
    func aServiceChangeReportsTheInvalidatedServicesOnceThenTheName(realistic: Bool) async throws {
        let bridge = Self.bridge(realistic: realistic, seed: 84)
        let watch = makeWatch(delegate: TransferSpecDelegate())
        #expect(try await Self.linesOfAServiceChange(of: watch, on: bridge) == Self.serviceChangeLines)
    }

    // A connectable spec built with no delegate connects here (answering as CoreBluetoothMock's
    // default delegate methods do; CoreBluetoothMock never connects it), so a service change
    // reaches the apps connected to it as to any other (it did nothing, as CoreBluetoothMock
    // does for a spec it cannot connect).
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(arguments: [false, true])
    func aServiceChangeReachesTheAppsOfASpecBuiltWithNoDelegate(realistic: Bool) async throws {
        let bridge = Self.bridge(realistic: realistic, seed: 86)
        let watch = makeWatch(delegate: nil)
        #expect(try await Self.linesOfAServiceChange(of: watch, on: bridge) == Self.serviceChangeLines)
    }

    // CBMCentralManagerMock.swift keeps its peripherals by identifier: two specs with one
    // identifier are one device to it. The kit refuses the list, says why, and the run that
    // waits for a discovery stalls naming the refused call.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test func twoSpecsWithOneIdentifierAreRefused() async throws {
        let bridge = Self.bridge(realistic: true, seed: 85)
        let shared = UUID(uuidString: "0A1B2C3D-0000-4000-8000-000000000085")!
        let specs = ["One", "Two"].map { name in
            CBMPeripheralSpec.simulatePeripheral(identifier: shared)
                .advertising(advertisementData: [CBMAdvertisementDataLocalNameKey: name], withInterval: 0.100)
                .build()
        }
        let counter = DiscoveryCounter()
        var stall: MockBLEBridge.Stall?
        do {
            try await bridge.run { @MainActor in
                CBMCentralManagerMock.simulatePeripherals(specs)
                let manager = CBMCentralManagerMock(delegate: counter, queue: nil)
                try await bridge.waitForApp { manager.state == .poweredOn }
                manager.scanForPeripherals(withServices: nil)
                try await bridge.waitForApp { !counter.found.isEmpty }
            }
        } catch let error as MockBLEBridge.Stall {
            stall = error
        }
        let stalled = try #require(stall)
        #expect(
            stalled.unansweredCalls == [
                "CBMCentralManagerMock.simulatePeripherals(_:): two specs have the identifier \(shared.uuidString); "
                    + "give each its own (CBMPeripheralSpec.simulatePeripheral(identifier:)). The call does nothing."
            ])
        #expect(counter.found.isEmpty)
    }
}
