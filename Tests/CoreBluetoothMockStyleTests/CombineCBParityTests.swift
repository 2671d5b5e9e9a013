import BLEMockKit
import Foundation
import Testing

@testable import BLECBM

// What kaphacius/CombineCB's XCTest suite (scripts/third-party-cbm-tests.sh, THIRD_PARTY_SUITE=
// CombineCB) showed BLECBM doing otherwise than CoreBluetoothMock.

@Suite("What CombineCB's suite relies on", .timeLimit(.minutes(10)))
struct CombineCBParityTests {
    // CoreBluetoothMock's peripheral (CBMPeripheralMock) holds its delegate strongly, so its
    // users' wrappers may make themselves the delegate of a peripheral and be kept by it alone,
    // as CombineCB's CCBPeripheral is. CoreBluetooth's (and a CBMCentralManager's here) does not.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test func aCoreBluetoothMockManagersPeripheralKeepsADelegateNothingElseHolds() async throws {
        let bridge = MockBLEBridge(seed: 94)
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
}
