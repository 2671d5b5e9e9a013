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
    /// The peripheral resets: every link drops with `peripheralDisconnected`, and it keeps
    /// its services and advertising (as a device rebooting into the same firmware).
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
public enum Proximity: Sendable, Hashable {
    /// Right next to the central: -40 dBm.
    case immediate
    /// In the same room: -60 dBm.
    case near
    /// Far away: -80 dBm.
    case far
    /// Out of range: not heard at all.
    case outOfRange

    /// The signal strength at this distance, before seeded variation.
    public var rssi: Int? {
        switch self {
        case .immediate: -40
        case .near: -60
        case .far: -80
        case .outOfRange: nil
        }
    }
}
