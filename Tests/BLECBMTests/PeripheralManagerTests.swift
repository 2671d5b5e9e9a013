// swift-format-ignore-file: AlwaysUseLowerCamelCase
// (These names mirror CoreBluetooth's API.)

import BLECBM
import BLECore
import BLEMockKit
import Foundation
import Testing

/// A peripheral app in CoreBluetooth delegate style: a counter service with a dynamic readable
/// characteristic, a writable one, and one that notifies.
final class CounterPeripheral: NSObject, CBMPeripheralManagerDelegate, @unchecked Sendable {
    // @unchecked Sendable: only touched on the main queue.
    static let service = CBMUUID(string: "6E400001-B5A3-F393-E0A9-E50E24DCCA9E")
    static let counterUUID = CBMUUID(string: "6E400002-B5A3-F393-E0A9-E50E24DCCA9E")
    static let commandUUID = CBMUUID(string: "6E400003-B5A3-F393-E0A9-E50E24DCCA9E")
    static let streamUUID = CBMUUID(string: "6E400004-B5A3-F393-E0A9-E50E24DCCA9E")
    static let versionUUID = CBMUUID(string: "6E400005-B5A3-F393-E0A9-E50E24DCCA9E")

    var manager: CBMPeripheralManager!
    let counter = CBMMutableCharacteristic(
        type: counterUUID, properties: [.read], value: nil, permissions: [.readable])
    let command = CBMMutableCharacteristic(
        type: commandUUID, properties: [.write], value: nil, permissions: [.writeable])
    let stream = CBMMutableCharacteristic(type: streamUUID, properties: [.notify], value: nil, permissions: [])
    let version = CBMMutableCharacteristic(
        type: versionUUID, properties: [.read], value: Data([2, 1]), permissions: [.readable])
    var calls: [String] = []
    var reads = 0
    var commands: [Data] = []
    var subscribers: [CBMCentral] = []
    var refuseReads = false
    /// The code a refused read is answered with.
    var refusal: CBMATTError.Code = .readNotPermitted
    /// Reads answered twice (an app bug the manager notes).
    var answerReadsTwice = false
    /// Read requests the app keeps without answering, to answer later.
    var heldReads: [CBMATTRequest]?

    override init() {
        super.init()
        manager = CBMPeripheralManager(delegate: self, queue: nil)
    }

    /// The app on `bridge`, its simulated device configured so.
    init(bridge: MockBLEBridge, configuration: MockPeripheralManager.Configuration) {
        super.init()
        manager = CBMPeripheralManager(bridge: bridge, delegate: self, queue: nil, configuration: configuration)
    }

    /// Adds its service at the first `poweredOn` only, as an app that follows CoreBluetooth's
    /// documentation does when Bluetooth is turned off and on (it adds them again only after a
    /// state below `poweredOff`, which this app then misses).
    var addsServiceOnce = false
    private var addedService = false

    func peripheralManagerDidUpdateState(_ peripheral: CBMPeripheralManager) {
        calls.append("state \(peripheral.state)")
        guard peripheral.state == .poweredOn, !(addsServiceOnce && addedService) else { return }
        addedService = true
        let service = CBMMutableService(type: Self.service, primary: true)
        service.characteristics = [counter, command, stream, version]
        peripheral.add(service)
    }

    func peripheralManager(_ peripheral: CBMPeripheralManager, didAdd service: CBMService, error: (any Error)?) {
        calls.append("added \(service.uuid)" + (error.map { " error \($0)" } ?? ""))
        peripheral.startAdvertising([
            CBMAdvertisementDataLocalNameKey: "Counter", CBMAdvertisementDataServiceUUIDsKey: [Self.service],
        ])
    }

    func peripheralManagerDidStartAdvertising(_ peripheral: CBMPeripheralManager, error: (any Error)?) {
        calls.append("advertising")
    }

    func peripheralManager(_ peripheral: CBMPeripheralManager, didReceiveRead request: CBMATTRequest) {
        reads += 1
        calls.append("read \(request.characteristic.uuid) offset \(request.offset)")
        if refuseReads {
            peripheral.respond(to: request, withResult: refusal)
            return
        }
        if heldReads != nil {
            heldReads!.append(request)
            return
        }
        request.value = Data([UInt8(reads)])
        peripheral.respond(to: request, withResult: .success)
        if answerReadsTwice { peripheral.respond(to: request, withResult: .success) }
    }

    func peripheralManager(_ peripheral: CBMPeripheralManager, didReceiveWrite requests: [CBMATTRequest]) {
        calls.append("write \(requests.count)")
        commands += requests.compactMap(\.value)
        peripheral.respond(to: requests[0], withResult: .success)
    }

    func peripheralManager(
        _ peripheral: CBMPeripheralManager, central: CBMCentral, didSubscribeTo characteristic: CBMCharacteristic
    ) {
        calls.append("subscribed \(characteristic.uuid)")
        subscribers.append(central)
    }

    func peripheralManager(
        _ peripheral: CBMPeripheralManager, central: CBMCentral, didUnsubscribeFrom characteristic: CBMCharacteristic
    ) {
        calls.append("unsubscribed \(characteristic.uuid)")
    }

    func peripheralManagerIsReady(toUpdateSubscribers peripheral: CBMPeripheralManager) {
        calls.append("ready")
    }
}

@Suite(.timeLimit(.minutes(10)))
struct PeripheralManagerTests {
    /// Connects a central of the async API to the counter peripheral and finds its characteristics.
    static func connect(_ central: MockCentralManager, to peripheral: UUID) async throws -> [RemoteCharacteristic] {
        try await central.scanForPeripherals(withServices: [CounterPeripheral.service.bluetoothUUID])
        await central.bridge.waitUntil { bridge in
            bridge.log.contains { $0.kind == .discovered && $0.peripheral == peripheral }
        }
        try await central.connect(peripheral)
        return try await central.discoverAll(for: peripheral)
    }

    /// Runs `body` in a run on the main actor, on a new bridge (realistic or fast, from `seed`)
    /// with a central of the async API (the mode's preset unless `configuration` is given) and
    /// the counter app started and advertising; `body` gets the central, the app and the app's
    /// peripheral identifier. Returns what `body` returns, and the bridge.
    static func withCounterApp<T: Sendable>(
        realistic: Bool, seed: UInt64, configuration: MockCentralManager.Configuration? = nil,
        _ body: @escaping @MainActor @Sendable (MockCentralManager, CounterPeripheral, UUID) async throws -> T
    ) async throws -> (T, MockBLEBridge) {
        let bridge = MockBLEBridge(configuration: realistic ? .realistic(seed: seed) : .init(seed: seed))
        let central = MockCentralManager(
            configuration: configuration ?? (realistic ? .realistic(seed: seed) : .fast), bridge: bridge)
        let value = try await bridge.run { @MainActor () -> T in
            let app = CounterPeripheral()
            try await bridge.waitForApp { app.manager.isAdvertising }
            return try await body(central, app, app.manager.simulatedPeripheral!.identifier)
        }
        return (value, bridge)
    }

    /// Subscribes `central` to the counter app's stream characteristic (among `found`) and waits
    /// until the app has heard of its `subscriptions`th subscription.
    @MainActor
    static func subscribe(
        _ central: MockCentralManager, among found: [RemoteCharacteristic], app: CounterPeripheral,
        subscriptions: Int
    ) async throws {
        let stream = try #require(found.first { $0.uuid == CounterPeripheral.streamUUID.bluetoothUUID })
        try await central.setNotifyValue(true, for: stream)
        try await central.bridge.waitForApp { app.subscribers.count == subscriptions }
    }

    /// Subscribes `central` to the app's stream once more (the app's second subscription), checks
    /// that the stream lists that central alone, sends `value` from the app, and returns the
    /// value of the first notification `events` brings.
    @MainActor
    static func subscribeAgainAndNotify(
        _ value: Data, central: MockCentralManager, among found: [RemoteCharacteristic], app: CounterPeripheral,
        events: AsyncStream<CentralEvent>
    ) async throws -> Data? {
        try await subscribe(central, among: found, app: app, subscriptions: 2)
        #expect(app.stream.subscribedCentrals?.map(\.identifier) == [central.identifier])
        #expect(app.manager.updateValue(value, for: app.stream, onSubscribedCentrals: nil))
        for await event in events {
            if case .valueUpdated(_, let value) = event { return value }
        }
        return nil
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(arguments: [false, true])
    func aCoreBluetoothStylePeripheralAppAnswersReadsWritesAndNotifies(realistic: Bool) async throws {
        let bridge = MockBLEBridge(configuration: realistic ? .realistic(seed: 31) : .init(seed: 31))
        let central = MockCentralManager(
            configuration: realistic ? .realistic(seed: 31) : .fast, bridge: bridge)
        let notifications = central.events()
        let calls = try await bridge.run { @MainActor () -> [String] in
            let app = CounterPeripheral()
            try await bridge.waitForApp { app.manager.isAdvertising }
            let identifier = app.manager.simulatedPeripheral!.identifier
            let found = try await Self.connect(central, to: identifier)
            let counter = try #require(found.first { $0.uuid == CounterPeripheral.counterUUID.bluetoothUUID })
            let command = try #require(found.first { $0.uuid == CounterPeripheral.commandUUID.bluetoothUUID })
            let stream = try #require(found.first { $0.uuid == CounterPeripheral.streamUUID.bluetoothUUID })
            let version = try #require(found.first { $0.uuid == CounterPeripheral.versionUUID.bluetoothUUID })
            // A dynamic characteristic: the app's delegate answers.
            #expect(try await central.readValue(for: counter) == Data([1]))
            #expect(try await central.readValue(for: counter) == Data([2]))
            // A static one: the stack answers, the delegate hears nothing.
            #expect(try await central.readValue(for: version) == Data([2, 1]))
            #expect(app.reads == 2)
            try await central.writeValue(Data([0xAA]), for: command, type: .withResponse)
            #expect(app.commands == [Data([0xAA])])
            try await central.setNotifyValue(true, for: stream)
            try await bridge.waitForApp { app.subscribers.count == 1 }
            #expect(app.stream.subscribedCentrals?.map(\.identifier) == [central.identifier])
            #expect(app.subscribers[0].identifier == central.identifier)
            #expect(app.manager.updateValue(Data([7]), for: app.stream, onSubscribedCentrals: nil))
            // A refused read reaches the central as the ATT error the app chose.
            app.refuseReads = true
            await #expect(throws: ATTError(.readNotPermitted)) { try await central.readValue(for: counter) }
            // An application error of the app's own (0x80–0x9F), made as with CoreBluetooth's
            // open enumeration; a code past ATT's one byte is answered as unlikely error.
            app.refusal = CBMATTError.Code(rawValue: 0x80)!
            await #expect(throws: ATTError(ATTError.Code(rawValue: 0x80))) {
                try await central.readValue(for: counter)
            }
            app.refusal = CBMATTError.Code(rawValue: 0x1_00)!
            await #expect(throws: ATTError(.unlikelyError)) { try await central.readValue(for: counter) }
            app.refuseReads = false
            return app.calls
        }
        var received: [Data] = []
        for await event in notifications {
            if case .valueUpdated(_, let value) = event {
                received.append(value)
                break
            }
        }
        #expect(received == [Data([7])])
        #expect(
            calls == [
                "state poweredOn", "added 6E400001-B5A3-F393-E0A9-E50E24DCCA9E", "advertising",
                "read 6E400002-B5A3-F393-E0A9-E50E24DCCA9E offset 0",
                "read 6E400002-B5A3-F393-E0A9-E50E24DCCA9E offset 0",
                "write 1", "subscribed 6E400004-B5A3-F393-E0A9-E50E24DCCA9E",
                "read 6E400002-B5A3-F393-E0A9-E50E24DCCA9E offset 0",
                "read 6E400002-B5A3-F393-E0A9-E50E24DCCA9E offset 0",
                "read 6E400002-B5A3-F393-E0A9-E50E24DCCA9E offset 0",
            ])
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test("A long write the app's prepare queue cannot hold fails with prepareQueueFull, and its delegate hears none")
    func aLongWriteThePrepareQueueRefusesNeverReachesTheApp() async throws {
        let bridge = MockBLEBridge(seed: 33)
        let central = MockCentralManager(configuration: .init(mtu: .fixed(23)), bridge: bridge)
        let (calls, commands) = try await bridge.run { @MainActor () -> ([String], [Data]) in
            let app = CounterPeripheral(bridge: bridge, configuration: .init(preparedWriteCapacity: 36))
            try await bridge.waitForApp { app.manager.isAdvertising }
            let identifier = app.manager.simulatedPeripheral!.identifier
            let found = try await Self.connect(central, to: identifier)
            let command = try #require(found.first { $0.uuid == CounterPeripheral.commandUUID.bluetoothUUID })
            await #expect(throws: ATTError(.prepareQueueFull)) {
                try await central.writeValue(Data(repeating: 1, count: 37), for: command, type: .withResponse)
            }
            try await central.writeValue(Data(repeating: 2, count: 36), for: command, type: .withResponse)
            return (app.calls, app.commands)
        }
        #expect(calls.filter { $0.hasPrefix("write") } == ["write 2"])
        #expect(commands == [Data(repeating: 2, count: 18), Data(repeating: 2, count: 18)])
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(arguments: [false, true])
    func aSecondAnswerToAReadIsIgnoredAndNotedAsAMisuse(realistic: Bool) async throws {
        let (misuses, _) = try await Self.withCounterApp(realistic: realistic, seed: 91) { central, app, peripheral in
            let found = try await Self.connect(central, to: peripheral)
            let counter = try #require(found.first { $0.uuid == CounterPeripheral.counterUUID.bluetoothUUID })
            app.answerReadsTwice = true
            #expect(try await central.readValue(for: counter) == Data([1]))
            try await central.bridge.waitForApp { app.manager.apiMisuses.count == 1 }
            // The central got the first answer only, and the next read its own.
            app.answerReadsTwice = false
            #expect(try await central.readValue(for: counter) == Data([2]))
            return app.manager.apiMisuses
        }
        #expect(misuses.count == 1)
        #expect(misuses[0].hasPrefix("respond(to:withResult:): No pending request has id "))
        #expect(misuses[0].contains("already answered, its central disconnected, or its service was removed"))
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(arguments: [false, true])
    func anAnswerAfterTheCentralDisconnectedIsIgnoredAndNotedAsAMisuse(realistic: Bool) async throws {
        let (outcome, _) = try await Self.withCounterApp(realistic: realistic, seed: 92) { central, app, peripheral in
            let bridge = central.bridge
            let found = try await Self.connect(central, to: peripheral)
            let counter = try #require(found.first { $0.uuid == CounterPeripheral.counterUUID.bluetoothUUID })
            app.heldReads = []
            let read = bridge.task { try await central.readValue(for: counter) }
            try await bridge.waitForApp { app.heldReads?.count == 1 }
            try await central.cancelPeripheralConnection(peripheral)
            let readError = await #expect(throws: CoreBluetoothError.self) { try await read.value }
            #expect(app.manager.apiMisuses.isEmpty)
            let request = try #require(app.heldReads?.first)
            request.value = Data([9])
            app.manager.respond(to: request, withResult: .success)
            try await bridge.waitForApp { app.manager.apiMisuses.count == 1 }
            return (readError, app.manager.apiMisuses)
        }
        #expect(outcome.0?.code == .operationCancelled)
        #expect(outcome.1.count == 1)
        #expect(outcome.1[0].hasPrefix("respond(to:withResult:): No pending request has id "))
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    /// The queue holds the realistic peripheral's 20 updates, or fewer when the bridge's limits
    /// say so (as an exploration's conditions do); a larger limit changes nothing.
    @Test(arguments: [(nil, 20), (2, 2), (40, 20)] as [(Int?, Int)])
    func updateValueReturnsFalseWhenTheQueueIsFullAndTheDelegateHearsWhenItDrains(limit: Int?, capacity: Int)
        async throws
    {
        var configuration = MockBLEBridge.Configuration.realistic(seed: 12)
        configuration.limits.updateQueueCapacity = limit
        let bridge = MockBLEBridge(configuration: configuration)
        let central = MockCentralManager(configuration: .realistic(seed: 12), bridge: bridge)
        let (accepted, calls) = try await bridge.run { @MainActor () -> (Int, [String]) in
            let app = CounterPeripheral()
            try await bridge.waitForApp { app.manager.isAdvertising }
            let found = try await Self.connect(central, to: app.manager.simulatedPeripheral!.identifier)
            try await Self.subscribe(central, among: found, app: app, subscriptions: 1)
            var accepted = 0
            while app.manager.updateValue(Data([UInt8(accepted)]), for: app.stream, onSubscribedCentrals: nil) {
                accepted += 1
                if accepted == 1_000 { break }
            }
            try await bridge.waitForApp { app.calls.last == "ready" }
            #expect(app.manager.updateValue(Data([0xFF]), for: app.stream, onSubscribedCentrals: nil))
            // (While the app, and so its manager, is still there to send them.)
            await bridge.advance(by: .seconds(2))
            return (accepted, app.calls)
        }
        // The realistic peripheral's update queue holds 20 updates.
        #expect(MockPeripheralManager.Configuration.realistic(seed: 12).updateQueue == .realistic(capacity: 20))
        #expect(accepted == capacity)
        #expect(calls.filter { $0 == "ready" }.count == 1)
        // Every accepted update reaches the central, in order; the refused one never does.
        let sent = await bridge.log.filter { $0.kind == .notification && $0.central != nil && $0.error == nil }
            .compactMap(\.value)
        #expect(sent == (0..<capacity).map { Data([UInt8($0)]) } + [Data([0xFF])])
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(
        "Commands while not powered on are ignored, with no callback, and noted as misuses (CoreBluetooth's API MISUSE)",
        arguments: [false, true])
    func commandsWhileNotPoweredOnAreIgnoredAndNoted(realistic: Bool) async throws {
        let bridge = MockBLEBridge(configuration: realistic ? .realistic(seed: 34) : .init(seed: 34))
        let (calls, misuses, advertising) = try await bridge.run { @MainActor () -> ([String], [String], Bool) in
            let app = CounterPeripheral()
            // Before its first state callback the manager's state is unknown.
            app.manager.add(CBMMutableService(type: CBMUUID(string: "AAA1"), primary: true))
            try await bridge.waitForApp { app.manager.isAdvertising }
            await bridge.simulate(.peripheralState(app.manager.simulatedPeripheral!.identifier, .poweredOff))
            try await bridge.waitForApp { app.manager.state == .poweredOff }
            app.manager.add(CBMMutableService(type: CBMUUID(string: "AAA2"), primary: true))
            app.manager.startAdvertising([CBMAdvertisementDataLocalNameKey: "Off"])
            #expect(!app.manager.updateValue(Data([1]), for: app.stream, onSubscribedCentrals: nil))
            app.manager.publishL2CAPChannel(withEncryption: false)
            // Withdrawing is a command too, refused while Bluetooth is off.
            app.manager.remove(CBMMutableService(type: CBMUUID(string: "AAA2"), primary: true))
            app.manager.removeAllServices()
            app.manager.stopAdvertising()
            app.manager.unpublishL2CAPChannel(0x0080)
            // Nothing answers them, however long the test waits.
            try await bridge.clock.sleep(for: .seconds(5))
            return (app.calls, app.manager.apiMisuses, app.manager.isAdvertising)
        }
        #expect(
            calls == [
                "state poweredOn", "added 6E400001-B5A3-F393-E0A9-E50E24DCCA9E", "advertising", "state poweredOff",
            ])
        #expect(
            misuses == [
                "add: the peripheral manager is not powered on (unknown)",
                "add: the peripheral manager is not powered on (poweredOff)",
                "startAdvertising: the peripheral manager is not powered on (poweredOff)",
                "updateValue: the peripheral manager is not powered on (poweredOff)",
                "publishL2CAPChannel: the peripheral manager is not powered on (poweredOff)",
                "remove: the peripheral manager is not powered on (poweredOff)",
                "removeAllServices: the peripheral manager is not powered on (poweredOff)",
                "stopAdvertising: the peripheral manager is not powered on (poweredOff)",
                "unpublishL2CAPChannel: the peripheral manager is not powered on (poweredOff)",
            ])
        #expect(!advertising)
    }

    #if !canImport(CoreBluetooth)
        // (Where CoreBluetooth exists, such a manager is CoreBluetooth's own.)
        @Test func aPeripheralManagerOutsideAnyBridgeReportsUnsupportedAndListsWhatItIgnored() {
            let manager = CBMPeripheralManager(delegate: nil, queue: DispatchQueue(label: "test"))
            #expect(manager.state == .unsupported)
            #expect(manager.simulatedPeripheral == nil)
            #expect(manager.apiMisuses == [])
            #expect(!manager.updateValue(Data(), for: CounterPeripheral().stream, onSubscribedCentrals: nil))
            manager.add(CBMMutableService(type: CounterPeripheral.service, primary: true))
            manager.startAdvertising(nil)
            manager.publishL2CAPChannel(withEncryption: false)
            let reason = "the peripheral manager is not powered on (unsupported: no test bridge or SimulatedSystem)"
            #expect(
                manager.apiMisuses == [
                    "updateValue: \(reason)", "add: \(reason)", "startAdvertising: \(reason)",
                    "publishL2CAPChannel: \(reason)",
                ])
        }
    #endif

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test func servicesAdvertisingAndChannelsCanBeWithdrawn() async throws {
        let bridge = MockBLEBridge(seed: 33)
        let central = MockCentralManager(bridge: bridge)
        let (services, advertising, unpublished) = try await bridge.run { @MainActor () -> (Int, Bool, [String]) in
            let app = CounterPeripheral()
            try await bridge.waitForApp { app.manager.isAdvertising }
            let found = try await Self.connect(central, to: app.manager.simulatedPeripheral!.identifier)
            #expect(found.count == 4)
            app.manager.removeAllServices()
            app.manager.stopAdvertising()
            #expect(!app.manager.isAdvertising)
            let channels = ChannelRecorder()
            app.manager.delegate = channels
            app.manager.publishL2CAPChannel(withEncryption: false)
            try await bridge.waitForApp { channels.published != nil }
            app.manager.unpublishL2CAPChannel(channels.published!)
            app.manager.unpublishL2CAPChannel(channels.published!)
            try await bridge.waitForApp { channels.unpublished.count == 2 }
            let remaining = await app.manager.simulatedPeripheral!.services.count
            let advertising = await app.manager.simulatedPeripheral!.isAdvertising
            return (remaining, advertising, channels.unpublished)
        }
        #expect(services == 0)
        #expect(!advertising)
        // The second unpublish of the same PSM fails.
        #expect(unpublished.count == 2 && unpublished[0] == "ok" && unpublished[1] != "ok")
    }
}

/// Records a peripheral manager's L2CAP callbacks.
final class ChannelRecorder: NSObject, CBMPeripheralManagerDelegate, @unchecked Sendable {
    // @unchecked Sendable: only touched on the main queue.
    var published: UInt16?
    var unpublished: [String] = []

    func peripheralManagerDidUpdateState(_ peripheral: CBMPeripheralManager) {}

    func peripheralManager(_ peripheral: CBMPeripheralManager, didPublishL2CAPChannel psm: UInt16, error: (any Error)?)
    {
        published = psm
    }

    func peripheralManager(
        _ peripheral: CBMPeripheralManager, didUnpublishL2CAPChannel psm: UInt16, error: (any Error)?
    ) {
        unpublished.append(error.map { "\($0)" } ?? "ok")
    }
}

extension PeripheralManagerTests {
    /// CoreBluetooth's `peripheralManagerDidUpdateState(_:)` documentation: below powered on,
    /// advertising stops and centrals are disconnected; only below powered off is the local
    /// database cleared and advertising to be started again. After a reset (below powered off)
    /// the app adds its service again (a new service object with the same characteristic objects)
    /// and advertises; turned off, an app that adds its service once is found again with it, as
    /// advertising goes on by itself (before, its services and advertising were gone, and it
    /// vanished). Either way the services serve requests and notify.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(
        "Bluetooth reset or turned off and on: the peripheral manager's services serve requests and notify after",
        arguments: [ManagerState.resetting, .poweredOff], [false, true])
    func servicesServeAndNotifyAfterBluetoothComesBack(leaving state: ManagerState, realistic: Bool) async throws {
        let turnedOff = state == .poweredOff
        let cbmState = try #require(CBMManagerState(rawValue: state.rawValue))
        let ((calls, received), _) = try await Self.withCounterApp(realistic: realistic, seed: 35) {
            central, app, identifier -> ([String], Data?) in
            let bridge = central.bridge
            app.addsServiceOnce = turnedOff
            var found = try await Self.connect(central, to: identifier)
            try await Self.subscribe(central, among: found, app: app, subscriptions: 1)
            await bridge.simulate(.peripheralState(identifier, state))
            try await bridge.waitForApp {
                app.manager.state == cbmState && app.stream.subscribedCentrals == []
            }
            #expect(!app.manager.isAdvertising)
            #expect(!app.manager.updateValue(Data([1]), for: app.stream, onSubscribedCentrals: nil))
            await bridge.simulate(.peripheralState(identifier, .poweredOn))
            try await bridge.waitForApp { app.manager.isAdvertising }
            await central.stopScan()
            found = try await Self.connect(central, to: identifier)
            let counter = try #require(found.first { $0.uuid == CounterPeripheral.counterUUID.bluetoothUUID })
            #expect(try await central.readValue(for: counter) == Data([1]))
            let events = central.events()
            let value = try await Self.subscribeAgainAndNotify(
                Data([9]), central: central, among: found, app: app, events: events)
            return (app.calls, value)
        }
        #expect(received == Data([9]))
        let service = CounterPeripheral.service.uuidString
        let stream = CounterPeripheral.streamUUID.uuidString
        let addedAgain = turnedOff ? [] : ["added \(service)", "advertising"]
        let before = [
            "state poweredOn", "added \(service)", "advertising", "subscribed \(stream)", "state \(cbmState)",
            "unsubscribed \(stream)", "state poweredOn",
        ]
        let after = ["read \(CounterPeripheral.counterUUID.uuidString) offset 0", "subscribed \(stream)"]
        #expect(calls == before + addedAgain + after)
    }

    /// An app that adds its service again at every `poweredOn`, with the characteristic objects
    /// it published before: after Bluetooth is turned off and on its database is still there, so
    /// the repeat is refused (a characteristic object is in one service at most) and noted.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test func anAppThatAddsItsServiceAgainAfterBluetoothOffAndOnHasTheRepeatRefused() async throws {
        let ((calls, misuses), _) = try await Self.withCounterApp(realistic: false, seed: 37) {
            central, app, identifier -> ([String], [String]) in
            let bridge = central.bridge
            _ = try await Self.connect(central, to: identifier)
            await bridge.simulate(.peripheralState(identifier, .poweredOff))
            try await bridge.waitForApp { app.manager.state == .poweredOff }
            await bridge.simulate(.peripheralState(identifier, .poweredOn))
            try await bridge.waitForApp { app.calls.count == 6 }
            return (app.calls, app.manager.apiMisuses)
        }
        let service = CounterPeripheral.service.uuidString
        #expect(
            calls.prefix(5) == [
                "state poweredOn", "added \(service)", "advertising", "state poweredOff", "state poweredOn",
            ])
        // (The sixth call; the app's advertising, asked for in that callback, may follow it.)
        #expect(calls.dropFirst(5).first?.hasPrefix("added \(service) error ") == true, "\(calls)")
        #expect(misuses.count == 1)
    }
}

extension PeripheralManagerTests {
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test("A central's maximumUpdateValueLength is its current link's, after it reconnects with another ATT_MTU")
    func aCentralsUpdateLengthFollowsItsCurrentLink() async throws {
        var differed = 0
        for seed in UInt64(40)..<48 {
            var configuration = MockCentralManager.Configuration.realistic(seed: seed)
            configuration.mtu = .realistic(23...517)
            let (lengths, _) = try await Self.withCounterApp(realistic: true, seed: seed, configuration: configuration)
            {
                central, app, identifier -> [(seen: Int, link: Int)] in
                var lengths: [(seen: Int, link: Int)] = []
                for connection in 1...2 {
                    let found = try await Self.connect(central, to: identifier)
                    await central.stopScan()
                    try await Self.subscribe(central, among: found, app: app, subscriptions: connection)
                    let link = await app.manager.simulatedPeripheral!.maximumUpdateValueLength(for: central.identifier)
                    lengths.append((app.subscribers[connection - 1].maximumUpdateValueLength, try #require(link)))
                    try await central.cancelPeripheralConnection(identifier)
                }
                return lengths
            }
            #expect(lengths.map(\.seen) == lengths.map(\.link), "seed \(seed)")
            if lengths[0].link != lengths[1].link { differed += 1 }
        }
        // The draws gave some central a different ATT_MTU on its second link.
        #expect(differed > 0)
    }
}

extension PeripheralManagerTests {
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(
        "A service removed while a central is subscribed and added again starts with no subscribers, and notifies",
        arguments: [(false, true), (true, false)])
    func aServiceRemovedAndAddedAgainStartsWithNoSubscribers(realistic: Bool, removingAll: Bool) async throws {
        let ((calls, received), _) = try await Self.withCounterApp(realistic: realistic, seed: 37) {
            central, app, identifier -> ([String], Data?) in
            let bridge = central.bridge
            var found = try await Self.connect(central, to: identifier)
            try await Self.subscribe(central, among: found, app: app, subscriptions: 1)
            if removingAll {
                app.manager.removeAllServices()
            } else {
                app.manager.remove(try #require(app.stream.service as? CBMMutableService))
            }
            let service = CBMMutableService(type: CounterPeripheral.service, primary: true)
            service.characteristics = [app.counter, app.command, app.stream, app.version]
            app.manager.add(service)
            try await bridge.waitForApp { app.calls.filter { $0.hasPrefix("added") }.count == 2 }
            #expect(app.stream.subscribedCentrals ?? [] == [])
            let events = central.events()
            found = try await central.discoverAll(for: identifier)
            let value = try await Self.subscribeAgainAndNotify(
                Data([5]), central: central, among: found, app: app, events: events)
            return (app.calls, value)
        }
        #expect(received == Data([5]))
        // The simulation ends the subscription with the service, telling the app nothing.
        let service = CounterPeripheral.service.uuidString
        let stream = CounterPeripheral.streamUUID.uuidString
        #expect(
            calls == [
                "state poweredOn", "added \(service)", "advertising", "subscribed \(stream)", "added \(service)",
                "advertising", "subscribed \(stream)",
            ])
    }
}

extension PeripheralManagerTests {
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test("A full update queue empties when its only central leaves, and updates flow again once it is back")
    func aFullUpdateQueueEmptiesWhenItsCentralLeaves() async throws {
        let ((accepted, calls), bridge) = try await Self.withCounterApp(realistic: true, seed: 13) {
            central, app, identifier -> (Int, [String]) in
            let bridge = central.bridge
            var found = try await Self.connect(central, to: identifier)
            try await Self.subscribe(central, among: found, app: app, subscriptions: 1)
            var accepted = 0
            while app.manager.updateValue(Data([UInt8(accepted)]), for: app.stream, onSubscribedCentrals: nil) {
                accepted += 1
                if accepted == 1_000 { break }
            }
            // The central walks away with the queue full.
            try await central.cancelPeripheralConnection(identifier)
            try await bridge.waitForApp { app.calls.contains("unsubscribed \(CounterPeripheral.streamUUID)") }
            await central.stopScan()
            found = try await Self.connect(central, to: identifier)
            try await Self.subscribe(central, among: found, app: app, subscriptions: 2)
            #expect(app.manager.updateValue(Data([0xEE]), for: app.stream, onSubscribedCentrals: nil))
            await bridge.advance(by: .seconds(2))
            return (accepted, app.calls)
        }
        #expect(accepted == 20)
        // The queue the central left empties with its link, and the app hears it is ready again.
        let service = CounterPeripheral.service.uuidString
        let stream = CounterPeripheral.streamUUID.uuidString
        #expect(
            calls == [
                "state poweredOn", "added \(service)", "advertising", "subscribed \(stream)", "unsubscribed \(stream)",
                "ready", "subscribed \(stream)",
            ])
        // The updates queued for the central that left are dropped with its link; the one sent
        // after it came back reaches it.
        let sent = await bridge.log.filter { $0.kind == .notification && $0.central != nil && $0.error == nil }
            .compactMap(\.value)
        #expect(sent == [Data([0xEE])])
    }
}

extension PeripheralManagerTests {
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(
        "In a run, an app's call made before a manager's call or a test hook on the same thread reaches the simulation first",
        arguments: [false, true])
    func anAppsCallMadeBeforeAManagersCallReachesTheSimulationFirst(realistic: Bool) async throws {
        let (found, bridge) = try await Self.withCounterApp(realistic: realistic, seed: 38) {
            central, app, identifier -> [RemoteCharacteristic] in
            #expect(try await Self.connect(central, to: identifier).count == 4)
            // The app withdraws its service; the test then discovers again, at once.
            app.manager.removeAllServices()
            let found = try await central.discoverAll(for: identifier)
            // The same before a test hook: the app stops advertising, the test drops the link.
            app.manager.stopAdvertising()
            await central.bridge.simulateDisconnection(central: central.identifier, peripheral: identifier)
            return found
        }
        #expect(found.isEmpty)
        let kinds = await bridge.log.map(\.kind)
        let removed = try #require(kinds.lastIndex(of: .serviceRemoved))
        let discovered = try #require(kinds.lastIndex(of: .servicesDiscovered))
        #expect(removed < discovered)
        let stopped = try #require(kinds.lastIndex(of: .advertisingStopped))
        let disconnected = try #require(kinds.firstIndex(of: .disconnected))
        #expect(stopped < disconnected)
    }
}

/// A peripheral app that only notes what its delegate hears about advertising and services.
@MainActor
private final class PeripheralNotes: NSObject, CBMPeripheralManagerDelegate {
    var calls: [String] = []

    nonisolated func peripheralManagerDidUpdateState(_ peripheral: CBMPeripheralManager) {}

    nonisolated func peripheralManagerDidStartAdvertising(_ peripheral: CBMPeripheralManager, error: (any Error)?) {
        MainActor.assumeIsolated { calls.append(error.map { "started error \($0)" } ?? "started") }
    }

    nonisolated func peripheralManager(
        _ peripheral: CBMPeripheralManager, didAdd service: CBMService, error: (any Error)?
    ) {
        MainActor.assumeIsolated { calls.append(error.map { "added error \($0)" } ?? "added \(service.uuid)") }
    }
}

/// Calls a peripheral manager makes back to back, before the bridge has applied them, and
/// calls with inputs CoreBluetooth refuses.
extension PeripheralManagerTests {
    /// Runs `body` in a run on the main actor, on a new bridge (realistic or fast, from `seed`),
    /// with a powered-on peripheral manager whose delegate notes what it hears.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    private static func withNotedManager<T: Sendable>(
        realistic: Bool = false, seed: UInt64,
        _ body: @escaping @MainActor @Sendable (MockBLEBridge, CBMPeripheralManager, PeripheralNotes) async throws -> T
    ) async throws -> T {
        let bridge = MockBLEBridge(configuration: realistic ? .realistic(seed: seed) : .init(seed: seed))
        return try await bridge.run { @MainActor () -> T in
            let app = PeripheralNotes()
            let manager = CBMPeripheralManager(delegate: app, queue: nil)
            try await bridge.waitForApp { manager.state == .poweredOn }
            return try await body(bridge, manager, app)
        }
    }

    /// Start then stop, back to back, stays stopped (the start still completes; the stop after
    /// it wins); start, stop, start again ends advertising. Both in the manager's mirror and in
    /// the simulation.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(arguments: [false, true], [false, true])
    func advertisingToggledBackToBackEndsAsTheLastCallSays(realistic: Bool, startsAgain: Bool) async throws {
        let (mirrored, simulated, heard) = try await Self.withNotedManager(
            realistic: realistic, seed: startsAgain ? 94 : 93
        ) { bridge, manager, app in
            manager.startAdvertising([CBMAdvertisementDataLocalNameKey: "Toggle"])
            #expect(!manager.isAdvertising)
            manager.stopAdvertising()
            if startsAgain { manager.startAdvertising([CBMAdvertisementDataLocalNameKey: "Toggle"]) }
            try await bridge.waitForApp { app.calls.count == (startsAgain ? 2 : 1) }
            let simulated = try #require(manager.simulatedPeripheral)
            return (manager.isAdvertising, await simulated.isAdvertising, app.calls)
        }
        #expect(heard == (startsAgain ? ["started", "started"] : ["started"]))
        #expect(simulated == startsAgain)
        #expect(mirrored == startsAgain)
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(arguments: [false, true])
    func aServiceRemovedRightAfterItWasAddedIsNotPublished(realistic: Bool) async throws {
        let (published, heard) = try await Self.withNotedManager(realistic: realistic, seed: 95) {
            bridge, manager, app in
            let removed = CBMMutableService(type: CBMUUID(string: "180F"), primary: true)
            removed.characteristics = [
                CBMMutableCharacteristic(
                    type: CBMUUID(string: "2A19"), properties: [.read], value: Data([90]), permissions: [.readable])
            ]
            let kept = CBMMutableService(type: CBMUUID(string: "180A"), primary: true)
            // Removed before the bridge has got to the add: the add still completes, then the
            // removal takes the service away again.
            manager.add(removed)
            manager.remove(removed)
            manager.add(kept)
            try await bridge.waitForApp { app.calls.count == 2 }
            let simulated = try #require(manager.simulatedPeripheral)
            return (await simulated.services.map(\.uuid), app.calls)
        }
        #expect(heard == ["added 180F", "added 180A"])
        #expect(published == ["180A"])
    }

    /// The same service object added twice is published once: the second add fails with
    /// `invalidParameters` and is noted, and `remove` then leaves nothing on the air (a second
    /// copy used to stay published, out of the app's reach). Removed, it can be added again.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(arguments: [false, true])
    func aServiceAddedTwiceIsPublishedOnceAndRemovedWhole(realistic: Bool) async throws {
        let (afterAddingAgain, heard, misuses) = try await Self.withNotedManager(
            realistic: realistic, seed: 97
        ) { bridge, manager, app in
            let service = CBMMutableService(type: CBMUUID(string: "180F"), primary: true)
            service.characteristics = [
                CBMMutableCharacteristic(
                    type: CBMUUID(string: "2A19"), properties: [.read], value: Data([90]), permissions: [.readable])
            ]
            manager.add(service)
            manager.add(service)
            try await bridge.waitForApp { app.calls.count == 2 }
            let simulated = try #require(manager.simulatedPeripheral)
            #expect(await simulated.services.map(\.uuid) == ["180F"])
            // Removed, then added again: one copy on the air (a copy left by the second add
            // would make two).
            manager.remove(service)
            manager.add(service)
            try await bridge.waitForApp { app.calls.count == 3 }
            return (await simulated.services.map(\.uuid), app.calls, manager.apiMisuses)
        }
        #expect(afterAddingAgain == ["180F"])
        #expect(heard == ["added 180F", "added error \(CBMError(.invalidParameters))", "added 180F"])
        #expect(misuses == ["add: service 180F is already published by this manager (remove it first)"])
    }

    /// A service CoreBluetooth does not take, as its app writes it.
    struct RefusedService: CustomTestStringConvertible, Sendable {
        let name: String
        let characteristic: @Sendable () -> CBMMutableCharacteristic
        /// The misuse noted.
        let misuse: String
        var testDescription: String { name }
    }

    static let refusedServices: [RefusedService] = [
        RefusedService(
            name: "a cached value on a writable characteristic",
            characteristic: {
                CBMMutableCharacteristic(
                    type: CBMUUID(string: "FFF1"), properties: [.read, .write], value: Data([1]),
                    permissions: [.readable, .writeable])
            },
            misuse: "add: Service FFF0 cannot be published: characteristic FFF1 has a cached value but is writable or "
                + "can notify; a characteristic with a value must be read-only. Create it with value nil to serve it "
                + "dynamically."),
        RefusedService(
            name: "a cached value on a characteristic that notifies",
            characteristic: {
                CBMMutableCharacteristic(
                    type: CBMUUID(string: "FFF1"), properties: [.read, .notify], value: Data([1]),
                    permissions: [.readable])
            },
            misuse: "add: Service FFF0 cannot be published: characteristic FFF1 has a cached value but is writable or "
                + "can notify; a characteristic with a value must be read-only. Create it with value nil to serve it "
                + "dynamically."),
        RefusedService(
            name: "a cached value of 513 bytes",
            characteristic: {
                CBMMutableCharacteristic(
                    type: CBMUUID(string: "FFF1"), properties: [.read], value: Data(count: 513),
                    permissions: [.readable])
            },
            misuse: "add: Service FFF0 cannot be published: the value of FFF1 is 513 bytes; an attribute holds at "
                + "most 512."),
        RefusedService(
            name: "a Client Characteristic Configuration descriptor of the app's",
            characteristic: {
                let characteristic = CBMMutableCharacteristic(
                    type: CBMUUID(string: "FFF1"), properties: [.notify], value: nil, permissions: [.readable])
                characteristic.descriptors = [CBMMutableDescriptor(type: CBMUUID(string: "2902"), value: Data([0, 0]))]
                return characteristic
            },
            misuse: "add: Service FFF0 cannot be published: characteristic FFF1 lists a Client Characteristic "
                + "Configuration descriptor (2902), which the stack adds itself for characteristics that notify or "
                + "indicate. Remove it."),
        RefusedService(
            name: "the broadcast property",
            characteristic: {
                CBMMutableCharacteristic(
                    type: CBMUUID(string: "FFF1"), properties: [.read, .broadcast], value: nil,
                    permissions: [.readable])
            },
            misuse: "add: characteristic FFF1 has the broadcast property, which a CBMutableCharacteristic cannot have "
                + "(CoreBluetooth's documentation: the stack manages both)"),
        RefusedService(
            name: "the extended properties property",
            characteristic: {
                CBMMutableCharacteristic(
                    type: CBMUUID(string: "FFF1"), properties: [.read, .extendedProperties], value: nil,
                    permissions: [.readable])
            },
            misuse: "add: characteristic FFF1 has the extendedProperties property, which a CBMutableCharacteristic "
                + "cannot have (CoreBluetooth's documentation: the stack manages both)"),
        RefusedService(
            name: "both",
            characteristic: {
                CBMMutableCharacteristic(
                    type: CBMUUID(string: "FFF1"), properties: [.read, .broadcast, .extendedProperties], value: nil,
                    permissions: [.readable])
            },
            misuse: "add: characteristic FFF1 has the broadcast and extendedProperties properties, which a "
                + "CBMutableCharacteristic cannot have (CoreBluetooth's documentation: the stack manages both)"),
    ]

    /// A service CoreBluetooth raises an exception for, or its documentation rules out, fails its
    /// add with `invalidParameters`, publishes nothing, and is noted in `apiMisuses` with why.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(arguments: refusedServices, [false, true])
    func aServiceCoreBluetoothDoesNotTakeFailsItsAddAndIsNoted(refused: RefusedService, realistic: Bool) async throws {
        let (heard, misuses, published) = try await Self.withNotedManager(realistic: realistic, seed: 98) {
            bridge, manager, app in
            let service = CBMMutableService(type: CBMUUID(string: "FFF0"), primary: true)
            service.characteristics = [refused.characteristic()]
            manager.add(service)
            try await bridge.waitForApp { app.calls.count == 1 }
            let simulated = try #require(manager.simulatedPeripheral)
            return (app.calls, manager.apiMisuses, await simulated.services.map(\.uuid))
        }
        #expect(heard == ["added error \(CBMError(.invalidParameters))"])
        #expect(misuses == [refused.misuse])
        #expect(published.isEmpty)
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(arguments: [false, true])
    func advertisingDataOfTheWrongTypeIsLeftOutAndNoted(realistic: Bool) async throws {
        let (misuses, advertised) = try await Self.withNotedManager(realistic: realistic, seed: 96) {
            bridge, manager, app in
            // Strings where CoreBluetooth takes CBUUIDs, a number for the name: on a device,
            // an exception; here both are left out and noted.
            manager.startAdvertising([
                CBMAdvertisementDataLocalNameKey: 5, CBMAdvertisementDataServiceUUIDsKey: ["180D"],
            ])
            try await bridge.waitForApp { app.calls == ["started"] }
            return (manager.apiMisuses, try await Self.firstAdvertisement(heardOn: bridge))
        }
        #expect(
            misuses == [
                "startAdvertising: CBMAdvertisementDataLocalNameKey takes a String, not Int; left out",
                "startAdvertising: CBMAdvertisementDataServiceUUIDsKey takes an array of CBMUUID, not Array<String>; "
                    + "left out",
            ])
        #expect(advertised.localName == nil)
        #expect(advertised.serviceUUIDs == [])
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test func advertisingDataOfTheRightTypesIsAdvertisedWithNothingNoted() async throws {
        let (misuses, advertised) = try await Self.withNotedManager(seed: 97) { bridge, manager, app in
            manager.startAdvertising([
                CBMAdvertisementDataLocalNameKey: "Watch",
                CBMAdvertisementDataServiceUUIDsKey: [CBMUUID(string: "180D")],
            ])
            try await bridge.waitForApp { app.calls == ["started"] }
            return (manager.apiMisuses, try await Self.firstAdvertisement(heardOn: bridge))
        }
        #expect(misuses.isEmpty)
        #expect(advertised.localName == "Watch")
        #expect(advertised.serviceUUIDs == ["180D"])
    }

    /// What a central of the async API, new on `bridge`, hears first when it scans.
    static func firstAdvertisement(heardOn bridge: MockBLEBridge) async throws -> AdvertisementData {
        let central = MockCentralManager(bridge: bridge)
        let events = central.events()
        try await central.scanForPeripherals(withServices: nil)
        for await event in events {
            if case .discovered(let found) = event { return found.advertisementData }
        }
        throw CoreBluetoothError(.unknown)
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(arguments: [false, true])
    func anUpdateOfACharacteristicThatIsNotPublishedIsNotSentAndIsNoted(realistic: Bool) async throws {
        let (sent, misuses) = try await Self.withNotedManager(realistic: realistic, seed: 98) {
            bridge, manager, app in
            let level = CBMMutableCharacteristic(
                type: CBMUUID(string: "2A19"), properties: [.notify], value: nil, permissions: [])
            let service = CBMMutableService(type: CBMUUID(string: "180F"), primary: true)
            service.characteristics = [level]
            let stray = CBMMutableCharacteristic(
                type: CBMUUID(string: "2A1A"), properties: [.notify], value: nil, permissions: [])
            manager.add(service)
            try await bridge.waitForApp { app.calls == ["added 180F"] }
            var sent = [
                manager.updateValue(Data([1]), for: level, onSubscribedCentrals: nil),
                manager.updateValue(Data([1]), for: stray, onSubscribedCentrals: nil),
            ]
            manager.remove(service)
            sent.append(manager.updateValue(Data([1]), for: level, onSubscribedCentrals: nil))
            return (sent, manager.apiMisuses)
        }
        // Published with no subscriber: sent to nobody, true; the others: false, and noted.
        #expect(sent == [true, false, false])
        #expect(
            misuses == [
                "updateValue: characteristic 2A1A is not in a service this manager published; not sent",
                "updateValue: characteristic 2A19 is not in a service this manager published; not sent",
            ])
    }
}

/// What a stalled run says of the calls a peripheral manager ignored.
extension PeripheralManagerTests {
    /// A service added as soon as the manager is made, before it is powered on, is ignored, as
    /// CoreBluetooth ignores it: an app waiting for its didAdd stalls, and the stall names the
    /// ignored call and its manager.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(arguments: [false, true])
    func aServiceAddedBeforePoweredOnIsNamedInTheStall(realistic: Bool) async throws {
        let bridge = MockBLEBridge(configuration: realistic ? .realistic(seed: 97) : .init(seed: 97))
        // (Written in the run's body, read once the run has ended.)
        nonisolated(unsafe) var name = ""
        let stalled = try await #require(throws: MockBLEBridge.Stall.self) {
            try await bridge.run { @MainActor in
                let app = PeripheralNotes()
                let manager = CBMPeripheralManager(delegate: app, queue: nil)
                name = String(manager.simulatedPeripheral!.identifier.uuidString.prefix(8))
                manager.add(CBMMutableService(type: CBMUUID(string: "180F"), primary: true))
                try await bridge.waitForApp { !app.calls.isEmpty }
            }
        }
        #expect(
            stalled.unansweredCalls == [
                "CBMPeripheralManager \(name), ignored: add: the peripheral manager is not powered on (unknown)"
            ])
        #expect(stalled.description.contains("- CBMPeripheralManager \(name), ignored: add: "), "\(stalled)")
    }
}

extension PeripheralManagerTests {
    /// An update queue smaller than the number of subscribers (exploration draws capacities
    /// from 1): the app's textbook pump (send until `updateValue` says no, send again when told
    /// it is ready) delivers every value to every central. It used to be refused for ever, each
    /// refusal followed by a ready callback.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(
        "An app pumping updates to more centrals than its update queue holds gets every value to every central",
        arguments: [false, true])
    func moreSubscribersThanTheUpdateQueueHolds(realistic: Bool) async throws {
        var configuration: MockBLEBridge.Configuration = realistic ? .realistic(seed: 47) : .init(seed: 47)
        configuration.limits = LinkLimits(updateQueueCapacity: 1)
        let bridge = MockBLEBridge(configuration: configuration)
        let centrals = (0..<3).map { _ in
            MockCentralManager(configuration: realistic ? .realistic(seed: 47) : .fast, bridge: bridge)
        }
        let (refusals, readies) = try await bridge.run { @MainActor () -> (Int, Int) in
            let app = CounterPeripheral()
            try await bridge.waitForApp { app.manager.isAdvertising }
            let identifier = try #require(app.manager.simulatedPeripheral?.identifier)
            for (index, central) in centrals.enumerated() {
                try await Self.subscribe(
                    central, among: try await Self.connect(central, to: identifier), app: app,
                    subscriptions: index + 1)
            }
            var (next, refusals): (UInt8, Int) = (1, 0)
            while next <= 5 {
                if app.manager.updateValue(Data([next]), for: app.stream, onSubscribedCentrals: nil) {
                    next += 1
                    continue
                }
                refusals += 1
                try #require(refusals < 20, "updateValue keeps saying no")
                let ready = app.calls.filter { $0 == "ready" }.count
                try await bridge.waitForApp { app.calls.filter { $0 == "ready" }.count > ready }
            }
            await bridge.advance(by: .seconds(1))
            return (refusals, app.calls.filter { $0 == "ready" }.count)
        }
        // Each value after the first waits for the queue to drain: refused once, then ready.
        #expect(refusals == 4)
        #expect(readies == 4)
        for central in centrals {
            let received = await bridge.log.filter {
                $0.kind == .notification && $0.central == central.identifier && $0.error == nil
            }.compactMap(\.value)
            #expect(received == (1...5).map { Data([$0]) })
        }
    }
}

extension PeripheralManagerTests {
    /// What the test does on the bridge right after the app's call, outside any run (its
    /// `finish()`: see ``outsideARunFinishSeesAnAnswerGivenJustBeforeIt()``).
    enum NextCall: String, CaseIterable, Sendable {
        case readLog, advance
    }

    /// Outside a run, a CoreBluetooth-shaped call is applied from its app's queue; the test's
    /// next call on the bridge (reading the log, advancing) applies it first, so what the test
    /// sees does not depend on whether that queue got to it: the call is in the log, at the
    /// instant it was made, before the time the advance moved.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(
        "Outside a run, an app's call reaches the simulation before the test's next call on the bridge, on every run",
        arguments: NextCall.allCases)
    func outsideARunAnAppsCallComesBeforeTheTestsNextCall(next: NextCall) async throws {
        for round in 0..<20 {
            let bridge = MockBLEBridge(seed: 1)
            let app = try await bridge.run { @MainActor () -> UncheckedKeep in
                let app = CounterPeripheral()
                try await bridge.waitForApp { app.manager.isAdvertising }
                return UncheckedKeep(app)
            }
            let manager = try #require((app.value as? CounterPeripheral)?.manager)
            let made = await bridge.now
            manager.stopAdvertising()
            switch next {
            case .readLog: break
            case .advance: await bridge.advance(by: .milliseconds(1))
            }
            let last = await bridge.log.last
            #expect(last?.kind == .advertisingStopped, "round \(round): \(String(describing: last))")
            #expect(last?.time == made, "round \(round): \(String(describing: last))")
            withExtendedLifetime(app) {}
        }
    }
}

extension PeripheralManagerTests {
    /// Outside a run, the answer a peripheral app gives to a read request it held (its central's
    /// task ended with the run) is applied before the test's `finish()`, which therefore reports
    /// nothing unanswered, whatever the app's queue had got to.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test("Outside a run, finish sees the answer an app gave just before it to a read it held, on every run")
    func outsideARunFinishSeesAnAnswerGivenJustBeforeIt() async throws {
        for round in 0..<20 {
            let (keep, bridge) = try await Self.withCounterApp(realistic: false, seed: 31) {
                central, app, peripheral in
                let found = try await Self.connect(central, to: peripheral)
                let counter = try #require(found.first { $0.uuid == CounterPeripheral.counterUUID.bluetoothUUID })
                app.heldReads = []
                _ = central.bridge.task { try await central.readValue(for: counter) }
                try await central.bridge.waitForApp { app.heldReads?.count == 1 }
                return UncheckedKeep(app)
            }
            let app = try #require(keep.value as? CounterPeripheral)
            let request = try #require(app.heldReads?.first)
            request.value = Data([9])
            app.manager.respond(to: request, withResult: .success)
            let report = await bridge.finish()
            #expect(report == .clean, "round \(round)")
            #expect(app.manager.apiMisuses.isEmpty, "round \(round)")
        }
    }
}
