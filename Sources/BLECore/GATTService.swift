/// A service in a GATT database description: what a peripheral manager publishes and what
/// a fixture describes.
///
/// A whole database is an array of services. Included services are referenced by UUID and
/// must be part of the same database (usually as secondary services), added before the
/// services that include them, as CoreBluetooth requires.
///
/// ```swift
/// let battery = GATTService(
///     uuid: "180F",
///     characteristics: [
///         GATTCharacteristic(uuid: "2A19", properties: [.read, .notify], permissions: [.readable])
///     ])
/// ```
public struct GATTService: Hashable, Sendable {
    /// The service type.
    public var uuid: BluetoothUUID
    /// Whether the service is primary (discoverable on its own) or secondary (only useful
    /// when included by another service).
    public var isPrimary: Bool
    /// The UUIDs of services of the same database that this service includes.
    public var includedServices: [BluetoothUUID]
    /// The characteristics, in database order.
    public var characteristics: [GATTCharacteristic]

    /// Creates a service description.
    public init(
        uuid: BluetoothUUID,
        isPrimary: Bool = true,
        includedServices: [BluetoothUUID] = [],
        characteristics: [GATTCharacteristic] = []
    ) {
        self.uuid = uuid
        self.isPrimary = isPrimary
        self.includedServices = includedServices
        self.characteristics = characteristics
    }
}
