import BLECore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Something going wrong on the simulated air, applied at once with
/// ``MockBLEBridge/simulate(_:)`` or at a virtual time with ``MockBLEBridge/schedule(_:at:)``.
public enum Fault: Sendable, Hashable {
    /// The link drops; the central sees a disconnect with `error` and its waiting operations
    /// fail with it.
    case disconnect(central: UUID, peripheral: UUID, error: CoreBluetoothError)
    /// The peripheral resets (a device rebooting into the same firmware): its end of every
    /// link is gone at once, each central notices after the supervision timeout and loses the
    /// link with `connectionTimeout` (at once with instant timing), and it keeps its services
    /// and advertising.
    case reset(peripheral: UUID)
    /// The peripheral's signal strength changes, or it goes out of range: out of range, it is
    /// no longer discovered and its links drop with `connectionTimeout` after the
    /// supervision timeout; back in range, pending connections complete.
    case proximity(peripheral: UUID, Proximity)
    /// The peripheral advertises different data (while advertising).
    case advertisementChange(peripheral: UUID, AdvertisementData)
    /// The peripheral's GAP name changes; connected centrals see a name-updated event.
    case nameChange(peripheral: UUID, String?)
    /// A central's Bluetooth state changes (e.g. the user turns Bluetooth off).
    case centralState(UUID, ManagerState)
    /// A peripheral's Bluetooth state changes.
    case peripheralState(UUID, ManagerState)
}

/// How far a peripheral is from the centrals, which sets the RSSI they see.
///
/// The values are CoreBluetoothMock's: -40, -70 and -100 dBm. Its names differ: its `near` is
/// the closest (-40 dBm, the kit's ``immediate``) and its `immediate` is the kit's ``near``
/// (-70 dBm); `CBMProximity` in BLECBM keeps CoreBluetoothMock's names and numbers.
public enum Proximity: Sendable, Hashable {
    /// Right next to the central: -40 dBm.
    case immediate
    /// In the same room: -70 dBm.
    case near
    /// At the edge of range: -100 dBm.
    case far
    /// Out of range: not heard at all.
    case outOfRange

    /// The signal strength at this distance, before seeded variation.
    public var rssi: Int? {
        switch self {
        case .immediate: -40
        case .near: -70
        case .far: -100
        case .outOfRange: nil
        }
    }
}
