import BLECore
import BLEMockKit
import Foundation
import Testing

@testable import BLECBM

/// A spec's simulation that outlives its bridge (something else still holds it as the bridge is
/// let go of, on another thread, as a test's system is torn down while the next test calls the
/// spec): a `simulate…` call made with no bridge current looks through the spec's simulations and
/// must take that one for retired, not read its bridge.
@Suite("A spec's simulation that outlives its bridge", .timeLimit(.minutes(10)))
struct SpecSimulationLifetimeTests {
    @Test func aSimulateCallFindsASimulationWhoseBridgeIsGoneRetired() throws {
        let spec =
            CBMPeripheralSpec
            .simulatePeripheral(proximity: .near)
            .advertising(advertisementData: [CBMAdvertisementDataLocalNameKey: "Sensor"], withInterval: 0.1)
            .build()
        var bridge: MockBLEBridge? = MockBLEBridge()
        SpecSimulation.simulate([spec], on: bridge!)
        let simulation = try #require(SpecSimulation.existing(for: spec, on: bridge!))
        bridge = nil
        // With no bridge current and no system installed, the call finds the simulation live
        // while its bridge lingers (a task of its own may hold it a moment), retired once the
        // bridge is gone: it stopped the program there, reading the bridge.
        let found = spec.simulation(for: nil)
        #expect(found == nil || found === simulation)
        withExtendedLifetime(simulation) {}
    }
}
