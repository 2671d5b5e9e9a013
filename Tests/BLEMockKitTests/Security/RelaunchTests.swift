import BLECore
import BLEMockKit
import Foundation
import Testing

/// What an app's termination ends, and what its relaunched manager starts with: the
/// configuration it was made with, and the state a new manager reports.
@Suite("State restoration: terminating and relaunching", .timeLimit(.minutes(10)))
struct RelaunchTests {
    /// A watch advertising a heart-rate service with a readable and a notifying characteristic.
    static func watch(on bridge: MockBLEBridge, restoreIdentifier: String? = nil) async throws
        -> MockPeripheralManager
    {
        let watch = MockPeripheralManager(configuration: .init(restoreIdentifier: restoreIdentifier), bridge: bridge)
        _ = try await watch.add(
            GATTService(
                uuid: "180D",
                characteristics: [
                    GATTCharacteristic(uuid: "2A38", properties: .read, permissions: .readable, value: Data([1])),
                    GATTCharacteristic(uuid: "2A37", properties: .notify, permissions: .readable),
                ]))
        try await watch.startAdvertising(AdvertisementData(localName: "Watch", serviceUUIDs: ["180D"]))
        return watch
    }

    /// Opens a channel from `central` and returns both ends.
    static func open(_ psm: UInt16, from central: MockCentralManager, to peripheral: MockPeripheralManager)
        async throws -> (central: L2CAPChannel, peripheral: L2CAPChannel)
    {
        let events = peripheral.events()
        let centralEnd = try await central.openL2CAPChannel(psm, on: peripheral.identifier)
        for await case .l2capChannelOpened(let channel) in events { return (centralEnd, channel) }
        throw CoreBluetoothError(.unknown)
    }

    /// Everything a channel end receives until its stream ends.
    static func received(by end: L2CAPChannel) async -> Data {
        var received = Data()
        for await chunk in end.incoming { received += chunk }
        return received
    }

    // MARK: L2CAP

    /// L2CAP channels are not part of state restoration: they go with the terminated app's
    /// process, and the other end sees the close as when an app closes a channel.
    @Test("Terminating a central's app closes its L2CAP channels at both ends; its relaunched app opens new ones")
    func terminatingACentralsAppClosesItsChannels() async throws {
        let bridge = MockBLEBridge()
        let watch = try await Self.watch(on: bridge)
        let psm = try await watch.publishL2CAPChannel(requiresEncryption: false)
        let first = MockCentralManager(configuration: .init(restoreIdentifier: "phone"), bridge: bridge)
        try await first.scanForPeripherals(withServices: nil)
        try await first.connect(watch.identifier)
        let (phoneEnd, watchEnd) = try await Self.open(psm, from: first, to: watch)

        await first.simulateAppTermination()
        try await #require(throws: CoreBluetoothError(.notConnected)) { try await watchEnd.send(Data([1])) }
        // The terminated app's end does not send over the link the system kept for its successor.
        await #expect(throws: CoreBluetoothError(.notConnected)) { try await phoneEnd.send(Data([2])) }
        #expect(await Self.received(by: watchEnd).isEmpty)
        #expect(await Self.received(by: phoneEnd).isEmpty)
        #expect(await bridge.log.filter { $0.kind == .l2cap }.last?.detail == "closed #\(phoneEnd.id)")

        let relaunched = MockCentralManager(configuration: .init(restoreIdentifier: "phone"), bridge: bridge)
        #expect(await relaunched.isConnected(watch.identifier))
        let (again, watchAgain) = try await Self.open(psm, from: relaunched, to: watch)
        try await again.send(Data([3]))
        await again.close()
        #expect(await Self.received(by: watchAgain) == Data([3]))
    }

    @Test(
        "Terminating a peripheral's app closes its L2CAP channels and unpublishes its PSMs; its relaunched app publishes again"
    )
    func terminatingAPeripheralsAppClosesItsChannelsAndUnpublishesItsPSMs() async throws {
        let bridge = MockBLEBridge()
        let watch = try await Self.watch(on: bridge, restoreIdentifier: "watch")
        let psm = try await watch.publishL2CAPChannel(requiresEncryption: false)
        let phone = MockCentralManager(bridge: bridge)
        try await phone.scanForPeripherals(withServices: nil)
        try await phone.connect(watch.identifier)
        let (phoneEnd, watchEnd) = try await Self.open(psm, from: phone, to: watch)

        await watch.simulateAppTermination()
        try await #require(throws: CoreBluetoothError(.notConnected)) { try await phoneEnd.send(Data([1])) }
        await #expect(throws: CoreBluetoothError(.notConnected)) { try await watchEnd.send(Data([2])) }
        #expect(await Self.received(by: phoneEnd).isEmpty)
        // Nobody is there to accept a channel: the PSM went with the app.
        await #expect(throws: L2CAPError(.psmNotSupported)) {
            try await phone.openL2CAPChannel(psm, on: watch.identifier)
        }
        #expect(await phone.isConnected(watch.identifier))
        let details = await bridge.log.filter { $0.kind == .l2cap }.compactMap(\.detail)
        #expect(details.suffix(3) == ["unpublished 0x0080", "closed #\(phoneEnd.id)", "open 0x0080"])

        let relaunched = MockPeripheralManager(configuration: .init(restoreIdentifier: "watch"), bridge: bridge)
        #expect(try await relaunched.publishL2CAPChannel(requiresEncryption: false) == psm)
        let (again, watchAgain) = try await Self.open(psm, from: phone, to: relaunched)
        try await watchAgain.send(Data([3]))
        await watchAgain.close()
        #expect(await Self.received(by: again) == Data([3]))
    }

    // MARK: Configuration

    @Test(
        "A relaunched central injects its configuration's errors; its terminated predecessor's never fire and finish() lists them"
    )
    func aRelaunchedCentralInjectsItsOwnConfigurationsErrors() async throws {
        let bridge = MockBLEBridge()
        let watch = try await Self.watch(on: bridge)
        let stale = ErrorInjection(.read, failure: .att(.insufficientAuthorization), frequency: .once)
        var configuration = MockCentralManager.Configuration(restoreIdentifier: "phone")
        configuration.errorInjection = [stale]
        let first = MockCentralManager(configuration: configuration, bridge: bridge)
        try await first.scanForPeripherals(withServices: nil)
        try await first.connect(watch.identifier)
        let location = try await first.discoverAll(for: watch.identifier)[0]
        await first.simulateAppTermination()

        let fresh = ErrorInjection(.read, failure: .att(.insufficientResources), frequency: .once)
        configuration.errorInjection = [fresh]
        let relaunched = MockCentralManager(configuration: configuration, bridge: bridge)
        await #expect(throws: ATTError(.insufficientResources)) { try await relaunched.readValue(for: location) }
        #expect(try await relaunched.readValue(for: location) == Data([1]))
        // The predecessor's injection belonged to the manager that went with its app, as a shut-down
        // manager's does: it never fired.
        let report = await bridge.finish()
        guard case .leftovers(let leftovers) = report else {
            Issue.record("expected the predecessor's injection to be reported, got \(report)")
            return
        }
        let unfired = leftovers.filter {
            if case .unfiredInjection = $0 { true } else { false }
        }
        #expect(unfired == [.unfiredInjection(stale, owner: first.identifier)])
    }

    @Test("A relaunched peripheral manager injects its configuration's errors; its predecessor's never fire")
    func aRelaunchedPeripheralManagerInjectsItsOwnConfigurationsErrors() async throws {
        let bridge = MockBLEBridge()
        var configuration = MockPeripheralManager.Configuration(restoreIdentifier: "watch")
        let stale = ErrorInjection(.updateValue, failure: .coreBluetooth(.unknown), frequency: .once)
        configuration.errorInjection = [stale]
        let first = MockPeripheralManager(configuration: configuration, bridge: bridge)
        let service = try await first.add(
            GATTService(
                uuid: "180D",
                characteristics: [GATTCharacteristic(uuid: "2A37", properties: .notify, permissions: .readable)]))
        await first.simulateAppTermination()

        let fresh = ErrorInjection(.updateValue, failure: .coreBluetooth(.operationNotSupported), frequency: .once)
        configuration.errorInjection = [fresh]
        let relaunched = MockPeripheralManager(configuration: configuration, bridge: bridge)
        let measurement = service.characteristics[0]
        await #expect(throws: CoreBluetoothError(.operationNotSupported)) {
            try await relaunched.updateValue(Data([1]), for: measurement)
        }
        #expect(try await relaunched.updateValue(Data([2]), for: measurement))
        let report = await bridge.finish()
        guard case .leftovers(let leftovers) = report else {
            Issue.record("expected the predecessor's injection to be reported, got \(report)")
            return
        }
        #expect(leftovers.contains(.unfiredInjection(stale, owner: first.identifier)))
        #expect(!leftovers.contains(.unfiredInjection(fresh, owner: first.identifier)))
    }

    @Test("A relaunched manager with an invalid configuration refuses every call, as a new manager with it does")
    func aRelaunchedManagerWithAnInvalidConfigurationIsRefused() async throws {
        let bridge = MockBLEBridge()
        let watch = try await Self.watch(on: bridge, restoreIdentifier: "watch")
        var centralConfiguration = MockCentralManager.Configuration(restoreIdentifier: "phone")
        let first = MockCentralManager(configuration: centralConfiguration, bridge: bridge)
        try await first.scanForPeripherals(withServices: nil)
        try await first.connect(watch.identifier)
        await first.simulateAppTermination()
        await watch.simulateAppTermination()

        centralConfiguration.errorInjection = [
            ErrorInjection(.read, failure: .att(.readNotPermitted), frequency: .probability(2))
        ]
        let newCentral = MockCentralManager(configuration: centralConfiguration)
        let centralRefusal = try #require(
            await #expect(throws: APIMisuseError.self) { try await newCentral.readRSSI(for: watch.identifier) })
        let central = MockCentralManager(configuration: centralConfiguration, bridge: bridge)
        await #expect(throws: centralRefusal) { try await central.readRSSI(for: watch.identifier) }

        var peripheralConfiguration = MockPeripheralManager.Configuration(restoreIdentifier: "watch")
        peripheralConfiguration.errorInjection = [
            ErrorInjection(.updateValue, failure: .coreBluetooth(.unknown), frequency: .times(0))
        ]
        let newPeripheral = MockPeripheralManager(configuration: peripheralConfiguration)
        let peripheralRefusal = try #require(
            await #expect(throws: APIMisuseError.self) { try await newPeripheral.startAdvertising(.init()) })
        let peripheral = MockPeripheralManager(configuration: peripheralConfiguration, bridge: bridge)
        await #expect(throws: peripheralRefusal) { try await peripheral.startAdvertising(.init()) }
    }

    // MARK: State

    /// CoreBluetooth calls `…DidUpdateState` after `…willRestoreState`: a relaunched manager
    /// reports its state as a new one does, after the state it restored.
    @Test("A relaunched manager hears its state after its restored state", arguments: [false, true])
    func aRelaunchedManagerHearsItsStateAfterItsRestoredState(realistic: Bool) async throws {
        let bridge = MockBLEBridge(configuration: realistic ? .realistic(seed: 5) : .init(seed: 5))
        let watch = try await Self.watch(on: bridge, restoreIdentifier: "watch")
        var configuration: MockCentralManager.Configuration = realistic ? .realistic(seed: 5) : .fast
        configuration.restoreIdentifier = "phone"
        let first = MockCentralManager(configuration: configuration, bridge: bridge)
        #expect(await first.waitForPoweredOn() == .poweredOn)
        await first.simulateAppTermination()
        await watch.simulateAppTermination()

        let central = MockCentralManager(configuration: configuration, bridge: bridge)
        let peripheral = MockPeripheralManager(configuration: .init(restoreIdentifier: "watch"), bridge: bridge)
        let centralEvents = central.events()
        let peripheralEvents = peripheral.events()
        #expect(await central.waitForPoweredOn() == .poweredOn)
        #expect(await peripheral.waitForPoweredOn() == .poweredOn)
        // (finish() ends the streams: what was not delivered by then never will be.)
        _ = await bridge.finish()
        let restoredCentral = RestoredCentralState(peripherals: [], scanServices: nil)
        let steps: [CentralEvent] = realistic ? [.stateChanged(.resetting)] : []
        #expect(
            await centralEvents.prefixArray(5)
                == [.willRestoreState(restoredCentral)] + steps + [.stateChanged(.poweredOn)])
        let restoredPeripheral = try #require(await peripheral.restoredState)
        #expect(
            await peripheralEvents.prefixArray(5) == [
                .willRestoreState(restoredPeripheral), .stateChanged(.poweredOn),
            ])
    }

    /// A relaunched central whose Bluetooth is off does not keep what the system kept under a
    /// Bluetooth that was on: its state leaving `poweredOn` drops the links (with
    /// `peripheralDisconnected`, and the peripheral sees the central unsubscribe), and what was
    /// held for the app went with them.
    @Test("A central relaunched with Bluetooth off drops the links the system kept", arguments: [false, true])
    func aCentralRelaunchedWithBluetoothOffDropsTheLinksTheSystemKept(realistic: Bool) async throws {
        let bridge = MockBLEBridge()
        let watch = try await Self.watch(on: bridge)
        var configuration = MockCentralManager.Configuration(restoreIdentifier: "phone")
        let first = MockCentralManager(configuration: configuration, bridge: bridge)
        try await first.scanForPeripherals(withServices: nil)
        await first.stopScan()
        try await first.connect(watch.identifier)
        let measurement = try #require(try await first.discoverAll(for: watch.identifier).first { $0.uuid == "2A37" })
        try await first.setNotifyValue(true, for: measurement)
        await first.simulateAppTermination()
        let local = try #require(await watch.services.first?.characteristics.first { $0.uuid == "2A37" })
        #expect(try await watch.updateValue(Data([1]), for: local))

        configuration.initialState = .poweredOff
        if realistic { configuration.stateTransition = .realistic(duration: .milliseconds(100)) }
        let relaunched = MockCentralManager(configuration: configuration, bridge: bridge)
        let events = relaunched.events()
        #expect(await relaunched.waitForPoweredOn() == .poweredOff)
        #expect(await !relaunched.isConnected(watch.identifier))
        #expect(await watch.subscribedCentrals(for: local).isEmpty)
        await relaunched.simulateStateChange(.poweredOn)
        _ = await bridge.finish()
        let remote = RemotePeripheral(identifier: watch.identifier, name: "Watch")
        let steps: [CentralEvent] = realistic ? [.stateChanged(.resetting)] : []
        #expect(
            await events.prefixArray(8)
                == [.willRestoreState(RestoredCentralState(peripherals: [remote], scanServices: nil))] + steps + [
                    .stateChanged(.poweredOff), .disconnected(remote, CoreBluetoothError(.peripheralDisconnected)),
                    .stateChanged(.poweredOn),
                ])
    }
}
