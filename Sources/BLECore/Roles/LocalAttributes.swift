#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A service published by a peripheral manager, with the handles the stack assigned.
public struct LocalService: Hashable, Sendable {
    /// The service type.
    public var uuid: BluetoothUUID
    /// Whether the service is primary.
    public var isPrimary: Bool
    /// The handle of the service declaration.
    public var handle: UInt16
    /// The last handle belonging to the service.
    public var endHandle: UInt16
    /// The handles of the services this service includes.
    public var includedServiceHandles: [UInt16]
    /// The characteristics, in handle order.
    public var characteristics: [LocalCharacteristic]

    /// Creates a published service.
    public init(
        uuid: BluetoothUUID, isPrimary: Bool, handle: UInt16, endHandle: UInt16, includedServiceHandles: [UInt16],
        characteristics: [LocalCharacteristic]
    ) {
        self.uuid = uuid
        self.isPrimary = isPrimary
        self.handle = handle
        self.endHandle = endHandle
        self.includedServiceHandles = includedServiceHandles
        self.characteristics = characteristics
    }

    /// The first characteristic with a UUID, for the common case of unique UUIDs.
    public func characteristic(_ uuid: BluetoothUUID) -> LocalCharacteristic? {
        characteristics.first { $0.uuid == uuid }
    }
}

/// A characteristic published by a peripheral manager, identified by its value handle.
public struct LocalCharacteristic: Hashable, Sendable {
    /// The type of the service it belongs to.
    public var serviceUUID: BluetoothUUID
    /// The handle of the service it belongs to.
    public var serviceHandle: UInt16
    /// The characteristic type.
    public var uuid: BluetoothUUID
    /// What it supports.
    public var properties: CharacteristicProperties
    /// Who may read and write it.
    public var permissions: AttributePermissions
    /// The handle of its value attribute.
    public var handle: UInt16

    /// Creates a published characteristic.
    public init(
        serviceUUID: BluetoothUUID, serviceHandle: UInt16, uuid: BluetoothUUID, properties: CharacteristicProperties,
        permissions: AttributePermissions, handle: UInt16
    ) {
        self.serviceUUID = serviceUUID
        self.serviceHandle = serviceHandle
        self.uuid = uuid
        self.properties = properties
        self.permissions = permissions
        self.handle = handle
    }
}

/// A central connected to a peripheral manager (as `CBCentral`).
public struct RemoteCentral: Hashable, Sendable {
    /// The central's identifier.
    public var identifier: UUID
    /// The longest value this central receives in one notification or indication
    /// (ATT_MTU − 3 of its link); longer updates are truncated to it.
    public var maximumUpdateValueLength: Int

    /// Creates a central reference.
    public init(identifier: UUID, maximumUpdateValueLength: Int) {
        self.identifier = identifier
        self.maximumUpdateValueLength = maximumUpdateValueLength
    }
}

/// A read or write request from a central to a peripheral manager's dynamic characteristic
/// (as `CBATTRequest`). The peripheral answers with
/// ``PeripheralManaging/respond(to:withResult:value:)``.
public struct ATTRequest: Hashable, Sendable, Identifiable {
    /// A number unique among the requests of one peripheral manager.
    public var id: UInt64
    /// The requesting central.
    public var central: RemoteCentral
    /// The characteristic read or written.
    public var characteristic: LocalCharacteristic
    /// The offset into the value: for a read, where the answer must start (a long read sends
    /// one request per part); for a write, where the data goes.
    public var offset: Int
    /// For a write, the data written; `nil` for a read.
    public var value: Data?
    /// Whether this is a write command (a write without response): nothing waits for its
    /// answer. CoreBluetooth's `CBATTRequest` does not say; a request handler can tell.
    public var isCommand: Bool

    /// Creates a request.
    public init(
        id: UInt64, central: RemoteCentral, characteristic: LocalCharacteristic, offset: Int, value: Data?,
        isCommand: Bool = false
    ) {
        self.id = id
        self.central = central
        self.characteristic = characteristic
        self.offset = offset
        self.value = value
        self.isCommand = isCommand
    }
}
