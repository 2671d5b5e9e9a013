import BLECBM
import BLECore
import BLEMockKit
import Foundation
import Testing

/// An app that lets go of its `CBMCentralManager` or `CBMPeripheralManager` with a restore
/// identifier and makes another (a user signing out and in, a feature turned off and on) gets a
/// manager that works, as CoreBluetooth gives it: the new one starts afresh under the same
/// identifier. A third made while the second lives is refused, as any clash is.
@Suite("A manager made again", .timeLimit(.minutes(10)))
struct RecreatedManagerTests {
    final class StateJournal: NSObject, CBMCentralManagerDelegate, @unchecked Sendable {
        // @unchecked Sendable: `states` is only touched on the manager's queue.
        var states: [CBMManagerState] = []
        func centralManagerDidUpdateState(_ central: CBMCentralManager) { states.append(central.state) }
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(
        "A manager made again with the same restore identifier hears its state once and scans",
        arguments: [false, true])
    func madeAgain(realistic: Bool) async throws {
        let bridge = MockBLEBridge(configuration: realistic ? .realistic(seed: 21) : .init(seed: 21))
        let queue = DispatchQueue(label: "app")
        let options = [CBMCentralManagerOptionRestoreIdentifierKey: "companion"]
        let (states, scanning, identifiers) = try await bridge.run { () -> ([CBMManagerState], Bool, [UUID?]) in
            let first = StateJournal()
            var manager: CBMCentralManager? = CBMCentralManager(
                bridge: bridge, delegate: first, queue: queue, options: options)
            try await bridge.waitForApp { queue.sync { first.states.last == .poweredOn } }
            let firstIdentifier = manager?.simulatedCentral?.identifier
            manager = nil
            let second = StateJournal()
            let again = CBMCentralManager(bridge: bridge, delegate: second, queue: queue, options: options)
            try await bridge.waitForApp { queue.sync { second.states.last == .poweredOn } }
            again.scanForPeripherals(withServices: nil)
            try await bridge.waitForApp { again.isScanning }
            return (
                queue.sync { second.states }, again.isScanning, [firstIdentifier, again.simulatedCentral?.identifier]
            )
        }
        #expect(states.filter { $0 == .poweredOn }.count == 1)
        #expect(scanning)
        #expect(identifiers[0] != nil && identifiers[0] == identifiers[1])
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(
        "A third manager with the restore identifier, made while the second lives, is refused and hears unsupported",
        arguments: [false, true])
    func aThirdWhileTheSecondLivesIsRefused(realistic: Bool) async throws {
        let bridge = MockBLEBridge(configuration: realistic ? .realistic(seed: 23) : .init(seed: 23))
        let queue = DispatchQueue(label: "app")
        let options = [CBMCentralManagerOptionRestoreIdentifierKey: "companion"]
        let (thirdStates, secondStates, refusedMisuses) = try await bridge.run {
            () -> ([CBMManagerState], [CBMManagerState], [String]) in
            let first = StateJournal()
            var manager: CBMCentralManager? = CBMCentralManager(
                bridge: bridge, delegate: first, queue: queue, options: options)
            try await bridge.waitForApp { queue.sync { first.states.last == .poweredOn } }
            manager = nil
            let second = StateJournal()
            let again = CBMCentralManager(bridge: bridge, delegate: second, queue: queue, options: options)
            try await bridge.waitForApp { queue.sync { second.states.last == .poweredOn } }
            let third = StateJournal()
            let refused = CBMCentralManager(bridge: bridge, delegate: third, queue: queue, options: options)
            // A manager made after the third, on the same queue: once it hears its state, the
            // third would have heard one.
            let other = StateJournal()
            let witness = CBMCentralManager(bridge: bridge, delegate: other, queue: queue)
            try await bridge.waitForApp { queue.sync { other.states.last == .poweredOn } }
            withExtendedLifetime((manager, again, refused, witness)) {}
            return (queue.sync { third.states }, queue.sync { second.states }, refused.apiMisuses)
        }
        // Its one state is `unsupported` (it takes nothing of the second's), as CoreBluetooth
        // reports for a second manager with a restore identifier in use.
        #expect(thirdStates == [.unsupported])
        #expect(refusedMisuses.count == 1)
        #expect(secondStates == [.poweredOn])
    }

    /// A peripheral app: once powered on it publishes a service with a readable characteristic
    /// it answers itself, and advertises it.
    final class PeripheralApp: NSObject, CBMPeripheralManagerDelegate, @unchecked Sendable {
        // @unchecked Sendable: every property is only touched on the manager's queue.
        static let service = CBMUUID(string: "FEE0")
        static let characteristic = CBMUUID(string: "FEE1")
        var states: [CBMManagerState] = []
        var advertising = false
        var reads = 0

        func peripheralManagerDidUpdateState(_ peripheral: CBMPeripheralManager) {
            states.append(peripheral.state)
            guard peripheral.state == .poweredOn else { return }
            let service = CBMMutableService(type: Self.service, primary: true)
            service.characteristics = [
                CBMMutableCharacteristic(
                    type: Self.characteristic, properties: [.read], value: nil, permissions: [.readable])
            ]
            peripheral.add(service)
        }

        func peripheralManager(_ peripheral: CBMPeripheralManager, didAdd service: CBMService, error: (any Error)?) {
            guard error == nil else { return }
            peripheral.startAdvertising([
                CBMAdvertisementDataLocalNameKey: "Watch", CBMAdvertisementDataServiceUUIDsKey: [Self.service],
            ])
        }

        func peripheralManagerDidStartAdvertising(_ peripheral: CBMPeripheralManager, error: (any Error)?) {
            advertising = error == nil
        }

        func peripheralManager(_ peripheral: CBMPeripheralManager, didReceiveRead request: CBMATTRequest) {
            reads += 1
            request.value = Data([UInt8(reads)])
            peripheral.respond(to: request, withResult: .success)
        }
    }

    // (It used to be refused: the second never heard its state.)
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(
        "A peripheral manager made again with the same restore identifier hears its state once, advertises, answers; a third while it lives hears unsupported",
        arguments: [false, true])
    func peripheralMadeAgain(realistic: Bool) async throws {
        let bridge = MockBLEBridge(configuration: realistic ? .realistic(seed: 24) : .init(seed: 24))
        let central = MockCentralManager(configuration: realistic ? .realistic(seed: 24) : .fast, bridge: bridge)
        let queue = DispatchQueue(label: "app")
        let options = [CBMPeripheralManagerOptionRestoreIdentifierKey: "watch"]
        let (states, thirdStates, identifiers, value, refusedMisuses) = try await bridge.run {
            () -> ([CBMManagerState], [CBMManagerState], [UUID?], Data, [String]) in
            let first = PeripheralApp()
            var manager: CBMPeripheralManager? = CBMPeripheralManager(
                bridge: bridge, delegate: first, queue: queue, options: options)
            try await bridge.waitForApp { queue.sync { first.advertising } }
            let firstIdentifier = manager?.simulatedPeripheral?.identifier
            manager = nil
            let second = PeripheralApp()
            let again = CBMPeripheralManager(bridge: bridge, delegate: second, queue: queue, options: options)
            try await bridge.waitForApp { queue.sync { second.advertising } }
            let identifier = try #require(again.simulatedPeripheral?.identifier)
            // A third while the second lives is refused: it hears `unsupported`.
            let third = PeripheralApp()
            let refused = CBMPeripheralManager(bridge: bridge, delegate: third, queue: queue, options: options)
            // A central finds the second, connects to it, and reads what its app answers.
            try await central.scanForPeripherals(withServices: [PeripheralApp.service.bluetoothUUID])
            await bridge.waitUntil { bridge in
                bridge.log.contains { $0.kind == .discovered && $0.peripheral == identifier }
            }
            try await central.connect(identifier)
            let found = try await central.discoverAll(for: identifier)
            let characteristic = try #require(
                found.first { $0.uuid == PeripheralApp.characteristic.bluetoothUUID })
            let value = try await central.readValue(for: characteristic)
            try await bridge.waitForApp { queue.sync { !third.states.isEmpty } }
            withExtendedLifetime((again, refused)) {}
            return (
                queue.sync { second.states }, queue.sync { third.states },
                [firstIdentifier, again.simulatedPeripheral?.identifier], value, refused.apiMisuses
            )
        }
        #expect(states == [.poweredOn])
        #expect(thirdStates == [.unsupported])
        #expect(refusedMisuses.count == 1)
        #expect(refusedMisuses.first?.contains("restore identifier \"watch\"") == true, "\(refusedMisuses)")
        #expect(identifiers[0] != nil && identifiers[0] == identifiers[1])
        #expect(value == Data([1]))
    }
}
