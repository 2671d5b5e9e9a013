import BLEMockKit
import Foundation

/// Which simulation the CoreBluetooth-shaped API acts on.
///
/// 1. The current test's bridge (`MockBLEBridge.current`): inside `bridge.run { }`, a trait's or
///    `runOnMockBridge`'s test, `MockBLEBridge.$current.withValue(bridge) { }`, and inside every
///    delegate callback the kit delivers for a manager on a bridge.
/// 2. Otherwise the installed ``SimulatedSystem``: on any thread or queue.
/// 3. Otherwise none: a manager runs on CoreBluetooth (Apple platforms) or reports `unsupported`
///    (Linux). CoreBluetoothMock's statics and mock managers install a system instead, as
///    CoreBluetoothMock's own simulation is always there.
enum BridgeScope {
    /// The current test's bridge (`MockBLEBridge.current`), unless it is the bridge an
    /// uninstalled ``SimulatedSystem`` had made: a delegate callback of a manager on that system,
    /// running after a `tearDownSimulation()` (its own, say), still has that bridge current, and
    /// the calls made there act on the live simulation, as CoreBluetoothMock's statics always do:
    /// the installed system, or a fresh one.
    static var testBridge: MockBLEBridge? {
        guard let bridge = MockBLEBridge.current,
            bridge.frontEndSettings[SpecSimulation.retiredKey] != SpecSimulation.retiredSystemsOwn
        else { return nil }
        return bridge
    }

    /// The bridge a manager created now joins, if any.
    static var current: MockBLEBridge? { currentForManager?.bridge }

    /// The bridge a manager created now joins, if any, with the system it was found through (`nil`:
    /// the current test's bridge).
    static var currentForManager: Joined? {
        if let bridge = testBridge { return Joined(bridge: bridge, system: nil) }
        return SimulatedSystem.current.map { Joined(bridge: $0.bridge, system: $0) }
    }

    /// The bridge CoreBluetoothMock's statics and mock managers act on: the current one, or an
    /// installed system's, installing one (as CoreBluetoothMock's simulation exists from the
    /// start) if there is none, installed by `call` of `type` (`CBMPeripheralSpec` for a spec's
    /// calls).
    static func forCoreBluetoothMock(_ call: String, of type: String = "CBMCentralManagerMock") -> MockBLEBridge {
        joinedForCoreBluetoothMock(call, of: type).bridge
    }

    /// ``forCoreBluetoothMock(_:of:)``'s bridge, with the system it was found through.
    static func joinedForCoreBluetoothMock(_ call: String, of type: String = "CBMCentralManagerMock") -> Joined {
        if let bridge = testBridge { return Joined(bridge: bridge, system: nil) }
        let system = SimulatedSystem.currentOrInstalledForCoreBluetoothMock("\(type).\(call)")
        return Joined(bridge: system.bridge, system: system)
    }

    /// The bridge a manager joins, and the simulated system it was found through, if it was:
    /// a system the test uninstalls just as the manager is made (on an app's queue, say) leaves
    /// the manager invalid, as those made before it (see `SimulatedSystem.uninstall()`).
    struct Joined {
        let bridge: MockBLEBridge
        let system: SimulatedSystem?
    }
}
