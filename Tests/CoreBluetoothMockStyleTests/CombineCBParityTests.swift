import BLEMockKit
import Foundation
import Testing

@testable import BLECBM

// What kaphacius/CombineCB's XCTest suite (scripts/third-party-cbm-tests.sh, THIRD_PARTY_SUITE=
// CombineCB) showed BLECBM doing otherwise than CoreBluetoothMock.

/// A service that includes another one the spec does not list.
private func makeIncludingWatch() -> CBMPeripheralSpec {
    let included = CBMServiceMock(type: .batteryService, primary: true, characteristics: batteryLevelMock())
    let including = CBMServiceMock(
        type: .transferService, primary: true, includedServices: [included],
        characteristics: [CBMCharacteristicMock(type: .transferData, properties: [.read])])
    return
        CBMPeripheralSpec
        .simulatePeripheral(proximity: .near)
        .advertising(advertisementData: [CBMAdvertisementDataLocalNameKey: "Watch"])
        .connectable(name: "Watch", services: [including], delegate: DefaultSpecDelegate())
        .allowForRetrieval()
        .build()
}

/// Notes the services discovered at the top level and those included in the first of them.
final class ServiceListingApp: NSObject, CBMCentralManagerDelegate, CBMPeripheralDelegate {
    var manager: CBMCentralManager?
    var peripheral: CBMPeripheral?
    var services: [String]?
    var included: [String]?

    func centralManagerDidUpdateState(_ central: CBMCentralManager) {}

    func centralManager(_ central: CBMCentralManager, didConnect peripheral: CBMPeripheral) {
        peripheral.delegate = self
        peripheral.discoverServices(nil)
    }

    func peripheral(_ peripheral: CBMPeripheral, didDiscoverServices error: Error?) {
        services = (peripheral.services ?? []).map(\.uuid.uuidString)
        guard let first = peripheral.services?.first else { return }
        peripheral.discoverIncludedServices(nil, for: first)
    }

    func peripheral(_ peripheral: CBMPeripheral, didDiscoverIncludedServicesFor service: CBMService, error: Error?) {
        included = (service.includedServices ?? []).map(\.uuid.uuidString)
    }
}

@Suite("What CombineCB's suite relies on", .timeLimit(.minutes(10)), .finishesOwnBridges)
struct CombineCBParityTests {
    // CoreBluetoothMock's peripheral (CBMPeripheralMock) holds its delegate strongly, so its
    // users' wrappers may make themselves the delegate of a peripheral and be kept by it alone,
    // as CombineCB's CCBPeripheral is. CoreBluetooth's (and a CBMCentralManager's here) does not.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test func aCoreBluetoothMockManagersPeripheralKeepsADelegateNothingElseHolds() async throws {
        let bridge = ownBridge(seed: 94)
        let watch = makeWatch(delegate: TransferSpecDelegate())
        try await bridge.run { @MainActor in
            CBMCentralManagerMock.simulatePeripherals([watch])
            let app = ParityApp()
            let mockManager = CBMCentralManagerMock(delegate: app, queue: nil)
            let plainManager = CBMCentralManager(delegate: app, queue: nil)
            try await bridge.waitForApp { mockManager.state == .poweredOn && plainManager.state == .poweredOn }
            let kept = try #require(mockManager.retrievePeripherals(withIdentifiers: [watch.identifier]).first)
            let notKept = try #require(plainManager.retrievePeripherals(withIdentifiers: [watch.identifier]).first)
            weak var keptDelegate: ParityApp?
            weak var droppedDelegate: ParityApp?
            do {
                let first = ParityApp()
                let second = ParityApp()
                kept.delegate = first
                notKept.delegate = second
                keptDelegate = first
                droppedDelegate = second
            }
            #expect(keptDelegate != nil)
            #expect(kept.delegate === keptDelegate)
            #expect(droppedDelegate == nil)
            #expect(notKept.delegate == nil)
            // Another delegate replaces the one kept, which goes.
            kept.delegate = app
            #expect(keptDelegate == nil)
        }
    }

    /// A peripheral delegate kept by its peripheral alone, whose deinit asks its manager for the
    /// state (an app's code, run as the manager's state falls below powered off and it forgets
    /// its peripherals).
    final class StateAskingDelegate: NSObject, CBMPeripheralDelegate, @unchecked Sendable {
        // @unchecked Sendable: immutable after init; the manager is only asked for its state.
        let manager: CBMCentralManager
        let seen: @Sendable (CBMManagerState) -> Void

        init(manager: CBMCentralManager, seen: @escaping @Sendable (CBMManagerState) -> Void) {
            self.manager = manager
            self.seen = seen
        }

        deinit { seen(manager.state) }
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test
    func aDelegateAPeripheralAloneKeptMayCallItsManagerAsItsPeripheralIsForgotten()
        async throws
    {
        let bridge = ownBridge(seed: 97)
        let watch = makeWatch(delegate: TransferSpecDelegate())
        let seen = LockedStates()
        try await bridge.run { @MainActor in
            CBMCentralManagerMock.simulatePeripherals([watch])
            let app = ParityApp()
            let manager = CBMCentralManagerMock(delegate: app, queue: nil)
            try await bridge.waitForApp { manager.state == .poweredOn }
            do {
                let peripheral = try #require(manager.retrievePeripherals(withIdentifiers: [watch.identifier]).first)
                peripheral.delegate = StateAskingDelegate(manager: manager) { seen.add($0) }
            }
            #expect(seen.all.isEmpty)
            // Unauthorized (a state below powered off: Bluetooth turned off keeps the objects),
            // the manager lets go of its peripheral objects, and with them the delegate, whose
            // deinit calls the manager: not while the manager's own lock is held (it would be
            // taken again, a crash or a deadlock).
            CBMCentralManagerMock.simulateAuthorization(.denied)
            try await bridge.waitForApp { !seen.all.isEmpty }
            CBMCentralManagerMock.simulateAuthorization(.allowedAlways)
        }
        #expect(seen.all == [.unauthorized])
    }

    /// States seen from any thread.
    final class LockedStates: @unchecked Sendable {
        // @unchecked Sendable: `states` is only read and written with `lock` held.
        private let lock = NSLock()
        private var states: [CBMManagerState] = []

        func add(_ state: CBMManagerState) { lock.withLock { states.append(state) } }
        var all: [CBMManagerState] { lock.withLock { states } }
    }

    // CBMCentralManagerMock.swift, discoverServices: the spec's services are listed, not the
    // services they include that it does not list (CombineCB's specs include primary services
    // they do not list, then discover the included ones in the first service listed).
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(arguments: [false, true])
    func serviceDiscoveryListsTheSpecsServicesAndNotThoseTheyOnlyInclude(realistic: Bool) async throws {
        let bridge = CoreBluetoothMockParityTests.bridge(realistic: realistic, seed: 95)
        let watch = makeIncludingWatch()
        let (services, included) = try await bridge.run { @MainActor () -> ([String], [String]) in
            CBMCentralManagerMock.simulatePeripherals([watch])
            let app = ServiceListingApp()
            let manager = CBMCentralManagerMock(delegate: app, queue: nil)
            app.manager = manager
            try await bridge.waitForApp { manager.state == .poweredOn }
            let peripheral = try #require(manager.retrievePeripherals(withIdentifiers: [watch.identifier]).first)
            app.peripheral = peripheral
            manager.connect(peripheral)
            try await bridge.waitForApp { app.included != nil }
            return (app.services ?? [], app.included ?? [])
        }
        #expect(services == [CBMUUID.transferService.uuidString])
        #expect(included == [CBMUUID.batteryService.uuidString])
    }

    // CBMAttributes.swift: services, characteristics and descriptors have an internal
    // `identifier`, a mock's own, shared by the objects a central discovers from it; CombineCB's
    // tests compare them, importing CoreBluetoothMock `@testable`.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test func discoveredAttributesHaveTheIdentifiersOfTheMocksTheSpecDeclared() async throws {
        let bridge = ownBridge(seed: 96)
        let watch = makeWatch(delegate: TransferSpecDelegate())
        let service = try #require(watch.services?.first)
        let characteristic = try #require(service.characteristicMocks.first)
        let descriptor = try #require(characteristic.declaredDescriptorMocks.first)
        #expect(Set([service.identifier, characteristic.identifier, descriptor.identifier]).count == 3)
        #expect(service.identifier == service.identifier)
        try await bridge.run { @MainActor in
            CBMCentralManagerMock.simulatePeripherals([watch])
            let app = ParityApp()
            let (_, peripheral, discovered) = try await CoreBluetoothMockParityTests.connect(
                watch, app: app, on: bridge)
            peripheral.discoverDescriptors(for: discovered)
            try await bridge.waitForApp { app.lines.contains("descriptors nil") }
            #expect(discovered !== characteristic)
            #expect(discovered.identifier == characteristic.identifier)
            #expect(discovered.service?.identifier == service.identifier)
            #expect(discovered.descriptors?.map(\.identifier) == [descriptor.identifier])
        }
    }

    // CoreBluetoothMock up to 0.12: a service mock's characteristics and included services, and
    // a characteristic mock's descriptors, are settable; CombineCB's tests build mocks so.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test func aTestSetsAServiceMocksAttributesAndACharacteristicMocksDescriptorsAfterMakingThem() async throws {
        let bridge = ownBridge(seed: 97)
        let included = CBMServiceMock(type: .batteryService, primary: true)
        let service = CBMServiceMock(type: .transferService, primary: true)
        let characteristic = CBMCharacteristicMock(type: .transferData, properties: [.read, .notify])
        characteristic.descriptors = [CBMDescriptorMock(type: .userDescription)]
        service.characteristics = [characteristic]
        service.includedServices = [included]
        #expect(characteristic.service === service)
        #expect(characteristic.descriptors?.first?.characteristic === characteristic)
        let watch =
            CBMPeripheralSpec
            .simulatePeripheral(proximity: .near)
            .advertising(advertisementData: [CBMAdvertisementDataLocalNameKey: "Watch"])
            .connectable(name: "Watch", services: [service], delegate: TransferSpecDelegate())
            .allowForRetrieval()
            .build()
        try await bridge.run { @MainActor in
            CBMCentralManagerMock.simulatePeripherals([watch])
            let app = ParityApp()
            let (_, peripheral, discovered) = try await CoreBluetoothMockParityTests.connect(
                watch, app: app, on: bridge)
            #expect(discovered.uuid == .transferData)
            peripheral.discoverDescriptors(for: discovered)
            try await bridge.waitForApp { app.lines.contains("descriptors nil") }
            #expect(discovered.descriptors?.map(\.uuid) == [.userDescription])
            let discoveredService = try #require(discovered.service)
            peripheral.discoverIncludedServices(nil, for: discoveredService)
            try await bridge.waitForApp { discoveredService.includedServices != nil }
            #expect(discoveredService.includedServices?.map(\.uuid) == [.batteryService])
        }
    }

    // CBMCentralManagerMock.swift: the internal static `peripheral(_:didDisconnectWithError:)`,
    // which CombineCB's tests call `@testable`, disconnects the spec with the error given.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test func coreBluetoothMocksInternalDisconnectionHookHandsTheAppTheErrorGiven() async throws {
        let bridge = ownBridge(seed: 98)
        let watch = makeWatch(delegate: TransferSpecDelegate())
        try await bridge.run { @MainActor in
            CBMCentralManagerMock.simulatePeripherals([watch])
            let app = ParityApp()
            _ = try await CoreBluetoothMockParityTests.connect(watch, app: app, on: bridge)
            CBMCentralManagerMock.peripheral(
                watch, didDisconnectWithError: NSError(domain: "CombineCBTests", code: 555))
            try await bridge.waitForApp { app.lines.contains { $0.hasPrefix("disconnected") } }
            #expect(app.lines.last == "disconnected CombineCBTests 555")
        }
    }
}
