import Foundation

/// A central manager delegate made of closures (CoreBluetoothMock's
/// `CBMCentralManagerDelegateProxy`): set the closures a test needs, leave the others `nil`.
///
/// ```swift
/// let delegate = CBMCentralManagerDelegateProxy()
/// delegate.didUpdateState = { manager in ready.fulfill() }
/// delegate.didDiscoverPeripheral = { manager, peripheral, advertisementData, rssi in found.fulfill() }
/// let manager = CBMCentralManagerMock(delegate: delegate, queue: nil)
/// ```
///
/// The manager holds its delegate weakly, as CoreBluetooth does: keep the proxy alive as long as
/// the test needs its callbacks.
open class CBMCentralManagerDelegateProxy: NSObject, CBMCentralManagerDelegate {
    /// Called for `centralManagerDidUpdateState(_:)`.
    public var didUpdateState: ((CBMCentralManager) -> Void)?
    /// Called for `centralManager(_:willRestoreState:)`.
    public var willRestoreState: ((CBMCentralManager, [String: Any]) -> Void)?
    /// Called for `centralManager(_:didDiscover:advertisementData:rssi:)`.
    public var didDiscoverPeripheral: ((CBMCentralManager, CBMPeripheral, [String: Any], NSNumber) -> Void)?
    /// Called for `centralManager(_:didConnect:)`.
    public var didConnect: ((CBMCentralManager, CBMPeripheral) -> Void)?
    /// Called for `centralManager(_:didFailToConnect:error:)`.
    public var didFailToConnect: ((CBMCentralManager, CBMPeripheral, (any Error)?) -> Void)?
    /// Called for either form of `centralManager(_:didDisconnectPeripheral:…)`, with the time of
    /// the disconnection and whether the system reconnects.
    public var didDisconnect: ((CBMCentralManager, CBMPeripheral, CFAbsoluteTime, Bool, (any Error)?) -> Void)?
    /// Called for `centralManager(_:connectionEventDidOccur:for:)`.
    public var connectionEventDidOccur: ((CBMCentralManager, CBMConnectionEvent, CBMPeripheral) -> Void)?
    /// Called for `centralManager(_:didUpdateANCSAuthorizationFor:)`.
    public var didUpdateANCSAuthorization: ((CBMCentralManager, CBMPeripheral) -> Void)?

    /// Creates a proxy with no closures set.
    public override init() {
        super.init()
    }

    open func centralManagerDidUpdateState(_ central: CBMCentralManager) {
        didUpdateState?(central)
    }

    open func centralManager(_ central: CBMCentralManager, willRestoreState dict: [String: Any]) {
        willRestoreState?(central, dict)
    }

    open func centralManager(
        _ central: CBMCentralManager, didDiscover peripheral: CBMPeripheral, advertisementData: [String: Any],
        rssi: NSNumber
    ) {
        didDiscoverPeripheral?(central, peripheral, advertisementData, rssi)
    }

    open func centralManager(_ central: CBMCentralManager, didConnect peripheral: CBMPeripheral) {
        didConnect?(central, peripheral)
    }

    open func centralManager(
        _ central: CBMCentralManager, didFailToConnect peripheral: CBMPeripheral, error: (any Error)?
    ) {
        didFailToConnect?(central, peripheral, error)
    }

    open func centralManager(
        _ central: CBMCentralManager, didDisconnectPeripheral peripheral: CBMPeripheral, error: (any Error)?
    ) {
        didDisconnect?(central, peripheral, CFAbsoluteTimeGetCurrent(), false, error)
    }

    open func centralManager(
        _ central: CBMCentralManager, didDisconnectPeripheral peripheral: CBMPeripheral, timestamp: CFAbsoluteTime,
        isReconnecting: Bool, error: (any Error)?
    ) {
        didDisconnect?(central, peripheral, timestamp, isReconnecting, error)
    }

    open func centralManager(
        _ central: CBMCentralManager, connectionEventDidOccur event: CBMConnectionEvent, for peripheral: CBMPeripheral
    ) {
        connectionEventDidOccur?(central, event, peripheral)
    }

    open func centralManager(_ central: CBMCentralManager, didUpdateANCSAuthorizationFor peripheral: CBMPeripheral) {
        didUpdateANCSAuthorization?(central, peripheral)
    }
}
