import BLECBM
import BLECore
import BLEMockKit
import Foundation
import Testing

/// A peripheral app that publishes an L2CAP channel and advertises.
final class ChannelPeripheral: NSObject, CBMPeripheralManagerDelegate, @unchecked Sendable {
    // @unchecked Sendable: only touched on the main queue.
    var manager: CBMPeripheralManager!
    var psm: UInt16?
    var publishError: (any Error)?
    var opened: CBML2CAPChannel?
    /// Whether it closes each channel as it opens (both streams, at once).
    var closesAtOnce = false

    init(bridge: MockBLEBridge, configuration: MockPeripheralManager.Configuration? = nil) {
        super.init()
        manager = CBMPeripheralManager(bridge: bridge, delegate: self, queue: nil, configuration: configuration)
    }

    func peripheralManagerDidUpdateState(_ peripheral: CBMPeripheralManager) {
        guard peripheral.state == .poweredOn else { return }
        peripheral.publishL2CAPChannel(withEncryption: false)
    }

    func peripheralManager(_ peripheral: CBMPeripheralManager, didPublishL2CAPChannel psm: UInt16, error: (any Error)?)
    {
        self.psm = psm
        publishError = error
        peripheral.startAdvertising([CBMAdvertisementDataLocalNameKey: "Channel"])
    }

    func peripheralManager(_ peripheral: CBMPeripheralManager, didOpen channel: CBML2CAPChannel?, error: (any Error)?) {
        opened = channel
        guard closesAtOnce, let channel else { return }
        channel.inputStream.open()
        channel.outputStream.open()
        channel.inputStream.close()
        channel.outputStream.close()
    }
}

/// A central app that opens a channel to the first peripheral it finds.
final class ChannelCentral: NSObject, CBMCentralManagerDelegate, CBMPeripheralDelegate, @unchecked Sendable {
    // @unchecked Sendable: only touched on the main queue.
    var manager: CBMCentralManager!
    var peripheral: CBMPeripheral?
    var psm: UInt16 = 0
    var opened: CBML2CAPChannel?
    var openError: (any Error)?

    init(bridge: MockBLEBridge, configuration: MockCentralManager.Configuration? = nil) {
        super.init()
        manager = CBMCentralManager(bridge: bridge, delegate: self, queue: nil, configuration: configuration)
    }

    func centralManagerDidUpdateState(_ central: CBMCentralManager) {}

    func centralManager(
        _ central: CBMCentralManager, didDiscover peripheral: CBMPeripheral, advertisementData: [String: Any],
        rssi: NSNumber
    ) {
        guard self.peripheral == nil else { return }
        self.peripheral = peripheral
        peripheral.delegate = self
        central.stopScan()
        central.connect(peripheral)
    }

    func centralManager(_ central: CBMCentralManager, didConnect peripheral: CBMPeripheral) {
        peripheral.openL2CAPChannel(psm)
    }

    func peripheral(_ peripheral: CBMPeripheral, didOpen channel: CBML2CAPChannel?, error: (any Error)?) {
        opened = channel
        openError = error
    }
}

@Suite(.timeLimit(.minutes(10)))
struct BothRolesTests {
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(arguments: [false, true])
    func anL2CAPChannelOpensBetweenTwoCoreBluetoothStyleApps(realistic: Bool) async throws {
        let bridge = MockBLEBridge(configuration: realistic ? .realistic(seed: 40) : .init(seed: 40))
        let received = try await bridge.run { @MainActor () -> Data? in
            let (client, server) = try await openChannel(on: bridge)
            #expect(client.opened?.psm == server.psm)
            #expect(client.opened?.peer === client.peripheral)
            #expect(server.opened?.peer.identifier == client.manager.simulatedCentral?.identifier)
            // The peer is a central with its link's figure (512 fast; ATT_MTU − 3 realistic).
            let length = await server.manager.simulatedPeripheral!.maximumUpdateValueLength(
                for: client.manager.simulatedCentral!.identifier)
            #expect((server.opened?.peer as? CBMCentral)?.maximumUpdateValueLength == length)
            #expect(length == (realistic ? 182 : 512))
            let incoming = try #require(server.opened?.channel).incoming
            try await #require(client.opened?.channel).send(Data("hello".utf8))
            for await data in incoming { return data }
            return nil
        }
        #expect(received == Data("hello".utf8))
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test func openingAnUnpublishedPSMReportsTheRefusal() async throws {
        let bridge = MockBLEBridge(seed: 41)
        let error = try await bridge.run { @MainActor () -> L2CAPError? in
            let server = ChannelPeripheral(bridge: bridge)
            try await bridge.waitForApp { server.psm != nil && server.manager.isAdvertising }
            let client = ChannelCentral(bridge: bridge)
            client.psm = server.psm! &+ 1
            try await bridge.waitForApp { client.manager.state == .poweredOn }
            client.manager.scanForPeripherals(withServices: nil)
            try await bridge.waitForApp { client.openError != nil }
            #expect(client.opened == nil)
            #expect(server.opened == nil)
            // As an NSError, its code is the L2CAP result code (0x0002), not Swift's case index.
            let bridged = try #require(client.openError) as NSError
            #expect(bridged.domain == "BLECore.L2CAPError" && bridged.code == 0x0002)
            #expect(bridged.localizedDescription == L2CAPError(.psmNotSupported).description)
            return client.openError as? L2CAPError
        }
        #expect(error == L2CAPError(.psmNotSupported))
    }

    /// The peripheral's connection response reaches the central before its disconnection
    /// request: CoreBluetooth reports the channel open, without an error.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(
        "A channel the peripheral closes as it opens still reaches didOpen, without an error", arguments: [false, true])
    func aChannelClosedAtOnceStillReachesDidOpen(realistic: Bool) async throws {
        let bridge = MockBLEBridge(configuration: realistic ? .realistic(seed: 9) : .init(seed: 9))
        try await bridge.run { @MainActor in
            let server = ChannelPeripheral(bridge: bridge)
            server.closesAtOnce = true
            try await bridge.waitForApp { server.psm != nil && server.manager.isAdvertising }
            let client = ChannelCentral(bridge: bridge)
            client.psm = server.psm!
            try await bridge.waitForApp { client.manager.state == .poweredOn }
            client.manager.scanForPeripherals(withServices: nil)
            try await bridge.waitForApp { client.opened != nil || client.openError != nil }
            #expect(client.opened?.psm == server.psm)
            #expect(client.openError == nil)
        }
        #expect(
            await bridge.log.filter { $0.kind == .l2cap }.compactMap(\.detail).suffix(2) == [
                "opened 0x0080 #1", "closed #1",
            ])
    }

    /// Runs a channel server and a client (with `configuration`) whose open of `psm` (the
    /// server's when `nil`) fails; returns the error its `didOpen` got and whether the server
    /// saw a channel open.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    private static func failedOpen(
        on bridge: MockBLEBridge, psm: UInt16? = nil, configuration: MockCentralManager.Configuration? = nil
    ) async throws -> ((any Error)?, Bool) {
        try await bridge.run { @MainActor () -> ((any Error)?, Bool) in
            let server = ChannelPeripheral(bridge: bridge)
            try await bridge.waitForApp { server.psm != nil && server.manager.isAdvertising }
            let client = ChannelCentral(bridge: bridge, configuration: configuration)
            client.psm = psm ?? server.psm!
            try await bridge.waitForApp { client.manager.state == .poweredOn }
            client.manager.scanForPeripherals(withServices: nil)
            try await bridge.waitForApp { client.openError != nil }
            #expect(client.opened == nil)
            return (client.openError, server.opened != nil)
        }
    }

    /// CoreBluetooth refuses such a PSM itself, with `CBError.invalidParameters`
    /// (embassy-rs/trouble#371): nothing reaches the peripheral.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test func openingAPSMOutsideTheDynamicRangeReachesDidOpenWithInvalidParameters() async throws {
        let bridge = MockBLEBridge(seed: 45)
        let (error, serverOpened) = try await Self.failedOpen(on: bridge, psm: 0x2349)
        #expect(!serverOpened)
        #expect(error as? CBMError == CBMError(.invalidParameters))
        let bridged = try #require(error) as NSError
        #expect(bridged.domain == CBMError.errorDomain && bridged.code == CBMError.Code.invalidParameters.rawValue)
        #expect(await !bridge.log.contains { $0.kind == .l2cap && $0.detail?.hasPrefix("open") == true })
    }

    /// An injected refusal (`.l2capOpen`) reaches `peripheral(_:didOpen:error:)` as CoreBluetooth
    /// delivers the peripheral's: no channel, the `L2CAPError` (bridged, its code is the result
    /// code); a CoreBluetooth error arrives as `CBMError`.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(
        "An injected open failure reaches didOpen with no channel and the error CoreBluetooth would give",
        arguments: [
            (ErrorInjection.Failure.l2cap(.insufficientEncryption), "BLECore.L2CAPError", 0x0008),
            (.l2cap(.noResourcesAvailable), "BLECore.L2CAPError", 0x0004),
            (.coreBluetooth(.connectionFailed), CBMError.errorDomain, 10),
        ])
    func anInjectedOpenFailureReachesDidOpen(failure: ErrorInjection.Failure, domain: String, code: Int)
        async throws
    {
        let bridge = MockBLEBridge(seed: 43)
        let (error, serverOpened) = try await Self.failedOpen(
            on: bridge, configuration: .init(errorInjection: [ErrorInjection(.l2capOpen, failure: failure)]))
        #expect(!serverOpened)
        switch failure {
        case .l2cap(let refusal): #expect(error as? L2CAPError == L2CAPError(refusal))
        default: #expect(error as? CBMError == CBMError(.connectionFailed))
        }
        let bridged = try #require(error) as NSError
        #expect(bridged.domain == domain && bridged.code == code)
        #expect(await bridge.finish() == .clean)
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(
        "An injected publish failure reaches didPublishL2CAPChannel with PSM 0 and the error",
        arguments: [ErrorInjection.Failure.coreBluetooth(.outOfSpace), .l2cap(.noResourcesAvailable)])
    func anInjectedPublishFailureReachesTheDelegate(failure: ErrorInjection.Failure) async throws {
        let bridge = MockBLEBridge(seed: 44)
        let (psm, error) = try await bridge.run { @MainActor () -> (UInt16?, (any Error)?) in
            let server = ChannelPeripheral(
                bridge: bridge,
                configuration: .init(errorInjection: [ErrorInjection(.l2capPublish, failure: failure)]))
            try await bridge.waitForApp { server.psm != nil }
            return (server.psm, server.publishError)
        }
        #expect(psm == 0)
        switch failure {
        case .l2cap(let code): #expect(error as? L2CAPError == L2CAPError(code))
        default: #expect(error as? CBMError == CBMError(.outOfSpace))
        }
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test func theExplicitFactoryUsesTheGivenConfiguration() async throws {
        let bridge = MockBLEBridge(seed: 42)
        let state = try await bridge.run { @MainActor () -> CBMManagerState in
            let client = ChannelCentral(bridge: bridge, configuration: .init(initialState: .poweredOff))
            try await bridge.waitForApp { client.manager.state != .unknown }
            return client.manager.state
        }
        #expect(state == .poweredOff)
    }

    /// Managers an app lets go of as the run ends leave the air through their front end, on the
    /// run's behalf: the bridge notes no call from a task the run cannot see.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(arguments: [false, true])
    func managersReleasedAsTheRunEndsLeaveAFinishReportClean(realistic: Bool) async throws {
        let bridge = MockBLEBridge(configuration: realistic ? .realistic(seed: 90) : .init(seed: 90))
        try await bridge.run { @MainActor in
            let central = CBMCentralManager(delegate: nil, queue: nil)
            let peripheral = CBMPeripheralManager(delegate: nil, queue: nil)
            try await bridge.waitForApp { central.state == .poweredOn && peripheral.state == .poweredOn }
        }
        #expect(await bridge.finish() == .clean)
    }
}

/// A peripheral app that answers every read itself with an error, and sends a value as soon as
/// a central subscribes.
final class EagerNotifier: NSObject, CBMPeripheralManagerDelegate, @unchecked Sendable {
    // @unchecked Sendable: only touched on `queue`, where the manager is made.
    static let service = CBMUUID(string: "FE10")
    static let status = CBMUUID(string: "FE11")
    static let stream = CBMUUID(string: "FE12")
    let queue = DispatchQueue(label: "eager-notifier")
    var manager: CBMPeripheralManager?
    let streamCharacteristic = CBMMutableCharacteristic(
        type: stream, properties: .notify, value: nil, permissions: .readable)

    init(bridge: MockBLEBridge) {
        super.init()
        queue.async { self.manager = CBMPeripheralManager(bridge: bridge, delegate: self, queue: self.queue) }
    }

    var isAdvertising: Bool { queue.sync { manager?.isAdvertising ?? false } }

    func peripheralManagerDidUpdateState(_ peripheral: CBMPeripheralManager) {
        guard peripheral.state == .poweredOn else { return }
        let service = CBMMutableService(type: Self.service, primary: true)
        service.characteristics = [
            CBMMutableCharacteristic(type: Self.status, properties: .read, value: nil, permissions: .readable),
            streamCharacteristic,
        ]
        peripheral.add(service)
    }

    func peripheralManager(_ peripheral: CBMPeripheralManager, didAdd service: CBMService, error: (any Error)?) {
        peripheral.startAdvertising([CBMAdvertisementDataServiceUUIDsKey: [Self.service]])
    }

    func peripheralManager(_ peripheral: CBMPeripheralManager, didReceiveRead request: CBMATTRequest) {
        peripheral.respond(to: request, withResult: .insufficientAuthorization)
    }

    func peripheralManager(
        _ peripheral: CBMPeripheralManager, central: CBMCentral, didSubscribeTo characteristic: CBMCharacteristic
    ) {
        _ = peripheral.updateValue(Data([7]), for: streamCharacteristic, onSubscribedCentrals: nil)
    }
}

/// A central app that, once it has discovered the notifier, reads its status, subscribes to its
/// stream and reads its status again, all at once.
final class ReadThenSubscribe: NSObject, CBMCentralManagerDelegate, CBMPeripheralDelegate, @unchecked Sendable {
    // @unchecked Sendable: only touched on `queue`, where the manager is made.
    let queue = DispatchQueue(label: "read-then-subscribe")
    var manager: CBMCentralManager?
    var peripheral: CBMPeripheral?
    var received: [Data] = []

    init(bridge: MockBLEBridge) {
        super.init()
        queue.async { self.manager = CBMCentralManager(bridge: bridge, delegate: self, queue: self.queue) }
    }

    var values: [Data] { queue.sync { received } }

    func centralManagerDidUpdateState(_ central: CBMCentralManager) {
        if central.state == .poweredOn { central.scanForPeripherals(withServices: [EagerNotifier.service]) }
    }

    func centralManager(
        _ central: CBMCentralManager, didDiscover peripheral: CBMPeripheral, advertisementData: [String: Any],
        rssi: NSNumber
    ) {
        guard self.peripheral == nil else { return }
        central.stopScan()
        self.peripheral = peripheral
        peripheral.delegate = self
        central.connect(peripheral)
    }

    func centralManager(_ central: CBMCentralManager, didConnect peripheral: CBMPeripheral) {
        peripheral.discoverServices(nil)
    }

    func peripheral(_ peripheral: CBMPeripheral, didDiscoverServices error: (any Error)?) {
        guard let service = peripheral.services?.first else { return }
        peripheral.discoverCharacteristics(nil, for: service)
    }

    func peripheral(
        _ peripheral: CBMPeripheral, didDiscoverCharacteristicsFor service: CBMService, error: (any Error)?
    ) {
        let characteristics = service.characteristics ?? []
        guard let status = characteristics.first(where: { $0.uuid == EagerNotifier.status }),
            let stream = characteristics.first(where: { $0.uuid == EagerNotifier.stream })
        else { return }
        peripheral.readValue(for: status)
        peripheral.setNotifyValue(true, for: stream)
        peripheral.readValue(for: status)
    }

    func peripheral(
        _ peripheral: CBMPeripheral, didUpdateValueFor characteristic: CBMCharacteristic, error: (any Error)?
    ) {
        if characteristic.uuid == EagerNotifier.stream, let value = characteristic.value { received.append(value) }
    }
}

@Suite(.timeLimit(.minutes(10)))
struct PeripheralAppReactionTests {
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(
        "A peripheral app's reaction to a subscription goes out at the subscription's instant, after it answered a read"
    )
    func aReactionAfterAManualAnswerIsNotLate() async throws {
        var configuration = MockBLEBridge.Configuration.realistic(seed: 12)
        configuration.timing.jitter = .zero
        let bridge = MockBLEBridge(configuration: configuration)
        try await bridge.run {
            let watch = EagerNotifier(bridge: bridge)
            try await bridge.waitForApp { watch.isAdvertising }
            let phone = ReadThenSubscribe(bridge: bridge)
            try await bridge.waitForApp { !phone.values.isEmpty }
            #expect(phone.values == [Data([7])])
            withExtendedLifetime((watch, phone)) {}
        }
        let log = await bridge.log
        let subscribed = try #require(log.first { $0.kind == .subscribe })
        let notified = try #require(log.first { $0.kind == .notification && $0.central != nil })
        // Sent at the instant the subscription arrived, the value crosses at the next
        // connection event (30 ms). Before, the app's call waited behind a call that ran the
        // schedule on: it went out an event late.
        #expect(subscribed.time.duration(to: notified.time) == .milliseconds(30))
    }
}
