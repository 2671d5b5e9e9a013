import BLECore
import BLEMockKit
import Foundation
import Testing

@Suite("Realistic: state transitions", .timeLimit(.minutes(10)))
struct StateTransitionTests {
    // MARK: .instant

    @Test("An instant central starts in its initial state: powered off, its operations throw notPoweredOn")
    func instantPoweredOffCentral() async throws {
        let bridge = MockBLEBridge()
        let central = MockCentralManager(configuration: .init(initialState: .poweredOff), bridge: bridge)
        #expect(await central.state == .poweredOff)
        #expect(await central.waitForPoweredOn() == .poweredOff)
        #expect(await bridge.now == .zero)
        await #expect(throws: APIMisuseError.notPoweredOn(operation: "scanForPeripherals", state: .poweredOff)) {
            try await central.scanForPeripherals(withServices: nil)
        }
        await #expect(throws: APIMisuseError.notPoweredOn(operation: "connect", state: .poweredOff)) {
            try await central.connect(UUID(uuid: (1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16)))
        }
    }

    @Test("An instant peripheral starts in its initial state: powered off, add and advertise throw notPoweredOn")
    func instantPoweredOffPeripheral() async throws {
        let bridge = MockBLEBridge()
        let peripheral = MockPeripheralManager(configuration: .init(initialState: .poweredOff), bridge: bridge)
        #expect(await peripheral.state == .poweredOff)
        await #expect(throws: APIMisuseError.notPoweredOn(operation: "add", state: .poweredOff)) {
            try await peripheral.add(Realistic.service)
        }
        await #expect(throws: APIMisuseError.notPoweredOn(operation: "startAdvertising", state: .poweredOff)) {
            try await peripheral.startAdvertising(AdvertisementData(localName: "Off"))
        }
    }

    // MARK: .realistic(duration:)

    @Test("A realistic central starts unknown, is resetting halfway, and is powered on after exactly 100 ms")
    func realisticCentralSettles() async throws {
        let bridge = MockBLEBridge()
        let central = MockCentralManager(
            configuration: .init(stateTransition: .realistic(duration: .milliseconds(100))), bridge: bridge)
        let events = central.events()
        #expect(await central.state == .unknown)
        await #expect(throws: APIMisuseError.notPoweredOn(operation: "scanForPeripherals", state: .unknown)) {
            try await central.scanForPeripherals(withServices: nil)
        }
        await bridge.advance(by: .milliseconds(49))
        #expect(await central.state == .unknown)
        await bridge.advance(by: .milliseconds(1))
        #expect(await central.state == .resetting)
        #expect(await central.waitForPoweredOn() == .poweredOn)
        #expect(await bridge.now == Realistic.at(.milliseconds(100)))
        #expect(await events.prefixArray(2) == [.stateChanged(.resetting), .stateChanged(.poweredOn)])
        try await central.scanForPeripherals(withServices: nil)
        #expect(await central.isScanning)
    }

    @Test("waitForPoweredOn on a realistic central runs the simulation to the settling time and reports each step")
    func realisticCentralWait() async throws {
        let bridge = MockBLEBridge()
        let central = MockCentralManager(
            configuration: .init(stateTransition: .realistic(duration: .milliseconds(100))), bridge: bridge)
        let events = central.events()
        #expect(await central.waitForPoweredOn() == .poweredOn)
        #expect(await bridge.now == Realistic.at(.milliseconds(100)))
        #expect(await events.prefixArray(2) == [.stateChanged(.resetting), .stateChanged(.poweredOn)])
        let changes = await bridge.log.filter { $0.kind == .stateChanged && $0.central == central.identifier }
        #expect(changes.map(\.detail) == ["unknown", "resetting", "poweredOn"])
        #expect(changes.map(\.time) == [.zero, Realistic.at(.milliseconds(50)), Realistic.at(.milliseconds(100))])
        // A second wait returns at once.
        #expect(await central.waitForPoweredOn() == .poweredOn)
        #expect(await bridge.now == Realistic.at(.milliseconds(100)))
    }

    @Test("A realistic central whose initial state is unauthorized settles there and never powers on")
    func realisticUnauthorizedCentral() async throws {
        let bridge = MockBLEBridge()
        let central = MockCentralManager(
            configuration: .init(
                initialState: .unauthorized, stateTransition: .realistic(duration: .milliseconds(100))),
            bridge: bridge)
        let events = central.events()
        #expect(await central.waitForPoweredOn() == .unauthorized)
        #expect(await bridge.now == Realistic.at(.milliseconds(100)))
        await bridge.advance(by: .seconds(5))
        #expect(await central.state == .unauthorized)
        _ = await bridge.finish()
        #expect(await Realistic.drain(events) == [.stateChanged(.resetting), .stateChanged(.unauthorized)])
    }

    @Test("A realistic peripheral starts unknown and is powered on after exactly 100 ms, through resetting")
    func realisticPeripheralSettles() async throws {
        let bridge = MockBLEBridge()
        let peripheral = MockPeripheralManager(
            configuration: .init(stateTransition: .realistic(duration: .milliseconds(100))), bridge: bridge)
        let events = peripheral.events()
        #expect(await peripheral.state == .unknown)
        await #expect(throws: APIMisuseError.notPoweredOn(operation: "add", state: .unknown)) {
            try await peripheral.add(Realistic.service)
        }
        #expect(await peripheral.waitForPoweredOn() == .poweredOn)
        #expect(await bridge.now == Realistic.at(.milliseconds(100)))
        #expect(await events.prefixArray(2) == [.stateChanged(.resetting), .stateChanged(.poweredOn)])
        _ = try await peripheral.add(Realistic.service)
        #expect(await peripheral.services.count == 1)
    }

    @Test("A realistic peripheral whose initial state is poweredOff settles there")
    func realisticPoweredOffPeripheral() async throws {
        let bridge = MockBLEBridge()
        let peripheral = MockPeripheralManager(
            configuration: .init(initialState: .poweredOff, stateTransition: .realistic(duration: .milliseconds(40))),
            bridge: bridge)
        #expect(await peripheral.waitForPoweredOn() == .poweredOff)
        #expect(await bridge.now == Realistic.at(.milliseconds(40)))
    }

    // MARK: .stuck

    @Test("A central stuck unauthorized is unauthorized at once, whatever its initial state, and stays so")
    func stuckUnauthorizedCentral() async throws {
        let bridge = MockBLEBridge()
        let central = MockCentralManager(configuration: .init(stateTransition: .stuck(.unauthorized)), bridge: bridge)
        let events = central.events()
        #expect(await central.state == .unauthorized)
        #expect(await central.waitForPoweredOn() == .unauthorized)
        #expect(await bridge.now == .zero)
        await bridge.advance(by: .seconds(10))
        #expect(await central.state == .unauthorized)
        await #expect(throws: APIMisuseError.notPoweredOn(operation: "scanForPeripherals", state: .unauthorized)) {
            try await central.scanForPeripherals(withServices: nil)
        }
        // The test hook still changes it.
        await central.simulateStateChange(.poweredOn)
        #expect(await central.state == .poweredOn)
        // The state it started in, once, then the change.
        #expect(await events.prefixArray(2) == [.stateChanged(.unauthorized), .stateChanged(.poweredOn)])
    }

    @Test("A central stuck unsupported is unsupported at once and waitForPoweredOn returns it")
    func stuckUnsupportedCentral() async throws {
        let bridge = MockBLEBridge()
        let central = MockCentralManager(configuration: .init(stateTransition: .stuck(.unsupported)), bridge: bridge)
        #expect(await central.waitForPoweredOn() == .unsupported)
        #expect(await central.state == .unsupported)
        #expect(await bridge.now == .zero)
        await #expect(throws: APIMisuseError.notPoweredOn(operation: "scanForPeripherals", state: .unsupported)) {
            try await central.scanForPeripherals(withServices: nil)
        }
    }

    @Test(
        "A peripheral stuck unauthorized or unsupported is in that state at once and stays there",
        arguments: [ManagerState.unauthorized, .unsupported])
    func stuckPeripheral(state: ManagerState) async throws {
        let bridge = MockBLEBridge()
        let peripheral = MockPeripheralManager(configuration: .init(stateTransition: .stuck(state)), bridge: bridge)
        #expect(await peripheral.state == state)
        #expect(await peripheral.waitForPoweredOn() == state)
        await bridge.advance(by: .seconds(1))
        #expect(await peripheral.state == state)
        await #expect(throws: APIMisuseError.notPoweredOn(operation: "add", state: state)) {
            try await peripheral.add(Realistic.service)
        }
    }

    // MARK: simulateStateChange

    @Test(
        "Powering a central off drops its link, fails its pending read, ends subscriptions and scanning; on again works"
    )
    func centralPowersOff() async throws {
        let bridge = MockBLEBridge()
        let (peripheral, service) = try await Realistic.advertisingPeripheral(
            on: bridge, configuration: .init(name: "Sensor", requestHandling: .manual))
        let (central, characteristics) = try await Realistic.connectedCentral(to: peripheral, on: bridge)
        let value = try #require(characteristics.first { $0.uuid == RigUUID.value })
        try await central.setNotifyValue(true, for: value)
        try await central.scanForPeripherals(withServices: nil)
        let centralEvents = central.events()
        var peripheralEvents = peripheral.events().makeAsyncIterator()

        let read = Task { try await central.readValue(for: value) }
        let request = try #require(await nextReadRequest(&peripheralEvents))
        #expect(request.characteristic.uuid == RigUUID.value)

        await central.simulateStateChange(.poweredOff)
        await #expect(throws: CoreBluetoothError(.peripheralDisconnected)) { try await read.value }
        let remote = RemotePeripheral(identifier: peripheral.identifier, name: "Sensor")
        #expect(
            await centralEvents.prefixArray(2) == [
                .stateChanged(.poweredOff), .disconnected(remote, CoreBluetoothError(.peripheralDisconnected)),
            ])
        let local = try #require(service.characteristic(RigUUID.value))
        #expect(
            await peripheralEvents.next()
                == .unsubscribed(
                    RemoteCentral(identifier: central.identifier, maximumUpdateValueLength: 512), local))
        #expect(await peripheral.subscribedCentrals(for: local).isEmpty)
        #expect(await !central.isScanning)
        #expect(await !central.isConnected(peripheral.identifier))
        #expect(await central.state == .poweredOff)
        await #expect(throws: APIMisuseError.notPoweredOn(operation: "scanForPeripherals", state: .poweredOff)) {
            try await central.scanForPeripherals(withServices: nil)
        }
        await #expect(throws: APIMisuseError.notPoweredOn(operation: "connect", state: .poweredOff)) {
            try await central.connect(peripheral.identifier)
        }
        await #expect(throws: APIMisuseError.notPoweredOn(operation: "readValue", state: .poweredOff)) {
            try await central.readValue(for: value)
        }

        await central.simulateStateChange(.poweredOn)
        #expect(await centralEvents.prefixArray(1) == [.stateChanged(.poweredOn)])
        try await central.scanForPeripherals(withServices: nil)
        #expect(await central.isScanning)
        try await central.connect(peripheral.identifier)
        #expect(await central.isConnected(peripheral.identifier))
    }

    @Test(
        "A peripheral's state below powered off stops advertising, drops its links and removes its services; on again it can re-add"
    )
    func peripheralFallsBelowPoweredOff() async throws {
        let bridge = MockBLEBridge()
        let (peripheral, _) = try await Realistic.advertisingPeripheral(on: bridge)
        let (central, _) = try await Realistic.connectedCentral(to: peripheral, on: bridge)
        let centralEvents = central.events()
        let peripheralEvents = peripheral.events()

        await peripheral.simulateStateChange(.resetting)
        #expect(await peripheral.state == .resetting)
        #expect(await !peripheral.isAdvertising)
        #expect(await peripheral.services.isEmpty)
        #expect(await !central.isConnected(peripheral.identifier))
        #expect(await central.services(of: peripheral.identifier).isEmpty)
        #expect(
            await centralEvents.prefixArray(1) == [
                .disconnected(
                    RemotePeripheral(identifier: peripheral.identifier, name: "Sensor"),
                    CoreBluetoothError(.peripheralDisconnected))
            ])
        #expect(await peripheralEvents.prefixArray(1) == [.stateChanged(.resetting)])
        await #expect(throws: APIMisuseError.notPoweredOn(operation: "add", state: .resetting)) {
            try await peripheral.add(Realistic.service)
        }

        await peripheral.simulateStateChange(.poweredOn)
        #expect(await peripheralEvents.prefixArray(1) == [.stateChanged(.poweredOn)])
        #expect(await !peripheral.isAdvertising)
        let again = try await peripheral.add(Realistic.service)
        #expect(await peripheral.services == [again])
        try await peripheral.startAdvertising(AdvertisementData(localName: "Sensor", serviceUUIDs: [RigUUID.service]))
        try await central.connect(peripheral.identifier)
        #expect(await central.isConnected(peripheral.identifier))
    }

    /// CoreBluetooth's `peripheralManagerDidUpdateState(_:)` documentation: below powered on,
    /// advertising stops and centrals are disconnected; only below powered off must the app
    /// restart advertising and add its services again. (Powered off, the database was cleared too,
    /// so an app that followed the documentation vanished after Bluetooth was turned off and on.)
    @Test("A peripheral turned off drops its links and keeps its services; on again it advertises them at once")
    func peripheralPowersOffAndOn() async throws {
        let bridge = MockBLEBridge()
        let (peripheral, _) = try await Realistic.advertisingPeripheral(on: bridge)
        let (central, _) = try await Realistic.connectedCentral(to: peripheral, on: bridge)
        let published = await peripheral.services

        await peripheral.simulateStateChange(.poweredOff)
        #expect(await !peripheral.isAdvertising)
        #expect(await peripheral.services == published)
        #expect(await !central.isConnected(peripheral.identifier))

        await peripheral.simulateStateChange(.poweredOn)
        #expect(await peripheral.isAdvertising)
        #expect(await peripheral.services == published)
        try await central.connect(peripheral.identifier)
        let services = try await central.discoverServices(nil, for: peripheral.identifier)
        #expect(services.map(\.uuid) == published.map(\.uuid))
        // Turned off, then below powered off before it is on again: the database goes then.
        await peripheral.simulateStateChange(.poweredOff)
        await peripheral.simulateStateChange(.unauthorized)
        await peripheral.simulateStateChange(.poweredOn)
        #expect(await peripheral.services.isEmpty)
        #expect(await !peripheral.isAdvertising)
    }

    @Test("Powering a central off on a realistic bridge fails an operation in flight at that virtual time")
    func centralPowersOffMidRead() async throws {
        let bridge = Realistic.steadyBridge()
        let (peripheral, _) = try await Realistic.advertisingPeripheral(on: bridge)
        let (central, characteristics) = try await Realistic.connectedCentral(
            to: peripheral, on: bridge, configuration: .init(mtu: .fixed(23)))
        let long = try #require(characteristics.first { $0.uuid == Realistic.longValue })
        let start = await bridge.now
        await bridge.schedule(.centralState(central.identifier, .poweredOff), after: .milliseconds(100))
        await #expect(throws: CoreBluetoothError(.peripheralDisconnected)) { try await central.readValue(for: long) }
        #expect(await bridge.now == start.advanced(by: .milliseconds(100)))
        #expect(await central.state == .poweredOff)
    }
}
