#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Something that happened to a central manager, delivered by ``CentralManaging/events()``.
public enum CentralEvent: Hashable, Sendable {
    /// The manager's state changed.
    case stateChanged(ManagerState)
    /// An advertisement was received while scanning.
    case discovered(DiscoveredPeripheral)
    /// A connection was established.
    case connected(RemotePeripheral)
    /// A connection attempt failed.
    case failedToConnect(RemotePeripheral, CoreBluetoothError)
    /// A connection ended: `nil` when this central cancelled it, otherwise the reason
    /// (e.g. ``CoreBluetoothError/Code/peripheralDisconnected`` or
    /// ``CoreBluetoothError/Code/connectionTimeout``).
    case disconnected(RemotePeripheral, CoreBluetoothError?)
    /// A notification or indication arrived with this value.
    case valueUpdated(RemoteCharacteristic, Data)
    /// The transmit queue for writes without response has room again.
    case readyToSendWriteWithoutResponse(RemotePeripheral)
    /// The peripheral changed its database: these services are invalid; rediscover.
    case servicesModified(RemotePeripheral, invalidated: [RemoteService])
    /// The peripheral's name changed.
    case nameUpdated(RemotePeripheral)
    /// The system connected to or disconnected from a peripheral matching the options given
    /// to ``CentralManaging/registerForConnectionEvents(options:)`` — whichever app (or
    /// manager) made the connection.
    case connectionEvent(ConnectionEvent, RemotePeripheral)
    /// The user granted or revoked the peripheral's access to Apple Notification Center
    /// Service (ANCS) notifications.
    case ancsAuthorizationUpdated(RemotePeripheral, isAuthorized: Bool)
    /// The system relaunched the app and hands this manager what it kept for the manager's
    /// restore identifier; it comes before any other event.
    case willRestoreState(RestoredCentralState)
}

/// Something that happened to a peripheral manager, delivered by
/// ``PeripheralManaging/events()``.
public enum PeripheralEvent: Hashable, Sendable {
    /// The manager's state changed.
    case stateChanged(ManagerState)
    /// A central read a dynamic characteristic; answer with
    /// ``PeripheralManaging/respond(to:withResult:value:)``.
    case readRequest(ATTRequest)
    /// A central wrote a dynamic characteristic: one request, or several for a long or
    /// reliable write; answer the first with ``PeripheralManaging/respond(to:withResult:value:)``.
    case writeRequests([ATTRequest])
    /// A central subscribed to a characteristic.
    case subscribed(RemoteCentral, LocalCharacteristic)
    /// A central unsubscribed from a characteristic, or disconnected while subscribed.
    case unsubscribed(RemoteCentral, LocalCharacteristic)
    /// The transmit queue has room again after ``PeripheralManaging/updateValue(_:for:onSubscribedCentrals:)``
    /// returned `false`.
    case readyToUpdateSubscribers
    /// The system relaunched the app and hands this manager what it kept for the manager's
    /// restore identifier; it comes before any other event.
    case willRestoreState(RestoredPeripheralState)
    /// A central opened an L2CAP channel to a PSM this manager published.
    case l2capChannelOpened(L2CAPChannel)
}

/// Options for ``CentralManaging/scanForPeripherals(withServices:options:)``.
public struct ScanOptions: Hashable, Sendable {
    /// Report every advertisement, not only the first of each peripheral
    /// (`CBCentralManagerScanOptionAllowDuplicatesKey`). Defaults to `false`.
    public var allowDuplicates: Bool
    /// Also report peripherals soliciting any of these services
    /// (`CBCentralManagerScanOptionSolicitedServiceUUIDsKey`). Defaults to empty.
    public var solicitedServiceUUIDs: [BluetoothUUID]

    /// Creates scan options.
    public init(allowDuplicates: Bool = false, solicitedServiceUUIDs: [BluetoothUUID] = []) {
        self.allowDuplicates = allowDuplicates
        self.solicitedServiceUUIDs = solicitedServiceUUIDs
    }
}

/// Options for ``CentralManaging/connect(_:options:)``.
public struct ConnectOptions: Hashable, Sendable {
    /// How long to wait before giving up with ``CoreBluetoothError/Code/connectionTimeout``
    /// and cancelling the pending connection. CoreBluetooth itself never times out a
    /// connection attempt; `nil` waits indefinitely. A timeout must be above zero: the mock
    /// refuses a connect given zero or less with ``APIMisuseError/invalidArgument(_:)``, in
    /// fast and realistic mode alike. Defaults to `nil`.
    public var timeout: Duration?

    /// Creates connect options.
    public init(timeout: Duration? = nil) {
        self.timeout = timeout
    }
}
