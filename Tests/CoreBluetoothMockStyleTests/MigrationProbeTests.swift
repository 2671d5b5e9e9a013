import BLECBM
import BLEMockKit
import Foundation
import Testing

// A suite migrating from CoreBluetoothMock by changing its import relies on more of its API than
// the nRF Blinky tests use: the answers of a spec's delegate, value updates, service changes.
// Each test here states what CoreBluetoothMock does (read in its source, folder
// CoreBluetoothMock/ of github.com/NordicSemiconductor/IOS-CoreBluetooth-Mock) and checks that a
// test written against it passes here.

/// An error of a test's own, as a spec delegate written for CoreBluetoothMock may answer with.
enum ProbeSpecError: Error, Equatable {
    case refused
}

/// A spec delegate whose every answer is one result, and which notes what it heard.
final class RefusingSpecDelegate: CBMPeripheralSpecDelegate, @unchecked Sendable {
    // @unchecked Sendable: its state is guarded by `lock`.
    private let lock = NSLock()
    private let failure: Error?
    private var heard: [String] = []

    init(failingWith failure: Error?) { self.failure = failure }

    var events: [String] { lock.withLock { heard } }

    private func note(_ event: String) { lock.withLock { heard.append(event) } }

    private func answer() -> Result<Void, Error> { failure.map { .failure($0) } ?? .success(()) }

    func peripheral(_ peripheral: CBMPeripheralSpec, didReceiveReadRequestFor characteristic: CBMCharacteristicMock)
        -> Result<Data, Error>
    {
        note("read")
        return failure.map { .failure($0) } ?? .success(Data([7]))
    }

    func peripheral(
        _ peripheral: CBMPeripheralSpec, didReceiveWriteRequestFor characteristic: CBMCharacteristicMock, data: Data
    ) -> Result<Void, Error> {
        note("write")
        return answer()
    }

    func peripheral(
        _ peripheral: CBMPeripheralSpec, didReceiveSetNotifyRequest enabled: Bool,
        for characteristic: CBMCharacteristicMock
    ) -> Result<Void, Error> {
        note("notify \(enabled)")
        return answer()
    }
}

/// A spec delegate that answers nothing itself: every answer is CoreBluetoothMock's default.
final class DefaultSpecDelegate: CBMPeripheralSpecDelegate {}

@Suite("Migration from CoreBluetoothMock: probes", .timeLimit(.minutes(10)), .finishesOwnBridges)
struct MigrationProbeTests {
    // CBMCentralManagerMock.swift, readValue(for:) and writeValue(_:for:type:) for
    // characteristics: the delegate's failure reaches the app's callback unchanged, so a test
    // may cast it back to its own error type.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(arguments: [false, true])
    func aSwiftErrorOfTheTestsOwnReachesTheAppAsThatError(realistic: Bool) async throws {
        let bridge = CoreBluetoothMockParityTests.bridge(realistic: realistic, seed: 301)
        let watch = makeWatch(delegate: RefusingSpecDelegate(failingWith: ProbeSpecError.refused))
        let errors = try await bridge.run { @MainActor () -> [Error?] in
            CBMCentralManagerMock.simulatePeripherals([watch])
            let app = ErrorKeepingApp()
            let (_, peripheral, characteristic) = try await Self.connect(watch, app: app, on: bridge)
            peripheral.readValue(for: characteristic)
            try await bridge.waitForApp { app.errors.count == 1 }
            peripheral.writeValue(Data([1]), for: characteristic, type: .withResponse)
            try await bridge.waitForApp { app.errors.count == 2 }
            peripheral.setNotifyValue(true, for: characteristic)
            try await bridge.waitForApp { app.errors.count == 3 }
            return app.errors
        }
        #expect(errors.map { $0 as? ProbeSpecError } == [.refused, .refused, .refused])
    }

    // CBMPeripheralSpecDelegate.swift: a delegate answering a read with
    // `.failure(CBMATTError(.readNotPermitted))` fails the app's read with that ATT error.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(arguments: [false, true])
    func aReadTheDelegateRefusesFailsWithItsATTError(realistic: Bool) async throws {
        let bridge = CoreBluetoothMockParityTests.bridge(realistic: realistic, seed: 302)
        let watch = makeWatch(delegate: RefusingSpecDelegate(failingWith: CBMATTError(.readNotPermitted)))
        let errors = try await bridge.run { @MainActor () -> [Error?] in
            CBMCentralManagerMock.simulatePeripherals([watch])
            let app = ErrorKeepingApp()
            let (_, peripheral, characteristic) = try await Self.connect(watch, app: app, on: bridge)
            peripheral.readValue(for: characteristic)
            try await bridge.waitForApp { app.errors.count == 1 }
            return app.errors
        }
        let error = try #require(errors.first as? CBMATTError)
        #expect(error.code == .readNotPermitted)
    }

    // CBMPeripheralSpecDelegate.swift, the default answers for descriptors: a read fails with
    // `readNotPermitted`, a write with `writeNotPermitted`.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(arguments: [false, true])
    func theDefaultDelegateRefusesDescriptorReadsAndWrites(realistic: Bool) async throws {
        let bridge = CoreBluetoothMockParityTests.bridge(realistic: realistic, seed: 303)
        let watch = makeWatch(delegate: DefaultSpecDelegate())
        let lines = try await bridge.run { @MainActor () -> [String] in
            CBMCentralManagerMock.simulatePeripherals([watch])
            let app = ParityApp()
            let (_, peripheral, characteristic) = try await CoreBluetoothMockParityTests.connect(
                watch, app: app, on: bridge)
            peripheral.discoverDescriptors(for: characteristic)
            try await bridge.waitForApp { app.lines.contains("descriptors nil") }
            let descriptor = try #require(characteristic.descriptors?.first)
            peripheral.readValue(for: descriptor)
            try await bridge.waitForApp { app.lines.contains { $0.hasPrefix("descriptor read") } }
            peripheral.writeValue(Data([1]), for: descriptor)
            try await bridge.waitForApp { app.lines.contains { $0.hasPrefix("descriptor written") } }
            return app.lines
        }
        #expect(
            lines == [
                "connected", "descriptors nil", "descriptor read \(CBMATTErrorDomain) 2",
                "descriptor written \(CBMATTErrorDomain) 3",
            ])
    }

    // CBMPeripheralSpec.swift, simulateValueUpdate(_:for:): the spec's characteristic takes the
    // value; only centrals that subscribed hear of it (CBMCentralManagerMock.swift,
    // notifyValueChanged(for:), checks `isNotifying`).
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(arguments: [false, true])
    func aValueUpdateReachesOnlyASubscribedApp(realistic: Bool) async throws {
        let bridge = CoreBluetoothMockParityTests.bridge(realistic: realistic, seed: 304)
        let watch = makeWatch(delegate: TransferSpecDelegate())
        let mock = try #require(watch.services?.first?.characteristics?.first as? CBMCharacteristicMock)
        let (lines, values) = try await bridge.run { @MainActor () -> ([String], [Data]) in
            CBMCentralManagerMock.simulatePeripherals([watch])
            let app = ParityApp()
            let (_, peripheral, characteristic) = try await CoreBluetoothMockParityTests.connect(
                watch, app: app, on: bridge)
            watch.simulateValueUpdate(Data([1]), for: mock)
            #expect(mock.value == Data([1]))
            await bridge.advance(by: .seconds(1))
            peripheral.setNotifyValue(true, for: characteristic)
            try await bridge.waitForApp { app.lines.contains("notifying true nil") }
            watch.simulateValueUpdate(Data([2]), for: mock)
            try await bridge.waitForApp { app.values.count == 1 }
            peripheral.setNotifyValue(false, for: characteristic)
            try await bridge.waitForApp { app.lines.contains("notifying false nil") }
            watch.simulateValueUpdate(Data([3]), for: mock)
            await bridge.advance(by: .seconds(1))
            return (app.lines, app.values)
        }
        #expect(lines == ["connected", "notifying true nil", "read nil", "notifying false nil"])
        #expect(values == [Data([2])])
    }

    // CBMPeripheralSpecDelegate.swift, the default didReceiveSetNotifyRequest: a characteristic
    // that neither notifies nor indicates is refused with `CBMError(.invalidHandle)`.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(arguments: [false, true])
    func subscribingToACharacteristicThatDoesNotNotifyIsRefused(realistic: Bool) async throws {
        let bridge = CoreBluetoothMockParityTests.bridge(realistic: realistic, seed: 305)
        let readOnly = CBMCharacteristicMock(type: .transferData, properties: [.read])
        let watch =
            CBMPeripheralSpec
            .simulatePeripheral(proximity: .near)
            .advertising(advertisementData: [CBMAdvertisementDataLocalNameKey: "Watch"])
            .connectable(
                name: "Watch",
                services: [CBMServiceMock(type: .transferService, primary: true, characteristics: readOnly)],
                delegate: DefaultSpecDelegate()
            )
            .allowForRetrieval()
            .build()
        let lines = try await bridge.run { @MainActor () -> [String] in
            CBMCentralManagerMock.simulatePeripherals([watch])
            let app = ParityApp()
            let (_, peripheral, characteristic) = try await CoreBluetoothMockParityTests.connect(
                watch, app: app, on: bridge)
            peripheral.setNotifyValue(true, for: characteristic)
            try await bridge.waitForApp { app.lines.contains { $0.hasPrefix("notifying") } }
            return app.lines
        }
        #expect(lines == ["connected", "notifying false \(CBMErrorDomain) \(CBMError.Code.invalidHandle.rawValue)"])
    }

    // CBMCentralManagerMock.swift, maximumWriteValueLength(for:): 512 with response.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test func theLongestWriteWithResponseIs512() async throws {
        let bridge = ownBridge(seed: 306)
        let watch = makeWatch(delegate: TransferSpecDelegate(), mtu: 185)
        let length = try await bridge.run { @MainActor () -> Int in
            CBMCentralManagerMock.simulatePeripherals([watch])
            let app = ParityApp()
            let (_, peripheral, _) = try await CoreBluetoothMockParityTests.connect(watch, app: app, on: bridge)
            return peripheral.maximumWriteValueLength(for: .withResponse)
        }
        #expect(length == 512)
    }

    // CBMCentralManagerMock.swift, connect: a connection the delegate refuses fails with its
    // error, even one of the test's own type.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(arguments: [false, true])
    func aConnectionRefusedWithATestsOwnErrorFailsWithIt(realistic: Bool) async throws {
        let bridge = CoreBluetoothMockParityTests.bridge(realistic: realistic, seed: 307)
        let watch = makeWatch(delegate: ConnectionRefusingDelegate())
        let error = try await bridge.run { @MainActor () -> Error? in
            CBMCentralManagerMock.simulatePeripherals([watch])
            let app = ErrorKeepingApp()
            let manager = CBMCentralManagerMock(delegate: app, queue: nil)
            app.manager = manager
            try await bridge.waitForApp { manager.state == .poweredOn }
            let peripheral = try #require(manager.retrievePeripherals(withIdentifiers: [watch.identifier]).first)
            app.peripheral = peripheral
            manager.connect(peripheral)
            try await bridge.waitForApp { app.errors.count == 1 }
            return app.errors[0]
        }
        #expect(error as? ProbeSpecError == .refused)
    }

    // CBMCentralManagerMock.swift, discoverIncludedServices: the spec's included services are
    // discovered, after its delegate's didReceiveIncludedServiceDiscoveryRequest.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(arguments: [false, true])
    func includedServicesAreDiscovered(realistic: Bool) async throws {
        let bridge = CoreBluetoothMockParityTests.bridge(realistic: realistic, seed: 308)
        let battery = CBMServiceMock(type: .batteryService, primary: false, characteristics: batteryLevelMock())
        let data = CBMCharacteristicMock(type: .transferData, properties: [.read])
        let watch =
            CBMPeripheralSpec
            .simulatePeripheral(proximity: .near)
            .advertising(advertisementData: [CBMAdvertisementDataLocalNameKey: "Watch"])
            .connectable(
                name: "Watch",
                services: [
                    CBMServiceMock(
                        type: .transferService, primary: true, includedServices: [battery], characteristics: [data]),
                    battery,
                ],
                delegate: DefaultSpecDelegate()
            )
            .allowForRetrieval()
            .build()
        let included = try await bridge.run { @MainActor () -> [String] in
            CBMCentralManagerMock.simulatePeripherals([watch])
            let app = IncludedServicesApp()
            let manager = CBMCentralManagerMock(delegate: app, queue: nil)
            app.manager = manager
            try await bridge.waitForApp { manager.state == .poweredOn }
            let peripheral = try #require(manager.retrievePeripherals(withIdentifiers: [watch.identifier]).first)
            app.peripheral = peripheral
            manager.connect(peripheral)
            try await bridge.waitForApp { app.included != nil }
            return app.included ?? []
        }
        #expect(included == [CBMUUID.batteryService.uuidString])
    }
}

extension MigrationProbeTests {
    // CBMPeripheralSpec.swift: a spec keeps its state (proximity, identifier, whether the system
    // knows it, advertising) in itself, so calls made before `simulatePeripherals(_:)` set the
    // state its simulation starts in. (The kit ignored them: "the spec is not simulated".)
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(arguments: [false, true])
    func callsMadeBeforeTheSpecIsSimulatedSetTheStateItStartsIn(realistic: Bool) async throws {
        let bridge = CoreBluetoothMockParityTests.bridge(realistic: realistic, seed: 309)
        let readOnly = CBMCharacteristicMock(type: .transferData, properties: [.read])
        let sensor =
            CBMPeripheralSpec
            .simulatePeripheral(proximity: .outOfRange)
            .advertising(advertisementData: [CBMAdvertisementDataLocalNameKey: "Sensor"], withInterval: 0.1)
            .connectable(
                name: "Sensor",
                services: [CBMServiceMock(type: .transferService, primary: true, characteristics: readOnly)],
                delegate: RefusingSpecDelegate(failingWith: nil)
            )
            .build()
        let moved = UUID(uuidString: "00000000-0000-4000-8000-0000000000A1")!
        let (identifier, proximity, known, values) = try await bridge.run {
            @MainActor () -> (UUID, CBMProximity, Bool, [Data]) in
            sensor.simulateMacChange(moved)
            sensor.simulateProximityChange(.near)
            sensor.simulateCaching()
            sensor.simulateValueUpdate(Data([9]), for: readOnly)
            let state = (sensor.identifier, sensor.proximity, sensor.isKnown)
            CBMCentralManagerMock.simulatePeripherals([sensor])
            let app = ParityApp()
            let manager = CBMCentralManagerMock(delegate: app, queue: nil)
            app.manager = manager
            try await bridge.waitForApp { manager.state == .poweredOn }
            let peripheral = try #require(manager.retrievePeripherals(withIdentifiers: [moved]).first)
            app.peripheral = peripheral
            manager.connect(peripheral)
            try await bridge.waitForApp { peripheral.state == .connected }
            peripheral.discoverServices(nil)
            try await bridge.waitForApp { app.characteristic != nil }
            peripheral.readValue(for: try #require(app.characteristic))
            try await bridge.waitForApp { !app.values.isEmpty }
            return (state.0, state.1, state.2, app.values)
        }
        #expect(identifier == moved)
        #expect(proximity == .near)
        #expect(known)
        #expect(values == [Data([7])])
        #expect(readOnly.value == Data([9]))
    }
}

extension MigrationProbeTests {
    // CBMPeripheralSpec.swift, CBMAdvertisementConfig: Hashable, so a test can compare a
    // spec's advertisement with the configuration it gave.
    @Test func anAdvertisingSetEqualsItselfAndNotAnotherBuiltAlike() {
        let set = CBMAdvertisementConfig(data: [CBMAdvertisementDataLocalNameKey: "Watch"], interval: 0.1)
        let alike = CBMAdvertisementConfig(data: [CBMAdvertisementDataLocalNameKey: "Watch"], interval: 0.1)
        #expect(set == set)
        #expect(set != alike)
        #expect(Set([set, set, alike]).count == 2)
        let spec = CBMPeripheralSpec.simulatePeripheral().advertising(advertisementData: [:]).build()
        #expect(spec.advertisement == spec.advertisement)
    }
}

extension MigrationProbeTests {
    // CBMCentralManagerMock.swift, CBMPeripheralMock.name: the name advertised until the device
    // has been connected, its GAP name from then on (as CoreBluetooth names a device it has not
    // connected to by its advertisement).
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(arguments: [false, true])
    func aPeripheralIsNamedAsAdvertisedUntilConnectedThenByItsGAPName(realistic: Bool) async throws {
        let bridge = CoreBluetoothMockParityTests.bridge(realistic: realistic, seed: 310)
        let watch =
            CBMPeripheralSpec
            .simulatePeripheral(proximity: .near)
            .advertising(advertisementData: [CBMAdvertisementDataLocalNameKey: "Advertised"], withInterval: 0.1)
            .connectable(
                name: "GAP Name",
                services: [CBMServiceMock(type: .transferService, primary: true)],
                delegate: DefaultSpecDelegate()
            )
            .build()
        let names = try await bridge.run { @MainActor () -> [String?] in
            CBMCentralManagerMock.simulatePeripherals([watch])
            let delegate = CBMCentralManagerDelegateProxy()
            var found: CBMPeripheral?
            delegate.didDiscoverPeripheral = { _, peripheral, _, _ in found = peripheral }
            let manager = CBMCentralManagerMock(delegate: delegate, queue: nil)
            try await bridge.waitForApp { manager.state == .poweredOn }
            manager.scanForPeripherals(withServices: nil)
            try await bridge.waitForApp { found != nil }
            manager.stopScan()
            let peripheral = try #require(found)
            let advertised = peripheral.name
            manager.connect(peripheral)
            try await bridge.waitForApp { peripheral.state == .connected }
            return [advertised, peripheral.name]
        }
        #expect(names == ["Advertised", "GAP Name"])
    }
}

extension MigrationProbeTests {
    // CBMCentralManagerMock.swift, notifyServicesChanged(): a service listed again (the same
    // CBMServiceMock) stays discovered, with its characteristics; only the others are
    // invalidated. A discovery after it finds the new services beside the kept one.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(arguments: [false, true])
    func aServiceChangeKeepsTheServicesListedAgain(realistic: Bool) async throws {
        let bridge = CoreBluetoothMockParityTests.bridge(realistic: realistic, seed: 311)
        let data = CBMCharacteristicMock(type: .transferData, properties: [.read, .notify])
        let transfer = CBMServiceMock(type: .transferService, primary: true, characteristics: data)
        let battery = CBMServiceMock(type: .batteryService, primary: true, characteristics: batteryLevelMock())
        let heartRate = CBMServiceMock(type: CBMUUID(string: "180D"), primary: true)
        let watch =
            CBMPeripheralSpec
            .simulatePeripheral(proximity: .near)
            .advertising(advertisementData: [CBMAdvertisementDataLocalNameKey: "Watch"])
            .connectable(name: "Watch", services: [transfer, battery], delegate: TransferSpecDelegate())
            .allowForRetrieval()
            .build()
        let (lines, kept, value, after) = try await bridge.run {
            @MainActor () -> ([String], Bool, [Data], [String]) in
            CBMCentralManagerMock.simulatePeripherals([watch])
            let app = ParityApp()
            let (_, peripheral, _) = try await CoreBluetoothMockParityTests.connect(watch, app: app, on: bridge)
            try await bridge.waitForApp { peripheral.services?.allSatisfy { $0.characteristics != nil } == true }
            let before = peripheral.services?.first { $0.uuid == .transferService }
            let characteristic = try #require(before?.characteristics?.first)
            watch.simulateServiceChange(newName: "Watch", newServices: [transfer, heartRate])
            try await bridge.waitForApp { app.lines.contains { $0.hasPrefix("modified") } }
            try await bridge.clock.sleep(for: .seconds(1))
            let kept = peripheral.services?.first { $0.uuid == .transferService } === before
            peripheral.readValue(for: characteristic)
            try await bridge.waitForApp { !app.values.isEmpty }
            peripheral.discoverServices(nil)
            try await bridge.waitForApp { peripheral.services?.count == 2 }
            return (app.lines, kept, app.values, (peripheral.services ?? []).map(\.uuid.uuidString))
        }
        #expect(Array(lines.prefix(2)) == ["connected", "modified [\"\(CBMUUID.batteryService.uuidString)\"]"])
        #expect(kept)
        #expect(value.count == 1)
        #expect(after == [CBMUUID.transferService.uuidString, "180D"])
    }
}

extension MigrationProbeTests {
    // CBMCentralManagerMock.swift, connect(completion:): a peripheral that is not connectable
    // (a spec without `connectable(…)`) never connects; the attempt stays pending, as on iOS,
    // with no callback. So it is with realistic timing (the simulated system's); fast mode fails
    // it at once with `connectionFailed`, by design (Fidelity.md, "Modelling decisions").
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test func aBeaconThatIsNotConnectableNeverConnects() async throws {
        let bridge = CoreBluetoothMockParityTests.bridge(realistic: true, seed: 312)
        let beacon =
            CBMPeripheralSpec
            .simulatePeripheral(proximity: .near)
            .advertising(advertisementData: [CBMAdvertisementDataLocalNameKey: "Beacon"], withInterval: 0.1)
            .allowForRetrieval()
            .build()
        let (state, lines) = try await bridge.run { @MainActor () -> (CBMPeripheralState, [String]) in
            CBMCentralManagerMock.simulatePeripherals([beacon])
            let app = ParityApp()
            let manager = CBMCentralManagerMock(delegate: app, queue: nil)
            app.manager = manager
            try await bridge.waitForApp { manager.state == .poweredOn }
            let peripheral = try #require(manager.retrievePeripherals(withIdentifiers: [beacon.identifier]).first)
            app.peripheral = peripheral
            manager.connect(peripheral)
            try await bridge.clock.sleep(for: .seconds(10))
            return (peripheral.state, app.lines)
        }
        #expect(state == .connecting)
        #expect(lines.isEmpty)
    }
}

/// Keeps each error the app's callbacks report (nil for success), in order.
final class ErrorKeepingApp: NSObject, CBMCentralManagerDelegate, CBMPeripheralDelegate {
    var errors: [Error?] = []
    var manager: CBMCentralManager?
    var peripheral: CBMPeripheral?
    var characteristic: CBMCharacteristic?

    func centralManagerDidUpdateState(_ central: CBMCentralManager) {}

    func centralManager(_ central: CBMCentralManager, didConnect peripheral: CBMPeripheral) {
        peripheral.delegate = self
    }

    func centralManager(_ central: CBMCentralManager, didFailToConnect peripheral: CBMPeripheral, error: Error?) {
        errors.append(error)
    }

    func peripheral(_ peripheral: CBMPeripheral, didDiscoverServices error: Error?) {
        for service in peripheral.services ?? [] { peripheral.discoverCharacteristics(nil, for: service) }
    }

    func peripheral(_ peripheral: CBMPeripheral, didDiscoverCharacteristicsFor service: CBMService, error: Error?) {
        characteristic = service.characteristics?.first
    }

    func peripheral(_ peripheral: CBMPeripheral, didUpdateValueFor characteristic: CBMCharacteristic, error: Error?) {
        errors.append(error)
    }

    func peripheral(_ peripheral: CBMPeripheral, didWriteValueFor characteristic: CBMCharacteristic, error: Error?) {
        errors.append(error)
    }

    func peripheral(
        _ peripheral: CBMPeripheral, didUpdateNotificationStateFor characteristic: CBMCharacteristic, error: Error?
    ) {
        errors.append(error)
    }
}

extension MigrationProbeTests {
    /// Connects the error-keeping app to the watch and discovers its characteristic.
    @MainActor
    static func connect(
        _ watch: CBMPeripheralSpec, app: ErrorKeepingApp, on bridge: MockBLEBridge
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
}

/// Refuses every connection with an error of the test's own.
final class ConnectionRefusingDelegate: CBMPeripheralSpecDelegate {
    func peripheralDidReceiveConnectionRequest(_ peripheral: CBMPeripheralSpec) -> Result<Void, Error> {
        .failure(ProbeSpecError.refused)
    }
}

/// Discovers the first service's included services once connected.
final class IncludedServicesApp: NSObject, CBMCentralManagerDelegate, CBMPeripheralDelegate {
    var manager: CBMCentralManager?
    var peripheral: CBMPeripheral?
    var included: [String]?

    func centralManagerDidUpdateState(_ central: CBMCentralManager) {}

    func centralManager(_ central: CBMCentralManager, didConnect peripheral: CBMPeripheral) {
        peripheral.delegate = self
        peripheral.discoverServices(nil)
    }

    func peripheral(_ peripheral: CBMPeripheral, didDiscoverServices error: Error?) {
        guard let first = peripheral.services?.first(where: { $0.uuid == .transferService }) else { return }
        peripheral.discoverIncludedServices(nil, for: first)
    }

    func peripheral(_ peripheral: CBMPeripheral, didDiscoverIncludedServicesFor service: CBMService, error: Error?) {
        included = (service.includedServices ?? []).map(\.uuid.uuidString)
    }
}
