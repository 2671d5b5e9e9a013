import Foundation

/// A peripheral delegate made of closures (CoreBluetoothMock's `CBMPeripheralDelegateProxy`):
/// set the closures a test needs, leave the others `nil`.
///
/// A peripheral holds its delegate weakly, as CoreBluetooth does: keep the proxy alive as long
/// as the test needs its callbacks.
open class CBMPeripheralDelegateProxy: NSObject, CBMPeripheralDelegate {
    /// Called for `peripheralDidUpdateName(_:)`.
    public var didUpdateName: ((CBMPeripheral) -> Void)?
    /// Called for `peripheral(_:didModifyServices:)`.
    public var didModifyServices: ((CBMPeripheral, [CBMService]) -> Void)?
    /// Called for `peripheral(_:didReadRSSI:error:)`.
    public var didReadRSSI: ((CBMPeripheral, NSNumber, (any Error)?) -> Void)?
    /// Called for `peripheral(_:didDiscoverServices:)`.
    public var didDiscoverServices: ((CBMPeripheral, (any Error)?) -> Void)?
    /// Called for `peripheral(_:didDiscoverIncludedServicesFor:error:)`.
    public var didDiscoverIncludedServices: ((CBMPeripheral, CBMService, (any Error)?) -> Void)?
    /// Called for `peripheral(_:didDiscoverCharacteristicsFor:error:)`.
    public var didDiscoverCharacteristics: ((CBMPeripheral, CBMService, (any Error)?) -> Void)?
    /// Called for `peripheral(_:didUpdateValueFor:error:)` of a characteristic.
    public var didUpdateCharacteristicValue: ((CBMPeripheral, CBMCharacteristic, (any Error)?) -> Void)?
    /// Called for `peripheral(_:didWriteValueFor:error:)` of a characteristic.
    public var didWriteCharacteristicValue: ((CBMPeripheral, CBMCharacteristic, (any Error)?) -> Void)?
    /// Called for `peripheral(_:didUpdateNotificationStateFor:error:)`.
    public var didUpdateNotificationState: ((CBMPeripheral, CBMCharacteristic, (any Error)?) -> Void)?
    /// Called for `peripheral(_:didDiscoverDescriptorsFor:error:)`.
    public var didDiscoverDescriptors: ((CBMPeripheral, CBMCharacteristic, (any Error)?) -> Void)?
    /// Called for `peripheral(_:didUpdateValueFor:error:)` of a descriptor.
    public var didUpdateDescriptorValue: ((CBMPeripheral, CBMDescriptor, (any Error)?) -> Void)?
    /// Called for `peripheral(_:didWriteValueFor:error:)` of a descriptor.
    public var didWriteDescriptorValue: ((CBMPeripheral, CBMDescriptor, (any Error)?) -> Void)?
    /// Called for `peripheralIsReady(toSendWriteWithoutResponse:)`.
    public var isReadyToSendWriteWithoutResponse: ((CBMPeripheral) -> Void)?

    /// Creates a proxy with no closures set.
    public override init() {
        super.init()
    }

    open func peripheralDidUpdateName(_ peripheral: CBMPeripheral) {
        didUpdateName?(peripheral)
    }

    open func peripheral(_ peripheral: CBMPeripheral, didModifyServices invalidatedServices: [CBMService]) {
        didModifyServices?(peripheral, invalidatedServices)
    }

    open func peripheral(_ peripheral: CBMPeripheral, didReadRSSI rssi: NSNumber, error: (any Error)?) {
        didReadRSSI?(peripheral, rssi, error)
    }

    open func peripheral(_ peripheral: CBMPeripheral, didDiscoverServices error: (any Error)?) {
        didDiscoverServices?(peripheral, error)
    }

    open func peripheral(
        _ peripheral: CBMPeripheral, didDiscoverIncludedServicesFor service: CBMService, error: (any Error)?
    ) {
        didDiscoverIncludedServices?(peripheral, service, error)
    }

    open func peripheral(
        _ peripheral: CBMPeripheral, didDiscoverCharacteristicsFor service: CBMService, error: (any Error)?
    ) {
        didDiscoverCharacteristics?(peripheral, service, error)
    }

    open func peripheral(
        _ peripheral: CBMPeripheral, didUpdateValueFor characteristic: CBMCharacteristic, error: (any Error)?
    ) {
        didUpdateCharacteristicValue?(peripheral, characteristic, error)
    }

    open func peripheral(
        _ peripheral: CBMPeripheral, didWriteValueFor characteristic: CBMCharacteristic, error: (any Error)?
    ) {
        didWriteCharacteristicValue?(peripheral, characteristic, error)
    }

    open func peripheral(
        _ peripheral: CBMPeripheral, didUpdateNotificationStateFor characteristic: CBMCharacteristic,
        error: (any Error)?
    ) {
        didUpdateNotificationState?(peripheral, characteristic, error)
    }

    open func peripheral(
        _ peripheral: CBMPeripheral, didDiscoverDescriptorsFor characteristic: CBMCharacteristic, error: (any Error)?
    ) {
        didDiscoverDescriptors?(peripheral, characteristic, error)
    }

    open func peripheral(_ peripheral: CBMPeripheral, didUpdateValueFor descriptor: CBMDescriptor, error: (any Error)?)
    {
        didUpdateDescriptorValue?(peripheral, descriptor, error)
    }

    open func peripheral(_ peripheral: CBMPeripheral, didWriteValueFor descriptor: CBMDescriptor, error: (any Error)?) {
        didWriteDescriptorValue?(peripheral, descriptor, error)
    }

    open func peripheralIsReady(toSendWriteWithoutResponse peripheral: CBMPeripheral) {
        isReadyToSendWriteWithoutResponse?(peripheral)
    }
}

/// A ``CBMPeripheralDelegateProxy`` that also hears L2CAP channels opening (CoreBluetoothMock's
/// `CBMPeripheralDelegateProxyWithL2CAPChannel`).
open class CBMPeripheralDelegateProxyWithL2CAPChannel: CBMPeripheralDelegateProxy {
    /// Called for `peripheral(_:didOpen:error:)`.
    public var didOpenChannel: ((CBMPeripheral, CBML2CAPChannel?, (any Error)?) -> Void)?

    open func peripheral(_ peripheral: CBMPeripheral, didOpen channel: CBML2CAPChannel?, error: (any Error)?) {
        didOpenChannel?(peripheral, channel, error)
    }
}
