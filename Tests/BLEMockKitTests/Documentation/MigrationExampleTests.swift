import BLECore
import BLEMockKit
import Foundation
import Testing

// MIGRATION.md's "after" examples, verbatim: `everyDocumentedSwiftBlockIsCompiled` checks
// that each compiled Swift block of MIGRATION.md appears in one of the example files.

/// The examples run with the suite-wide time limit, like every other suite.
@Suite(.timeLimit(.minutes(10)))
struct MigrationExampleTests {
    // MARK: From actor-based mocks in the style of Bleu

    @Test func defaultMocksAreFastAndPoweredOn() async throws {
        let bridge = MockBLEBridge()  // one per test: nothing is shared between tests
        let central = MockCentralManager(bridge: bridge)
        #expect(await central.waitForPoweredOn() == .poweredOn)

        // A peripheral is a MockPeripheralManager on the same bridge (no registerPeripheral).
        let peripheral = MockPeripheralManager(bridge: bridge)
        try await peripheral.startAdvertising(AdvertisementData(localName: "Test"))
        try await central.scanForPeripherals(withServices: nil)
        try await central.connect(peripheral.identifier, timeout: .seconds(1))
        #expect(await central.isConnected(peripheral.identifier))
    }

    @Test func aStuckStateNeverReachesPoweredOn() async throws {
        let central = MockCentralManager(configuration: .init(stateTransition: .stuck(.unauthorized)))
        #expect(await central.waitForPoweredOn() == .unauthorized)
        await #expect(throws: APIMisuseError.notPoweredOn(operation: "scanForPeripherals", state: .unauthorized)) {
            try await central.scanForPeripherals(withServices: nil)
        }
    }

    @Test func aSmallMTUMakesLongWritesCostMoreRoundTrips() async throws {
        let bridge = MockBLEBridge(configuration: .realistic(seed: 7))
        let peripheral = MockPeripheralManager(bridge: bridge)
        _ = try await peripheral.add(
            GATTService(
                uuid: "FFF0",
                characteristics: [GATTCharacteristic(uuid: "FFF1", properties: .write, permissions: .writeable)]))
        try await peripheral.startAdvertising(AdvertisementData(serviceUUIDs: ["FFF0"]))
        // mtuMode = .realistic(min: 23, max: 27) becomes mtu: .realistic(23...27), drawn per link from the seed.
        let central = MockCentralManager(configuration: .init(mtu: .realistic(23...27)), bridge: bridge)
        try await central.scanForPeripherals(withServices: ["FFF0"])
        await bridge.advance(by: .milliseconds(200))
        try await central.connect(peripheral.identifier)
        let characteristic = try await central.discoverAll(for: peripheral.identifier)[0]

        let before = await bridge.attPDUCount
        try await central.writeValue(Data(repeating: 0xFF, count: 200), for: characteristic, type: .withResponse)
        // A long write: Prepare Writes of ATT_MTU - 5 bytes and an Execute Write, each with its response.
        #expect(await bridge.attPDUCount - before >= 2 * (200 / 22 + 1))
        #expect(try await central.maximumWriteValueLength(for: peripheral.identifier, type: .withoutResponse) <= 24)
    }

    @Test func injectedDiscoveryErrorsAreTyped() async throws {
        var configuration = MockCentralManager.Configuration()
        configuration.errorInjection = [
            ErrorInjection(.serviceDiscovery, failure: .att(.insufficientAuthentication))
        ]
        let bridge = MockBLEBridge()
        let central = MockCentralManager(configuration: configuration, bridge: bridge)
        let peripheral = MockPeripheralManager(bridge: bridge)
        _ = try await peripheral.add(GATTService(uuid: "180D", characteristics: []))
        try await peripheral.startAdvertising(AdvertisementData(serviceUUIDs: ["180D"]))
        try await central.scanForPeripherals(withServices: ["180D"])
        try await central.connect(peripheral.identifier)

        await #expect(throws: ATTError(.insufficientAuthentication)) {
            try await central.discoverServices(nil, for: peripheral.identifier)
        }
    }

    @Test func aFullUpdateQueueReturnsFalseUntilItDrains() async throws {
        let bridge = MockBLEBridge(configuration: .realistic(seed: 1))
        // queueBehavior = .realistic(capacity: 2, retries: …) becomes updateQueue: .realistic(capacity: 2).
        let peripheral = MockPeripheralManager(
            configuration: .init(updateQueue: .realistic(capacity: 2)), bridge: bridge)
        let service = try await peripheral.add(
            GATTService(
                uuid: "180D", characteristics: [GATTCharacteristic(uuid: "2A37", properties: .notify, permissions: [])])
        )
        try await peripheral.startAdvertising(AdvertisementData(serviceUUIDs: ["180D"]))
        let central = MockCentralManager(bridge: bridge)
        try await central.scanForPeripherals(withServices: ["180D"])
        await bridge.advance(by: .milliseconds(200))
        try await central.connect(peripheral.identifier)
        // No simulateSubscription: the central really subscribes.
        try await central.setNotifyValue(true, for: try await central.discoverAll(for: peripheral.identifier)[0])

        let measurement = service.characteristics[0]
        #expect(try await peripheral.updateValue(Data([1]), for: measurement))
        #expect(try await peripheral.updateValue(Data([2]), for: measurement))
        #expect(try await peripheral.updateValue(Data([3]), for: measurement) == false)  // full
        await bridge.advance(by: .milliseconds(100))  // a connection event drains the queue
        #expect(try await peripheral.updateValue(Data([3]), for: measurement))
    }

    @Test func readRequestsReachAManualPeripheral() async throws {
        let bridge = MockBLEBridge()
        // supportReadRequests / simulateReadRequest become requestHandling: .manual and respond(to:withResult:value:).
        let peripheral = MockPeripheralManager(configuration: .init(requestHandling: .manual), bridge: bridge)
        _ = try await peripheral.add(
            GATTService(
                uuid: "FFF0",
                characteristics: [GATTCharacteristic(uuid: "FFF1", properties: .read, permissions: .readable)]))
        try await peripheral.startAdvertising(AdvertisementData(serviceUUIDs: ["FFF0"]))
        let requests = peripheral.events()
        let answering = Task {
            for await case .readRequest(let request) in requests {
                try await peripheral.respond(to: request, withResult: .success, value: Data("ok".utf8))
                return
            }
        }
        let central = MockCentralManager(bridge: bridge)
        try await central.scanForPeripherals(withServices: ["FFF0"])
        try await central.connect(peripheral.identifier)
        let characteristic = try await central.discoverAll(for: peripheral.identifier)[0]
        #expect(try await central.readValue(for: characteristic) == Data("ok".utf8))
        try await answering.value
    }

    // MARK: From a CoreBluetoothEmulator-style bus emulator

    @Test func duplicatesArriveOncePerAdvertisingInterval() async throws {
        let bridge = MockBLEBridge()  // no EmulatorBus.shared: each test owns its bridge
        let peripheral = MockPeripheralManager(
            configuration: .init(advertisingInterval: .milliseconds(100)), bridge: bridge)
        try await peripheral.startAdvertising(AdvertisementData(localName: "Tag"))
        let central = MockCentralManager(bridge: bridge)
        try await central.scanForPeripherals(withServices: nil, options: ScanOptions(allowDuplicates: true))
        await bridge.advance(by: .milliseconds(250))
        let discoveries = await bridge.log.filter { $0.kind == .discovered }
        #expect(discoveries.count == 3)  // at 0, 100 and 200 ms
        #expect(Set(discoveries.map(\.peripheral)).count == 1)
    }

    @Test func disconnectingEndsThePeripheralsSubscriptions() async throws {
        let bridge = MockBLEBridge()
        let peripheral = MockPeripheralManager(bridge: bridge)
        let service = try await peripheral.add(
            GATTService(
                uuid: "180D", characteristics: [GATTCharacteristic(uuid: "2A37", properties: .notify, permissions: [])])
        )
        try await peripheral.startAdvertising(AdvertisementData(serviceUUIDs: ["180D"]))
        let central = MockCentralManager(bridge: bridge)
        try await central.scanForPeripherals(withServices: ["180D"])
        try await central.connect(peripheral.identifier)
        try await central.setNotifyValue(true, for: try await central.discoverAll(for: peripheral.identifier)[0])
        #expect(await peripheral.subscribedCentrals(for: service.characteristics[0]).count == 1)

        try await central.cancelPeripheralConnection(peripheral.identifier)
        #expect(await peripheral.subscribedCentrals(for: service.characteristics[0]).isEmpty)
    }

    @Test func writesWithoutResponseFeelBackpressure() async throws {
        let bridge = MockBLEBridge(configuration: .realistic(seed: 3))
        let peripheral = MockPeripheralManager(bridge: bridge)
        _ = try await peripheral.add(
            GATTService(
                uuid: "FFF0",
                characteristics: [
                    GATTCharacteristic(uuid: "FFF1", properties: .writeWithoutResponse, permissions: .writeable)
                ]))
        try await peripheral.startAdvertising(AdvertisementData(serviceUUIDs: ["FFF0"]))
        // simulateBackpressure + maxWriteWithoutResponseQueue = 3 become writeWithoutResponseQueue: .realistic(capacity: 3).
        let central = MockCentralManager(
            configuration: .init(writeWithoutResponseQueue: .realistic(capacity: 3)), bridge: bridge)
        try await central.scanForPeripherals(withServices: ["FFF0"])
        await bridge.advance(by: .milliseconds(200))
        try await central.connect(peripheral.identifier)
        let characteristic = try await central.discoverAll(for: peripheral.identifier)[0]

        #expect(await central.canSendWriteWithoutResponse(to: peripheral.identifier))
        for _ in 0..<3 { try await central.writeValue(Data([0x01]), for: characteristic, type: .withoutResponse) }
        #expect(await !central.canSendWriteWithoutResponse(to: peripheral.identifier))
        await bridge.advance(by: .milliseconds(100))  // connection events drain the queue
        #expect(await central.canSendWriteWithoutResponse(to: peripheral.identifier))
    }

    // MARK: From Nordic's CoreBluetoothMock

    @Test func aPeripheralSpecBecomesAPeripheralManager() async throws {
        let bridge = MockBLEBridge()
        // CBMPeripheralSpec.simulatePeripheral(proximity: .near).advertising(…).connectable(…).build()
        let blinky = MockPeripheralManager(
            configuration: .init(name: "Blinky", advertisingInterval: .milliseconds(250), rssi: -60), bridge: bridge)
        let service = try await blinky.add(
            GATTService(
                uuid: "00001523-1212-EFDE-1523-785FEABCD123",
                characteristics: [
                    GATTCharacteristic(
                        uuid: "00001524-1212-EFDE-1523-785FEABCD123", properties: [.read, .notify],
                        permissions: .readable),
                    GATTCharacteristic(
                        uuid: "00001525-1212-EFDE-1523-785FEABCD123", properties: .write, permissions: .writeable),
                ]))
        try await blinky.startAdvertising(
            AdvertisementData(localName: "nRF Blinky", serviceUUIDs: ["00001523-1212-EFDE-1523-785FEABCD123"]))
        try await blinky.setValue(Data([0x01]), for: service.characteristics[0])  // the button is pressed

        let central = MockCentralManager(bridge: bridge)
        try await central.scanForPeripherals(withServices: ["00001523-1212-EFDE-1523-785FEABCD123"])
        try await central.connect(blinky.identifier)
        let button = try await central.discoverAll(for: blinky.identifier)[0]
        #expect(try await central.readValue(for: button) == Data([0x01]))
    }

    @Test func simulateHooksKeepTheirNames() async throws {
        let bridge = MockBLEBridge()
        let peripheral = MockPeripheralManager(bridge: bridge)
        try await peripheral.startAdvertising(AdvertisementData(localName: "HRM"))
        let central = MockCentralManager(bridge: bridge)
        try await central.scanForPeripherals(withServices: nil)
        try await central.connect(peripheral.identifier)

        // spec.simulateDisconnection(withError:) — from the peripheral's side:
        await peripheral.simulateDisconnection(of: central.identifier, error: CoreBluetoothError(.connectionTimeout))
        #expect(await !central.isConnected(peripheral.identifier))
        // spec.simulateProximityChange(.outOfRange), spec.simulateReset(), manager.simulatePowerOff():
        await peripheral.simulateProximityChange(.outOfRange)
        await peripheral.simulateProximityChange(.near)
        await peripheral.simulateReset()
        await central.simulateStateChange(.poweredOff)
        #expect(await central.state == .poweredOff)
    }
}
