import BLECBM
import BLEMockKit
import Foundation
import Testing

/// A spec delegate that refuses what it is told to and notes what it was asked.
final class Gatekeeper: CBMPeripheralSpecDelegate {
    private let lock = NSLock()
    private var notes: [String] = []
    let refuse: Set<String>

    init(refusing refuse: Set<String> = []) { self.refuse = refuse }

    var asked: [String] {
        lock.lock()
        defer { lock.unlock() }
        return notes
    }

    private func note(_ what: String) -> Result<Void, Error> {
        lock.lock()
        notes.append(what)
        lock.unlock()
        return refuse.contains(what) ? .failure(CBMATTError(.insufficientAuthorization)) : .success(())
    }

    func peripheralDidReceiveConnectionRequest(_ peripheral: CBMPeripheralSpec) -> Result<Void, Error> {
        note("connect").mapError { _ in CBMError(.connectionFailed) }
    }

    func peripheral(_ peripheral: CBMPeripheralSpec, didDisconnect error: Error?) { _ = note("disconnected") }

    func peripheral(_ peripheral: CBMPeripheralSpec, didReceiveServiceDiscoveryRequest serviceUUIDs: [CBMUUID]?)
        -> Result<Void, Error>
    { note("services") }

    func peripheral(
        _ peripheral: CBMPeripheralSpec, didReceiveCharacteristicsDiscoveryRequest characteristicUUIDs: [CBMUUID]?,
        for service: CBMServiceMock
    ) -> Result<Void, Error> { note("characteristics") }

    func peripheral(
        _ peripheral: CBMPeripheralSpec, didReceiveDescriptorsDiscoveryRequestFor characteristic: CBMCharacteristicMock
    ) -> Result<Void, Error> { note("descriptors") }

    func peripheral(_ peripheral: CBMPeripheralSpec, didReceiveReadRequestFor descriptor: CBMDescriptorMock)
        -> Result<Data, Error>
    { note("read descriptor").map { Data("Level".utf8) } }

    func peripheral(
        _ peripheral: CBMPeripheralSpec, didReceiveSetNotifyRequest enabled: Bool,
        for characteristic: CBMCharacteristicMock
    ) -> Result<Void, Error> { note("notify \(enabled)") }

    func peripheral(
        _ peripheral: CBMPeripheralSpec, didUpdateNotificationStateFor characteristic: CBMCharacteristicMock,
        error: Error?
    ) { _ = note("notifying") }
}

/// A central that goes as far as the spec lets it: connect, discover, describe, subscribe.
final class Explorer: NSObject, CBMCentralManagerDelegate, CBMPeripheralDelegate {
    var events: [String] = []
    var errors: [NSError] = []
    /// The peripheral found (kept, as an app must: CoreBluetooth cancels the connection of a
    /// peripheral nobody keeps).
    var peripheral: CBMPeripheral?

    private func add(_ event: String, _ error: Error?) {
        events.append(event + (error == nil ? "" : " failed"))
        if let error { errors.append(error as NSError) }
    }

    func centralManagerDidUpdateState(_ central: CBMCentralManager) {
        if central.state == .poweredOn { central.scanForPeripherals(withServices: nil) }
    }

    func centralManager(
        _ central: CBMCentralManager, didDiscover peripheral: CBMPeripheral, advertisementData: [String: Any],
        rssi: NSNumber
    ) {
        guard events.isEmpty else { return }
        events.append("found")
        central.stopScan()
        self.peripheral = peripheral
        peripheral.delegate = self
        central.connect(peripheral)
    }

    func centralManager(_ central: CBMCentralManager, didFailToConnect peripheral: CBMPeripheral, error: Error?) {
        add("connect", error ?? CBMError(.unknown))
    }

    func centralManager(_ central: CBMCentralManager, didConnect peripheral: CBMPeripheral) {
        add("connect", nil)
        peripheral.discoverServices(nil)
    }

    func peripheral(_ peripheral: CBMPeripheral, didDiscoverServices error: Error?) {
        add("services", error)
        for service in peripheral.services ?? [] { peripheral.discoverCharacteristics(nil, for: service) }
    }

    func peripheral(_ peripheral: CBMPeripheral, didDiscoverCharacteristicsFor service: CBMService, error: Error?) {
        add("characteristics", error)
        for characteristic in service.characteristics ?? [] {
            peripheral.discoverDescriptors(for: characteristic)
            peripheral.setNotifyValue(true, for: characteristic)
        }
    }

    func peripheral(
        _ peripheral: CBMPeripheral, didDiscoverDescriptorsFor characteristic: CBMCharacteristic, error: Error?
    ) {
        add("descriptors", error)
        for descriptor in characteristic.descriptors ?? [] where descriptor.uuid == CBMUUID(string: "2901") {
            peripheral.readValue(for: descriptor)
        }
    }

    func peripheral(_ peripheral: CBMPeripheral, didUpdateValueFor descriptor: CBMDescriptor, error: Error?) {
        // A spec's descriptor value is the delegate's Data, as CoreBluetoothMock hands it over.
        add("descriptor \((descriptor.value as? Data).map { String(decoding: $0, as: UTF8.self) } ?? "?")", error)
    }

    func peripheral(
        _ peripheral: CBMPeripheral, didUpdateNotificationStateFor characteristic: CBMCharacteristic, error: Error?
    ) {
        add("notifying \(characteristic.isNotifying)", error)
    }
}

@Suite(.timeLimit(.minutes(10)), .finishesOwnBridges)
struct SpecDelegateTests {
    static func spec(_ delegate: Gatekeeper) -> CBMPeripheralSpec {
        let level = CBMCharacteristicMock(
            type: CBMUUID(string: "2A19"), properties: [.read, .notify],
            descriptors: CBMDescriptorMock(type: CBMUUID(string: "2901")), CBMCCCDescriptorMock())
        return CBMPeripheralSpec.simulatePeripheral(proximity: .near)
            .advertising(advertisementData: [CBMAdvertisementDataLocalNameKey: "Battery"], withInterval: 0.1)
            .connectable(
                name: "Battery",
                services: [CBMServiceMock(type: CBMUUID(string: "180F"), primary: true, characteristics: level)],
                delegate: delegate
            )
            .build()
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    func explore(_ delegate: Gatekeeper, until done: @escaping (Explorer) -> Bool) async throws -> Explorer {
        let bridge = ownBridge(configuration: .realistic(seed: 70))
        let spec = Self.spec(delegate)
        return try await bridge.run { @MainActor () -> Explorer in
            CBMCentralManagerMock.simulatePeripherals([spec])
            let explorer = Explorer()
            let manager = CBMCentralManagerMock(delegate: explorer, queue: nil)
            try await bridge.waitForApp { done(explorer) }
            _ = manager
            return explorer
        }
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test func theSpecsDelegateIsAskedAtEachStepAndAnswersDescriptors() async throws {
        let gatekeeper = Gatekeeper()
        let explorer = try await explore(gatekeeper) {
            $0.events.contains("descriptor Level") && $0.events.contains("notifying true")
        }
        #expect(explorer.errors.isEmpty)
        #expect(Array(explorer.events.prefix(4)) == ["found", "connect", "services", "characteristics"])
        let asked = gatekeeper.asked
        #expect(Array(asked.prefix(3)) == ["connect", "services", "characteristics"])
        #expect(asked.contains("descriptors") && asked.contains("read descriptor"))
        #expect(asked.contains("notify true") && asked.contains("notifying"))
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test func aRefusedConnectionFailsWithTheDelegatesError() async throws {
        let explorer = try await explore(Gatekeeper(refusing: ["connect"])) { !$0.errors.isEmpty }
        #expect(explorer.events == ["found", "connect failed"])
        #expect(explorer.errors.first?.domain == CBMErrorDomain)
        #expect(explorer.errors.first?.code == CBMError.Code.connectionFailed.rawValue)
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(arguments: ["services", "characteristics", "descriptors", "notify true"])
    func aRefusedStepFailsWithTheDelegatesError(step: String) async throws {
        let explorer = try await explore(Gatekeeper(refusing: [step])) { !$0.errors.isEmpty }
        let failed = step == "notify true" ? "notifying false failed" : "\(step) failed"
        #expect(explorer.events.contains(failed))
        #expect(explorer.errors.first?.domain == CBMATTErrorDomain)
        #expect(explorer.errors.first?.code == CBMATTError.Code.insufficientAuthorization.rawValue)
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test func connectingAgainWhileConnectedDoesNotAskTheDelegateAndIsNoted() async throws {
        // (Asked about the second connect, a delegate that refused it would fail a connection
        // that is up.)
        let gatekeeper = Gatekeeper()
        let bridge = ownBridge(seed: 72)
        let spec = Self.spec(gatekeeper)
        let (events, misuses) = try await bridge.run { @MainActor () -> ([String], [String]) in
            CBMCentralManagerMock.simulatePeripherals([spec])
            let explorer = Explorer()
            let manager = CBMCentralManagerMock(delegate: explorer, queue: nil)
            try await bridge.waitForApp { explorer.events.contains("services") }
            let peripheral = try #require(manager.retrievePeripherals(withIdentifiers: [spec.identifier]).first)
            manager.connect(peripheral)
            try await bridge.waitForApp { !manager.apiMisuses.isEmpty }
            #expect(peripheral.state == .connected)
            return (explorer.events, manager.apiMisuses)
        }
        #expect(gatekeeper.asked.filter { $0 == "connect" }.count == 1)
        #expect(events.filter { $0.hasPrefix("connect") } == ["connect"])
        #expect(
            misuses == [
                "connect: \(spec.identifier) is already connected to this manager; no second didConnect follows"
            ])
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test func theDelegateHearsOfADisconnection() async throws {
        let gatekeeper = Gatekeeper()
        let bridge = ownBridge(seed: 71)
        let spec = Self.spec(gatekeeper)
        try await bridge.run { @MainActor in
            CBMCentralManagerMock.simulatePeripherals([spec])
            let explorer = Explorer()
            let manager = CBMCentralManagerMock(delegate: explorer, queue: nil)
            try await bridge.waitForApp { explorer.events.contains("services") }
            spec.simulateDisconnection(withError: CBMError(.connectionTimeout))
            try await bridge.waitForApp { gatekeeper.asked.contains("disconnected") }
            _ = manager
        }
    }
}
