#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A characteristic in a GATT database description.
///
/// A characteristic created with a ``value`` is *static*: the stack answers reads from that
/// cached value and the peripheral manager never sees them (CoreBluetooth requires such a
/// characteristic to be read-only). One created without a value is *dynamic*: reads and
/// writes reach the peripheral manager as requests it must answer.
public struct GATTCharacteristic: Hashable, Sendable {
    /// The characteristic type.
    public var uuid: BluetoothUUID
    /// What the characteristic supports.
    public var properties: CharacteristicProperties
    /// Who may read and write its value.
    public var permissions: AttributePermissions
    /// The cached value of a static characteristic, or `nil` for a dynamic one.
    public var value: Data?
    /// The descriptors, in database order (excluding the stack-managed `2902`).
    public var descriptors: [GATTDescriptor]

    /// Creates a characteristic description.
    public init(
        uuid: BluetoothUUID,
        properties: CharacteristicProperties,
        permissions: AttributePermissions,
        value: Data? = nil,
        descriptors: [GATTDescriptor] = []
    ) {
        self.uuid = uuid
        self.properties = properties
        self.permissions = permissions
        self.value = value
        self.descriptors = descriptors
    }

    /// Whether the stack answers reads from a cached value (see the type's discussion).
    public var isStatic: Bool { value != nil }
}
