import BLECore
import BLEMockKit
import Foundation
import Testing

/// Error scenarios: each injects one failure and checks the exact error and that nothing else
/// was disturbed.
@Suite("Error injection", .timeLimit(.minutes(10)))
struct ErrorInjectionTests {
    typealias Rig = (
        bridge: MockBLEBridge, peripheral: MockPeripheralManager, service: LocalService,
        central: MockCentralManager, characteristics: [RemoteCharacteristic]
    )

    static func rig(
        central injections: [ErrorInjection] = [], peripheral peripheralInjections: [ErrorInjection] = [],
        seed: UInt64 = 0
    ) async throws -> Rig {
        let bridge = MockBLEBridge(seed: seed)
        let (peripheral, service) = try await TestPeripherals.advertisingHeartRate(
            on: bridge, configuration: .init(name: "HRM-1", errorInjection: peripheralInjections))
        let (central, characteristics) = try await TestPeripherals.connectedCentral(
            to: peripheral, on: bridge, configuration: .init(errorInjection: injections))
        return (bridge, peripheral, service, central, characteristics)
    }

    @Test("A read injected once fails with that ATT error, then reads succeed and the link stays up")
    func readOnce() async throws {
        let rig = try await Self.rig(central: [ErrorInjection(.read, failure: .att(.insufficientAuthentication))])
        await #expect(throws: ATTError(.insufficientAuthentication)) {
            try await rig.central.readValue(for: rig.characteristics[1])
        }
        #expect(try await rig.central.readValue(for: rig.characteristics[1]) == Data([0x01]))
        #expect(await rig.central.isConnected(rig.peripheral.identifier))
        let reads = await rig.bridge.log.filter { $0.kind == .read }
        #expect(reads.map(\.error) == [.att(ATTError(.insufficientAuthentication)), nil])
        #expect(await rig.bridge.finish() == .clean)
    }

    /// How often a probability injection fires is the seed's: one that drew no failure was
    /// reached all the same (before, `finish()` listed it, so a trait's test failed on every seed
    /// where it happened not to fire, and `.probability(0)` always).
    @Test("A probability injection that met operations is no leftover, fired or not; one no operation met is")
    func probabilityInjectionsAreLeftOversOnlyWhenNothingMetThem() async throws {
        let met = ErrorInjection(.read, failure: .att(.readNotPermitted), frequency: .probability(0))
        let unmet = ErrorInjection(.write, failure: .att(.writeNotPermitted), frequency: .probability(1))
        let rig = try await Self.rig(central: [met, unmet])
        for _ in 0..<3 {
            #expect(try await rig.central.readValue(for: rig.characteristics[1]) == Data([0x01]))
        }
        let owner = rig.central.identifier
        #expect(await rig.bridge.finish() == .leftovers([.unfiredInjection(unmet, owner: owner), .seed(0)]))
    }

    @Test("An injection scripted for three reads that failed two is reported as fired fewer times, not never")
    func aPartlyUsedInjectionSaysSo() async throws {
        let rig = try await Self.rig(central: [
            ErrorInjection(.read, failure: .att(.insufficientAuthentication), frequency: .times(3))
        ])
        for _ in 0..<2 {
            await #expect(throws: ATTError(.insufficientAuthentication)) {
                try await rig.central.readValue(for: rig.characteristics[1])
            }
        }
        guard case .leftovers(let items) = await rig.bridge.finish() else {
            Issue.record("expected leftovers")
            return
        }
        #expect(
            items.map(\.description).contains(
                "error injection fired fewer than 3 times: read fails with ATT 0x05 insufficientAuthentication 3 times"
                    + " (installed for \(rig.central.identifier.uuidString.prefix(8)))"))
    }

    /// Realistic mode: the request waits in the link's pipe for the next connection event, and
    /// the caller gives up before it (a timeout, say). The injection never took effect, so it is
    /// still owed: the next matching operation meets it, and `finish()` reports it if none comes.
    @Test(
        "A read or write cancelled before its request was sent gives its injection back to the next one",
        arguments: [ErrorInjection.Operation.read, .write], [true, false])
    func anOperationCancelledBeforeItWasSentKeepsItsInjection(
        operation: ErrorInjection.Operation, retrying: Bool
    ) async throws {
        let bridge = MockBLEBridge(configuration: .realistic(seed: 23))
        let injection = ErrorInjection(operation, failure: .att(.insufficientResources))
        let kind: BridgeLogEntry.Kind = operation == .read ? .read : .write
        let owner = try await bridge.run { () -> UUID in
            let (peripheral, _) = try await TestPeripherals.advertisingHeartRate(on: bridge)
            let central = MockCentralManager(configuration: .init(errorInjection: [injection]), bridge: bridge)
            try await central.scanForPeripherals(withServices: nil)
            try await bridge.clock.sleep(for: .seconds(1))  // until it hears the advertisement
            try await central.connect(peripheral.identifier)
            let characteristics = try await central.discoverAll(for: peripheral.identifier)
            @Sendable func attempt() async throws {
                if operation == .read {
                    _ = try await central.readValue(for: characteristics[1])
                } else {
                    try await central.writeValue(Data([1]), for: characteristics[2], type: .withResponse)
                }
            }
            let cancelled = bridge.task { try await attempt() }
            try await bridge.clock.sleep(for: .milliseconds(1))  // before the next connection event
            cancelled.cancel()
            await #expect(throws: CancellationError.self) { try await cancelled.value }
            #expect(await !bridge.log.contains { $0.kind == kind })  // nothing of it crossed
            guard retrying else { return central.identifier }
            await #expect(throws: ATTError(.insufficientResources)) { try await attempt() }
            try await attempt()
            let logged = await bridge.log.filter { $0.kind == kind }.map(\.error)
            #expect(logged == [.att(ATTError(.insufficientResources)), nil])
            return central.identifier
        }
        let finish = await bridge.finish()
        #expect(finish == (retrying ? .clean : .leftovers([.unfiredInjection(injection, owner: owner), .seed(23)])))
    }

    @Test("A write injected twice fails twice with the CoreBluetooth error, then succeeds")
    func writeTwice() async throws {
        let rig = try await Self.rig(central: [
            ErrorInjection(.write, failure: .coreBluetooth(.unknown), frequency: .times(2))
        ])
        for _ in 0..<2 {
            await #expect(throws: CoreBluetoothError(.unknown)) {
                try await rig.central.writeValue(Data([1]), for: rig.characteristics[2], type: .withResponse)
            }
        }
        try await rig.central.writeValue(Data([1]), for: rig.characteristics[2], type: .withResponse)
        #expect(await rig.bridge.finish() == .clean)
    }

    @Test("Connections always failing report connectionFailed and a failed-to-connect event")
    func connectAlways() async throws {
        let bridge = MockBLEBridge()
        let (peripheral, _) = try await TestPeripherals.advertisingHeartRate(on: bridge)
        let central = MockCentralManager(
            configuration: .init(errorInjection: [
                ErrorInjection(.connect, failure: .coreBluetooth(.connectionFailed), frequency: .always)
            ]),
            bridge: bridge)
        let events = central.events()
        try await central.scanForPeripherals(withServices: nil)
        for _ in 0..<3 {
            await #expect(throws: CoreBluetoothError(.connectionFailed)) {
                try await central.connect(peripheral.identifier)
            }
        }
        #expect(await !central.isConnected(peripheral.identifier))
        let failures = await events.prefixArray(5).filter {
            if case .failedToConnect(_, let error) = $0 { return error == CoreBluetoothError(.connectionFailed) }
            return false
        }
        #expect(failures.count == 3)
    }

    @Test("A probability draws from the seed: the same seed fails the same attempts")
    func probabilityIsSeeded() async throws {
        func pattern(seed: UInt64) async throws -> [Bool] {
            let rig = try await Self.rig(
                central: [ErrorInjection(.read, failure: .att(.unlikelyError), frequency: .probability(0.5))],
                seed: seed)
            var outcomes: [Bool] = []
            for _ in 0..<16 {
                do {
                    _ = try await rig.central.readValue(for: rig.characteristics[1])
                    outcomes.append(true)
                } catch {
                    #expect(error as? ATTError == ATTError(.unlikelyError))
                    outcomes.append(false)
                }
            }
            return outcomes
        }
        let first = try await pattern(seed: 11)
        #expect(try await pattern(seed: 11) == first, "seed 11")
        #expect(first.contains(true) && first.contains(false), "seed 11 gave \(first)")
    }

    @Test("An injection for one characteristic leaves the others alone")
    func characteristicFilter() async throws {
        let rig = try await Self.rig(central: [
            ErrorInjection(.write, failure: .att(.writeRequestRejected), frequency: .always, characteristic: "2A39")
        ])
        #expect(try await rig.central.readValue(for: rig.characteristics[1]) == Data([0x01]))
        await #expect(throws: ATTError(.writeRequestRejected)) {
            try await rig.central.writeValue(Data([1]), for: rig.characteristics[2], type: .withResponse)
        }
        try await rig.central.setNotifyValue(true, for: rig.characteristics[0])
    }

    @Test("A bridge-wide injection for one peripheral leaves other peripherals alone")
    func peripheralFilter() async throws {
        let bridge = MockBLEBridge()
        let (first, _) = try await TestPeripherals.advertisingHeartRate(on: bridge)
        let (second, _) = try await TestPeripherals.advertisingHeartRate(on: bridge)
        await bridge.inject(
            ErrorInjection(
                .serviceDiscovery, failure: .att(.insufficientResources), frequency: .always,
                peripheral: second.identifier))
        let central = MockCentralManager(bridge: bridge)
        try await central.scanForPeripherals(withServices: nil)
        try await central.connect(first.identifier)
        try await central.connect(second.identifier)
        #expect(try await central.discoverServices(nil, for: first.identifier).count == 1)
        await #expect(throws: ATTError(.insufficientResources)) {
            try await central.discoverServices(nil, for: second.identifier)
        }
    }

    @Test("Service discovery fails while characteristic discovery still works")
    func serviceDiscovery() async throws {
        let rig = try await Self.rig()
        await rig.central.inject(ErrorInjection(.serviceDiscovery, failure: .att(.insufficientAuthentication)))
        await #expect(throws: ATTError(.insufficientAuthentication)) {
            try await rig.central.discoverServices(nil, for: rig.peripheral.identifier)
        }
        let services = try await rig.central.discoverServices(nil, for: rig.peripheral.identifier)
        #expect(try await rig.central.discoverCharacteristics(nil, for: services[0]).count == 3)
    }

    @Test("Characteristic and descriptor discovery fail with their injected errors")
    func characteristicAndDescriptorDiscovery() async throws {
        let rig = try await Self.rig()
        await rig.central.inject(ErrorInjection(.characteristicDiscovery, failure: .coreBluetooth(.invalidParameters)))
        await rig.central.inject(ErrorInjection(.descriptorDiscovery, failure: .att(.unlikelyError)))
        let services = await rig.central.services(of: rig.peripheral.identifier)
        await #expect(throws: CoreBluetoothError(.invalidParameters)) {
            try await rig.central.discoverCharacteristics(nil, for: services[0])
        }
        await #expect(throws: ATTError(.unlikelyError)) {
            try await rig.central.discoverDescriptors(for: rig.characteristics[2])
        }
        #expect(try await rig.central.discoverDescriptors(for: rig.characteristics[2]).map(\.uuid) == ["2901"])
    }

    @Test("A failed subscription leaves the central unsubscribed on the peripheral side")
    func subscribe() async throws {
        let rig = try await Self.rig(central: [ErrorInjection(.subscribe, failure: .att(.cccdImproperlyConfigured))])
        await #expect(throws: ATTError(.cccdImproperlyConfigured)) {
            try await rig.central.setNotifyValue(true, for: rig.characteristics[0])
        }
        #expect(await rig.peripheral.subscribedCentrals(for: rig.service.characteristics[0]).isEmpty)
        try await rig.central.setNotifyValue(true, for: rig.characteristics[0])
        #expect(await rig.peripheral.subscribedCentrals(for: rig.service.characteristics[0]).count == 1)
    }

    @Test("RSSI reads fail with the injected error")
    func rssi() async throws {
        let rig = try await Self.rig(central: [ErrorInjection(.readRSSI, failure: .coreBluetooth(.notConnected))])
        await #expect(throws: CoreBluetoothError(.notConnected)) {
            try await rig.central.readRSSI(for: rig.peripheral.identifier)
        }
        #expect(try await rig.central.readRSSI(for: rig.peripheral.identifier) == -50)
    }

    @Test("Peripheral injections fail adding a service, starting to advertise and updating a value")
    func peripheralOperations() async throws {
        let bridge = MockBLEBridge()
        let peripheral = MockPeripheralManager(
            configuration: .init(errorInjection: [
                ErrorInjection(.serviceAdd, failure: .coreBluetooth(.outOfSpace)),
                ErrorInjection(.advertisingStart, failure: .coreBluetooth(.operationNotSupported)),
            ]),
            bridge: bridge)
        await #expect(throws: CoreBluetoothError(.outOfSpace)) { try await peripheral.add(TestPeripherals.heartRate) }
        #expect(await peripheral.services.isEmpty)
        let service = try await peripheral.add(TestPeripherals.heartRate)
        await #expect(throws: CoreBluetoothError(.operationNotSupported)) {
            try await peripheral.startAdvertising(AdvertisementData())
        }
        #expect(await !peripheral.isAdvertising)
        try await peripheral.startAdvertising(AdvertisementData(serviceUUIDs: ["180D"]))
        let (central, characteristics) = try await TestPeripherals.connectedCentral(to: peripheral, on: bridge)
        try await central.setNotifyValue(true, for: characteristics[0])
        await peripheral.inject(ErrorInjection(.updateValue, failure: .coreBluetooth(.unknown)))
        await #expect(throws: CoreBluetoothError(.unknown)) {
            try await peripheral.updateValue(Data([1]), for: service.characteristics[0])
        }
        #expect(try await peripheral.updateValue(Data([2]), for: service.characteristics[0]))
        let notifications = await bridge.log.filter { $0.kind == .notification && $0.succeeded }
        #expect(notifications.map(\.value) == [Data([2])])
    }

    @Test("A read that never answers waits until the link drops, then fails with the link's error")
    func neverAnswersUntilDisconnect() async throws {
        let rig = try await Self.rig(central: [ErrorInjection(.read, failure: .neverAnswers)])
        let central = rig.central
        let characteristic = rig.characteristics[1]
        let read = Task { try await central.readValue(for: characteristic) }
        await rig.bridge.waitUntil { !$0.pendingOperations.isEmpty }
        await rig.peripheral.simulateDisconnection(
            of: central.identifier, error: CoreBluetoothError(.connectionTimeout))
        await #expect(throws: CoreBluetoothError(.connectionTimeout)) { try await read.value }
    }

    @Test("Finishing reports an operation that never answered and an injection that never fired")
    func finishReportsInjectionLeftovers() async throws {
        let rig = try await Self.rig(central: [
            ErrorInjection(.readRSSI, failure: .neverAnswers),
            ErrorInjection(.write, failure: .att(.insufficientAuthorization)),
        ])
        let central = rig.central
        let peripheral = rig.peripheral.identifier
        let rssi = Task { try await central.readRSSI(for: peripheral) }
        await rig.bridge.waitUntil { !$0.pendingOperations.isEmpty }
        guard case .leftovers(let items) = await rig.bridge.finish() else {
            Issue.record("expected leftovers")
            return
        }
        #expect(
            items.contains {
                guard case .operation("readRSSI", central.identifier, peripheral, nil, _) = $0 else { return false }
                return true
            })
        #expect(
            items.contains {
                $0.description.hasPrefix(
                    "error injection never fired: write fails with ATT 0x08 insufficientAuthorization once")
            })
        #expect(
            items.contains(
                .unfiredInjection(
                    ErrorInjection(.write, failure: .att(.insufficientAuthorization)), owner: central.identifier)))
        await #expect(throws: CoreBluetoothError(.operationCancelled)) { try await rssi.value }
    }
}
