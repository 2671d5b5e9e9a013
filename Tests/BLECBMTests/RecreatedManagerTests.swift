import BLECBM
import BLECore
import BLEMockKit
import Foundation
import Testing

/// An app that lets go of its `CBMCentralManager` with a restore identifier and makes another
/// (a user signing out and in, a feature turned off and on) gets a manager that works, as
/// CoreBluetooth gives it: the new one starts afresh under the same identifier. A third made
/// while the second lives is refused, as any clash is.
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
        "A third manager with the restore identifier, made while the second lives, is refused and hears nothing",
        arguments: [false, true])
    func aThirdWhileTheSecondLivesIsRefused(realistic: Bool) async throws {
        let bridge = MockBLEBridge(configuration: realistic ? .realistic(seed: 23) : .init(seed: 23))
        let queue = DispatchQueue(label: "app")
        let options = [CBMCentralManagerOptionRestoreIdentifierKey: "companion"]
        let (thirdStates, secondStates) = try await bridge.run { () -> ([CBMManagerState], [CBMManagerState]) in
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
            return (queue.sync { third.states }, queue.sync { second.states })
        }
        #expect(thirdStates.isEmpty)
        #expect(secondStates == [.poweredOn])
    }
}
