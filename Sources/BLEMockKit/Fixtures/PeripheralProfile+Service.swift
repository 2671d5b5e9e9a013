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
        public static let fields = ["uuid", "primary", "includedServices", "characteristics", "handle", "endHandle"]

        /// The service type.
        public var uuid: BluetoothUUID
        /// Whether the service is primary (`primary`, default `true`).
        public var isPrimary: Bool
        /// The services it includes (`includedServices`), each listed earlier in the profile.
        public var includedServices: [BluetoothUUID]
        /// The characteristics, in database order.
        public var characteristics: [Characteristic]
        /// The handle of the service declaration on the device it was captured from
        /// (`handle`), if known. For reference only: the simulation numbers its own attributes.
        public var handle: UInt16?
        /// The last handle of the service's group on that device (`endHandle`), if known.
        public var endHandle: UInt16?

        /// Creates a service.
        public init(
            uuid: BluetoothUUID, isPrimary: Bool = true, includedServices: [BluetoothUUID] = [],
            characteristics: [Characteristic] = [], handle: UInt16? = nil, endHandle: UInt16? = nil
        ) {
            self.uuid = uuid
            self.isPrimary = isPrimary
            self.includedServices = includedServices
            self.characteristics = characteristics
            self.handle = handle
            self.endHandle = endHandle
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
        public static let fields = [
            "id", "uuid", "properties", "permissions", "value", "descriptors", "initialValue", "handle", "valueHandle",
        ]

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
        /// The current value a dynamic characteristic starts with (`initialValue`): what
        /// automatic request handling answers reads with until a write, an update or a
        /// `setValue` step changes it. `nil` starts empty. A static characteristic has none.
        public var initialValue: Data?
        /// The handle of the characteristic declaration on the device it was captured from
        /// (`handle`), if known. For reference only: the simulation numbers its own attributes.
        public var handle: UInt16?
        /// The handle of the characteristic value on that device (`valueHandle`), if known.
        public var valueHandle: UInt16?
        /// The handle each descriptor had on that device (a descriptor's `handle`), in the
        /// order of ``descriptors``; empty when none is known, `nil` for one that is not.
        public var descriptorHandles: [UInt16?]

        /// Creates a characteristic.
        public init(
            id: String? = nil, uuid: BluetoothUUID, properties: CharacteristicProperties,
            permissions: AttributePermissions, value: Data? = nil, descriptors: [GATTDescriptor] = [],
            initialValue: Data? = nil, handle: UInt16? = nil, valueHandle: UInt16? = nil,
            descriptorHandles: [UInt16?] = []
        ) {
            self.id = id
            self.uuid = uuid
            self.properties = properties
            self.permissions = permissions
            self.value = value
            self.descriptors = descriptors
            self.initialValue = initialValue
            self.handle = handle
            self.valueHandle = valueHandle
            self.descriptorHandles = descriptorHandles
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

    /// A descriptor object's fields (`descriptors[k]`): `uuid`, `value` and, for reference,
    /// the `handle` it had on a captured device.
    public static let descriptorFields = ["uuid", "value", "handle"]

    /// The attribute handles a profile may record (`handle`, `endHandle`, `valueHandle`).
    public static let handleRange = 1...0xFFFF

    /// An advertisement object's fields, one per `AdvertisementData` property.
    public static let advertisementFields = [
        "localName", "serviceUUIDs", "manufacturerData", "serviceData", "txPowerLevel", "isConnectable",
        "solicitedServiceUUIDs", "overflowServiceUUIDs",
    ]
}
