import BLECore

/// How a mock manager's state evolves on its own.
public enum StateTransition: Sendable, Hashable {
    /// The manager is in its initial state from the start; the default.
    case instant
    /// The manager starts `ManagerState.unknown`, passes through `ManagerState.resetting`
    /// halfway, and settles in its initial state after `duration` of virtual time, with a
    /// state-changed event at each step. ``MockCentralManager/waitForPoweredOn()`` runs the
    /// simulation until the state settles.
    case realistic(duration: Duration)
    /// The manager starts `ManagerState.unknown` and settles in its initial state after
    /// `duration` of virtual time, with one state-changed event then: what a new
    /// `CBCentralManager` reports (its first `…DidUpdateState` carries its real state). The
    /// CoreBluetooth-shaped API's managers use it in realistic mode.
    case delayed(Duration)
    /// The manager is in this state from the start, whatever the initial state, and never
    /// leaves it by itself (test hooks still change it). `.stuck(.unauthorized)` models an
    /// app the user denied Bluetooth access. `.stuck(.unknown)` and `.stuck(.resetting)` are
    /// the only ways to a manager that never settles (a configuration whose initial state is
    /// `unknown` or `resetting` with another transition is refused with
    /// `APIMisuseError.invalidConfiguration(_:)`): its `waitForPoweredOn()` waits until a test
    /// hook changes the state or the waiting task is cancelled, and inside
    /// ``MockBLEBridge/run(timeLimit:stallPatience:_:)`` a stall report names the wait.
    case stuck(ManagerState)

    /// The state a manager settles in, given its configured initial state.
    func settledState(initial: ManagerState) -> ManagerState {
        if case .stuck(let state) = self { return state }
        return initial
    }
}

extension ManagerState {
    /// Whether a manager can settle in this state: `unknown` and `resetting` are on the way to
    /// another (only ``StateTransition/stuck(_:)`` keeps a manager in one).
    package var isSettled: Bool { self != .unknown && self != .resetting }
}

extension StateTransition {
    /// The transition that keeps a manager in `state` when it is one that never settles
    /// (`unknown`, `resetting`), as a CoreBluetoothMock-style simulated initial state does;
    /// `nil` for a settled state.
    package static func holding(_ state: ManagerState) -> StateTransition? {
        state.isSettled ? nil : .stuck(state)
    }
}
