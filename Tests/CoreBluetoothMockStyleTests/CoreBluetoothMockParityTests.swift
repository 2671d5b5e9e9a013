import BLECBM
import BLEMockKit
import Foundation
import Testing

// One test per behaviour that CoreBluetoothMock's users' tests rely on, each written against
// CoreBluetoothMock's behaviour and naming the file of its source it follows
// (github.com/NordicSemiconductor/IOS-CoreBluetooth-Mock, folder CoreBluetoothMock/).

extension CBMUUID {
    static let transferService = CBMUUID(string: "6E400001-B5A3-F393-E0A9-E50E24DCCA9E")
    static let transferData = CBMUUID(string: "6E400002-B5A3-F393-E0A9-E50E24DCCA9E")
}

/// A watch's file-transfer spec delegate: each read answers a 300-byte value of one byte that
/// changes from read to read (1, 2, 3 …); writes are kept.
final class TransferSpecDelegate: CBMPeripheralSpecDelegate, @unchecked Sendable {
    // @unchecked Sendable: its state is guarded by `lock`.
    private let lock = NSLock()
    private var reads = 0
    private var written: [Data] = []
    private var commandsWritten: [Data] = []
    private var length = 300

    /// How long each read's value is (300 bytes unless set).
    var readLength: Int {
        get { lock.withLock { length } }
        set { lock.withLock { length = newValue } }
    }

    /// How many times a characteristic read reached the delegate.
    var readCalls: Int { lock.withLock { reads } }
    /// The values written with response, one entry per delegate call.
    var writes: [Data] { lock.withLock { written } }
    /// The values written without response.
    var commands: [Data] { lock.withLock { commandsWritten } }

    func peripheral(_ peripheral: CBMPeripheralSpec, didReceiveReadRequestFor characteristic: CBMCharacteristicMock)
        -> Result<Data, Error>
    {
        let (n, count) = lock.withLock {
            reads += 1
            return (reads, length)
        }
        return .success(Data(repeating: UInt8(n), count: count))
    }

    func peripheral(
        _ peripheral: CBMPeripheralSpec, didReceiveWriteRequestFor characteristic: CBMCharacteristicMock, data: Data
    ) -> Result<Void, Error> {
        lock.withLock { written.append(data) }
        return .success(())
    }

    func peripheral(
        _ peripheral: CBMPeripheralSpec, didReceiveWriteCommandFor characteristic: CBMCharacteristicMock, data: Data
    ) {
        lock.withLock { commandsWritten.append(data) }
    }

    func peripheral(_ peripheral: CBMPeripheralSpec, didReceiveReadRequestFor descriptor: CBMDescriptorMock)
        -> Result<Data, Error>
    { .success(Data("Transfer data".utf8)) }
}

/// A watch known to the system (retrievable without a scan), out of range or in range, with
/// one notifying characteristic that declares one descriptor: its user description.
func makeWatch(delegate: (any CBMPeripheralSpecDelegate)?, proximity: CBMProximity = .near, mtu: Int = 23)
    -> CBMPeripheralSpec
{
    let data = CBMCharacteristicMock(
        type: .transferData, properties: [.read, .write, .writeWithoutResponse, .notify],
        descriptors: CBMDescriptorMock(type: .userDescription))
    return
        CBMPeripheralSpec
        .simulatePeripheral(proximity: proximity)
        .advertising(advertisementData: [CBMAdvertisementDataLocalNameKey: "Watch"], withInterval: 0.100)
        .connectable(
            name: "Watch", services: [CBMServiceMock(type: .transferService, primary: true, characteristics: data)],
            delegate: delegate, connectionInterval: 0.030, mtu: mtu
        )
        .allowForRetrieval()
        .build()
}

/// The transfer service with one readable characteristic.
func readableTransferService() -> [CBMServiceMock] {
    [
        CBMServiceMock(
            type: .transferService, primary: true,
            characteristics: CBMCharacteristicMock(type: .transferData, properties: [.read]))
    ]
}

/// A band another app is connected to from the start (built `.connected(…)`), near.
func makeConnectedBand() -> CBMPeripheralSpec {
    CBMPeripheralSpec
        .simulatePeripheral(proximity: .near)
        .advertising(advertisementData: [CBMAdvertisementDataLocalNameKey: "Band"])
        .connected(name: "Band", services: readableTransferService(), delegate: TransferSpecDelegate())
        .build()
}

/// An app relaunched with a restore identifier, the specs it restores simulated: it keeps the
/// peripherals `willRestoreState` hands it and, once powered on, carries on with them as Apple's
/// guide has it, discovering the services of the last one (through `app`). `log` has its
/// connections.
@MainActor
final class RestoringApp {
    let log = ConnectionLog(states: false)
    let app = ParityApp()
    private(set) var restored: [CBMPeripheral] = []
    /// The manager (an app keeps its manager: a released one leaves the air).
    private(set) var manager: CBMCentralManager!

    init(restoring specs: [CBMPeripheralSpec]) {
        CBMCentralManagerMock.simulatePeripherals(specs)
        CBMCentralManagerMock.simulateStateRestoration = { _ in
            [CBMCentralManagerRestoredStatePeripheralsKey: specs]
        }
        log.proxy.willRestoreState = { [unowned self] _, dictionary in
            restored = dictionary[CBMCentralManagerRestoredStatePeripheralsKey] as? [CBMPeripheral] ?? []
        }
        log.proxy.didUpdateState = { [unowned self] manager in
            guard manager.state == .poweredOn, let last = restored.last else { return }
            last.delegate = app
            last.discoverServices(nil)
        }
        manager = CBMCentralManagerMock(
            delegate: log.proxy, queue: nil, options: [CBMCentralManagerOptionRestoreIdentifierKey: "app"])
    }
}

/// Notes a delegate app's callbacks as lines, in order.
final class ParityApp: NSObject, CBMCentralManagerDelegate, CBMPeripheralDelegate {
    var lines: [String] = []
    var values: [Data] = []
    var characteristic: CBMCharacteristic?
    /// The manager the app made (an app keeps its manager: a released one leaves the air).
    var manager: CBMCentralManager?
    /// The peripheral it connected (an app keeps it: CoreBluetooth cancels the connection of one
    /// nobody keeps).
    var peripheral: CBMPeripheral?

    func centralManagerDidUpdateState(_ central: CBMCentralManager) {}

    func centralManager(_ central: CBMCentralManager, didConnect peripheral: CBMPeripheral) {
        lines.append("connected")
        peripheral.delegate = self
    }

    func centralManager(_ central: CBMCentralManager, didFailToConnect peripheral: CBMPeripheral, error: Error?) {
        lines.append("failed \(Self.describe(error))")
    }

    func centralManager(
        _ central: CBMCentralManager, didDisconnectPeripheral peripheral: CBMPeripheral, error: Error?
    ) {
        lines.append("disconnected \(Self.describe(error))")
    }

    func peripheral(_ peripheral: CBMPeripheral, didDiscoverServices error: Error?) {
        for service in peripheral.services ?? [] { peripheral.discoverCharacteristics(nil, for: service) }
    }

    func peripheral(_ peripheral: CBMPeripheral, didDiscoverCharacteristicsFor service: CBMService, error: Error?) {
        characteristic = service.characteristics?.first
    }

    func peripheral(_ peripheral: CBMPeripheral, didUpdateValueFor characteristic: CBMCharacteristic, error: Error?) {
        if let value = characteristic.value, error == nil { values.append(value) }
        lines.append("read \(Self.describe(error))")
    }

    func peripheral(_ peripheral: CBMPeripheral, didWriteValueFor characteristic: CBMCharacteristic, error: Error?) {
        lines.append("written \(Self.describe(error))")
    }

    func peripheral(
        _ peripheral: CBMPeripheral, didDiscoverDescriptorsFor characteristic: CBMCharacteristic, error: Error?
    ) {
        lines.append("descriptors \(Self.describe(error))")
    }

    func peripheral(_ peripheral: CBMPeripheral, didUpdateValueFor descriptor: CBMDescriptor, error: Error?) {
        lines.append("descriptor read \(Self.describe(error))")
    }

    func peripheral(_ peripheral: CBMPeripheral, didWriteValueFor descriptor: CBMDescriptor, error: Error?) {
        lines.append("descriptor written \(Self.describe(error))")
    }

    func peripheral(
        _ peripheral: CBMPeripheral, didUpdateNotificationStateFor characteristic: CBMCharacteristic, error: Error?
    ) {
        lines.append("notifying \(characteristic.isNotifying) \(Self.describe(error))")
    }

    func peripheral(_ peripheral: CBMPeripheral, didModifyServices invalidatedServices: [CBMService]) {
        lines.append("modified \(invalidatedServices.map(\.uuid.uuidString))")
    }

    func peripheralDidUpdateName(_ peripheral: CBMPeripheral) {
        lines.append("name \(peripheral.name ?? "nil")")
    }

    static func describe(_ error: Error?) -> String {
        guard let error = error as NSError? else { return "nil" }
        return "\(error.domain) \(error.code)"
    }
}

@Suite("CoreBluetoothMock parity", .timeLimit(.minutes(10)), .finishesOwnBridges)
struct CoreBluetoothMockParityTests {
    static func bridge(realistic: Bool, seed: UInt64) -> MockBLEBridge {
        ownBridge(configuration: realistic ? .realistic(seed: seed) : .init(seed: seed))
    }

    /// Connects the app to the watch and discovers its characteristic.
    @MainActor
    static func connect(
        _ watch: CBMPeripheralSpec, app: ParityApp, on bridge: MockBLEBridge
    ) async throws -> (CBMCentralManager, CBMPeripheral, CBMCharacteristic) {
        let manager = CBMCentralManagerMock(delegate: app, queue: nil)
        app.manager = manager
        try await bridge.waitForApp { manager.state == .poweredOn }
        let peripheral = try #require(manager.retrievePeripherals(withIdentifiers: [watch.identifier]).first)
        app.peripheral = peripheral
        manager.connect(peripheral)
        try await bridge.waitForApp { peripheral.state == .connected }
        peripheral.discoverServices(nil)
        try await bridge.waitForApp { app.characteristic != nil }
        return (manager, peripheral, try #require(app.characteristic))
    }

    // CBMCentralManagerMock.swift, discoverDescriptors: the descriptors listed are the spec's
    // own, in the order declared; none is added for a notifying characteristic.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(arguments: [false, true])
    func aCharacteristicListsOnlyTheDescriptorsItsSpecDeclares(realistic: Bool) async throws {
        let bridge = Self.bridge(realistic: realistic, seed: 70)
        let delegate = TransferSpecDelegate()
        let watch = makeWatch(delegate: delegate)
        try await bridge.run { @MainActor in
            CBMCentralManagerMock.simulatePeripherals([watch])
            let app = ParityApp()
            let (_, peripheral, characteristic) = try await Self.connect(watch, app: app, on: bridge)
            peripheral.discoverDescriptors(for: characteristic)
            try await bridge.waitForApp { app.lines.contains("descriptors nil") }
            let descriptors = try #require(characteristic.descriptors)
            #expect(descriptors.count == 1)
            #expect(descriptors.first?.uuid == .userDescription)
            // (The kit still answers notifications through the CCCD the link needs.)
            peripheral.setNotifyValue(true, for: characteristic)
            try await bridge.waitForApp { app.lines.contains("notifying true nil") }
            let first = try #require(descriptors.first)
            peripheral.readValue(for: first)
            try await bridge.waitForApp { app.lines.contains("descriptor read nil") }
            #expect(first.value as? Data == Data("Transfer data".utf8))
        }
    }

    // CBMPeripheralSpec.swift, simulateCaching and simulateProximityChange: each sets the spec's
    // state at once, so a query made right after sees it.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test func aSynchronousQueryRightAfterASimulationCallSeesItsEffect() async throws {
        let bridge = ownBridge(seed: 71)
        let watch =
            CBMPeripheralSpec
            .simulatePeripheral(proximity: .near)
            .advertising(advertisementData: [CBMAdvertisementDataLocalNameKey: "Watch"])
            .connectable(name: "Watch", services: [], delegate: TransferSpecDelegate())
            .build()
        try await bridge.run { @MainActor in
            CBMCentralManagerMock.simulatePeripherals([watch])
            let manager = CBMCentralManagerMock()
            try await bridge.waitForApp { manager.state == .poweredOn }
            #expect(!watch.isKnown)
            #expect(manager.retrievePeripherals(withIdentifiers: [watch.identifier]).isEmpty)
            watch.simulateCaching()
            #expect(watch.isKnown)
            #expect(manager.retrievePeripherals(withIdentifiers: [watch.identifier]).count == 1)
            watch.simulateProximityChange(.outOfRange)
            #expect(watch.proximity == .outOfRange)
            watch.simulateProximityChange(.immediate)
            #expect(watch.proximity == .immediate)
        }
    }

    // CBMCentralManagerMock.swift, writeValue(_:for:type:): a write with response reaches the
    // spec delegate's peripheral(_:didReceiveWriteRequestFor:data:) once, with the whole value,
    // however many Prepare Writes the link needs for it.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(arguments: [false, true])
    func aLongWriteReachesTheSpecDelegateOnceWithTheWholeValue(realistic: Bool) async throws {
        let bridge = Self.bridge(realistic: realistic, seed: 72)
        let delegate = TransferSpecDelegate()
        let watch = makeWatch(delegate: delegate)
        let value = Data((0..<200).map { UInt8($0) })
        try await bridge.run { @MainActor in
            CBMCentralManagerMock.simulatePeripherals([watch])
            let app = ParityApp()
            let (_, peripheral, characteristic) = try await Self.connect(watch, app: app, on: bridge)
            peripheral.writeValue(value, for: characteristic, type: .withResponse)
            try await bridge.waitForApp { app.lines.contains { $0.hasPrefix("written") } }
            #expect(app.lines.last == "written nil")
        }
        #expect(delegate.writes == [value])
    }

    // CBMCentralManagerMock.swift, readValue(for:): one readValue asks the spec delegate once,
    // and the app gets that one answer whole, however many Read Blobs the link needs; a value
    // that changes between reads never reaches the app spliced.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(arguments: [false, true])
    func aLongReadAsksTheSpecDelegateOnceAndTheAppGetsThatValueWhole(realistic: Bool) async throws {
        let bridge = Self.bridge(realistic: realistic, seed: 73)
        let delegate = TransferSpecDelegate()
        let watch = makeWatch(delegate: delegate)
        let values = try await bridge.run { @MainActor () -> [Data] in
            CBMCentralManagerMock.simulatePeripherals([watch])
            let app = ParityApp()
            let (_, peripheral, characteristic) = try await Self.connect(watch, app: app, on: bridge)
            for count in 1...3 {
                peripheral.readValue(for: characteristic)
                try await bridge.waitForApp { app.values.count == count }
            }
            return app.values
        }
        #expect(delegate.readCalls == 3)
        #expect(values == [1, 2, 3].map { Data(repeating: $0, count: 300) })
    }

    // CBMCentralManagerMock.swift, readValue(for:): the app gets the spec delegate's value
    // whatever its length. On the link, a value of exactly ATT_MTU − 1 bytes (or a multiple of
    // it) fills every Read response, so the central asks with a Read Blob at offset == length,
    // which is answered with no bytes (Core Vol 3, Part F, 3.4.4.5: an offset past the end,
    // not at it, is Invalid Offset); an empty value is one empty Read response.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(arguments: [0, 1, 21, 22, 23, 44, 66, 512], [false, true])
    func aSpecValueOfAnyLengthReadsWhole(length: Int, realistic: Bool) async throws {
        let bridge = Self.bridge(realistic: realistic, seed: 91)
        let delegate = TransferSpecDelegate()
        delegate.readLength = length
        let watch = makeWatch(delegate: delegate)
        let (values, lines) = try await bridge.run { @MainActor () -> ([Data], [String]) in
            CBMCentralManagerMock.simulatePeripherals([watch])
            let app = ParityApp()
            let (_, peripheral, characteristic) = try await Self.connect(watch, app: app, on: bridge)
            peripheral.readValue(for: characteristic)
            try await bridge.waitForApp { app.lines.contains { $0.hasPrefix("read") } }
            return (app.values, app.lines)
        }
        #expect(lines.filter { $0.hasPrefix("read") } == ["read nil"])
        #expect(values == [Data(repeating: 1, count: length)])
        #expect(delegate.readCalls == 1)
    }

    // CBMPeripheralSpec.swift, simulateDisconnection(withError:): the app's
    // centralManager(_:didDisconnectPeripheral:error:) gets the error given, domain and code.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(arguments: [false, true])
    func aDisconnectionSimulatedWithAnATTErrorReachesTheAppWithThatError(realistic: Bool) async throws {
        let bridge = Self.bridge(realistic: realistic, seed: 74)
        let watch = makeWatch(delegate: TransferSpecDelegate())
        let lines = try await bridge.run { @MainActor () -> [String] in
            CBMCentralManagerMock.simulatePeripherals([watch])
            let app = ParityApp()
            let (_, peripheral, _) = try await Self.connect(watch, app: app, on: bridge)
            watch.simulateDisconnection(withError: CBMATTError(.insufficientEncryption))
            try await bridge.waitForApp { app.lines.count == 2 }
            #expect(peripheral.state == .disconnected)
            return app.lines
        }
        #expect(
            lines == [
                "connected", "disconnected \(CBMATTErrorDomain) \(CBMATTError.Code.insufficientEncryption.rawValue)",
            ])
    }

    // CBMCentralManagerMock.swift, cancelPeripheralConnection(_:) and CBMPeripheralMock's
    // disconnect(completion:): cancelling a connection still pending reports only
    // centralManager(_:didDisconnectPeripheral:error:), with no error.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(arguments: [false, true])
    func cancellingAPendingConnectionReportsOnlyADisconnectionWithNoError(realistic: Bool) async throws {
        let bridge = Self.bridge(realistic: realistic, seed: 75)
        let watch = makeWatch(delegate: TransferSpecDelegate(), proximity: .outOfRange)
        let lines = try await bridge.run { @MainActor () -> [String] in
            CBMCentralManagerMock.simulatePeripherals([watch])
            let app = ParityApp()
            let manager = CBMCentralManagerMock(delegate: app, queue: nil)
            try await bridge.waitForApp { manager.state == .poweredOn }
            let peripheral = try #require(manager.retrievePeripherals(withIdentifiers: [watch.identifier]).first)
            manager.connect(peripheral)
            try await bridge.clock.sleep(for: .seconds(1))
            #expect(peripheral.state == .connecting)
            manager.cancelPeripheralConnection(peripheral)
            try await bridge.waitForApp { !app.lines.isEmpty }
            // Nothing else follows.
            try await bridge.clock.sleep(for: .seconds(5))
            #expect(peripheral.state == .disconnected)
            return app.lines
        }
        #expect(lines == ["disconnected nil"])
    }

    // CBMCentralManagerMock.swift, readValue(for:), writeValue(_:for:type:) and
    // discoverDescriptors(for:): each callback is delivered only if the peripheral is still
    // connected then, so requests pending when the link drops get no callback, and the app hears
    // only the disconnection (as on iOS). In fast mode too: the spec's delegate answers them on
    // the app's queue (here the main queue, which the test's body holds until it waits), so they
    // are still unanswered when the link drops.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(arguments: [false, true])
    func requestsPendingWhenTheLinkDropsGetNoCallback(realistic: Bool) async throws {
        let bridge = Self.bridge(realistic: realistic, seed: 76)
        let watch = makeWatch(delegate: TransferSpecDelegate())
        let lines = try await bridge.run { @MainActor () -> [String] in
            CBMCentralManagerMock.simulatePeripherals([watch])
            let app = ParityApp()
            let (_, peripheral, characteristic) = try await Self.connect(watch, app: app, on: bridge)
            peripheral.readValue(for: characteristic)
            peripheral.writeValue(Data([1]), for: characteristic, type: .withResponse)
            peripheral.discoverDescriptors(for: characteristic)
            watch.simulateDisconnection()
            try await bridge.waitForApp { app.lines.last?.hasPrefix("disconnected") == true }
            // Nothing else follows.
            try await bridge.clock.sleep(for: .seconds(40))
            return app.lines
        }
        let dropped = "disconnected \(CBMErrorDomain) \(CBMError.Code.peripheralDisconnected.rawValue)"
        #expect(lines == ["connected", dropped])
    }

    // CBMCentralManagerDelegateProxy.swift and CBMPeripheralDelegateProxy.swift: closure
    // delegates, each closure called for its callback.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test func theDelegateProxiesCallTheirClosures() async throws {
        let bridge = ownBridge(seed: 76)
        let delegate = TransferSpecDelegate()
        let watch = makeWatch(delegate: delegate)
        let lines = try await bridge.run { @MainActor () -> [String] in
            CBMCentralManagerMock.simulatePeripherals([watch])
            var lines: [String] = []
            let centralProxy = CBMCentralManagerDelegateProxy()
            centralProxy.didUpdateState = { lines.append("state \($0.state.rawValue)") }
            centralProxy.didConnect = { _, peripheral in lines.append("connected \(peripheral.name ?? "")") }
            centralProxy.didDisconnect = { _, _, _, isReconnecting, error in
                lines.append("disconnected \(isReconnecting) \(ParityApp.describe(error))")
            }
            let peripheralProxy = CBMPeripheralDelegateProxy()
            peripheralProxy.didDiscoverServices = { peripheral, error in
                lines.append("services \(peripheral.services?.count ?? 0) \(ParityApp.describe(error))")
            }
            let manager = CBMCentralManagerMock(delegate: centralProxy, queue: nil)
            try await bridge.waitForApp { manager.state == .poweredOn }
            let peripheral = try #require(manager.retrievePeripherals(withIdentifiers: [watch.identifier]).first)
            peripheral.delegate = peripheralProxy
            manager.connect(peripheral)
            try await bridge.waitForApp { peripheral.state == .connected }
            peripheral.discoverServices(nil)
            try await bridge.waitForApp { peripheral.services != nil }
            manager.cancelPeripheralConnection(peripheral)
            try await bridge.waitForApp { peripheral.state == .disconnected }
            return lines
        }
        #expect(
            lines == [
                "state \(CBMManagerState.poweredOn.rawValue)", "connected Watch", "services 1 nil",
                "disconnected false nil",
            ])
    }

    // CBMCentralManagerMock.swift: init(), init(delegate:queue:) and
    // init(delegate:queue:options:) make managers of the simulation, as CoreBluetoothMock's do.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test func everyInitialiserOfTheMockManagerJoinsTheSimulation() async throws {
        let bridge = ownBridge(seed: 77)
        let watch = makeWatch(delegate: TransferSpecDelegate())
        try await bridge.run { @MainActor in
            CBMCentralManagerMock.simulatePeripherals([watch])
            let managers = [
                CBMCentralManagerMock(),
                CBMCentralManagerMock(delegate: nil, queue: nil),
                CBMCentralManagerMock(
                    delegate: nil, queue: .main, options: [CBMCentralManagerOptionShowPowerAlertKey: true]),
            ]
            for manager in managers {
                try await bridge.waitForApp { manager.state == .poweredOn }
                #expect(manager.retrievePeripherals(withIdentifiers: [watch.identifier]).count == 1)
            }
        }
    }

    // CBMAttributes.swift: a descriptor's optionalCharacteristic and a characteristic's
    // optionalService (internal there, reached with @testable import) are the objects that own
    // them; here they are public.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test func aDescriptorKnowsItsCharacteristicAndACharacteristicItsService() async throws {
        let bridge = ownBridge(seed: 78)
        let watch = makeWatch(delegate: TransferSpecDelegate())
        try await bridge.run { @MainActor in
            CBMCentralManagerMock.simulatePeripherals([watch])
            let app = ParityApp()
            let (_, peripheral, characteristic) = try await Self.connect(watch, app: app, on: bridge)
            peripheral.discoverDescriptors(for: characteristic)
            try await bridge.waitForApp { characteristic.descriptors != nil }
            let descriptor = try #require(characteristic.descriptors?.first)
            #expect(descriptor.optionalCharacteristic === characteristic)
            #expect(characteristic.optionalService === peripheral.services?.first)
            #expect(characteristic.optionalService?.uuid == .transferService)
        }
    }

    // CBMCentralManagerMock.swift passes CFAbsoluteTimeGetCurrent() as the timestamp of
    // didDisconnectPeripheral; here the function exists on Linux too, seconds since 2001.
    @Test func cfAbsoluteTimeGetCurrentCountsSecondsSince2001() {
        let now = CFAbsoluteTimeGetCurrent()
        let reference = Date().timeIntervalSinceReferenceDate
        #expect(abs(now - reference) < 60)
        #expect(now > 788_918_400)  // after 2026-01-01
    }

    // CBMCentralManagerMock.swift, connect(_:options:) with
    // CBMConnectPeripheralOptionEnableAutoReconnect, and CBMPeripheralMock's disconnected(withError:):
    // a link lost with auto-reconnect on reports isReconnecting true and connects again by itself;
    // one the app cancels reports false and stays down.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(arguments: [false, true])
    func autoReconnectReportsIsReconnectingAndConnectsAgain(realistic: Bool) async throws {
        let lines = try await Self.reconnecting(realistic: realistic, seed: 79, states: false) { scene in
            scene.watch.simulateDisconnection()
            try await scene.bridge.waitForApp { scene.log.lines.count == 3 }
            #expect(scene.peripheral.state == .connected)
            scene.manager.cancelPeripheralConnection(scene.peripheral)
            try await scene.bridge.waitForApp { scene.log.lines.count == 4 }
            try await scene.bridge.clock.sleep(for: .seconds(5))
            #expect(scene.peripheral.state == .disconnected)
        }
        #expect(lines == ["connected", ConnectionLog.dropped, "connected", "disconnected false nil"])
    }

    // The same, with the app giving up at once: it cancels in the callback that says the system
    // is reconnecting (and, in the second case, Bluetooth goes off and on again right after, as
    // Nordic's NormalBehaviorTest and ResetTest do between them). Nothing connects after the
    // cancel: in realistic mode the cancel ends the pending attempt; in fast mode the
    // reconnection is instant, so it was up before the cancel reached the simulation, and the
    // cancel ends that link. Either way the app hears only didDisconnect without an error, as
    // CoreBluetooth reports a cancelled pending connection (in fast mode it used to hear the
    // reconnection's didConnect first), and no didConnect follows, ever. (The system's attempt
    // was queued behind the calls the app made after it, so it connected after the cancel, or
    // after the power cycle with a peripheral object the app had never seen: Nordic's
    // BlinkyManager crashed on that at the start of ResetTest, in 3 of some 80 runs here.)
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(arguments: [(false, false), (false, true), (true, false), (true, true)])
    func anAppThatCancelsWhileTheSystemReconnectsStaysDisconnected(realistic: Bool, powerCycle: Bool) async throws {
        let lines = try await Self.reconnecting(realistic: realistic, seed: 82) { scene in
            scene.log.whileReconnecting = { manager, peripheral in
                manager.cancelPeripheralConnection(peripheral)
                if powerCycle {
                    CBMCentralManagerMock.simulatePowerOff()
                    CBMCentralManagerMock.simulatePowerOn()
                }
            }
            scene.watch.simulateDisconnection()
            try await scene.bridge.waitForApp { scene.log.lines.contains { $0.hasPrefix("disconnected true") } }
            try await scene.bridge.clock.sleep(for: .seconds(10))
            if !powerCycle { #expect(scene.peripheral.state == .disconnected) }
        }
        let powerCycled = powerCycle ? [ConnectionLog.poweredOff, ConnectionLog.poweredOn] : []
        #expect(
            lines == [ConnectionLog.poweredOn, "connected", ConnectionLog.dropped, "disconnected false nil"]
                + powerCycled)
    }

    // Bluetooth turning off ends the system's reconnection, even one it started at the same
    // instant (the link dropped, then Bluetooth went off and on, in one go of the test's): once
    // Bluetooth is back the app has to connect again itself. (The attempt, queued as the link
    // dropped and applied after the power cycle, connected, with a peripheral object the app had
    // never seen.)
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(arguments: [false, true])
    func bluetoothTurningOffEndsTheSystemsReconnection(realistic: Bool) async throws {
        let lines = try await Self.reconnecting(realistic: realistic, seed: 84) { scene in
            scene.watch.simulateDisconnection()
            CBMCentralManagerMock.simulatePowerOff()
            CBMCentralManagerMock.simulatePowerOn()
            try await scene.bridge.clock.sleep(for: .seconds(10))
        }
        #expect(
            lines == [
                ConnectionLog.poweredOn, "connected", ConnectionLog.dropped, ConnectionLog.poweredOff,
                ConnectionLog.poweredOn,
            ])
    }

    // CoreBluetooth invalidates a manager's peripheral objects when Bluetooth turns off. A connect
    // the app makes with such an object before it has heard of the power-off (the state
    // callbacks still on their way) reaches the system after it: it is ignored, and does not
    // connect once Bluetooth is back on. (It did: the app heard didConnect for a peripheral object
    // it had never seen.) An app waiting for that didConnect stalls, and the stall names the call.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(arguments: [false, true])
    func aConnectMadeBeforeTheAppHeardOfAPowerOffDoesNotConnectOnceBluetoothIsBack(realistic: Bool) async throws {
        let bridge = Self.bridge(realistic: realistic, seed: 83)
        let watch = makeWatch(delegate: TransferSpecDelegate())
        let log = await ConnectionLog(states: true)
        var stall: MockBLEBridge.Stall?
        // (Written by the run's body, read once the run has ended.)
        nonisolated(unsafe) var central = ""
        do {
            try await bridge.run { @MainActor in
                CBMCentralManagerMock.simulatePeripherals([watch])
                let manager = CBMCentralManagerMock(delegate: log.proxy, queue: nil)
                central = String(try #require(manager.simulatedCentral).identifier.uuidString.prefix(8))
                try await bridge.waitForApp { manager.state == .poweredOn }
                let peripheral = try #require(manager.retrievePeripherals(withIdentifiers: [watch.identifier]).first)
                CBMCentralManagerMock.simulatePowerOff()
                CBMCentralManagerMock.simulatePowerOn()
                manager.connect(peripheral)
                try await bridge.waitForApp { log.lines.contains("connected") }
            }
        } catch let error as MockBLEBridge.Stall {
            stall = error
        }
        let stalled = try #require(stall)
        #expect(
            stalled.unansweredCalls == [
                "CBMCentralManager \(central), unanswered: connect: Bluetooth left poweredOn first (turned off, "
                    + "reset or refused: CoreBluetooth calls back only the state change)"
            ])
        #expect(await log.lines == [ConnectionLog.poweredOn, ConnectionLog.poweredOff, ConnectionLog.poweredOn])
    }

    /// A new manager on the watch (simulated now), connected with auto-reconnect on, once its
    /// `didConnect` is in `log`.
    @MainActor
    static func connectReconnecting(
        to watch: CBMPeripheralSpec, log: ConnectionLog, on bridge: MockBLEBridge
    ) async throws -> (CBMCentralManager, CBMPeripheral) {
        CBMCentralManagerMock.simulatePeripherals([watch])
        let manager = CBMCentralManagerMock(delegate: log.proxy, queue: nil)
        try await bridge.waitForApp { manager.state == .poweredOn }
        let peripheral = try #require(manager.retrievePeripherals(withIdentifiers: [watch.identifier]).first)
        manager.connect(peripheral, options: [CBMConnectPeripheralOptionEnableAutoReconnect: true])
        try await bridge.waitForApp { log.lines.contains("connected") }
        return (manager, peripheral)
    }

    /// What an auto-reconnect test works with: the bridge, the watch, and the app's manager
    /// connected to it with auto-reconnect on, with its log.
    @MainActor
    struct ReconnectingScene {
        let bridge: MockBLEBridge
        let watch: CBMPeripheralSpec
        let log: ConnectionLog
        let manager: CBMCentralManager
        let peripheral: CBMPeripheral
    }

    /// Runs `body` on a new bridge from `seed` once a new manager is connected to a new watch
    /// with auto-reconnect on (its log noting state changes too, with `states`); checks that the
    /// manager, kept to the end (one the app lets go of leaves the air), is powered on then, and
    /// returns the log.
    static func reconnecting(
        realistic: Bool, seed: UInt64, states: Bool = true,
        _ body: @escaping @MainActor @Sendable (ReconnectingScene) async throws -> Void
    ) async throws -> [String] {
        let bridge = Self.bridge(realistic: realistic, seed: seed)
        let watch = makeWatch(delegate: TransferSpecDelegate())
        return try await bridge.run { @MainActor () -> [String] in
            let log = ConnectionLog(states: states)
            let (manager, peripheral) = try await Self.connectReconnecting(to: watch, log: log, on: bridge)
            try await body(
                ReconnectingScene(bridge: bridge, watch: watch, log: log, manager: manager, peripheral: peripheral))
            #expect(manager.state == .poweredOn)
            return log.lines
        }
    }

    // CBMCentralManagerMock.swift, maximumWriteValueLength(for:): CoreBluetoothMock answers
    // 512 with response and ATT_MTU − 3 without. The kit answers min(ATT_MTU − 3, 512) without
    // response: the Core Specification caps every attribute value at 512 octets (Vol 3, Part F,
    // 3.2.9), so at ATT_MTU 516 and 517 a Write Command of ATT_MTU − 3 octets would carry a value
    // no attribute can hold. Below ATT_MTU 516 the two agree.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(arguments: [(23, 20), (186, 183), (515, 512), (517, 512)])
    func theLongestWriteWithoutResponseIsTheLinksMTUMinus3CappedAt512(mtu: Int, longest: Int) async throws {
        let bridge = ownBridge(seed: 80)
        let delegate = TransferSpecDelegate()
        let watch = makeWatch(delegate: delegate, mtu: mtu)
        try await bridge.run { @MainActor in
            CBMCentralManagerMock.simulatePeripherals([watch])
            let app = ParityApp()
            let (_, peripheral, characteristic) = try await Self.connect(watch, app: app, on: bridge)
            #expect(peripheral.maximumWriteValueLength(for: .withoutResponse) == longest)
            #expect(peripheral.maximumWriteValueLength(for: .withResponse) == 512)
            // The longest reaches the spec whole.
            peripheral.writeValue(Data(count: longest), for: characteristic, type: .withoutResponse)
            try await bridge.waitForApp { !delegate.commands.isEmpty }
        }
        #expect(delegate.commands == [Data(count: longest)])
    }

    // (The kit's own behaviour; CoreBluetoothMock has no pairing.) An injected ATT 0x05 is "the
    // peripheral answered insufficient authentication". What follows depends on the central's
    // pairing behaviour, not on the mode: a central that pairs on first access (as iOS does, and
    // the realistic preset's default) pairs and tries again, so the app sees the read succeed;
    // one that never pairs (the fast preset's default) reports the error. Each mode with the
    // other's pairing behaves as the other.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(arguments: [(false, false), (false, true), (true, false), (true, true)])
    func anInjectedInsufficientAuthenticationPairsWhenTheCentralPairsInEitherMode(
        realistic: Bool, pairs: Bool
    ) async throws {
        let bridge = Self.bridge(realistic: realistic, seed: 81)
        let watch = makeWatch(delegate: TransferSpecDelegate())
        var preset = realistic ? MockCentralManager.Configuration.realistic(seed: 81) : .fast
        #expect(preset.pairing == (realistic ? .onFirstAccess : .never))
        preset.pairing = pairs ? .onFirstAccess : .never
        preset.errorInjection = [ErrorInjection(.read, failure: .att(.insufficientAuthentication), frequency: .once)]
        let configuration = preset
        let (lines, elapsed) = try await bridge.run { @MainActor () -> ([String], Duration) in
            CBMCentralManagerMock.simulatePeripherals([watch])
            let app = ParityApp()
            let manager = CBMCentralManager(bridge: bridge, delegate: app, queue: nil, configuration: configuration)
            try await bridge.waitForApp { manager.state == .poweredOn }
            let peripheral = try #require(manager.retrievePeripherals(withIdentifiers: [watch.identifier]).first)
            manager.connect(peripheral)
            try await bridge.waitForApp { peripheral.state == .connected }
            peripheral.discoverServices(nil)
            try await bridge.waitForApp { app.characteristic != nil }
            let start = bridge.clock.now
            peripheral.readValue(for: try #require(app.characteristic))
            try await bridge.waitForApp { app.lines.contains { $0.hasPrefix("read") } }
            return (app.lines, start.duration(to: bridge.clock.now))
        }
        if pairs {
            #expect(lines.last == "read nil")
            #expect(elapsed >= .seconds(1))  // the pairing's time
        } else {
            #expect(lines.last == "read \(CBMATTErrorDomain) \(CBMATTError.Code.insufficientAuthentication.rawValue)")
        }
    }

    // CBMCentralManagerMock.swift, setNotifyValue(_:for:): asking for the state a
    // characteristic is already in calls back at once with no error, without asking the spec
    // delegate ("tested on iOS 17 and 26", its comment says); readRSSI() answers the
    // proximity's RSSI with the deviation.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(arguments: [false, true])
    func subscribingAgainCallsBackAtOnceAndReadRSSIAnswersTheProximity(realistic: Bool) async throws {
        let bridge = Self.bridge(realistic: realistic, seed: 82)
        let gatekeeper = Gatekeeper()
        let data = CBMCharacteristicMock(type: .transferData, properties: [.read, .notify])
        let watch =
            CBMPeripheralSpec
            .simulatePeripheral(proximity: .near)
            .advertising(advertisementData: [CBMAdvertisementDataLocalNameKey: "Watch"])
            .connectable(
                name: "Watch",
                services: [CBMServiceMock(type: .transferService, primary: true, characteristics: data)],
                delegate: gatekeeper
            )
            .allowForRetrieval()
            .build()
        let (lines, rssi) = try await bridge.run { @MainActor () -> ([String], [Int]) in
            CBMCentralManagerMock.simulatePeripherals([watch])
            CBMCentralManagerMock.simulateRSSIDeviation(.custom(5))
            let app = ParityApp()
            let (_, peripheral, characteristic) = try await Self.connect(watch, app: app, on: bridge)
            peripheral.setNotifyValue(true, for: characteristic)
            try await bridge.waitForApp { app.lines.count == 2 }
            let asked = gatekeeper.asked.filter { $0.hasPrefix("notify") }.count
            peripheral.setNotifyValue(true, for: characteristic)
            try await bridge.waitForApp { app.lines.count == 3 }
            #expect(gatekeeper.asked.filter { $0.hasPrefix("notify") }.count == asked)
            var rssi: [Int] = []
            let proxy = CBMPeripheralDelegateProxy()
            proxy.didReadRSSI = { _, value, _ in rssi.append(value.intValue) }
            peripheral.delegate = proxy
            for count in 1...10 {
                peripheral.readRSSI()
                try await bridge.waitForApp { rssi.count == count }
            }
            return (app.lines, rssi)
        }
        #expect(lines == ["connected", "notifying true nil", "notifying true nil"])
        #expect(rssi.allSatisfy { (-75 ... -65).contains($0) }, "\(rssi)")
    }
}

/// What a CoreBluetoothMock-style app hears of its connections (and, with `states`, of
/// Bluetooth's state), one line each, for the auto-reconnect tests.
@MainActor
final class ConnectionLog {
    /// The line of a link the watch dropped, the system reconnecting.
    nonisolated static let dropped =
        "disconnected true \(CBMErrorDomain) \(CBMError.Code.peripheralDisconnected.rawValue)"
    /// The lines of Bluetooth's turning on and off.
    nonisolated static let poweredOn = "state \(CBMManagerState.poweredOn.rawValue)"
    nonisolated static let poweredOff = "state \(CBMManagerState.poweredOff.rawValue)"

    var lines: [String] = []
    /// Runs in each didDisconnectPeripheral that says the system is reconnecting.
    var whileReconnecting: ((CBMCentralManager, CBMPeripheral) -> Void)?
    let proxy = CBMCentralManagerDelegateProxy()

    init(states: Bool) {
        proxy.didConnect = { [unowned self] _, _ in lines.append("connected") }
        if states {
            proxy.didUpdateState = { [unowned self] manager in lines.append("state \(manager.state.rawValue)") }
        }
        proxy.didDisconnect = { [unowned self] manager, peripheral, _, isReconnecting, error in
            lines.append("disconnected \(isReconnecting) \(ParityApp.describe(error))")
            if isReconnecting { whileReconnecting?(manager, peripheral) }
        }
    }
}

/// A spec delegate whose answers a test chooses: reads and writes of characteristics and
/// descriptors fail with `failure` (or succeed), subscriptions are refused with ATT 0x08 when
/// `refusesNotifications`; it keeps the descriptor writes it gets and, for each
/// notification-state update, whether the characteristic said it was notifying, and the error.
final class AnsweringSpecDelegate: CBMPeripheralSpecDelegate, @unchecked Sendable {
    // @unchecked Sendable: its state is guarded by `lock`; the rest is immutable.
    private let lock = NSLock()
    private var descriptorWrites: [Data] = []
    private var notificationStates: [String] = []
    let failure: Error?
    let refusesNotifications: Bool

    init(failing failure: Error? = nil, refusingNotifications: Bool = false) {
        self.failure = failure
        self.refusesNotifications = refusingNotifications
    }

    /// The values written to descriptors, one entry per delegate call.
    var writtenDescriptors: [Data] { lock.withLock { descriptorWrites } }
    /// "isNotifying error" for each `didUpdateNotificationStateFor`.
    var notificationUpdates: [String] { lock.withLock { notificationStates } }

    private var answer: Result<Void, Error> { failure.map { .failure($0) } ?? .success(()) }

    func peripheral(_ peripheral: CBMPeripheralSpec, didReceiveReadRequestFor characteristic: CBMCharacteristicMock)
        -> Result<Data, Error>
    { answer.map { Data([1]) } }

    func peripheral(
        _ peripheral: CBMPeripheralSpec, didReceiveWriteRequestFor characteristic: CBMCharacteristicMock, data: Data
    ) -> Result<Void, Error> { answer }

    func peripheral(
        _ peripheral: CBMPeripheralSpec, didReceiveWriteRequestFor descriptor: CBMDescriptorMock, data: Data
    ) -> Result<Void, Error> {
        lock.withLock { descriptorWrites.append(data) }
        return answer
    }

    func peripheral(
        _ peripheral: CBMPeripheralSpec, didReceiveSetNotifyRequest enabled: Bool,
        for characteristic: CBMCharacteristicMock
    ) -> Result<Void, Error> {
        refusesNotifications ? .failure(CBMATTError(.insufficientAuthorization)) : .success(())
    }

    func peripheral(
        _ peripheral: CBMPeripheralSpec, didUpdateNotificationStateFor characteristic: CBMCharacteristicMock,
        error: Error?
    ) {
        lock.withLock { notificationStates.append("\(characteristic.isNotifying) \(ParityApp.describe(error))") }
    }
}

extension CoreBluetoothMockParityTests {
    // CBMCentralManagerMock.swift, CBMPeripheralMock's writeValue(_:for: CBMDescriptor): a
    // descriptor write reaches the spec delegate's peripheral(_:didReceiveWriteRequestFor:data:)
    // with the value, and the app hears the delegate's answer. (The kit answered ATT 0x03 without
    // asking the delegate.)
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(arguments: [(false, false), (false, true), (true, false), (true, true)])
    func aDescriptorWriteReachesTheSpecDelegateAndTheAppHearsItsAnswer(realistic: Bool, refused: Bool) async throws {
        let bridge = Self.bridge(realistic: realistic, seed: 90)
        let delegate = AnsweringSpecDelegate(failing: refused ? CBMATTError(.insufficientAuthorization) : nil)
        let watch = makeWatch(delegate: delegate)
        let lines = try await bridge.run { @MainActor () -> [String] in
            CBMCentralManagerMock.simulatePeripherals([watch])
            let app = ParityApp()
            let (_, peripheral, characteristic) = try await Self.connect(watch, app: app, on: bridge)
            peripheral.discoverDescriptors(for: characteristic)
            try await bridge.waitForApp { app.lines.contains("descriptors nil") }
            let description = try #require(characteristic.descriptors?.first)
            #expect(description.uuid == .userDescription)
            peripheral.writeValue(Data([5]), for: description)
            try await bridge.waitForApp { app.lines.contains { $0.hasPrefix("descriptor written") } }
            return app.lines
        }
        #expect(delegate.writtenDescriptors == [Data([5])])
        let answer =
            refused ? "\(CBMATTErrorDomain) \(CBMATTError.Code.insufficientAuthorization.rawValue)" : "nil"
        #expect(lines.last == "descriptor written \(answer)")
    }
}

extension CoreBluetoothMockParityTests {
    // CBMCentralManagerMock.swift, bluetoothAuthorization's didSet (notifyManagers) and `state`:
    // authorization other than allowedAlways makes every manager unauthorized (its delegate is
    // told, calls are refused); allowed again, each is back in Bluetooth's simulated state (here
    // powered off, as set meanwhile), as real CoreBluetooth reports. (The kit stayed powered on
    // and kept scanning.)
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(arguments: [false, true])
    func deniedAuthorizationMakesManagersUnauthorizedUntilAllowedAgain(realistic: Bool) async throws {
        let bridge = Self.bridge(realistic: realistic, seed: 91)
        let watch = makeWatch(delegate: TransferSpecDelegate())
        let (lines, misuses, lateState) = try await bridge.run {
            @MainActor () -> ([String], [String], CBMManagerState) in
            CBMCentralManagerMock.simulatePeripherals([watch])
            let log = ConnectionLog(states: true)
            let manager = CBMCentralManagerMock(delegate: log.proxy, queue: nil)
            try await bridge.waitForApp { manager.state == .poweredOn }
            CBMCentralManagerMock.simulateAuthorization(.denied)
            try await bridge.waitForApp { manager.state == .unauthorized }
            manager.scanForPeripherals(withServices: nil)
            #expect(!manager.isScanning)
            // A manager created while denied starts unauthorized.
            let late = CBMCentralManagerMock(delegate: nil, queue: nil)
            try await bridge.waitForApp { late.state != .unknown }
            let lateState = late.state
            CBMCentralManagerMock.simulatePowerOff()
            CBMCentralManagerMock.simulateAuthorization(.allowedAlways)
            try await bridge.waitForApp { manager.state == .poweredOff && late.state == .poweredOff }
            return (log.lines, manager.apiMisuses, lateState)
        }
        #expect(lateState == .unauthorized)
        #expect(
            lines == [
                ConnectionLog.poweredOn, "state \(CBMManagerState.unauthorized.rawValue)", ConnectionLog.poweredOff,
            ])
        #expect(misuses == ["scanForPeripherals: the manager is not powered on"])
    }
}

extension CoreBluetoothMockParityTests {
    // CBMCentralManagerMock.swift, init(delegate:queue:options:) with a restore identifier: the
    // specs the restoration lists become the manager's own peripheral objects (connected when the
    // spec is connected and in range, else connecting), and the scan services it lists make the
    // manager scan with that filter. (The kit handed the app the specs themselves, and did not
    // scan.) The connecting one connects once it is in range, as the app then hears.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(arguments: [false, true])
    func aRestoredStateGivesTheManagersOwnPeripheralsAndScan(realistic: Bool) async throws {
        let bridge = Self.bridge(realistic: realistic, seed: 95)
        let watch = makeWatch(delegate: TransferSpecDelegate())
        let band = makeConnectedBand()
        try await bridge.run { @MainActor in
            CBMCentralManagerMock.simulatePeripherals([watch, band])
            CBMCentralManagerMock.simulateStateRestoration = { _ in
                [
                    CBMCentralManagerRestoredStatePeripheralsKey: [watch, band],
                    CBMCentralManagerRestoredStateScanServicesKey: [CBMUUID.transferService],
                ]
            }
            let log = ConnectionLog(states: false)
            var restored: [String: Any]?
            var states: [CBMPeripheralState] = []
            log.proxy.willRestoreState = { _, dictionary in
                restored = dictionary
                let peripherals = dictionary[CBMCentralManagerRestoredStatePeripheralsKey] as? [CBMPeripheral]
                states = peripherals?.map(\.state) ?? []
            }
            let manager = CBMCentralManagerMock(
                delegate: log.proxy, queue: nil, options: [CBMCentralManagerOptionRestoreIdentifierKey: "app"])
            try await bridge.waitForApp { manager.state == .poweredOn }
            let dictionary = try #require(restored)
            let peripherals = try #require(dictionary[CBMCentralManagerRestoredStatePeripheralsKey] as? [CBMPeripheral])
            #expect(peripherals.map(\.identifier) == [watch.identifier, band.identifier])
            #expect(states == [.connecting, .connected])
            #expect(dictionary[CBMCentralManagerRestoredStateScanServicesKey] as? [CBMUUID] == [.transferService])
            #expect(manager.isScanning)
            // The objects are the manager's: the connecting one connects, the connected one works.
            try await bridge.waitForApp { peripherals[0].state == .connected }
            #expect(log.lines == ["connected"])
            let app = ParityApp()
            peripherals[1].delegate = app
            peripherals[1].discoverServices(nil)
            try await bridge.waitForApp { app.characteristic != nil }
        }
    }
}

extension CoreBluetoothMockParityTests {
    // CBMCentralManagerMock.swift, CBMPeripheralMock's init(basedOn:by:andRestoreState:) and
    // connect(completion:): the peripherals a restoration lists are the system's (it had been
    // connected to them), so one restored connecting connects with no scan and no caching (the
    // kit failed it with unknownDevice, and an app retrying from didFailToConnect looped), and
    // one whose link the system holds connects at once, "the device already has the connection":
    // a call made on it as the manager powers on is answered (the kit brought its link up at the
    // next advertisement, and the call got no callback).
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(arguments: [false, true])
    func restoredPeripheralsConnectWithoutAScanAndAConnectedOneAnswersAtOnce(realistic: Bool) async throws {
        let bridge = Self.bridge(realistic: realistic, seed: 97)
        // Neither allowed for retrieval nor cached: the system knows the watch from the restoration alone.
        let watch = CBMPeripheralSpec.simulatePeripheral(proximity: .near)
            .advertising(advertisementData: [CBMAdvertisementDataLocalNameKey: "Watch"], withInterval: 0.250)
            .connectable(name: "Watch", services: readableTransferService(), delegate: TransferSpecDelegate())
            .build()
        let band = makeConnectedBand()
        let (lines, misuses, unanswered) = try await bridge.run { @MainActor in
            let relaunched = RestoringApp(restoring: [watch, band])
            try await bridge.waitForApp {
                relaunched.app.characteristic != nil && relaunched.restored.first?.state == .connected
            }
            #expect(relaunched.restored.map(\.identifier) == [watch.identifier, band.identifier])
            return (relaunched.log.lines, relaunched.manager.apiMisuses, bridge.outside.unansweredCalls)
        }
        #expect(lines == ["connected"])
        #expect(misuses.isEmpty)
        #expect(unanswered.isEmpty)
    }
}

extension CoreBluetoothMockParityTests {
    /// A peripheral restored as connected whose link fails to come back (an injected failure):
    /// the app hears it disconnected, with the error, and a call it made first is named in the
    /// stall as one that found no link.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(arguments: [false, true])
    func aRestoredConnectedPeripheralWhoseLinkFailsIsReportedDisconnected(realistic: Bool) async throws {
        let bridge = Self.bridge(realistic: realistic, seed: 98)
        let band = makeConnectedBand()
        await bridge.inject(ErrorInjection(.connect, failure: .coreBluetooth(.connectionFailed), frequency: .once))
        let (lines, unanswered) = try await bridge.run { @MainActor in
            let relaunched = RestoringApp(restoring: [band])
            try await bridge.waitForApp { !relaunched.log.lines.isEmpty }
            #expect(relaunched.restored.first?.state == .disconnected)
            return (relaunched.log.lines, bridge.outside.unansweredCalls)
        }
        #expect(lines == ["disconnected false \(CBMErrorDomain) \(CBMError.Code.connectionFailed.rawValue)"])
        let id = { (uuid: UUID) in String(uuid.uuidString.prefix(8)) }
        #expect(unanswered.count == 1)
        #expect(
            unanswered.first?.hasSuffix(
                "unanswered: discoverServices on peripheral \(id(band.identifier)): the peripheral had no link when the "
                    + "call was applied (it went down before, or was not up yet): CoreBluetooth answers such a call with "
                    + "no callback") == true, "\(unanswered)")
    }
}

extension CoreBluetoothMockParityTests {
    // CBMCentralManagerMock.swift, CBMPeripheralMock's setNotifyValue(_:for:): the spec delegate's
    // peripheral(_:didUpdateNotificationStateFor:error:) sees the characteristic notifying once the
    // subscription succeeded, and hears the error when its didReceiveSetNotifyRequest refused it.
    // (The kit called it with isNotifying false, and not at all on a refusal.)
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(arguments: [(false, false), (false, true), (true, false), (true, true)])
    func theSpecDelegateHearsTheNotificationStateAsTheAppDoes(realistic: Bool, refused: Bool) async throws {
        let bridge = Self.bridge(realistic: realistic, seed: 92)
        let delegate = AnsweringSpecDelegate(refusingNotifications: refused)
        let watch = makeWatch(delegate: delegate)
        let lines = try await bridge.run { @MainActor () -> [String] in
            CBMCentralManagerMock.simulatePeripherals([watch])
            let app = ParityApp()
            let (_, peripheral, characteristic) = try await Self.connect(watch, app: app, on: bridge)
            peripheral.setNotifyValue(true, for: characteristic)
            try await bridge.waitForApp { app.lines.contains { $0.hasPrefix("notifying") } }
            return app.lines
        }
        let expected =
            refused ? "false \(CBMATTErrorDomain) \(CBMATTError.Code.insufficientAuthorization.rawValue)" : "true nil"
        #expect(lines.last == "notifying \(expected)")
        #expect(delegate.notificationUpdates == [expected])
    }
}

extension CoreBluetoothMockParityTests {
    // CBMCentralManagerMock.swift, CBMPeripheralMock's readValue(for:) and writeValue(_:for:type:):
    // the spec delegate's error reaches the app as it is, whatever its domain. (The kit turned an
    // error outside CBATTErrorDomain into ATT 0x0E, unlikely error.)
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(arguments: [(false, false), (false, true), (true, false), (true, true)])
    func aSpecDelegatesReadOrWriteErrorReachesTheAppUnchanged(realistic: Bool, coreBluetooth: Bool) async throws {
        let bridge = Self.bridge(realistic: realistic, seed: 93)
        let failure: Error =
            coreBluetooth ? CBMError(.operationNotSupported) : NSError(domain: "MyDomain", code: 42)
        let watch = makeWatch(delegate: AnsweringSpecDelegate(failing: failure))
        let lines = try await bridge.run { @MainActor () -> [String] in
            CBMCentralManagerMock.simulatePeripherals([watch])
            let app = ParityApp()
            let (_, peripheral, characteristic) = try await Self.connect(watch, app: app, on: bridge)
            peripheral.readValue(for: characteristic)
            try await bridge.waitForApp { app.lines.contains { $0.hasPrefix("read") } }
            peripheral.writeValue(Data([1, 2]), for: characteristic, type: .withResponse)
            try await bridge.waitForApp { app.lines.contains { $0.hasPrefix("written") } }
            return app.lines
        }
        let error = coreBluetooth ? "\(CBMErrorDomain) \(CBMError.Code.operationNotSupported.rawValue)" : "MyDomain 42"
        #expect(lines == ["connected", "read \(error)", "written \(error)"])
    }
}

extension CoreBluetoothMockParityTests {
    // CBMPeripheralSpecDelegate.swift, the default didReceiveSetNotifyRequest: a characteristic
    // that notifies or indicates only with encryption can be subscribed to. (The kit's default
    // refused it with CBError 2, invalid handle.)
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(arguments: [CBMCharacteristicProperties.notifyEncryptionRequired, .indicateEncryptionRequired])
    func theDefaultDelegateAcceptsSubscriptionsNeedingEncryption(
        property: CBMCharacteristicProperties
    ) async throws {
        let bridge = ownBridge(seed: 94)
        let data = CBMCharacteristicMock(type: .transferData, properties: [.read, property])
        let watch =
            CBMPeripheralSpec
            .simulatePeripheral(proximity: .near)
            .advertising(advertisementData: [CBMAdvertisementDataLocalNameKey: "Watch"])
            .connectable(
                name: "Watch",
                services: [CBMServiceMock(type: .transferService, primary: true, characteristics: data)],
                delegate: TransferSpecDelegate()
            )
            .allowForRetrieval()
            .build()
        let lines = try await bridge.run { @MainActor () -> [String] in
            CBMCentralManagerMock.simulatePeripherals([watch])
            let app = ParityApp()
            let (_, peripheral, characteristic) = try await Self.connect(watch, app: app, on: bridge)
            peripheral.setNotifyValue(true, for: characteristic)
            try await bridge.waitForApp { app.lines.contains { $0.hasPrefix("notifying") } }
            return app.lines
        }
        #expect(lines == ["connected", "notifying true nil"])
    }
}

extension CoreBluetoothMockParityTests {
    // CBMPeripheralSpec.swift, Builder's connectable(…) and connected(…): the MTU given is clamped
    // to 23…517. (The kit kept it as given: 1000 read back as 1000.)
    @Test(arguments: [(10, 23), (23, 23), (185, 185), (517, 517), (1000, 517)])
    func aSpecsMTUIsClampedTo23Through517(given: Int, kept: Int) {
        let services = [CBMServiceMock(type: .transferService, primary: true)]
        let connectable = CBMPeripheralSpec.simulatePeripheral()
            .connectable(name: "Watch", services: services, delegate: nil, mtu: given).build()
        let connected = CBMPeripheralSpec.simulatePeripheral()
            .connected(name: "Watch", services: services, delegate: nil, mtu: given).build()
        #expect(connectable.mtu == kept)
        #expect(connected.mtu == kept)
    }
}
