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
    /// Runs inside `willRestoreState`, before it returns.
    var onRestore: ((CBMCentralManager, [CBMPeripheral]) -> Void)?
    /// Runs inside `didConnect`, before it returns.
    var onConnect: ((CBMCentralManager, CBMPeripheral) -> Void)?
    /// Runs inside `didFailToConnect`, before it returns.
    var onFail: ((CBMCentralManager, CBMPeripheral) -> Void)?

    func centralManagerDidUpdateState(_ central: CBMCentralManager) { entries.append("state \(central.state)") }
    func centralManager(_ central: CBMCentralManager, willRestoreState dict: [String: Any]) {
        let peripherals = dict[CBMCentralManagerRestoredStatePeripheralsKey] as? [CBMPeripheral] ?? []
        entries.append("restore \(peripherals.map { "\($0.state)" })")
        discovered += peripherals
        onRestore?(central, peripherals)
    }
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
        onFail?(central, peripheral)
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

    /// Finds the sensor, connects, and discovers its first service's characteristics; returns
    /// the peripheral and that service.
    @MainActor
    private func connectAndDiscover(
        _ manager: CBMCentralManager, _ journal: LifecycleJournal, _ bridge: MockBLEBridge
    ) async throws -> (CBMPeripheral, CBMService) {
        let peripheral = try await discover(manager, journal, bridge)
        manager.connect(peripheral)
        try await bridge.waitForApp { peripheral.state == .connected }
        peripheral.discoverServices(nil)
        try await bridge.waitForApp { peripheral.services != nil }
        let service = peripheral.services![0]
        peripheral.discoverCharacteristics(nil, for: service)
        try await bridge.waitForApp { service.characteristics != nil }
        return (peripheral, service)
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
    /// `didConnect`). (In fast mode the link comes up as the connect reaches the simulation,
    /// before the cancel does: the app used to hear `didConnect` first.)
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

    // MARK: Connecting

    /// CoreBluetooth has one attempt per peripheral: a second `connect` while it is pending adds
    /// none, and the app hears one `didConnect`.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(arguments: [false, true])
    func connectingTwiceWhileConnectingGivesOneDidConnect(realistic: Bool) async throws {
        let (entries, misuses) = try await withWatchApp(realistic: realistic, seed: 13) {
            bridge, manager, journal in
            let peripheral = try await discover(manager, journal, bridge)
            let count = journal.entries.count
            manager.connect(peripheral)
            manager.connect(peripheral)
            #expect(peripheral.state == .connecting)
            try await bridge.waitForApp { peripheral.state == .connected }
            return (try await settled(journal, from: count, bridge), manager.apiMisuses)
        }
        #expect(entries == ["connect connected"])
        #expect(misuses.isEmpty)
    }

    /// The peripheral's state as the app reads it at each step: `connecting` after `connect`,
    /// `connected` in `didConnect`, `disconnecting` after a cancel of the link, `disconnected`
    /// (and its services gone: CoreBluetooth invalidates them) in `didDisconnectPeripheral`.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(arguments: [false, true])
    func thePeripheralsStateFollowsEachStepAsCoreBluetoothReportsIt(realistic: Bool) async throws {
        let (entries, states) = try await withWatchApp(realistic: realistic, seed: 14) {
            bridge, manager, journal in
            let peripheral = try await discover(manager, journal, bridge)
            var states = [peripheral.state]
            let count = journal.entries.count
            manager.connect(peripheral)
            states.append(peripheral.state)
            try await bridge.waitForApp { peripheral.state == .connected }
            peripheral.discoverServices(nil)
            try await bridge.waitForApp { peripheral.services != nil }
            manager.cancelPeripheralConnection(peripheral)
            states.append(peripheral.state)
            try await bridge.waitForApp { peripheral.state == .disconnected }
            states.append(peripheral.state)
            return (try await settled(journal, from: count, bridge), states)
        }
        #expect(states == [.disconnected, .connecting, .disconnecting, .disconnected])
        #expect(entries == ["connect connected", "services connected", "disconnect disconnected services=nil"])
    }

    /// A connect, a cancel and a connect in one turn: the app hears the cancel's disconnection,
    /// then the second connect's `didConnect`, in both modes.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(arguments: [false, true])
    func connectCancelConnectInOneTurnEndsConnected(realistic: Bool) async throws {
        let (entries, linkUp) = try await withWatchApp(realistic: realistic, seed: 22) { bridge, manager, journal in
            let peripheral = try await discover(manager, journal, bridge)
            let count = journal.entries.count
            manager.connect(peripheral)
            manager.cancelPeripheralConnection(peripheral)
            manager.connect(peripheral)
            try await bridge.waitForApp { peripheral.state == .connected }
            let entries = try await settled(journal, from: count, bridge)
            return (entries, await manager.simulatedCentral!.isConnected(peripheral.identifier))
        }
        // (The cancelled attempt's `didDisconnectPeripheral` finds the second one pending:
        // `connecting`.)
        #expect(entries == ["disconnect connecting services=nil", "connect connected"])
        #expect(linkUp)
    }

    /// A cancel of a connected peripheral and a connect in one turn: the disconnection, then a
    /// new `didConnect`.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(arguments: [false, true])
    func cancellingAndConnectingAgainInOneTurnReconnects(realistic: Bool) async throws {
        let (entries, states) = try await withWatchApp(realistic: realistic, seed: 23) { bridge, manager, journal in
            let peripheral = try await discover(manager, journal, bridge)
            manager.connect(peripheral)
            try await bridge.waitForApp { peripheral.state == .connected }
            let count = journal.entries.count
            manager.cancelPeripheralConnection(peripheral)
            manager.connect(peripheral)
            let states = [peripheral.state]
            try await bridge.waitForApp { journal.entries.count == count + 2 }
            return (try await settled(journal, from: count, bridge), states + [peripheral.state])
        }
        // (`connecting` from the second connect on, in the old link's `didDisconnectPeripheral`
        // too: an attempt is pending, and an app that reconnects when it reads `disconnected`
        // there would connect twice.)
        #expect(entries == ["disconnect connecting services=nil", "connect connected"])
        #expect(states == [.connecting, .connected])
    }

    /// A cancel of the link, a connect and a cancel again in one turn: the app hears the link's
    /// end and the second attempt's, both as `didDisconnectPeripheral`, and no `didConnect`, in
    /// both modes. (In fast mode the second attempt's link comes up before its cancel reaches
    /// the simulation: its `didConnect` used to be reported, as the first disconnection ended
    /// what the cancel withheld.)
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(arguments: [false, true])
    func cancelConnectCancelOfALinkInOneTurnReportsTwoDisconnectionsAndNoDidConnect(realistic: Bool) async throws {
        let (entries, states, linkUp) = try await withWatchApp(realistic: realistic, seed: 27) {
            bridge, manager, journal in
            let peripheral = try await discover(manager, journal, bridge)
            manager.connect(peripheral)
            try await bridge.waitForApp { peripheral.state == .connected }
            let count = journal.entries.count
            manager.cancelPeripheralConnection(peripheral)
            manager.connect(peripheral)
            var states = [peripheral.state]
            manager.cancelPeripheralConnection(peripheral)
            states.append(peripheral.state)
            try await bridge.waitForApp { journal.entries.count == count + 2 }
            let entries = try await settled(journal, from: count, bridge)
            let linkUp = await manager.simulatedCentral!.isConnected(peripheral.identifier)
            return (entries, states + [peripheral.state], linkUp)
        }
        #expect(entries == ["disconnect connecting services=nil", "disconnect disconnected services=nil"])
        #expect(states == [.connecting, .connecting, .disconnected])
        #expect(!linkUp)
    }

    /// A connect, a cancel and a connect to a peripheral out of reach: the cancelled attempt's
    /// `didDisconnectPeripheral` finds the peripheral `connecting` (the second attempt waits, as
    /// CoreBluetooth's `connecting` says), and the second attempt's `didConnect` follows once the
    /// peripheral advertises again.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(arguments: [false, true])
    func aConnectAfterCancellingAPendingOneKeepsThePeripheralConnectingUntilItConnects(realistic: Bool) async throws {
        let bridge = MockBLEBridge(configuration: realistic ? .realistic(seed: 28) : .init(seed: 28))
        let sensor = try await makeSensor(on: bridge)
        let (entries, states) = try await bridge.run { @MainActor () -> ([String], [CBMPeripheralState]) in
            let journal = LifecycleJournal()
            let manager = CBMCentralManager(delegate: journal, queue: nil)
            try await bridge.waitForApp { manager.state == .poweredOn }
            let peripheral = try await discover(manager, journal, bridge)
            await sensor.stopAdvertising()
            let count = journal.entries.count
            manager.connect(peripheral)
            manager.cancelPeripheralConnection(peripheral)
            manager.connect(peripheral)
            try await bridge.waitForApp { journal.entries.count > count }
            var states = [peripheral.state]
            try await bridge.clock.sleep(for: .seconds(30))
            states.append(peripheral.state)
            try await sensor.startAdvertising(AdvertisementData(localName: "Sensor", serviceUUIDs: ["180F"]))
            try await bridge.waitForApp { peripheral.state == .connected }
            return (try await settled(journal, from: count, bridge), states)
        }
        #expect(entries == ["disconnect connecting services=nil", "connect connected"])
        #expect(states == [.connecting, .connecting])
    }

    /// A `connect` made while the link is up is ignored (noted as a misuse): its options change
    /// nothing, the auto-reconnect option in neither direction. The link then drops: the system
    /// reconnects only when the connect that made the link asked it to.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(arguments: [false, true], [false, true])
    func aConnectIgnoredWhileConnectedLeavesAutoReconnectAsItWas(realistic: Bool, reconnects: Bool) async throws {
        let (entries, misuses) = try await withWatchApp(realistic: realistic, seed: 29) { bridge, manager, journal in
            let peripheral = try await discover(manager, journal, bridge)
            manager.connect(peripheral, options: [CBMConnectPeripheralOptionEnableAutoReconnect: reconnects])
            try await bridge.waitForApp { peripheral.state == .connected }
            manager.connect(peripheral, options: [CBMConnectPeripheralOptionEnableAutoReconnect: !reconnects])
            let count = journal.entries.count
            await bridge.simulateDisconnection(
                central: manager.simulatedCentral!.identifier, peripheral: peripheral.identifier)
            try await bridge.waitForApp { journal.entries.count > count }
            return (try await settled(journal, from: count, bridge), manager.apiMisuses)
        }
        #expect(
            entries
                == (reconnects
                    ? ["disconnect connecting services=nil error", "connect connected"]
                    : ["disconnect disconnected services=nil error"]))
        #expect(misuses.count == 1)
        #expect(misuses.first?.contains("is already connected to this manager") == true)
    }

    /// A connect to a peripheral that stopped advertising waits (CoreBluetooth: connection
    /// attempts do not time out), with no callback, `connecting`; two cancels in one turn end it
    /// with one `didDisconnectPeripheral`.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(arguments: [false, true])
    func aConnectToASilentPeripheralWaitsUntilCancelledOnce(realistic: Bool) async throws {
        let bridge = MockBLEBridge(configuration: realistic ? .realistic(seed: 26) : .init(seed: 26))
        let sensor = try await makeSensor(on: bridge)
        let (waiting, entries, state) = try await bridge.run {
            @MainActor () -> ([String], [String], CBMPeripheralState) in
            let journal = LifecycleJournal()
            let manager = CBMCentralManager(delegate: journal, queue: nil)
            try await bridge.waitForApp { manager.state == .poweredOn }
            let peripheral = try await discover(manager, journal, bridge)
            await sensor.stopAdvertising()
            let count = journal.entries.count
            manager.connect(peripheral)
            try await bridge.clock.sleep(for: .seconds(120))
            let waiting = Array(journal.entries[count...])
            #expect(peripheral.state == .connecting)
            manager.cancelPeripheralConnection(peripheral)
            manager.cancelPeripheralConnection(peripheral)
            try await bridge.waitForApp { peripheral.state == .disconnected }
            return (waiting, try await settled(journal, from: count, bridge), peripheral.state)
        }
        #expect(waiting.isEmpty)
        #expect(entries == ["disconnect disconnected services=nil"])
        #expect(state == .disconnected)
    }

    // MARK: Cancelling

    /// A cancel of a peripheral the app never connected: CoreBluetooth documents no callback for
    /// it (its `didDisconnectPeripheral` is for a peripheral "previously connected"); the kit,
    /// as CoreBluetoothMock, calls nothing back.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(arguments: [false, true])
    func cancellingAPeripheralNeverConnectedCallsNothingBack(realistic: Bool) async throws {
        let (entries, state, misuses) = try await withWatchApp(realistic: realistic, seed: 15) {
            bridge, manager, journal in
            let peripheral = try await discover(manager, journal, bridge)
            let count = journal.entries.count
            manager.cancelPeripheralConnection(peripheral)
            return (try await settled(journal, from: count, bridge), peripheral.state, manager.apiMisuses)
        }
        #expect(entries.isEmpty)
        #expect(state == .disconnected)
        #expect(misuses.isEmpty)
    }

    /// A cancel while service discovery is pending: its callback may or may not come (Apple: the
    /// pending commands "may not complete"), but never after `didDisconnectPeripheral`.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(arguments: [false, true])
    func cancellingDuringServiceDiscoveryDeliversNothingAfterTheDisconnection(realistic: Bool) async throws {
        let entries = try await withWatchApp(realistic: realistic, seed: 16) { bridge, manager, journal in
            let peripheral = try await discover(manager, journal, bridge)
            manager.connect(peripheral)
            try await bridge.waitForApp { peripheral.state == .connected }
            let count = journal.entries.count
            peripheral.discoverServices(nil)
            manager.cancelPeripheralConnection(peripheral)
            try await bridge.waitForApp { peripheral.state == .disconnected }
            return try await settled(journal, from: count, bridge)
        }
        #expect(entries.last == "disconnect disconnected services=nil", "\(entries)")
        #expect(entries.filter { $0.hasPrefix("disconnect") }.count == 1)
        // (In fast mode the discovery is answered as it reaches the simulation, before the cancel
        // does: its callback comes first, the peripheral `disconnecting`.)
        let expected = ["disconnect disconnected services=nil"]
        #expect(entries == (realistic ? expected : ["services disconnecting"] + expected))
    }

    /// Reads, writes, subscriptions and discoveries on a disconnected peripheral: CoreBluetooth
    /// logs API MISUSE and does nothing; the kit notes each in `apiMisuses`, with no callback.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(arguments: [false, true])
    func callsOnADisconnectedPeripheralAreIgnoredAndNoted(realistic: Bool) async throws {
        let (entries, misuses) = try await withWatchApp(realistic: realistic, seed: 17) {
            bridge, manager, journal in
            let (peripheral, service) = try await connectAndDiscover(manager, journal, bridge)
            let level = service.characteristics![0]
            manager.cancelPeripheralConnection(peripheral)
            try await bridge.waitForApp { peripheral.state == .disconnected }
            let count = journal.entries.count
            peripheral.readValue(for: level)
            peripheral.writeValue(Data([1]), for: level, type: .withResponse)
            peripheral.setNotifyValue(true, for: level)
            peripheral.discoverServices(nil)
            peripheral.discoverCharacteristics(nil, for: service)
            peripheral.readRSSI()
            return (try await settled(journal, from: count, bridge), manager.apiMisuses)
        }
        #expect(entries.isEmpty)
        #expect(
            misuses.map { $0.components(separatedBy: ":").first! } == [
                "readValue", "writeValue", "setNotifyValue", "discoverServices", "discoverCharacteristics", "readRSSI",
            ])
        #expect(misuses.allSatisfy { $0.hasSuffix("is not connected") }, "\(misuses)")
    }

    /// A read made after the cancel, while the peripheral is `disconnecting`: CoreBluetooth
    /// refuses it ("API MISUSE: <CBPeripheral …, state = disconnecting> can only accept commands
    /// while in the connected state", seen in RxBluetoothKit issue 125); so does the kit.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(arguments: [false, true])
    func aReadWhileDisconnectingIsIgnoredAndNoted(realistic: Bool) async throws {
        let (entries, misuses) = try await withWatchApp(realistic: realistic, seed: 28) {
            bridge, manager, journal in
            let (peripheral, service) = try await connectAndDiscover(manager, journal, bridge)
            let count = journal.entries.count
            manager.cancelPeripheralConnection(peripheral)
            #expect(peripheral.state == .disconnecting)
            peripheral.readValue(for: service.characteristics![0])
            try await bridge.waitForApp { peripheral.state == .disconnected }
            return (try await settled(journal, from: count, bridge), manager.apiMisuses)
        }
        #expect(entries == ["disconnect disconnected services=nil"])
        #expect(misuses.count == 1)
        #expect(misuses.first?.hasPrefix("readValue: ") == true)
        #expect(misuses.first?.hasSuffix("is not connected") == true)
    }

    // MARK: Scanning and retrieving

    /// An app that stops the scan inside `didDiscover` and scans again later hears the
    /// peripheral again (a new scan reports what it hears afresh), as the same object.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(arguments: [false, true])
    func stoppingTheScanInsideDidDiscoverThenScanningAgainFindsThePeripheralAgain(realistic: Bool) async throws {
        let (discovered, scanning) = try await withWatchApp(realistic: realistic, seed: 18) {
            bridge, manager, journal in
            var scanning: [Bool] = []
            journal.onDiscover = { manager, _ in
                manager.stopScan()
                scanning.append(manager.isScanning)
            }
            manager.scanForPeripherals(withServices: nil)
            try await bridge.waitForApp { journal.discovered.count == 1 }
            try await bridge.clock.sleep(for: .seconds(2))
            #expect(journal.discovered.count == 1)
            manager.scanForPeripherals(withServices: nil)
            try await bridge.waitForApp { journal.discovered.count == 2 }
            return (journal.discovered, scanning)
        }
        #expect(discovered.count == 2)
        #expect(discovered[0] === discovered[1])
        #expect(scanning == [false, false])
    }

    /// `retrievePeripherals(withIdentifiers:)` gives the object the app already holds (CoreBluetooth
    /// keeps one object per peripheral and manager), and connecting it works.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(arguments: [false, true])
    func retrievingAHeldPeripheralGivesTheSameObjectAndItConnects(realistic: Bool) async throws {
        let (same, entries) = try await withWatchApp(realistic: realistic, seed: 19) { bridge, manager, journal in
            let peripheral = try await discover(manager, journal, bridge)
            let retrieved = manager.retrievePeripherals(withIdentifiers: [peripheral.identifier, peripheral.identifier])
            let count = journal.entries.count
            manager.connect(retrieved[0])
            try await bridge.waitForApp { peripheral.state == .connected }
            return (
                retrieved.count == 1 && retrieved[0] === peripheral, try await settled(journal, from: count, bridge)
            )
        }
        #expect(same)
        #expect(entries == ["connect connected"])
    }

    /// A second manager in the same app sees the peripheral the first connected
    /// (`retrieveConnectedPeripherals`, once its services are known), as its own object, not
    /// connected to it until it connects; then the first's cancel leaves the second's link up.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(arguments: [false, true])
    func aSecondManagerSeesThePeripheralTheFirstConnectedAndKeepsItsOwnLink(realistic: Bool) async throws {
        let (first, second, secondState, linkUp) = try await withWatchApp(realistic: realistic, seed: 20) {
            bridge, manager, journal in
            let peripheral = try await discover(manager, journal, bridge)
            manager.connect(peripheral)
            try await bridge.waitForApp { peripheral.state == .connected }
            peripheral.discoverServices(nil)
            try await bridge.waitForApp { peripheral.services != nil }
            let otherJournal = LifecycleJournal()
            let other = CBMCentralManager(delegate: otherJournal, queue: nil)
            try await bridge.waitForApp { other.state == .poweredOn }
            let seen = other.retrieveConnectedPeripherals(withServices: [CBMUUID(string: "180F")])
            #expect(seen.count == 1)
            let theirs = try #require(seen.first)
            #expect(theirs !== peripheral && theirs.identifier == peripheral.identifier)
            #expect(theirs.state == .disconnected)
            theirs.delegate = otherJournal
            other.connect(theirs)
            try await bridge.waitForApp { theirs.state == .connected }
            let count = journal.entries.count
            manager.cancelPeripheralConnection(peripheral)
            try await bridge.waitForApp { peripheral.state == .disconnected }
            let entries = try await settled(journal, from: count, bridge)
            return (
                entries, otherJournal.entries, theirs.state,
                await other.simulatedCentral!.isConnected(theirs.identifier)
            )
        }
        #expect(first == ["disconnect disconnected services=nil"])
        #expect(second == ["state poweredOn", "connect connected"])
        #expect(secondState == .connected)
        #expect(linkUp)
    }

    /// A second manager's connect and cancel in one turn, while the first manager is connected
    /// to the peripheral: the second hears only `didDisconnectPeripheral`, the first nothing.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(arguments: [false, true])
    func aSecondManagersConnectAndCancelInOneTurnLeaveTheFirstsLinkAlone(realistic: Bool) async throws {
        let (first, second, linkUp) = try await withWatchApp(realistic: realistic, seed: 27) {
            bridge, manager, journal in
            let peripheral = try await discover(manager, journal, bridge)
            manager.connect(peripheral)
            try await bridge.waitForApp { peripheral.state == .connected }
            let count = journal.entries.count
            let otherJournal = LifecycleJournal()
            let other = CBMCentralManager(delegate: otherJournal, queue: nil)
            try await bridge.waitForApp { other.state == .poweredOn }
            let theirs = try #require(other.retrievePeripherals(withIdentifiers: [peripheral.identifier]).first)
            other.connect(theirs)
            other.cancelPeripheralConnection(theirs)
            try await bridge.waitForApp { otherJournal.entries.count == 2 }
            return (
                try await settled(journal, from: count, bridge), otherJournal.entries,
                await manager.simulatedCentral!.isConnected(peripheral.identifier)
            )
        }
        #expect(first.isEmpty)
        #expect(second == ["state poweredOn", "disconnect disconnected services=nil"])
        #expect(linkUp)
    }

    /// A connect the peripheral refuses, cancelled in the same turn. In fast mode the refusal
    /// fails the attempt at once: the app hears `didFailToConnect` (its cancel finds nothing to
    /// cancel). In realistic timing the refusal would fail the attempt only where its link would
    /// have come up, so the cancel ends the attempt first: the app hears `didDisconnect` with no
    /// error, as for any attempt it cancels. Either way its next connect, which the peripheral
    /// accepts, brings `didConnect` (the cancel is answered, not held against it, and the first
    /// refusal's error is not reported again).
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
        let first =
            realistic
            ? "disconnect disconnected services=nil" : "fail disconnected \(CBMError.Code.connectionFailed.rawValue)"
        #expect(entries == ["state poweredOn", first, "connect connected"])
    }

    /// An app that connects again from `didFailToConnect`, as companion apps retry, hears one
    /// failure for the attempt that failed, then `didConnect` for its retry: the attempt's failure
    /// was reported twice (by the central's event, and again by the connect's outcome, which
    /// found the peripheral `connecting` again after the retry), whether an injected error or the
    /// spec's delegate refused it.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(arguments: [false, true], [false, true])
    func anAppRetryingFromDidFailToConnectHearsOneFailurePerFailedAttempt(realistic: Bool, refused: Bool)
        async throws
    {
        let bridge = MockBLEBridge(configuration: realistic ? .realistic(seed: 27) : .init(seed: 27))
        let watch =
            CBMPeripheralSpec
            .simulatePeripheral(proximity: .near)
            .advertising(advertisementData: [CBMAdvertisementDataLocalNameKey: "Watch"], withInterval: 0.1)
            .connectable(name: "Watch", services: [], delegate: refused ? RefusingOnce() : nil)
            .allowForRetrieval()
            .build()
        if !refused {
            await bridge.inject(ErrorInjection(.connect, failure: .coreBluetooth(.connectionFailed), frequency: .once))
        }
        let (entries, log) = try await bridge.run { @MainActor () -> ([String], [BridgeLogEntry.Kind]) in
            CBMCentralManagerMock.simulatePeripherals([watch])
            let journal = LifecycleJournal()
            journal.onFail = { manager, peripheral in manager.connect(peripheral) }
            let manager = CBMCentralManager(delegate: journal, queue: nil)
            try await bridge.waitForApp { manager.state == .poweredOn }
            let peripheral = try #require(manager.retrievePeripherals(withIdentifiers: [watch.identifier]).first)
            manager.connect(peripheral)
            try await bridge.waitForApp { journal.entries.contains("connect connected") }
            let entries = try await settled(journal, from: 0, bridge)
            let kinds: [BridgeLogEntry.Kind] = [.connectionFailed, .connected]
            return (entries, await bridge.log.map(\.kind).filter(kinds.contains))
        }
        #expect(
            entries == [
                "state poweredOn", "fail disconnected \(CBMError.Code.connectionFailed.rawValue)", "connect connected",
            ])
        #expect(log == [.connectionFailed, .connected])
    }

    /// A restored peripheral still connecting (the system's pending connection kept for the
    /// app), cancelled inside `willRestoreState`, before the manager is powered on: CoreBluetooth
    /// accepts commands only while powered on (it logs API MISUSE and ignores the call, as
    /// CoreBluetoothMock's manager does), so the restored connection comes up and the app hears
    /// `didConnect`, in both modes. (In realistic mode the cancel was ignored by the simulation
    /// but not by the front end: the link came up, unreported, and the peripheral stayed
    /// `connecting`; in fast mode, where the manager is powered on at once, the cancel ended it.)
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(arguments: [false, true])
    func aCancelMadeBeforeThePowerOnIsIgnoredAndTheRestoredConnectionComesUp(realistic: Bool) async throws {
        let bridge = MockBLEBridge(configuration: realistic ? .realistic(seed: 25) : .init(seed: 25))
        let watch =
            CBMPeripheralSpec
            .simulatePeripheral(proximity: .near)
            .advertising(advertisementData: [CBMAdvertisementDataLocalNameKey: "Watch"], withInterval: 0.1)
            .connectable(
                name: "Watch", services: [CBMServiceMock(type: CBMUUID(string: "180F"), primary: true)],
                delegate: nil
            )
            .allowForRetrieval()
            .build()
        let (entries, linkUp, misuses) = try await bridge.run { @MainActor () -> ([String], Bool, [String]) in
            CBMCentralManagerMock.simulatePeripherals([watch])
            CBMCentralManagerMock.simulateStateRestoration = { _ in
                [CBMCentralManagerRestoredStatePeripheralsKey: [watch]]
            }
            let journal = LifecycleJournal()
            journal.onRestore = { manager, peripherals in
                for peripheral in peripherals { manager.cancelPeripheralConnection(peripheral) }
            }
            let manager = CBMCentralManager(
                delegate: journal, queue: nil, options: [CBMCentralManagerOptionRestoreIdentifierKey: "watch"])
            try await bridge.waitForApp { manager.state == .poweredOn }
            let entries = try await settled(journal, from: 0, bridge)
            let peripheral = journal.discovered[0]
            return (entries, await manager.simulatedCentral!.isConnected(peripheral.identifier), manager.apiMisuses)
        }
        #expect(entries == ["restore [\"connecting\"]", "state poweredOn", "connect connected"])
        #expect(linkUp)
        #expect(misuses == ["cancelPeripheralConnection: the manager is not powered on"])
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
