import BLECBM
import BLECore
import BLEMockKit
import Foundation
import Testing

/// A delegate that keeps every callback of both roles' central side, as text.
final class Journal: NSObject, CBMCentralManagerDelegate, CBMPeripheralDelegate, @unchecked Sendable {
    // @unchecked Sendable: only touched on the main queue.
    var entries: [String] = []
    var discovered: [CBMPeripheral] = []
    var lastError: NSError?
    var rssi: NSNumber?

    func add(_ entry: String, _ error: (any Error)? = nil) {
        entries.append(entry)
        if let error { lastError = error as NSError }
    }

    func centralManagerDidUpdateState(_ central: CBMCentralManager) { add("state \(central.state)") }
    func centralManager(
        _ central: CBMCentralManager, didDiscover peripheral: CBMPeripheral, advertisementData: [String: Any],
        rssi: NSNumber
    ) {
        discovered.append(peripheral)
        peripheral.delegate = self
        add("discover")
    }
    func centralManager(_ central: CBMCentralManager, didConnect peripheral: CBMPeripheral) { add("connect") }
    func centralManager(
        _ central: CBMCentralManager, didDisconnectPeripheral peripheral: CBMPeripheral, error: (any Error)?
    ) {
        add("disconnect" + (error == nil ? "" : " error"), error)
    }
    func centralManager(
        _ central: CBMCentralManager, connectionEventDidOccur event: CBMConnectionEvent, for peripheral: CBMPeripheral
    ) {
        add("connection event \(event == .peerConnected ? "connected" : "disconnected")")
    }
    func peripheral(_ peripheral: CBMPeripheral, didReadRSSI rssi: NSNumber, error: (any Error)?) {
        self.rssi = rssi
        add("rssi", error)
    }
    func peripheral(_ peripheral: CBMPeripheral, didDiscoverServices error: (any Error)?) { add("services", error) }
    func peripheral(_ peripheral: CBMPeripheral, didDiscoverCharacteristicsFor service: CBMService, error: (any Error)?)
    {
        add("characteristics", error)
    }
    func peripheral(
        _ peripheral: CBMPeripheral, didDiscoverDescriptorsFor characteristic: CBMCharacteristic, error: (any Error)?
    ) {
        add("descriptors", error)
    }
    func peripheral(_ peripheral: CBMPeripheral, didUpdateValueFor descriptor: CBMDescriptor, error: (any Error)?) {
        add("descriptor value", error)
    }
    func peripheral(
        _ peripheral: CBMPeripheral, didUpdateValueFor characteristic: CBMCharacteristic, error: (any Error)?
    ) {
        add("value" + (error == nil ? "" : " error"), error)
    }
    func peripheral(
        _ peripheral: CBMPeripheral, didWriteValueFor characteristic: CBMCharacteristic, error: (any Error)?
    ) {
        add("wrote" + (error == nil ? "" : " error"), error)
    }
}

/// A sensor with a read-only characteristic that has a user description, on `bridge`.
func makeSensor(on bridge: MockBLEBridge) async throws -> MockPeripheralManager {
    let sensor = MockPeripheralManager(
        configuration: .init(name: "Sensor", advertisingInterval: .milliseconds(50), rssi: -61), bridge: bridge)
    _ = try await sensor.add(
        GATTService(
            uuid: "180F",
            characteristics: [
                GATTCharacteristic(
                    uuid: "2A19", properties: [.read, .notify], permissions: .readable, value: nil,
                    descriptors: [.userDescription("Battery level")])
            ]))
    try await sensor.startAdvertising(AdvertisementData(localName: "Sensor", serviceUUIDs: ["180F"]))
    return sensor
}

/// A sensor that answers no request (its requests are manual), with one characteristic
/// (2A19) of `properties`, on `bridge`.
func makeSilentSensor(
    on bridge: MockBLEBridge, properties: CharacteristicProperties = [.read, .write, .notify]
) async throws -> MockPeripheralManager {
    let sensor = MockPeripheralManager(configuration: .init(name: "Sensor", requestHandling: .manual), bridge: bridge)
    _ = try await sensor.add(
        GATTService(
            uuid: "180F",
            characteristics: [
                GATTCharacteristic(uuid: "2A19", properties: properties, permissions: [.readable, .writeable])
            ]))
    try await sensor.startAdvertising(AdvertisementData(localName: "Sensor", serviceUUIDs: ["180F"]))
    return sensor
}

/// Runs `body` with a manager and its journal, once the manager is powered on.
@available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
func withCentral<T: Sendable>(
    on bridge: MockBLEBridge,
    _ body: @escaping @MainActor @Sendable (CBMCentralManager, Journal) async throws -> T
) async throws -> T {
    try await bridge.run { @MainActor () -> T in
        let journal = Journal()
        let manager = CBMCentralManager(delegate: journal, queue: nil)
        try await bridge.waitForApp { manager.state == .poweredOn }
        return try await body(manager, journal)
    }
}

/// Scans until the first peripheral is found, then connects to it and discovers everything.
@MainActor
func connectAndDiscover(_ manager: CBMCentralManager, _ journal: Journal, bridge: MockBLEBridge) async throws
    -> CBMPeripheral
{
    try await connectAndDiscover(manager, bridge: bridge) { journal.discovered.first }
}

/// Scans until `found` (which reads the app's delegate) names a peripheral, then connects to it
/// and discovers its first service's characteristics.
@MainActor
func connectAndDiscover(
    _ manager: CBMCentralManager, bridge: MockBLEBridge, found: () -> CBMPeripheral?
) async throws -> CBMPeripheral {
    manager.scanForPeripherals(withServices: nil)
    try await bridge.waitForApp { found() != nil }
    manager.stopScan()
    let peripheral = found()!
    manager.connect(peripheral)
    try await bridge.waitForApp { peripheral.state == .connected }
    peripheral.discoverServices(nil)
    try await bridge.waitForApp { peripheral.services != nil }
    peripheral.discoverCharacteristics(nil, for: peripheral.services![0])
    try await bridge.waitForApp { peripheral.services![0].characteristics != nil }
    return peripheral
}

@Suite(.timeLimit(.minutes(10)))
struct CentralManagerAPITests {
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test func retrieveFindsKnownPeripheralsAndConnectedOnesByService() async throws {
        let bridge = MockBLEBridge(configuration: .realistic(seed: 3))
        let sensor = try await makeSensor(on: bridge)
        let identifier = sensor.identifier
        try await withCentral(on: bridge) { manager, journal in
            // Not discovered yet: unknown to the system.
            #expect(manager.retrievePeripherals(withIdentifiers: [identifier]).isEmpty)
            manager.scanForPeripherals(withServices: nil)
            #expect(manager.isScanning)
            try await bridge.waitForApp { !journal.discovered.isEmpty }
            manager.stopScan()
            #expect(!manager.isScanning)
            let retrieved = manager.retrievePeripherals(withIdentifiers: [identifier])
            #expect(retrieved.count == 1 && retrieved[0] === journal.discovered[0])
            #expect(manager.retrieveConnectedPeripherals(withServices: [CBMUUID(string: "180F")]).isEmpty)
            manager.connect(retrieved[0])
            try await bridge.waitForApp { retrieved[0].state == .connected }
            // Connected, but the system does not know its services until they are discovered
            // (as CoreBluetoothMock answers, CBMCentralManagerMock.swift).
            #expect(manager.retrieveConnectedPeripherals(withServices: [CBMUUID(string: "180F")]).isEmpty)
            retrieved[0].discoverServices([CBMUUID(string: "180F")])
            try await bridge.waitForApp { retrieved[0].services != nil }
            #expect(
                manager.retrieveConnectedPeripherals(withServices: [CBMUUID(string: "180F")]).first === retrieved[0])
            #expect(manager.retrieveConnectedPeripherals(withServices: [CBMUUID(string: "180D")]).isEmpty)
        }
    }

    /// Below powered on, CoreBluetooth ignores a stop of the scan and answers retrievals with
    /// none, logging "API MISUSE" for each (as CoreBluetoothMock does): noted, in order, and a
    /// retrieval of a peripheral the system knows returns none.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(arguments: [false, true])
    func stoppingAScanAndRetrievingBelowPoweredOnAreIgnoredAndNoted(realistic: Bool) async throws {
        let bridge = MockBLEBridge(configuration: realistic ? .realistic(seed: 31) : .init(seed: 31))
        let sensor = try await makeSensor(on: bridge)
        let identifier = sensor.identifier
        try await withCentral(on: bridge) { manager, journal in
            manager.scanForPeripherals(withServices: nil)
            try await bridge.waitForApp { !journal.discovered.isEmpty }
            manager.connect(journal.discovered[0])
            try await bridge.waitForApp { journal.discovered[0].state == .connected }
            journal.discovered[0].discoverServices(nil)
            try await bridge.waitForApp { journal.discovered[0].services != nil }
            await manager.simulatedCentral!.simulateStateChange(.poweredOff)
            try await bridge.waitForApp { manager.state == .poweredOff }
            #expect(manager.apiMisuses.isEmpty)
            manager.stopScan()
            #expect(manager.retrievePeripherals(withIdentifiers: [identifier]).isEmpty)
            #expect(manager.retrieveConnectedPeripherals(withServices: [CBMUUID(string: "180F")]).isEmpty)
            #expect(
                manager.apiMisuses == [
                    "stopScan: the manager is not powered on",
                    "retrievePeripherals(withIdentifiers:): the manager is not powered on (none returned)",
                    "retrieveConnectedPeripherals(withServices:): the manager is not powered on (none returned)",
                ])
            // Powered on again, the same calls are answered and nothing more is noted.
            await manager.simulatedCentral!.simulateStateChange(.poweredOn)
            try await bridge.waitForApp { manager.state == .poweredOn }
            manager.stopScan()
            #expect(manager.retrievePeripherals(withIdentifiers: [identifier]).map(\.identifier) == [identifier])
            #expect(manager.apiMisuses.count == 3)
        }
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test func cancellingAConnectionReportsADisconnectionWithNoError() async throws {
        let bridge = MockBLEBridge(configuration: .realistic(seed: 4))
        _ = try await makeSensor(on: bridge)
        let entries = try await withCentral(on: bridge) { manager, journal in
            let peripheral = try await connectAndDiscover(manager, journal, bridge: bridge)
            manager.cancelPeripheralConnection(peripheral)
            #expect(peripheral.state == .disconnecting)
            try await bridge.waitForApp { peripheral.state == .disconnected }
            #expect(peripheral.services == nil)
            return journal.entries
        }
        #expect(entries.last == "disconnect")
    }

    /// CoreBluetooth ignores a call naming a peripheral object another manager owns: the owner's
    /// connection and its object's state are untouched (a cancel used to leave the object
    /// `disconnecting` for ever, the link up and every later request on it refused).
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(arguments: [false, true])
    func anotherManagersPeripheralIsNotCancelledOrConnectedAndTheCallIsNoted(realistic: Bool) async throws {
        let bridge = MockBLEBridge(configuration: realistic ? .realistic(seed: 61) : .init(seed: 61))
        _ = try await makeSensor(on: bridge)
        let (entries, misuses) = try await withCentral(on: bridge) { manager, journal in
            let peripheral = try await connectAndDiscover(manager, journal, bridge: bridge)
            let otherJournal = Journal()
            let other = CBMCentralManager(delegate: otherJournal, queue: nil)
            try await bridge.waitForApp { other.state == .poweredOn }
            other.cancelPeripheralConnection(peripheral)
            other.connect(peripheral)
            #expect(peripheral.state == .connected)
            // The owner's link is still up: a read goes through.
            let level = peripheral.services![0].characteristics![0]
            peripheral.readValue(for: level)
            try await bridge.waitForApp { journal.entries.last == "value" }
            #expect(peripheral.state == .connected)
            #expect(otherJournal.entries == ["state poweredOn"])
            return (journal.entries, other.apiMisuses)
        }
        #expect(!entries.contains { $0.hasPrefix("disconnect") })
        #expect(misuses.count == 2)
        #expect(misuses.first?.hasPrefix("cancelPeripheralConnection: ") == true)
        #expect(misuses.first?.contains("is not one of this manager's current peripherals") == true)
        #expect(misuses.last?.hasPrefix("connect: ") == true)
        #expect(misuses.last?.contains("is not one of this manager's current peripherals") == true)
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test func rssiAndDescriptorsArriveWithCoreBluetoothsTypes() async throws {
        let bridge = MockBLEBridge(configuration: .init(seed: 5))
        _ = try await makeSensor(on: bridge)
        try await withCentral(on: bridge) { manager, journal in
            let peripheral = try await connectAndDiscover(manager, journal, bridge: bridge)
            peripheral.readRSSI()
            try await bridge.waitForApp { journal.rssi != nil }
            #expect(journal.rssi == -61)
            #expect(peripheral.rssi == -61)
            let level = peripheral.services![0].characteristics![0]
            peripheral.discoverDescriptors(for: level)
            try await bridge.waitForApp { level.descriptors != nil }
            let uuids = level.descriptors!.map(\.uuid.uuidString)
            #expect(uuids.contains("2901") && uuids.contains("2902"))
            for descriptor in level.descriptors! { peripheral.readValue(for: descriptor) }
            try await bridge.waitForApp { journal.entries.filter { $0 == "descriptor value" }.count == 2 }
            let userDescription = level.descriptors!.first { $0.uuid == CBMUUID(string: "2901") }
            let configuration = level.descriptors!.first { $0.uuid == CBMUUID(string: "2902") }
            #expect(userDescription?.value as? String == "Battery level")
            #expect((configuration?.value as? NSNumber)?.intValue == 0)
        }
    }

    /// A delegate app with no timeout of its own, reading from a peripheral that never answers:
    /// ATT's transaction timeout ends the wait 30 s after the request, the link drops, and the
    /// app hears of the disconnection with no error, as on iOS (LinkTiming.attTransactionTimeout).
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(arguments: [false, true])
    func aReadNobodyAnswersEndsWithADisconnectionAfter30Seconds(realistic: Bool) async throws {
        let bridge = MockBLEBridge(configuration: realistic ? .realistic(seed: 6) : .init(seed: 6))
        _ = try await makeSilentSensor(on: bridge, properties: .read)
        let (entries, waited, error) = try await withCentral(on: bridge) { manager, journal in
            let peripheral = try await connectAndDiscover(manager, journal, bridge: bridge)
            let start = await bridge.now
            let count = journal.entries.count
            peripheral.readValue(for: peripheral.services![0].characteristics![0])
            try await bridge.waitForApp { peripheral.state == .disconnected }
            return (Array(journal.entries[count...]), await bridge.now.offset - start.offset, journal.lastError)
        }
        // The read gets no callback of its own, and the disconnection comes without an error,
        // as on iOS (react-native-ble-plx issue 566: an unanswered discoverServices, then only
        // didDisconnect with no error 30.001 s later).
        #expect(entries == ["disconnect"], "\(entries)")
        #expect(error == nil)
        #expect(waited >= .seconds(30) && waited < .seconds(31), "\(waited)")
    }

    /// iOS reports a link that goes away with the disconnection alone: the operations still
    /// pending on it never complete (a write waiting for its response when the peer drops the
    /// link gets no didWriteValueFor, seen on devices, google/nearby pull request 4524; Apple's
    /// cancelPeripheralConnection documentation: pending commands may not complete). So an app
    /// that waits for such a callback waits for ever on a device, and in the kit too.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(arguments: [false, true])
    func operationsPendingWhenTheLinkGoesGetNoCallbackOnlyTheDisconnectionIsReported(realistic: Bool)
        async throws
    {
        let bridge = MockBLEBridge(configuration: realistic ? .realistic(seed: 7) : .init(seed: 7))
        let sensor = try await makeSilentSensor(on: bridge)
        let (dropped, cancelled, error, requests) = try await withCentral(on: bridge) { manager, journal in
            // The peripheral drops the link while a read, a write and a subscription wait for
            // their answers (the peripheral answers nothing: its requests are manual).
            let peripheral = try await connectAndDiscover(manager, journal, bridge: bridge)
            let characteristic = peripheral.services![0].characteristics![0]
            var count = journal.entries.count
            peripheral.readValue(for: characteristic)
            peripheral.writeValue(Data([1]), for: characteristic, type: .withResponse)
            peripheral.setNotifyValue(true, for: characteristic)
            await bridge.waitUntil { bridge in bridge.log.contains { $0.kind == .readRequest } }
            let central = manager.simulatedCentral!.identifier
            await sensor.simulateDisconnection(of: central, error: CoreBluetoothError(.connectionTimeout))
            try await bridge.waitForApp { peripheral.state == .disconnected }
            try await bridge.clock.sleep(for: .seconds(40))
            let dropped = Array(journal.entries[count...])
            let error = journal.lastError
            // The app cancels the connection while discovery and a read wait.
            _ = try await connectAndDiscover(manager, journal, bridge: bridge)
            let again = peripheral.services![0].characteristics![0]
            count = journal.entries.count
            peripheral.readValue(for: again)
            peripheral.discoverDescriptors(for: again)
            manager.cancelPeripheralConnection(peripheral)
            try await bridge.waitForApp { peripheral.state == .disconnected }
            try await bridge.clock.sleep(for: .seconds(40))
            return (
                dropped, Array(journal.entries[count...]), error,
                await bridge.log.filter { $0.kind == .readRequest }.count
            )
        }
        #expect(dropped == ["disconnect error"])
        #expect(error?.domain == CBMErrorDomain)
        #expect(error?.code == CBMError.Code.connectionTimeout.rawValue)
        #expect(cancelled == ["disconnect"])
        // The reads were pending, not refused: the first reached the peripheral, and so did the
        // second in fast mode (in realistic mode it was still in the link's queue).
        #expect(requests == (realistic ? 1 : 2))
    }

    /// A read answered at the instant Bluetooth turns off came before it in the simulation: the
    /// app hears the value, then the state change, on every run (whether it did depended on
    /// whether the app's queue reached the callback before the bridge handled the power-off).
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test func aReadAnsweredAsBluetoothTurnsOffReachesTheAppBeforeTheStateChangeOnEveryRun() async throws {
        var outcomes = Set<[String]>()
        for _ in 0..<20 {
            let bridge = MockBLEBridge(configuration: .init(seed: 5))
            _ = try await makeSensor(on: bridge)
            outcomes.insert(
                try await withCentral(on: bridge) { manager, journal in
                    let peripheral = try await connectAndDiscover(manager, journal, bridge: bridge)
                    let count = journal.entries.count
                    peripheral.readValue(for: peripheral.services![0].characteristics![0])
                    await bridge.simulate(.centralState(manager.simulatedCentral!.identifier, .poweredOff))
                    try await bridge.waitForApp { manager.state == .poweredOff }
                    return Array(journal.entries[count...])
                })
        }
        #expect(outcomes == [["value", "state poweredOff"]])
    }

    /// CoreBluetooth's header: only a state below powered off (resetting, unsupported,
    /// unauthorized, unknown) makes the manager's peripheral objects invalid. Turned off and on,
    /// Bluetooth leaves them the manager's, disconnected: an app that keeps its peripheral and
    /// connects it again once Bluetooth is back reconnects (its connect used to be refused as a
    /// misuse, and the app waited for ever).
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(arguments: [false, true])
    func aPeripheralKeptThroughBluetoothOffAndOnConnectsAgain(realistic: Bool) async throws {
        let bridge = MockBLEBridge(configuration: realistic ? .realistic(seed: 62) : .init(seed: 62))
        _ = try await makeSensor(on: bridge)
        let (entries, misuses) = try await withCentral(on: bridge) { manager, journal in
            let peripheral = try await connectAndDiscover(manager, journal, bridge: bridge)
            let central = manager.simulatedCentral!.identifier
            await bridge.simulate(.centralState(central, .poweredOff))
            try await bridge.waitForApp { manager.state == .poweredOff }
            #expect(peripheral.state == .disconnected)
            #expect(peripheral.services == nil)
            await bridge.simulate(.centralState(central, .poweredOn))
            try await bridge.waitForApp { manager.state == .poweredOn }
            #expect(manager.retrievePeripherals(withIdentifiers: [peripheral.identifier]).first === peripheral)
            manager.connect(peripheral)
            try await bridge.waitForApp { peripheral.state == .connected }
            peripheral.discoverServices(nil)
            try await bridge.waitForApp { peripheral.services != nil }
            return (journal.entries, manager.apiMisuses)
        }
        #expect(misuses.isEmpty)
        #expect(entries.filter { $0 == "connect" }.count == 2)
        #expect(!entries.contains { $0.hasPrefix("disconnect") })
    }

    /// Below powered off the objects are invalid: the kept one is no longer the manager's.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(arguments: [CBMManagerState.unauthorized, .resetting])
    func aPeripheralKeptThroughAStateBelowPoweredOffIsInvalid(state: CBMManagerState) async throws {
        let bridge = MockBLEBridge(configuration: .init(seed: 63))
        _ = try await makeSensor(on: bridge)
        let misuses = try await withCentral(on: bridge) { manager, journal in
            let peripheral = try await connectAndDiscover(manager, journal, bridge: bridge)
            let central = manager.simulatedCentral!.identifier
            await bridge.simulate(.centralState(central, state == .unauthorized ? .unauthorized : .resetting))
            try await bridge.waitForApp { manager.state == state }
            await bridge.simulate(.centralState(central, .poweredOn))
            try await bridge.waitForApp { manager.state == .poweredOn }
            let again = try #require(manager.retrievePeripherals(withIdentifiers: [peripheral.identifier]).first)
            #expect(again !== peripheral)
            manager.connect(peripheral)
            try await bridge.waitForApp { manager.apiMisuses.count == 1 }
            return manager.apiMisuses
        }
        #expect(misuses.first?.contains("is not one of this manager's current peripherals") == true)
    }

    /// The stall of an app that waits for the callback of a read a silent sensor has not
    /// answered when `cut` (given the central's identifier and the sensor) ends it, on a new
    /// bridge from `seed`; with the name the report gives the central, and the sensor's.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    static func stallOfAReadPending(
        realistic: Bool, seed: UInt64,
        cutBy cut: @escaping @Sendable (MockBLEBridge, UUID, MockPeripheralManager) async -> Void
    ) async throws -> (stall: MockBLEBridge.Stall, central: String, sensor: String) {
        let bridge = MockBLEBridge(configuration: realistic ? .realistic(seed: seed) : .init(seed: seed))
        let sensor = try await makeSilentSensor(on: bridge)
        // (Written in the run's body, read once the run has ended.)
        nonisolated(unsafe) var central = ""
        let stall = try await #require(throws: MockBLEBridge.Stall.self) {
            try await withCentral(on: bridge) { manager, journal in
                let identifier = manager.simulatedCentral!.identifier
                central = String(identifier.uuidString.prefix(8))
                let peripheral = try await connectAndDiscover(manager, journal, bridge: bridge)
                peripheral.readValue(for: peripheral.services![0].characteristics![0])
                await bridge.waitUntil { bridge in bridge.log.contains { $0.kind == .readRequest } }
                await cut(bridge, identifier, sensor)
                try await bridge.waitForApp { journal.entries.contains { $0.hasPrefix("value") } }
            }
        }
        return (stall, central, String(sensor.identifier.uuidString.prefix(8)))
    }

    /// A read pending when Bluetooth turns off gets no callback (the app hears of the state
    /// change): an app waiting for it stalls, and the stall says why.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(arguments: [false, true], [CBMManagerState.poweredOff, .resetting])
    func aReadPendingWhenBluetoothTurnsOffIsNamedInTheStall(realistic: Bool, state: CBMManagerState) async throws {
        let (stalled, central, sensor) = try await Self.stallOfAReadPending(realistic: realistic, seed: 15) {
            bridge, central, _ in
            await bridge.simulate(.centralState(central, state == .poweredOff ? .poweredOff : .resetting))
        }
        #expect(
            stalled.unansweredCalls == [
                "CBMCentralManager \(central), unanswered: readValue on peripheral \(sensor): Bluetooth left "
                    + "poweredOn first (turned off, reset or refused: CoreBluetooth calls back only the state change)"
            ])
    }

    /// An app that waits for the callback of a read pending when the link dropped waits for a
    /// callback no device sends: the run ends with a stall that says so, with the seed.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(arguments: [false, true])
    func waitingForTheCallbackOfAReadTheDropEndedIsReportedAsAStall(realistic: Bool) async throws {
        let (stalled, central, sensor) = try await Self.stallOfAReadPending(realistic: realistic, seed: 8) {
            _, central, sensor in
            await sensor.simulateDisconnection(of: central)
        }
        #expect(stalled.reason == .nothingScheduled)
        #expect(stalled.seed == 8)
        #expect(stalled.description.contains("waitForApp"), "\(stalled)")
        // The stall says why the callback never came.
        #expect(
            stalled.unansweredCalls == [
                "CBMCentralManager \(central), unanswered: readValue on peripheral \(sensor): the link went down "
                    + "first (CoreBluetooth calls back only didDisconnectPeripheral)"
            ])
    }

    /// The most common CoreBluetooth mistake: scanning as soon as the manager is made, before it
    /// is powered on. CoreBluetooth ignores the scan and nothing is ever discovered; the stall
    /// says which call was ignored, not only what the test waited for.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(arguments: [false, true])
    func anAppThatScansBeforePoweredOnStallsAndTheStallNamesTheIgnoredScan(realistic: Bool) async throws {
        let bridge = MockBLEBridge(configuration: realistic ? .realistic(seed: 13) : .init(seed: 13))
        _ = try await makeSensor(on: bridge)
        // (Written in the run's body, read once the run has ended.)
        nonisolated(unsafe) var central = ""
        let stalled = try await #require(throws: MockBLEBridge.Stall.self) {
            try await bridge.run { @MainActor in
                let journal = Journal()
                let manager = CBMCentralManager(delegate: journal, queue: nil)
                central = String(manager.simulatedCentral!.identifier.uuidString.prefix(8))
                manager.scanForPeripherals(withServices: nil)
                try await bridge.waitForApp { !journal.discovered.isEmpty }
            }
        }
        #expect(stalled.reason == .nothingScheduled)
        #expect(
            stalled.unansweredCalls == [
                "CBMCentralManager \(central), ignored: scanForPeripherals: the manager is not powered on"
            ])
        #expect(
            stalled.description.contains(
                "Calls the app made that got no callback, as with CoreBluetooth:\n"
                    + "- CBMCentralManager \(central), ignored: scanForPeripherals: the manager is not powered on\n"
                    + "Seed 13"),
            "\(stalled)")
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test func aStallWithNoUnansweredCallsSaysNothingOfThem() async throws {
        let bridge = MockBLEBridge(configuration: .init(seed: 14))
        _ = try await makeSensor(on: bridge)
        let stalled = try await #require(throws: MockBLEBridge.Stall.self) {
            try await withCentral(on: bridge) { manager, journal in
                try await bridge.waitForApp { journal.discovered.count == 1 }
            }
        }
        #expect(stalled.unansweredCalls.isEmpty)
        #expect(!stalled.description.contains("Calls the app made"), "\(stalled)")
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test func writingAReadOnlyCharacteristicFailsWithATTWriteNotPermitted() async throws {
        let bridge = MockBLEBridge(configuration: .init(seed: 6))
        _ = try await makeSensor(on: bridge)
        let error = try await withCentral(on: bridge) { manager, journal in
            let peripheral = try await connectAndDiscover(manager, journal, bridge: bridge)
            peripheral.writeValue(Data([1]), for: peripheral.services![0].characteristics![0], type: .withResponse)
            try await bridge.waitForApp { journal.entries.last == "wrote error" }
            return journal.lastError
        }
        #expect(error?.domain == CBMATTErrorDomain)
        #expect(error?.code == CBMATTError.Code.writeNotPermitted.rawValue)
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(arguments: [false, true])
    func aWriteWithoutResponseToACharacteristicThatDoesNotAllowItIsNotSentAndIsNoted(realistic: Bool) async throws {
        let bridge = MockBLEBridge(configuration: realistic ? .realistic(seed: 9) : .init(seed: 9))
        _ = try await makeSilentSensor(on: bridge, properties: [.read, .write])
        let (misuses, requests) = try await withCentral(on: bridge) { manager, journal -> ([String], Int) in
            let peripheral = try await connectAndDiscover(manager, journal, bridge: bridge)
            let characteristic = peripheral.services![0].characteristics![0]
            peripheral.writeValue(Data([1]), for: characteristic, type: .withoutResponse)
            // A write with response after it is the peripheral's first request.
            peripheral.writeValue(Data([2]), for: characteristic, type: .withResponse)
            await bridge.waitUntil { $0.log.contains { $0.kind == .writeRequest } }
            return (manager.apiMisuses, await bridge.log.filter { $0.kind == .writeRequest }.count)
        }
        #expect(
            misuses == [
                "writeValue(_:for:type: .withoutResponse): characteristic 2A19 does not allow writes without "
                    + "response; not sent"
            ])
        #expect(requests == 1)
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(arguments: [false, true])
    func connectingAPeripheralAlreadyConnectedGivesNoSecondDidConnectAndIsNoted(realistic: Bool) async throws {
        let bridge = MockBLEBridge(configuration: realistic ? .realistic(seed: 12) : .init(seed: 12))
        let sensor = try await makeSensor(on: bridge)
        let (entries, misuses) = try await withCentral(on: bridge) { manager, journal in
            let peripheral = try await connectAndDiscover(manager, journal, bridge: bridge)
            manager.connect(peripheral)
            // An RSSI read after it: its callback comes once the connect has been applied.
            peripheral.readRSSI()
            try await bridge.waitForApp { journal.rssi != nil }
            #expect(peripheral.state == .connected)
            // Connecting again after the disconnection the app has heard is a new connection.
            manager.cancelPeripheralConnection(peripheral)
            try await bridge.waitForApp { peripheral.state == .disconnected }
            manager.connect(peripheral)
            try await bridge.waitForApp { peripheral.state == .connected }
            return (journal.entries.filter { ["connect", "disconnect"].contains($0) }, manager.apiMisuses)
        }
        #expect(entries == ["connect", "disconnect", "connect"])
        #expect(
            misuses == [
                "connect: \(sensor.identifier) is already connected to this manager; no second didConnect follows"
            ])
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test func poweringOffReportsTheStateAndDropsTheLinkAndLaterCallsAreMisuses() async throws {
        let bridge = MockBLEBridge(configuration: .init(seed: 7))
        _ = try await makeSensor(on: bridge)
        let (entries, misuses) = try await withCentral(on: bridge) { manager, journal in
            let peripheral = try await connectAndDiscover(manager, journal, bridge: bridge)
            await manager.simulatedCentral!.simulateStateChange(.poweredOff)
            try await bridge.waitForApp { manager.state == .poweredOff && peripheral.state == .disconnected }
            manager.scanForPeripherals(withServices: nil)
            manager.connect(peripheral)
            peripheral.readRSSI()
            #expect(!manager.isScanning)
            return (journal.entries, manager.apiMisuses)
        }
        #expect(entries.contains("state poweredOff"))
        // The link went with Bluetooth: the state change says so, and the peripheral object is
        // invalid (no disconnection callback, as in CoreBluetooth).
        #expect(!entries.contains { $0.hasPrefix("disconnect") })
        #expect(misuses.count == 3)
        #expect(misuses[0].hasPrefix("scanForPeripherals"))
        #expect(misuses[1].hasPrefix("connect"))
        #expect(misuses[2].hasPrefix("readRSSI"))
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test func authorizationIsSetPerBridge() async throws {
        let denied = MockBLEBridge(seed: 8)
        try await withCentral(on: denied) { manager, _ in
            #expect(CBMCentralManager.authorization == .allowedAlways)
            manager.simulateAuthorization(.denied)
            #expect(manager.authorization == .denied)
            #expect(CBMManager.authorization == .denied)
        }
        let other = MockBLEBridge(seed: 8)
        try await withCentral(on: other) { manager, _ in
            #expect(manager.authorization == .allowedAlways)
        }
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(arguments: [false, true])
    func scanningWithDuplicatesReportsEveryAdvertisement(allowDuplicates: Bool) async throws {
        let bridge = MockBLEBridge(configuration: .realistic(seed: 9))
        _ = try await makeSensor(on: bridge)
        let discoveries = try await withCentral(on: bridge) { manager, journal in
            manager.scanForPeripherals(
                withServices: [CBMUUID(string: "180F")],
                options: [CBMCentralManagerScanOptionAllowDuplicatesKey: NSNumber(value: allowDuplicates)])
            try await bridge.waitForApp { !journal.discovered.isEmpty }
            // A second of advertising at 50 ms.
            await bridge.advance(by: .seconds(1))
            manager.stopScan()
            return journal.discovered
        }
        if allowDuplicates {
            #expect(discoveries.count > 5)
            #expect(discoveries.allSatisfy { $0 === discoveries[0] })
        } else {
            #expect(discoveries.count == 1)
        }
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test func connectionEventsReachARegisteredManager() async throws {
        let bridge = MockBLEBridge(configuration: .init(seed: 10))
        let sensor = try await makeSensor(on: bridge)
        let identifier = sensor.identifier
        let entries = try await withCentral(on: bridge) { manager, journal in
            #expect(CBMCentralManager.supports(.extendedScanAndConnect))
            manager.registerForConnectionEvents(options: [.peripheralUUIDs: [identifier]])
            _ = try await connectAndDiscover(manager, journal, bridge: bridge)
            try await bridge.waitForApp { journal.entries.contains("connection event connected") }
            return journal.entries
        }
        #expect(entries.contains("connection event connected"))
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test func aCachedPeripheralIsRetrievableAndConnectsWithoutScanning() async throws {
        let bridge = MockBLEBridge(configuration: .realistic(seed: 11))
        let sensor = try await makeSensor(on: bridge)
        await sensor.simulateCaching()
        let identifier = sensor.identifier
        try await withCentral(on: bridge) { manager, journal in
            let retrieved = manager.retrievePeripherals(withIdentifiers: [
                identifier, UUID(uuidString: "00000000-0000-0000-0000-000000000001")!, identifier,
            ])
            #expect(retrieved.map(\.identifier) == [identifier])  // each identifier once
            #expect(retrieved[0].name == "Sensor")
            manager.connect(retrieved[0])
            try await bridge.waitForApp { retrieved[0].state == .connected }
            #expect(journal.entries.last == "connect")
            #expect(!journal.entries.contains("discover"))
            // Powered off, CoreBluetooth retrieves nothing.
            await manager.simulatedCentral!.simulateStateChange(.poweredOff)
            try await bridge.waitForApp { manager.state == .poweredOff }
            #expect(manager.retrievePeripherals(withIdentifiers: [identifier]).isEmpty)
            #expect(manager.retrieveConnectedPeripherals(withServices: [CBMUUID(string: "180F")]).isEmpty)
        }
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test func aPeripheralConnectedToTheSystemIsRetrievableAndConnectsWithoutAdvertising() async throws {
        let bridge = MockBLEBridge(configuration: .realistic(seed: 12))
        let sensor = try await makeSensor(on: bridge)
        await sensor.stopAdvertising()
        await sensor.simulateConnectionBySystem()
        let stillListed = try await withCentral(on: bridge) { manager, _ in
            let connected = manager.retrieveConnectedPeripherals(withServices: [CBMUUID(string: "180F")])
            #expect(connected.map(\.identifier) == [sensor.identifier])
            #expect(connected[0].state == .disconnected)
            manager.connect(connected[0])
            try await bridge.waitForApp { connected[0].state == .connected }
            connected[0].discoverServices(nil)
            try await bridge.waitForApp { connected[0].services != nil }
            await sensor.simulateConnectionBySystem(false)
            // The app's own link remains (its services discovered).
            return manager.retrieveConnectedPeripherals(withServices: [CBMUUID(string: "180F")]).count
        }
        #expect(stillListed == 1)
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test func callbacksArriveOnTheQueueTheAppGave() async throws {
        let bridge = MockBLEBridge(seed: 13)
        _ = try await makeSensor(on: bridge)
        let key = DispatchSpecificKey<String>()
        let queue = DispatchQueue(label: "app")
        queue.setSpecific(key: key, value: "app")
        let labels = try await bridge.run { () -> [String] in
            let delegate = QueueCheck(key: key)
            let manager = CBMCentralManager(delegate: delegate, queue: queue)
            try await bridge.waitForApp { delegate.labels.count >= 1 }
            queue.sync { manager.scanForPeripherals(withServices: nil) }
            try await bridge.waitForApp { delegate.labels.count >= 2 }
            return delegate.labels
        }
        #expect(labels.count >= 2)
        #expect(labels.allSatisfy { $0 == "app" })
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test func ancsAuthorizationIsReportedOnThePeripheral() async throws {
        let bridge = MockBLEBridge(seed: 14)
        let watch = MockPeripheralManager(configuration: .init(requestsANCSAuthorization: true), bridge: bridge)
        try await watch.startAdvertising(AdvertisementData(localName: "Watch"))
        let authorized = try await bridge.run { @MainActor () -> [Bool] in
            let journal = Journal()
            let manager = CBMCentralManager(
                bridge: bridge, delegate: journal, queue: nil, configuration: .init(grantsANCSAuthorization: true))
            try await bridge.waitForApp { manager.state == .poweredOn }
            manager.scanForPeripherals(withServices: nil)
            try await bridge.waitForApp { !journal.discovered.isEmpty }
            let peripheral = journal.discovered[0]
            #expect(!peripheral.ancsAuthorized)
            manager.connect(peripheral)
            try await bridge.waitForApp { peripheral.ancsAuthorized }
            let granted = peripheral.ancsAuthorized
            await manager.simulatedCentral!.simulateANCSAuthorizationChange(false, for: peripheral.identifier)
            try await bridge.waitForApp { !peripheral.ancsAuthorized }
            return [granted, peripheral.ancsAuthorized]
        }
        #expect(authorized == [true, false])
    }
}

/// A delegate that notes, under a lock, which queue each callback ran on.
final class QueueCheck: NSObject, CBMCentralManagerDelegate, @unchecked Sendable {
    // @unchecked Sendable: `seen` is only read and written with `lock` held.
    private let lock = NSLock()
    private var seen: [String] = []
    let key: DispatchSpecificKey<String>

    init(key: DispatchSpecificKey<String>) { self.key = key }

    var labels: [String] {
        lock.lock()
        defer { lock.unlock() }
        return seen
    }

    private func note() {
        let label = DispatchQueue.getSpecific(key: key) ?? "elsewhere"
        lock.lock()
        seen.append(label)
        lock.unlock()
    }

    func centralManagerDidUpdateState(_ central: CBMCentralManager) { note() }

    func centralManager(
        _ central: CBMCentralManager, didDiscover peripheral: CBMPeripheral, advertisementData: [String: Any],
        rssi: NSNumber
    ) {
        note()
    }
}

extension CentralManagerAPITests {
    /// A delegate app scanning for a sensor that went out of range before the app started waits
    /// for a discovery that cannot come (a scan does not time out): the stall says why.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(
        "A delegate app scanning for a sensor out of range stalls with a report that says it is out of range",
        arguments: [false, true])
    func aScanForASensorOutOfRangeIsExplainedInTheStall(realistic: Bool) async throws {
        let bridge = MockBLEBridge(configuration: realistic ? .realistic(seed: 23) : .init(seed: 23))
        let sensor = try await makeSilentSensor(on: bridge)
        await sensor.simulateProximityChange(.outOfRange)
        let stalled = try await #require(throws: MockBLEBridge.Stall.self) {
            try await bridge.run(timeLimit: .seconds(60), stallPatience: .zero) { @MainActor in
                let journal = Journal()
                let manager = CBMCentralManager(delegate: journal, queue: nil)
                try await bridge.waitForApp { manager.state == .poweredOn }
                manager.scanForPeripherals(withServices: [CBMUUID(string: "180F")])
                try await bridge.waitForApp { !journal.discovered.isEmpty }
                withExtendedLifetime(manager) {}
            }
        }
        let hint = try #require(stalled.hints.first { $0.contains("has scanned") }, "\(stalled)")
        #expect(hint.contains("for services 180F since "), "\(hint)")
        #expect(
            hint.contains("discovered nothing: peripheral \(sensor.identifier.uuidString.prefix(8)) is out of range"),
            "\(hint)")
    }
}
