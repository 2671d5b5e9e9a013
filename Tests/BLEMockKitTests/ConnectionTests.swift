import BLECore
import BLEMockKit
import Foundation
import Testing

@Suite("Connections", .timeLimit(.minutes(10)))
struct ConnectionTests {
    @Test("Connecting reports the peripheral connected on both sides and negotiates the smaller MTU")
    func connectNegotiatesMTU() async throws {
        let bridge = MockBLEBridge()
        let (peripheral, _) = try await TestPeripherals.advertisingHeartRate(
            on: bridge, configuration: .init(name: "HRM-1", mtu: .fixed(185)))
        let (central, _) = try await TestPeripherals.connectedCentral(
            to: peripheral, on: bridge, configuration: .init(mtu: .fixed(247)))
        #expect(await central.isConnected(peripheral.identifier))
        #expect(try await central.maximumWriteValueLength(for: peripheral.identifier, type: .withoutResponse) == 182)
        #expect(try await central.maximumWriteValueLength(for: peripheral.identifier, type: .withResponse) == 512)
        #expect(await peripheral.maximumUpdateValueLength(for: central.identifier) == 182)
        #expect(await bridge.log.first { $0.kind == .connected }?.detail == "mtu=185")
    }

    @Test("An MTU preference outside 23…517 is refused with a clear configuration error", arguments: [10, 1000])
    func mtuOutOfRangeIsRefused(preferred: Int) async throws {
        let bridge = MockBLEBridge()
        let central = MockCentralManager(configuration: .init(mtu: .fixed(preferred)), bridge: bridge)
        let expected = APIMisuseError.invalidConfiguration(
            "MockCentralManager.Configuration.mtu: ATT_MTU \(preferred) is outside 23…517; use a value in that range")
        await #expect(throws: expected) { try await central.scanForPeripherals(withServices: nil) }
        let peripheral = MockPeripheralManager(configuration: .init(mtu: .fixed(preferred)), bridge: bridge)
        await #expect(
            throws: APIMisuseError.invalidConfiguration(
                "MockPeripheralManager.Configuration.mtu: ATT_MTU \(preferred) is outside 23…517; use a value in that range"
            )
        ) { try await peripheral.startAdvertising(AdvertisementData()) }
        #expect(String(describing: expected).contains("use a value in that range"))
    }

    @Test("The link's ATT_MTU is the smaller preference at both ends of the valid range")
    func mtuBounds() async throws {
        for (central, peripheral, expected) in [(23, 517, 23), (517, 517, 517), (185, 23, 23)] {
            let bridge = MockBLEBridge()
            let (sensor, _) = try await TestPeripherals.advertisingHeartRate(
                on: bridge, configuration: .init(mtu: .fixed(peripheral)))
            let (phone, _) = try await TestPeripherals.connectedCentral(
                to: sensor, on: bridge, configuration: .init(mtu: .fixed(central)))
            #expect(
                try await phone.maximumWriteValueLength(for: sensor.identifier, type: .withoutResponse)
                    == min(expected - 3, 512))
        }
    }

    @Test("Connecting twice is harmless and connects once")
    func doubleConnect() async throws {
        let bridge = MockBLEBridge()
        let (peripheral, _) = try await TestPeripherals.advertisingHeartRate(on: bridge)
        let (central, _) = try await TestPeripherals.connectedCentral(to: peripheral, on: bridge)
        try await central.connect(peripheral.identifier)
        #expect(await bridge.log.filter { $0.kind == .connected }.count == 1)
    }

    @Test("A pending connection to a silent peripheral completes when it starts advertising")
    func pendingConnectionCompletes() async throws {
        let bridge = MockBLEBridge()
        let (peripheral, _) = try await TestPeripherals.advertisingHeartRate(on: bridge)
        let central = MockCentralManager(bridge: bridge)
        try await central.scanForPeripherals(withServices: nil)
        await peripheral.stopAdvertising()
        let attempt = Task { try await central.connect(peripheral.identifier) }
        await bridge.waitUntil { $0.log.last?.kind == .connecting }
        #expect(await !central.isConnected(peripheral.identifier))
        try await peripheral.startAdvertising(AdvertisementData(localName: "back"))
        try await attempt.value
        #expect(await central.isConnected(peripheral.identifier))
    }

    @Test("A connection timeout cancels the attempt at the virtual deadline and reports it")
    func connectionTimeout() async throws {
        let bridge = MockBLEBridge()
        let (peripheral, _) = try await TestPeripherals.advertisingHeartRate(on: bridge)
        let central = MockCentralManager(bridge: bridge)
        let events = central.events()
        try await central.scanForPeripherals(withServices: nil)
        await peripheral.stopAdvertising()
        await #expect(throws: CoreBluetoothError(.connectionTimeout)) {
            try await central.connect(peripheral.identifier, timeout: .seconds(5))
        }
        #expect(await bridge.now == VirtualClock.Instant(offset: .seconds(5)))
        #expect(await !central.isConnected(peripheral.identifier))
        // The link never came up: a failed connection, not a disconnection.
        let received = await events.prefixArray(3)
        #expect(
            received.last
                == .failedToConnect(
                    RemotePeripheral(identifier: peripheral.identifier, name: "HRM-1"),
                    CoreBluetoothError(.connectionTimeout)))
        // The cancelled attempt does not connect later.
        try await peripheral.startAdvertising(AdvertisementData(localName: "back"))
        #expect(await !central.isConnected(peripheral.identifier))
    }

    @Test("Cancelling a pending connection fails the attempt with operationCancelled")
    func cancelPendingConnection() async throws {
        let bridge = MockBLEBridge()
        let (peripheral, _) = try await TestPeripherals.advertisingHeartRate(on: bridge)
        let central = MockCentralManager(bridge: bridge)
        try await central.scanForPeripherals(withServices: nil)
        await peripheral.stopAdvertising()
        let attempt = Task { try await central.connect(peripheral.identifier) }
        await bridge.waitUntil { $0.log.last?.kind == .connecting }
        try await central.cancelPeripheralConnection(peripheral.identifier)
        await #expect(throws: CoreBluetoothError(.operationCancelled)) { try await attempt.value }
        #expect(await bridge.finish() == .clean)
    }

    @Test(
        "Bluetooth turned off under a pending connection fails its connect with connectionFailed; the events say the state"
    )
    func powerOffEndsAPendingConnection() async throws {
        let bridge = MockBLEBridge()
        let (peripheral, _) = try await TestPeripherals.advertisingHeartRate(on: bridge)
        let central = MockCentralManager(bridge: bridge)
        let events = central.events()
        try await central.scanForPeripherals(withServices: nil)
        await peripheral.stopAdvertising()
        let attempt = Task { try await central.connect(peripheral.identifier) }
        await bridge.waitUntil { $0.log.last?.kind == .connecting }
        await central.simulateStateChange(.poweredOff)
        await #expect(throws: CoreBluetoothError(.connectionFailed)) { try await attempt.value }
        // Back on, the attempt is gone: the peripheral advertising again is not connected to.
        await central.simulateStateChange(.poweredOn)
        try await peripheral.startAdvertising(AdvertisementData(localName: "back"))
        // As CoreBluetooth tells a delegate: the state change, no didFailToConnect (the link never
        // came up, and the peripheral objects are invalid below powered on).
        let received = await events.prefixArray(4)
        #expect(received.first == .stateChanged(.poweredOn))
        #expect(received.dropFirst().first.map { if case .discovered = $0 { true } else { false } } == true)
        #expect(received.suffix(2) == [.stateChanged(.poweredOff), .stateChanged(.poweredOn)])
        #expect(await !central.isConnected(peripheral.identifier))
        #expect(await !bridge.log.contains { $0.kind == .connected })
        #expect(await bridge.finish() == .clean)
    }

    @Test("Retrieving peripherals returns only known ones, and connected ones by service")
    func retrieval() async throws {
        let bridge = MockBLEBridge()
        let (peripheral, _) = try await TestPeripherals.advertisingHeartRate(on: bridge)
        let stranger = MockPeripheralManager(bridge: bridge)
        let central = MockCentralManager(bridge: bridge)
        #expect(await central.retrievePeripherals(withIdentifiers: [peripheral.identifier]).isEmpty)
        let (_, _) = try await TestPeripherals.connectedCentral(to: peripheral, on: bridge)
        let retrieved = await central.retrievePeripherals(withIdentifiers: [stranger.identifier, peripheral.identifier])
        #expect(retrieved == [RemotePeripheral(identifier: peripheral.identifier, name: "HRM-1")])
        #expect(
            await central.retrieveConnectedPeripherals(withServices: ["180D"]).map(\.identifier) == [
                peripheral.identifier
            ])
        #expect(await central.retrieveConnectedPeripherals(withServices: ["180F"]).isEmpty)
        // A retrieved peripheral can be connected without scanning.
        try await central.connect(peripheral.identifier)
        #expect(await central.isConnected(peripheral.identifier))
    }

    @Test("A peripheral dropping the link disconnects the central with peripheralDisconnected")
    func peripheralDropsLink() async throws {
        let bridge = MockBLEBridge()
        let (peripheral, _) = try await TestPeripherals.advertisingHeartRate(on: bridge)
        let (central, characteristics) = try await TestPeripherals.connectedCentral(to: peripheral, on: bridge)
        let events = central.events()
        await peripheral.simulateDisconnection(of: central.identifier)
        #expect(
            await events.prefixArray(1) == [
                .disconnected(
                    RemotePeripheral(identifier: peripheral.identifier, name: "HRM-1"),
                    CoreBluetoothError(.peripheralDisconnected))
            ])
        #expect(await !central.isConnected(peripheral.identifier))
        #expect(await central.services(of: peripheral.identifier).isEmpty)
        await #expect(throws: CoreBluetoothError(.notConnected)) {
            try await central.readValue(for: characteristics[1])
        }
        // Reconnecting works, and old references are usable again once rediscovered.
        try await central.connect(peripheral.identifier)
        try await central.discoverAll(for: peripheral.identifier)
        #expect(try await central.readValue(for: characteristics[1]) == Data([0x01]))
    }

    @Test("One central disconnecting leaves another central's link alone")
    func linksAreIndependent() async throws {
        let bridge = MockBLEBridge()
        let (peripheral, _) = try await TestPeripherals.advertisingHeartRate(on: bridge)
        let (first, _) = try await TestPeripherals.connectedCentral(to: peripheral, on: bridge)
        let (second, characteristics) = try await TestPeripherals.connectedCentral(to: peripheral, on: bridge)
        try await first.cancelPeripheralConnection(peripheral.identifier)
        #expect(await second.isConnected(peripheral.identifier))
        #expect(try await second.readValue(for: characteristics[1]) == Data([0x01]))
    }

    @Test("RSSI reads return the peripheral's signal strength")
    func rssi() async throws {
        let bridge = MockBLEBridge()
        let (peripheral, _) = try await TestPeripherals.advertisingHeartRate(
            on: bridge, configuration: .init(rssi: -67))
        let (central, _) = try await TestPeripherals.connectedCentral(to: peripheral, on: bridge)
        #expect(try await central.readRSSI(for: peripheral.identifier) == -67)
    }
}
