import BLECBM
import BLEMockKit
import Foundation
import Testing

/// A central app that connects to the first spec peripheral it finds, discovers everything,
/// subscribes, and connects again whenever the link drops (as companion apps do).
final class Reconnector: NSObject, CBMCentralManagerDelegate, CBMPeripheralDelegate {
    var peripheral: CBMPeripheral?
    var connections = 0
    var disconnections: [Int?] = []
    var ready = false

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
        peripheral.delegate = self
        central.connect(peripheral)
    }

    func centralManager(_ central: CBMCentralManager, didConnect peripheral: CBMPeripheral) {
        connections += 1
        peripheral.discoverServices(nil)
    }

    func centralManager(_ central: CBMCentralManager, didFailToConnect peripheral: CBMPeripheral, error: Error?) {
        central.connect(peripheral)
    }

    func centralManager(
        _ central: CBMCentralManager, didDisconnectPeripheral peripheral: CBMPeripheral, error: Error?
    ) {
        ready = false
        disconnections.append((error as NSError?)?.code)
        central.connect(peripheral)
    }

    func peripheral(_ peripheral: CBMPeripheral, didDiscoverServices error: Error?) {
        for service in peripheral.services ?? [] { peripheral.discoverCharacteristics(nil, for: service) }
    }

    func peripheral(_ peripheral: CBMPeripheral, didDiscoverCharacteristicsFor service: CBMService, error: Error?) {
        for characteristic in service.characteristics ?? [] where characteristic.properties.contains(.notify) {
            peripheral.setNotifyValue(true, for: characteristic)
        }
    }

    func peripheral(
        _ peripheral: CBMPeripheral, didUpdateNotificationStateFor characteristic: CBMCharacteristic, error: Error?
    ) {
        ready = characteristic.isNotifying
    }
}

@Suite("Reconnecting to CoreBluetoothMock-style spec peripherals", .timeLimit(.minutes(10)), .finishesOwnBridges)
struct ReconnectTests {
    /// Drops the link three ways and waits for the app to be back each time.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    static func dropAndReconnect(seed: UInt64) async throws -> (log: [String], disconnections: [Int?]) {
        let bridge = ownBridge(configuration: .realistic(seed: seed))
        let disconnections = try await bridge.run { @MainActor () -> [Int?] in
            CBMCentralManagerMock.simulatePeripherals([blinky])
            let app = Reconnector()
            let manager = CBMCentralManagerMock(delegate: app, queue: nil)
            try await bridge.waitForApp { app.ready }
            // The spec drops the link with an error of the test's choosing.
            blinky.simulateDisconnection(withError: CBMError(.connectionTimeout))
            try await bridge.waitForApp { app.disconnections.count == 1 }
            try await bridge.waitForApp { app.ready && app.connections == 2 }
            // The spec resets.
            blinky.simulateReset()
            try await bridge.waitForApp { app.disconnections.count == 2 }
            try await bridge.waitForApp { app.ready && app.connections == 3 }
            // The link drops from the simulation's side (the peripheral goes out of range and
            // comes back).
            blinky.simulateProximityChange(.outOfRange)
            try await bridge.waitForApp { app.disconnections.count == 3 }
            blinky.simulateProximityChange(.near)
            try await bridge.waitForApp { app.ready && app.connections == 4 }
            _ = manager
            return app.disconnections
        }
        #expect(await bridge.finish() == .clean)
        return (await bridge.log.map { "\($0)" }, disconnections)
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test("Every reconnect completes, on 200 seeds")
    func everyReconnectCompletes() async throws {
        for seed in UInt64(0)..<200 {
            let run = try await Self.dropAndReconnect(seed: seed)
            #expect(
                run.disconnections == [
                    CBMError.Code.connectionTimeout.rawValue, CBMError.Code.connectionTimeout.rawValue,
                    CBMError.Code.connectionTimeout.rawValue,
                ], "seed \(seed)")
        }
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test("The same seed gives the same log", arguments: [UInt64(3), 77, 151])
    func sameSeedSameLog(seed: UInt64) async throws {
        let first = try await Self.dropAndReconnect(seed: seed)
        let second = try await Self.dropAndReconnect(seed: seed)
        #expect(first.log == second.log)
    }
}

@Suite("What a stalled run waited for", .timeLimit(.minutes(10)), .finishesOwnBridges)
struct StallAgreementTests {
    /// A reconnect that cannot complete (the spec stays out of range): the stall names the
    /// connection attempt, and `finish()` lists the same operations.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test("The stall report and finish() list the same waiting connection")
    func stallAndFinishAgree() async throws {
        let bridge = ownBridge(configuration: .realistic(seed: 12))
        // The app keeps its manager until finish() has looked: a manager the app lets go of
        // leaves the air, and its connection attempt with it.
        let kept = await KeptObjects()
        var stall: MockBLEBridge.Stall?
        do {
            try await bridge.run(timeLimit: .seconds(20)) { @MainActor in
                CBMCentralManagerMock.simulatePeripherals([blinky])
                let app = Reconnector()
                let manager = CBMCentralManagerMock(delegate: app, queue: nil)
                kept.objects = [app, manager]
                try await bridge.waitForApp { app.ready }
                blinky.simulateProximityChange(.outOfRange)
                try await bridge.waitForApp { app.disconnections.count == 1 }
                // The app reconnects at once; the peripheral never comes back.
                try await bridge.waitForApp { app.connections == 2 }
            }
        } catch let error as MockBLEBridge.Stall {
            stall = error
        }
        let stalled = try #require(stall)
        // Out of range, nothing of the peripheral is on the air: nothing is scheduled.
        #expect(stalled.reason == .nothingScheduled)
        // The simulation's operations (the test's own waits, which have ended by the time
        // finish() looks, are named apart: they have no manager).
        let waitingOperations = stalled.waiting.filter {
            if case .operation(_, let central, let peripheral, _, _) = $0 { return central != nil || peripheral != nil }
            return false
        }
        #expect(waitingOperations.count == 1)
        #expect("\(waitingOperations)".contains("connect"))
        let appWaits = stalled.waiting.filter { "\($0)".hasPrefix("bridge.waitForApp { … } at ") }
        #expect(appWaits.count == 1)
        #expect("\(appWaits)".contains("ReconnectTests.swift:"))
        guard case .leftovers(let leftovers) = await bridge.finish() else {
            Issue.record("finish() found nothing waiting")
            return
        }
        let leftOperations = leftovers.filter {
            if case .operation = $0 { return true }
            return false
        }
        #expect(leftOperations == waitingOperations)
        #expect(stalled.seed == 12)
        await MainActor.run { kept.objects = [] }
    }
}

/// Objects a test keeps past the run that made them.
@MainActor final class KeptObjects {
    var objects: [AnyObject] = []
}
