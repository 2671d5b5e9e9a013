/// What a waiting peripheral-manager call is waiting for: the key of ``PendingOperations``
/// in the CoreBluetooth-backed peripheral manager.
///
/// The type does not touch CoreBluetooth; it is unit-tested on every platform.
enum PeripheralOperation: Hashable, Sendable {
    /// `add(_:)` of the service with this number: answered by `didAdd`.
    case add(service: UInt16)
    /// `startAdvertising(_:)`: answered by `peripheralManagerDidStartAdvertising`.
    case startAdvertising
    /// `publishL2CAPChannel(requiresEncryption:)`: answered by `didPublishL2CAPChannel`, in
    /// call order.
    case publishL2CAPChannel
    /// `unpublishL2CAPChannel(_:)` of this PSM: answered by `didUnpublishL2CAPChannel`.
    case unpublishL2CAPChannel(psm: UInt16)

    /// Whether the call is adding a service (those fail when the manager powers off, since
    /// CoreBluetooth drops the published database then).
    var isAdd: Bool {
        if case .add = self { true } else { false }
    }
}
