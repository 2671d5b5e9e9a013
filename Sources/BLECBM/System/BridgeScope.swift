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
    /// The bridge a manager created now joins, if any.
    static var current: MockBLEBridge? { MockBLEBridge.current ?? SimulatedSystem.current?.bridge }

    /// The bridge CoreBluetoothMock's statics and mock managers act on: the current one, or an
    /// installed system's, installing one (as CoreBluetoothMock's simulation exists from the
    /// start) if there is none.
    static func forCoreBluetoothMock(_ call: String) -> MockBLEBridge {
        MockBLEBridge.current ?? SimulatedSystem.currentOrInstalledForCoreBluetoothMock(call).bridge
    }
}
