// swift-format-ignore-file: AlwaysUseLowerCamelCase
// (These names mirror CoreBluetooth's API.)

import BLECBM
import BLECore
import BLEMockKit
import Foundation
import Testing

/// A companion app with a restore identifier: connects to the watch, discovers its service,
/// subscribes to its status; relaunched, it takes back what `willRestoreState` hands it.
final class RestoringCompanion: NSObject, CBMCentralManagerDelegate, CBMPeripheralDelegate, @unchecked Sendable {
    // @unchecked Sendable: only touched on the main queue.
    var manager: CBMCentralManager!
    var calls: [String] = []
    var watch: CBMPeripheral?

    init(restoreIdentifier: String) {
        super.init()
        manager = CBMCentralManager(
            delegate: self, queue: nil, options: [CBMCentralManagerOptionRestoreIdentifierKey: restoreIdentifier])
    }

    func centralManagerDidUpdateState(_ central: CBMCentralManager) { calls.append("state \(central.state)") }

    func centralManager(_ central: CBMCentralManager, willRestoreState dict: [String: Any]) {
        for peripheral in dict[CBMCentralManagerRestoredStatePeripheralsKey] as? [CBMPeripheral] ?? [] {
            peripheral.delegate = self
            watch = peripheral
            let characteristics = peripheral.services?.flatMap { $0.characteristics ?? [] } ?? []
            calls.append(
                "restored \(peripheral.state) services=\(peripheral.services?.map(\.uuid.uuidString) ?? []) "
                    + "characteristics=\(characteristics.map(\.uuid.uuidString)) "
                    + "notifying=\(characteristics.map(\.isNotifying))")
        }
    }

    func centralManager(
        _ central: CBMCentralManager, didDiscover peripheral: CBMPeripheral, advertisementData: [String: Any],
        rssi RSSI: NSNumber
    ) {
        guard watch == nil else { return }
        watch = peripheral
        peripheral.delegate = self
        central.stopScan()
        central.connect(peripheral)
    }

    func centralManager(_ central: CBMCentralManager, didConnect peripheral: CBMPeripheral) {
        calls.append("connected")
        peripheral.discoverServices(nil)
    }

    func centralManager(
        _ central: CBMCentralManager, didDisconnectPeripheral peripheral: CBMPeripheral, error: (any Error)?
    ) {
        calls.append("disconnected")
    }

    func peripheral(_ peripheral: CBMPeripheral, didDiscoverServices error: (any Error)?) {
        peripheral.discoverCharacteristics(nil, for: peripheral.services![0])
    }

    func peripheral(
        _ peripheral: CBMPeripheral, didDiscoverCharacteristicsFor service: CBMService, error: (any Error)?
    ) {
        peripheral.setNotifyValue(true, for: service.characteristics![0])
    }

    func peripheral(
        _ peripheral: CBMPeripheral, didUpdateNotificationStateFor characteristic: CBMCharacteristic,
        error: (any Error)?
    ) {
        calls.append("notifying \(characteristic.isNotifying)")
    }

    func peripheral(
        _ peripheral: CBMPeripheral, didUpdateValueFor characteristic: CBMCharacteristic, error: (any Error)?
    ) {
        calls.append("value \(characteristic.uuid.uuidString) \(Array(characteristic.value ?? Data()))")
    }
}

/// A watch app (peripheral role) with a restore identifier: publishes a status it notifies and
/// a readable setting; relaunched, it takes back the services `willRestoreState` hands it.
final class RestoringWatch: NSObject, CBMPeripheralManagerDelegate, @unchecked Sendable {
    // @unchecked Sendable: only touched on the main queue.
    var manager: CBMPeripheralManager!
    var calls: [String] = []
    var status: CBMMutableCharacteristic?
    var setting: CBMMutableCharacteristic?
    var reads: [CBMATTRequest] = []

    init(restoreIdentifier: String, publishes: Bool) {
        super.init()
        manager = CBMPeripheralManager(
            delegate: self, queue: nil, options: [CBMPeripheralManagerOptionRestoreIdentifierKey: restoreIdentifier])
        if publishes {
            status = CBMMutableCharacteristic(
                type: CBMUUID(string: "2A19"), properties: [.notify], value: nil, permissions: [.readable])
            setting = CBMMutableCharacteristic(
                type: CBMUUID(string: "2A1A"), properties: [.read], value: nil, permissions: [.readable])
        }
    }

    func peripheralManagerDidUpdateState(_ peripheral: CBMPeripheralManager) {
        calls.append("state \(peripheral.state)")
        guard peripheral.state == .poweredOn, let status, let setting, calls.count == 1 else { return }
        let service = CBMMutableService(type: CBMUUID(string: "180F"), primary: true)
        service.characteristics = [status, setting]
        peripheral.add(service)
    }

    func peripheralManager(_ peripheral: CBMPeripheralManager, didAdd service: CBMService, error: (any Error)?) {
        peripheral.startAdvertising([
            CBMAdvertisementDataLocalNameKey: "Watch", CBMAdvertisementDataServiceUUIDsKey: [CBMUUID(string: "180F")],
        ])
    }

    func peripheralManager(_ peripheral: CBMPeripheralManager, willRestoreState dict: [String: Any]) {
        let services = dict[CBMPeripheralManagerRestoredStateServicesKey] as? [CBMMutableService] ?? []
        let characteristics = services.flatMap { $0.characteristics ?? [] }.compactMap {
            $0 as? CBMMutableCharacteristic
        }
        status = characteristics.first { $0.uuid == CBMUUID(string: "2A19") }
        setting = characteristics.first { $0.uuid == CBMUUID(string: "2A1A") }
        let advertisement = dict[CBMPeripheralManagerRestoredStateAdvertisementDataKey] as? [String: Any]
        calls.append(
            "restored services=\(services.map(\.uuid.uuidString)) characteristics=\(characteristics.map(\.uuid.uuidString)) "
                + "subscribers=\(characteristics.map { $0.subscribedCentrals?.count ?? 0 }) "
                + "name=\(advertisement?[CBMAdvertisementDataLocalNameKey] as? String ?? "-")")
    }

    func peripheralManager(_ peripheral: CBMPeripheralManager, didReceiveRead request: CBMATTRequest) {
        reads.append(request)
        request.value = Data([42])
        peripheral.respond(to: request, withResult: .success)
    }
}

/// State restoration as a delegate app meets it: the system terminates the app, keeps its
/// links (or its published services) and hands them to the relaunched app's manager with the
/// same restore identifier, as CoreBluetooth does.
@Suite(.timeLimit(.minutes(10)))
struct RestorationThroughDelegatesTests {
    static let status = BluetoothUUID("2A37")

    /// A relaunched companion, with the bridge and the watch it runs against.
    @MainActor
    struct Relaunch {
        let bridge: MockBLEBridge
        let watch: MockPeripheralManager
        /// The watch's status characteristic, which the companion subscribed to.
        let status: LocalCharacteristic
        let app: RestoringCompanion
    }

    /// Runs the companion until it is subscribed, terminates it and lets its objects go (as its
    /// process ending does), runs `whileTerminated`, relaunches it and runs `afterRelaunch`;
    /// returns what the terminated and the relaunched app heard, and what `afterRelaunch`
    /// returned.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    static func terminateAndRelaunch<T: Sendable>(
        realistic: Bool, seed: UInt64,
        whileTerminated:
            @escaping @Sendable (MockBLEBridge, MockPeripheralManager, LocalCharacteristic) async throws
            -> Void,
        afterRelaunch: @escaping @MainActor @Sendable (Relaunch) async throws -> T
    ) async throws -> (before: [String], after: [String], result: T) {
        let bridge = MockBLEBridge(configuration: realistic ? .realistic(seed: seed) : .init(seed: seed))
        let watch = MockPeripheralManager(bridge: bridge)
        let local = try await watch.add(
            GATTService(
                uuid: "180D",
                characteristics: [GATTCharacteristic(uuid: Self.status, properties: .notify, permissions: .readable)]))
        try await watch.startAdvertising(AdvertisementData(localName: "Watch", serviceUUIDs: ["180D"]))
        return try await bridge.run { @MainActor () -> ([String], [String], T) in
            var first: RestoringCompanion? = RestoringCompanion(restoreIdentifier: "companion")
            try await bridge.waitForApp { first!.manager.state == .poweredOn }
            first!.manager.scanForPeripherals(withServices: nil)
            try await bridge.waitForApp { first!.calls.contains("notifying true") }
            await first!.manager.simulatedCentral!.simulateAppTermination()
            let dead = first!
            first = nil
            try await whileTerminated(bridge, watch, local.characteristics[0])
            let relaunched = RestoringCompanion(restoreIdentifier: "companion")
            let result = try await afterRelaunch(
                Relaunch(bridge: bridge, watch: watch, status: local.characteristics[0], app: relaunched))
            return (dead.calls, relaunched.calls, result)
        }
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(arguments: [false, true])
    func aRelaunchedCentralAppGetsItsPeripheralBackConnectedWithItsAttributesAndNotifications(realistic: Bool)
        async throws
    {
        let (before, after, lengths) = try await Self.terminateAndRelaunch(
            realistic: realistic, seed: 5,
            whileTerminated: { bridge, _, _ in try await bridge.clock.sleep(for: .seconds(1)) },
            afterRelaunch: { relaunch in
                try await relaunch.bridge.waitForApp { relaunch.app.manager.state == .poweredOn }
                _ = try await relaunch.watch.updateValue(Data([7]), for: relaunch.status)
                try await relaunch.bridge.waitForApp { relaunch.app.calls.contains { $0.hasPrefix("value") } }
                let peripheral = try #require(relaunch.app.watch)
                // The link was never dropped.
                #expect(await !relaunch.bridge.log.contains { $0.kind == .disconnected })
                return [
                    peripheral.maximumWriteValueLength(for: .withoutResponse),
                    peripheral.canSendWriteWithoutResponse ? 1 : 0, relaunch.app.manager.apiMisuses.count,
                ]
            })
        // The terminated app heard nothing after it was terminated (no disconnection).
        #expect(before == ["state poweredOn", "connected", "notifying true"])
        #expect(
            after == [
                "restored connected services=[\"180D\"] characteristics=[\"2A37\"] notifying=[true]",
                "state poweredOn", "value 2A37 [7]",
            ])
        #expect(lengths == [realistic ? 182 : 512, 1, 0])
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test func aTerminatedAppHearsNothingOfTheOperationsItHadInFlight() async throws {
        let bridge = MockBLEBridge(configuration: .realistic(seed: 10))
        let watch = MockPeripheralManager(bridge: bridge)
        _ = try await watch.add(
            GATTService(
                uuid: "180D",
                characteristics: [
                    GATTCharacteristic(uuid: Self.status, properties: [.notify, .read], permissions: .readable)
                ]))
        try await watch.startAdvertising(AdvertisementData(localName: "Watch", serviceUUIDs: ["180D"]))
        let calls = try await bridge.run { @MainActor () -> [String] in
            let app = RestoringCompanion(restoreIdentifier: "companion")
            try await bridge.waitForApp { app.manager.state == .poweredOn }
            app.manager.scanForPeripherals(withServices: nil)
            try await bridge.waitForApp { app.calls.contains("notifying true") }
            let peripheral = try #require(app.watch)
            // A read on its way (a connection event away) as the system terminates the app.
            peripheral.readValue(for: peripheral.services![0].characteristics![0])
            await bridge.waitUntil { !$0.pendingOperations.isEmpty }
            await app.manager.simulatedCentral!.simulateAppTermination()
            try await bridge.clock.sleep(for: .seconds(2))
            return app.calls
        }
        // (Without the termination the read's value would have reached the app here.)
        #expect(calls == ["state poweredOn", "connected", "notifying true"])
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(arguments: [false, true])
    func notificationsSentWhileTheAppIsTerminatedReachTheRelaunchedAppAfterItsState(realistic: Bool) async throws {
        let (before, after, _) = try await Self.terminateAndRelaunch(
            realistic: realistic, seed: 7,
            whileTerminated: { bridge, watch, status in
                _ = try await watch.updateValue(Data([1]), for: status)
                _ = try await watch.updateValue(Data([2]), for: status)
                try await bridge.clock.sleep(for: .seconds(1))
            },
            afterRelaunch: { relaunch in try await relaunch.bridge.waitForApp { relaunch.app.calls.count >= 4 } })
        #expect(before == ["state poweredOn", "connected", "notifying true"])
        #expect(
            after == [
                "restored connected services=[\"180D\"] characteristics=[\"2A37\"] notifying=[true]",
                "state poweredOn", "value 2A37 [1]", "value 2A37 [2]",
            ])
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(arguments: [false, true])
    func aLinkThatDroppedWhileTheAppWasTerminatedIsReportedAfterTheRelaunchedAppsState(realistic: Bool)
        async throws
    {
        let (before, after, _) = try await Self.terminateAndRelaunch(
            realistic: realistic, seed: 8,
            whileTerminated: { bridge, watch, _ in
                await bridge.simulate(.proximity(peripheral: watch.identifier, .outOfRange))
                try await bridge.clock.sleep(for: .seconds(2))
            },
            afterRelaunch: { relaunch in
                try await relaunch.bridge.waitForApp { relaunch.app.calls.contains("disconnected") }
            })
        #expect(before == ["state poweredOn", "connected", "notifying true"])
        // The link is gone by the relaunch: the peripheral comes back disconnected with nothing
        // discovered, and its disconnection follows the state.
        #expect(
            after == [
                "restored disconnected services=[] characteristics=[] notifying=[]", "state poweredOn",
                "disconnected",
            ])
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(arguments: [false, true])
    func aRelaunchedPeripheralAppGetsItsServicesBackAndAnswersAndNotifiesThroughThem(realistic: Bool) async throws {
        let bridge = MockBLEBridge(configuration: realistic ? .realistic(seed: 6) : .init(seed: 6))
        let central = MockCentralManager(
            configuration: realistic ? .realistic(seed: 6) : .fast, bridge: bridge)
        let (before, after, read, notified, readObject) = try await bridge.run {
            @MainActor () -> ([String], [String], Data, Data?, Bool) in
            var events = central.events().makeAsyncIterator()
            var first: RestoringWatch? = RestoringWatch(restoreIdentifier: "watch", publishes: true)
            try await bridge.waitForApp { first!.manager.isAdvertising }
            let identifier = first!.manager.simulatedPeripheral!.identifier
            try await central.scanForPeripherals(withServices: ["180F"])
            await bridge.waitUntil { $0.log.contains { $0.kind == .discovered } }
            await central.stopScan()
            try await central.connect(identifier)
            let found = try await central.discoverAll(for: identifier)
            try await central.setNotifyValue(true, for: found[0])
            await first!.manager.simulatedPeripheral!.simulateAppTermination()
            let dead = first!
            first = nil
            try await bridge.clock.sleep(for: .seconds(1))
            let relaunched = RestoringWatch(restoreIdentifier: "watch", publishes: false)
            try await bridge.waitForApp { relaunched.status != nil }
            let read = try await central.readValue(for: found[1])
            #expect(relaunched.manager.updateValue(Data([9]), for: relaunched.status!, onSubscribedCentrals: nil))
            var notified: Data?
            while notified == nil, let event = await events.next() {
                if case .valueUpdated(_, let value) = event { notified = value }
            }
            // The links were never dropped.
            #expect(await !bridge.log.contains { $0.kind == .disconnected })
            return (
                dead.calls, relaunched.calls, read, notified,
                relaunched.reads.first?.characteristic === relaunched.setting
            )
        }
        #expect(before == ["state poweredOn"])
        #expect(
            after.first
                == "restored services=[\"180F\"] characteristics=[\"2A19\", \"2A1A\"] subscribers=[1, 0] name=Watch")
        // Its state once, after its restored state (as CoreBluetooth calls them).
        #expect(after.filter { $0.hasPrefix("state") } == ["state poweredOn"])
        #expect(after.dropFirst().first == "state poweredOn")
        #expect(read == Data([42]))
        // The request named the restored object.
        #expect(readObject)
        #expect(notified == Data([9]))
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(arguments: [false, true])
    func aReadMadeWhileThePeripheralAppIsTerminatedIsAnsweredByTheRelaunchedApp(realistic: Bool) async throws {
        let bridge = MockBLEBridge(configuration: realistic ? .realistic(seed: 9) : .init(seed: 9))
        let central = MockCentralManager(configuration: realistic ? .realistic(seed: 9) : .fast, bridge: bridge)
        let (read, reads) = try await bridge.run { @MainActor () -> (Data, Int) in
            var first: RestoringWatch? = RestoringWatch(restoreIdentifier: "watch", publishes: true)
            try await bridge.waitForApp { first!.manager.isAdvertising }
            let identifier = first!.manager.simulatedPeripheral!.identifier
            try await central.scanForPeripherals(withServices: ["180F"])
            await bridge.waitUntil { $0.log.contains { $0.kind == .discovered } }
            await central.stopScan()
            try await central.connect(identifier)
            let setting = try await central.discoverAll(for: identifier)[1]
            await first!.manager.simulatedPeripheral!.simulateAppTermination()
            let dead = first!
            first = nil
            // The central reads while the app is gone: the request waits for the relaunch.
            let reading = bridge.task { try await central.readValue(for: setting) }
            try await bridge.clock.sleep(for: .milliseconds(500))
            #expect(dead.reads.isEmpty)
            let relaunched = RestoringWatch(restoreIdentifier: "watch", publishes: false)
            let read = try await reading.value
            return (read, relaunched.reads.count)
        }
        #expect(read == Data([42]))
        #expect(reads == 1)
    }
}
