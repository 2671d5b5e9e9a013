import BLECore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

extension PeripheralProfile {
    /// A service of a profile (`services[i]`).
    public struct Service: Sendable, Hashable {
        /// The fields a service object may have.
        public static let fields = ["uuid", "primary", "includedServices", "characteristics"]

        /// The service type.
        public var uuid: BluetoothUUID
        /// Whether the service is primary (`primary`, default `true`).
        public var isPrimary: Bool
        /// The services it includes (`includedServices`), each listed earlier in the profile.
        public var includedServices: [BluetoothUUID]
        /// The characteristics, in database order.
        public var characteristics: [Characteristic]

        /// Creates a service.
        public init(
            uuid: BluetoothUUID, isPrimary: Bool = true, includedServices: [BluetoothUUID] = [],
            characteristics: [Characteristic] = []
        ) {
            self.uuid = uuid
            self.isPrimary = isPrimary
            self.includedServices = includedServices
            self.characteristics = characteristics
        }

        /// The service as a peripheral manager publishes it.
        public var gattService: GATTService {
            GATTService(
                uuid: uuid, isPrimary: isPrimary, includedServices: includedServices,
                characteristics: characteristics.map(\.gattCharacteristic))
        }
    }

    /// A characteristic of a profile (`services[i].characteristics[j]`).
    public struct Characteristic: Sendable, Hashable {
        /// The fields a characteristic object may have.
        public static let fields = ["id", "uuid", "properties", "permissions", "value", "descriptors"]

        /// The name scenario steps use for it (`id`), unique within the profile, if given.
        public var id: String?
        /// The characteristic type.
        public var uuid: BluetoothUUID
        /// What it supports.
        public var properties: CharacteristicProperties
        /// Who may read and write it.
        public var permissions: AttributePermissions
        /// Its static value (`value`), or `nil` for a dynamic characteristic whose requests go
        /// to the peripheral manager.
        public var value: Data?
        /// Its descriptors (`descriptors`), in database order.
        public var descriptors: [GATTDescriptor]

        /// Creates a characteristic.
        public init(
            id: String? = nil, uuid: BluetoothUUID, properties: CharacteristicProperties,
            permissions: AttributePermissions, value: Data? = nil, descriptors: [GATTDescriptor] = []
        ) {
            self.id = id
            self.uuid = uuid
            self.properties = properties
            self.permissions = permissions
            self.value = value
            self.descriptors = descriptors
        }

        /// Whether the stack answers reads from the fixed ``value``.
        public var isStatic: Bool { value != nil }

        /// The characteristic as a peripheral manager publishes it.
        public var gattCharacteristic: GATTCharacteristic {
            GATTCharacteristic(
                uuid: uuid, properties: properties, permissions: permissions, value: value, descriptors: descriptors)
        }

        /// The properties that make a characteristic changeable by centrals or the peripheral,
        /// which a static value rules out (CoreBluetooth requires cached values to be read-only).
        static let mutableProperties: CharacteristicProperties = [
            .write, .writeWithoutResponse, .authenticatedSignedWrites, .notify, .indicate,
            .notifyEncryptionRequired, .indicateEncryptionRequired,
        ]
    }

    /// A descriptor object's fields (`descriptors[k]`): `uuid` and `value`.
    public static let descriptorFields = ["uuid", "value"]

    /// An advertisement object's fields, one per `AdvertisementData` property.
    public static let advertisementFields = [
        "localName", "serviceUUIDs", "manufacturerData", "serviceData", "txPowerLevel", "isConnectable",
        "solicitedServiceUUIDs", "overflowServiceUUIDs",
    ]
}
