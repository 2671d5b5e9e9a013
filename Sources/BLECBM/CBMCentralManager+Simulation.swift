import BLECore
import BLEMockKit
import Foundation

/// Test hooks of a manager on a bridge. On a manager that is not on a bridge they do nothing.
extension CBMCentralManager {
    /// The simulated central behind this manager, for the kit's own test hooks (error
    /// injection, state changes, background execution, app termination), or `nil` when the
    /// manager is not on a bridge.
    public var simulatedCentral: MockCentralManager? { (backend as? MockCentralEngine)?.central }

    /// The bridge this manager runs on, or `nil`.
    public var bridge: MockBLEBridge? { (backend as? MockCentralEngine)?.bridge }

    /// The calls CoreBluetooth would have refused with an "API MISUSE" log and ignored (a
    /// read on a peripheral that is not connected, an attribute from an earlier connection, a
    /// scan, stopping one or retrieving peripherals while not powered on), the writes without
    /// response it drops with a warning (to a characteristic without that property: the
    /// peripheral never gets them), and a connect to a peripheral already connected to this
    /// manager (no second `didConnect` follows), oldest first. A test can assert it is empty.
    ///
    /// A manager made with no bridge current and no ``SimulatedSystem`` installed, on a
    /// platform without CoreBluetooth, is `unsupported`: the commands it ignored are listed here
    /// too.
    public var apiMisuses: [String] {
        (backend as? MockCentralEngine)?.apiMisuses ?? (backend as? UnsupportedCentralBackend)?.notes.all ?? []
    }

    /// Sets the app's Bluetooth authorization on this manager's bridge (as
    /// `CBManager.authorization` reports it). Any authorization but `allowedAlways` makes the
    /// bridge's central managers `unauthorized`, as CoreBluetooth reports; `allowedAlways` again
    /// brings them back to Bluetooth's simulated state.
    public func simulateAuthorization(_ authorization: CBMManagerAuthorization) {
        guard let bridge else { return }
        MockCentralEngine.setAuthorization(authorization, on: bridge)
    }
}
