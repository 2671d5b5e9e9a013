import Foundation

/// What a peripheral manager tells its delegate (`CBPeripheralManagerDelegate`), on the
/// manager's queue. Every method but ``peripheralManagerDidUpdateState(_:)`` has a default
/// that does nothing, as CoreBluetooth's optional methods do.
public protocol CBMPeripheralManagerDelegate: AnyObject {
    /// The manager's state changed; also called once after the manager is created.
    func peripheralManagerDidUpdateState(_ peripheral: CBMPeripheralManager)
    /// The system restored this manager's state after relaunching the app.
    func peripheralManager(_ peripheral: CBMPeripheralManager, willRestoreState dict: [String: Any])
    /// Advertising started, or failed to.
    func peripheralManagerDidStartAdvertising(_ peripheral: CBMPeripheralManager, error: (any Error)?)
    /// A service was published, or failed to be.
    func peripheralManager(_ peripheral: CBMPeripheralManager, didAdd service: CBMService, error: (any Error)?)
    /// A central subscribed to a characteristic.
    func peripheralManager(
        _ peripheral: CBMPeripheralManager, central: CBMCentral, didSubscribeTo characteristic: CBMCharacteristic)
    /// A central unsubscribed from a characteristic (or its link dropped).
    func peripheralManager(
        _ peripheral: CBMPeripheralManager, central: CBMCentral, didUnsubscribeFrom characteristic: CBMCharacteristic)
    /// A central reads a dynamic characteristic: set the request's value and respond.
    func peripheralManager(_ peripheral: CBMPeripheralManager, didReceiveRead request: CBMATTRequest)
    /// A central writes (one request, or a long write's parts): respond to the first.
    func peripheralManager(_ peripheral: CBMPeripheralManager, didReceiveWrite requests: [CBMATTRequest])
    /// The update queue has room again after `updateValue` returned `false`.
    func peripheralManagerIsReady(toUpdateSubscribers peripheral: CBMPeripheralManager)
    /// An L2CAP channel was published.
    func peripheralManager(_ peripheral: CBMPeripheralManager, didPublishL2CAPChannel psm: UInt16, error: (any Error)?)
    /// An L2CAP channel was unpublished.
    func peripheralManager(
        _ peripheral: CBMPeripheralManager, didUnpublishL2CAPChannel psm: UInt16, error: (any Error)?)
    /// A central opened a published L2CAP channel.
    func peripheralManager(_ peripheral: CBMPeripheralManager, didOpen channel: CBML2CAPChannel?, error: (any Error)?)
}

extension CBMPeripheralManagerDelegate {
    public func peripheralManager(_ peripheral: CBMPeripheralManager, willRestoreState dict: [String: Any]) {}
    public func peripheralManagerDidStartAdvertising(_ peripheral: CBMPeripheralManager, error: (any Error)?) {}
    public func peripheralManager(_ peripheral: CBMPeripheralManager, didAdd service: CBMService, error: (any Error)?) {
    }
    public func peripheralManager(
        _ peripheral: CBMPeripheralManager, central: CBMCentral, didSubscribeTo characteristic: CBMCharacteristic
    ) {}
    public func peripheralManager(
        _ peripheral: CBMPeripheralManager, central: CBMCentral, didUnsubscribeFrom characteristic: CBMCharacteristic
    ) {}
    public func peripheralManager(_ peripheral: CBMPeripheralManager, didReceiveRead request: CBMATTRequest) {}
    public func peripheralManager(_ peripheral: CBMPeripheralManager, didReceiveWrite requests: [CBMATTRequest]) {}
    public func peripheralManagerIsReady(toUpdateSubscribers peripheral: CBMPeripheralManager) {}
    public func peripheralManager(
        _ peripheral: CBMPeripheralManager, didPublishL2CAPChannel psm: UInt16, error: (any Error)?
    ) {}
    public func peripheralManager(
        _ peripheral: CBMPeripheralManager, didUnpublishL2CAPChannel psm: UInt16, error: (any Error)?
    ) {}
    public func peripheralManager(
        _ peripheral: CBMPeripheralManager, didOpen channel: CBML2CAPChannel?, error: (any Error)?
    ) {}
}
