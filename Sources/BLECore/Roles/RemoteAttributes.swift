#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A peripheral known to a central: discovered, retrieved or connected.
public struct RemotePeripheral: Hashable, Sendable {
    /// The identifier the central knows the peripheral by (as `CBPeripheral.identifier`).
    public var identifier: UUID
    /// The peripheral's GAP name, if known.
    public var name: String?

    /// Creates a peripheral reference.
    public init(identifier: UUID, name: String?) {
        self.identifier = identifier
        self.name = name
    }
}

/// One advertisement received while scanning.
public struct DiscoveredPeripheral: Hashable, Sendable {
    /// The advertising peripheral.
    public var peripheral: RemotePeripheral
    /// The advertisement's contents.
    public var advertisementData: AdvertisementData
    /// The received signal strength in dBm.
    public var rssi: Int

    /// Creates a discovery.
    public init(peripheral: RemotePeripheral, advertisementData: AdvertisementData, rssi: Int) {
        self.peripheral = peripheral
        self.advertisementData = advertisementData
        self.rssi = rssi
    }

    /// The peripheral's identifier.
    public var identifier: UUID { peripheral.identifier }
}

/// A service of a connected peripheral, as discovered by a central.
///
/// Services are identified by their attribute handle range, so two services with the same
/// UUID stay distinct.
public struct RemoteService: Hashable, Sendable {
    /// The peripheral the service belongs to.
    public var peripheral: UUID
    /// The service type.
    public var uuid: BluetoothUUID
    /// Whether the service is primary.
    public var isPrimary: Bool
    /// The handle of the service declaration.
    public var handle: UInt16
    /// The last handle belonging to the service.
    public var endHandle: UInt16

    /// Creates a service reference.
    public init(peripheral: UUID, uuid: BluetoothUUID, isPrimary: Bool, handle: UInt16, endHandle: UInt16) {
        self.peripheral = peripheral
        self.uuid = uuid
        self.isPrimary = isPrimary
        self.handle = handle
        self.endHandle = endHandle
    }
}

/// A characteristic of a connected peripheral, as discovered by a central.
///
/// A characteristic is identified by its peripheral and value handle — never by its UUID
/// alone, so two services carrying the same characteristic UUID stay distinct. Its
/// ``service`` says which service it belongs to.
public struct RemoteCharacteristic: Hashable, Sendable {
    /// The service the characteristic belongs to.
    public var service: RemoteService
    /// The characteristic type.
    public var uuid: BluetoothUUID
    /// What the characteristic supports, as the peripheral declares it.
    public var properties: CharacteristicProperties
    /// The handle of the characteristic's value attribute.
    public var handle: UInt16

    /// Creates a characteristic reference.
    public init(service: RemoteService, uuid: BluetoothUUID, properties: CharacteristicProperties, handle: UInt16) {
        self.service = service
        self.uuid = uuid
        self.properties = properties
        self.handle = handle
    }

    /// The peripheral the characteristic belongs to.
    public var peripheral: UUID { service.peripheral }
}

/// A descriptor of a connected peripheral's characteristic, as discovered by a central.
public struct RemoteDescriptor: Hashable, Sendable {
    /// The characteristic the descriptor belongs to.
    public var characteristic: RemoteCharacteristic
    /// The descriptor type.
    public var uuid: BluetoothUUID
    /// The descriptor's attribute handle.
    public var handle: UInt16

    /// Creates a descriptor reference.
    public init(characteristic: RemoteCharacteristic, uuid: BluetoothUUID, handle: UInt16) {
        self.characteristic = characteristic
        self.uuid = uuid
        self.handle = handle
    }

    /// The peripheral the descriptor belongs to.
    public var peripheral: UUID { characteristic.peripheral }
}
