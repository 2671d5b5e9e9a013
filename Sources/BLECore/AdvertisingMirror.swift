/// Whether a peripheral manager is advertising, as its app reads it, across Bluetooth's state
/// changes (for the front ends that keep it beside the manager): below powered on, advertising
/// stops; turned off (`poweredOff`) it only pauses, and goes on once powered on again; below
/// powered off it is over, and the app starts it again (CoreBluetooth's
/// `peripheralManagerDidUpdateState(_:)` documentation).
package struct AdvertisingMirror: Sendable, Equatable {
    /// Whether the manager advertises now.
    package var isAdvertising = false
    /// Whether Bluetooth's turning off paused the advertising.
    private var paused = false

    package init() {}

    /// The manager's state changed to `state`.
    package mutating func stateChanged(to state: ManagerState) {
        switch state {
        case .poweredOn:
            if paused { isAdvertising = true }
            paused = false
        case .poweredOff:
            paused = paused || isAdvertising
            isAdvertising = false
        case .unknown, .resetting, .unsupported, .unauthorized:
            isAdvertising = false
            paused = false
        }
    }
}
