import BLECore
import BLEMockKit
import Foundation

/// Permissions of a local attribute (`CBAttributePermissions`), with CoreBluetooth's raw values.
public struct CBMAttributePermissions: OptionSet, Sendable, Hashable {
    public let rawValue: UInt
    public init(rawValue: UInt) { self.rawValue = rawValue }

    public static let readable = CBMAttributePermissions(rawValue: 0x01)
    public static let writeable = CBMAttributePermissions(rawValue: 0x02)
    public static let readEncryptionRequired = CBMAttributePermissions(rawValue: 0x04)
    public static let writeEncryptionRequired = CBMAttributePermissions(rawValue: 0x08)

    /// The permissions of the kit's value type.
    init(_ permissions: AttributePermissions) {
        var converted: CBMAttributePermissions = []
        if permissions.contains(.readable) { converted.insert(.readable) }
        if permissions.contains(.writeable) { converted.insert(.writeable) }
        if permissions.contains(.readEncryptionRequired) { converted.insert(.readEncryptionRequired) }
        if permissions.contains(.writeEncryptionRequired) { converted.insert(.writeEncryptionRequired) }
        self = converted
    }

    var attributePermissions: AttributePermissions {
        var permissions: AttributePermissions = []
        if contains(.readable) { permissions.insert(.readable) }
        if contains(.writeable) { permissions.insert(.writeable) }
        if contains(.readEncryptionRequired) { permissions.insert(.readEncryptionRequired) }
        if contains(.writeEncryptionRequired) { permissions.insert(.writeEncryptionRequired) }
        return permissions
    }
}

/// A service the app publishes (`CBMutableService`).
open class CBMMutableService: CBMService, @unchecked Sendable {
    private var localCharacteristics: [CBMCharacteristic]?
    private var localIncludedServices: [CBMService]?

    /// Creates a service with a UUID, primary or secondary.
    public init(type UUID: CBMUUID, primary isPrimary: Bool) {
        super.init(local: UUID, primary: isPrimary)
    }

    /// The service's characteristics (``CBMMutableCharacteristic``s).
    open override var characteristics: [CBMCharacteristic]? {
        get { lock.withLock { localCharacteristics } }
        set { lock.withLock { localCharacteristics = newValue } }
    }

    /// The services it includes (published before it).
    open override var includedServices: [CBMService]? {
        get { lock.withLock { localIncludedServices } }
        set { lock.withLock { localIncludedServices = newValue } }
    }
}

/// A characteristic the app publishes (`CBMutableCharacteristic`). Created with a value it is
/// static: the stack answers reads itself (it must then be read-only). Created without one it
/// is dynamic: reads and writes reach the peripheral manager's delegate.
open class CBMMutableCharacteristic: CBMCharacteristic, @unchecked Sendable {
    private var localProperties: CBMCharacteristicProperties
    private var localPermissions: CBMAttributePermissions
    private var localDescriptors: [CBMDescriptor]?
    var subscribers: [CBMCentral] = []

    /// Creates a characteristic. With a `value`, the characteristic caches it (the stack answers
    /// reads with it, and the app hears of none), and, as CoreBluetooth documents, it is readable:
    /// `read` joins its properties and `readable` its permissions. A cached value is for read-only
    /// characteristics: adding one that may also be written, notified or indicated is refused,
    /// as CoreBluetooth refuses it.
    public init(
        type UUID: CBMUUID, properties: CBMCharacteristicProperties, value: Data?, permissions: CBMAttributePermissions
    ) {
        let properties = value == nil ? properties : properties.union(.read)
        localProperties = properties
        localPermissions = value == nil ? permissions : permissions.union(.readable)
        super.init(local: UUID, properties: properties, value: value)
    }

    open override var properties: CBMCharacteristicProperties {
        get { lock.withLock { localProperties } }
        set { lock.withLock { localProperties = newValue } }
    }

    /// The characteristic's value: for a static one, what the stack answers reads with.
    open override var value: Data? {
        get { lock.withLock { storedValue } }
        set { lock.withLock { storedValue = newValue } }
    }

    /// Who may read and write it.
    open var permissions: CBMAttributePermissions {
        get { lock.withLock { localPermissions } }
        set { lock.withLock { localPermissions = newValue } }
    }

    /// Its descriptors (``CBMMutableDescriptor``s; the stack adds the CCCD itself).
    open override var descriptors: [CBMDescriptor]? {
        get { lock.withLock { localDescriptors } }
        set { lock.withLock { localDescriptors = newValue } }
    }

    /// The centrals subscribed to it, once published.
    open var subscribedCentrals: [CBMCentral]? { lock.withLock { subscribers } }

    /// The characteristic as the kit's value type.
    var gattCharacteristic: GATTCharacteristic {
        let descriptors = (self.descriptors ?? []).map { descriptor in
            GATTDescriptor(uuid: descriptor.uuid.bluetoothUUID, value: CBMMutableDescriptor.data(of: descriptor.value))
        }
        return GATTCharacteristic(
            uuid: uuid.bluetoothUUID, properties: CharacteristicProperties(rawValue: properties.rawValue),
            permissions: permissions.attributePermissions, value: value, descriptors: descriptors)
    }
}

/// A descriptor the app publishes (`CBMutableDescriptor`): a user description (`String`) or a
/// presentation format (`Data`), say.
open class CBMMutableDescriptor: CBMDescriptor, @unchecked Sendable {
    /// Creates a descriptor with a value.
    ///
    /// CoreBluetooth checks the value's type here and raises an exception (the app crashes) when
    /// it does not fit: a user description (2901) takes a `String`, a presentation format (2904)
    /// `Data`, a valid range (2906) `Data` of an even number of bytes, a descriptor with a
    /// 128-bit UUID `Data` (a `nil` value fits none of them). The kit takes any value here and
    /// refuses such a descriptor where it is published: `add(_:)` of its service fails with
    /// `CBMError.invalidParameters` and notes CoreBluetooth's reason in
    /// ``CBMPeripheralManager/apiMisuses``.
    public init(type UUID: CBMUUID, value: Any?) {
        super.init(local: UUID, value: value)
    }

    /// Why CoreBluetooth's `CBMutableDescriptor(type:value:)` refuses this descriptor's type and
    /// value (it raises `NSInternalInconsistencyException` with this reason, and the app
    /// crashes), or `nil` when it takes them: a user description (2901) needs a `String`, a
    /// presentation format (2904) `Data`, a valid range (2906) `Data` of an even number of
    /// bytes, and a descriptor with a 128-bit UUID `Data`; other 16-bit types take any value.
    var creationProblem: String? {
        let isString = value is String || value is NSString
        let isData = value is Data || value is NSData
        switch uuid.bluetoothUUID {
        case "2901": return isString ? nil : "Expecting NSString value type for User Description descriptor"
        case "2904": return isData ? nil : "Expecting NSData value type for Format descriptor"
        case "2906":
            let even = isData && Self.data(of: value).count.isMultiple(of: 2)
            return even ? nil : "Valid range must be an even number of bytes"
        case let other where other.width == .bits128:
            return isData ? nil : "Expecting NSData value type for 128-bit descriptor"
        default: return nil
        }
    }

    /// A descriptor value as bytes: a `String` as UTF-8, `Data` as is, an `NSNumber` as a
    /// little-endian 16-bit value.
    static func data(of value: Any?) -> Data {
        switch value {
        case let string as String: Data(string.utf8)
        case let data as Data: data
        case let number as NSNumber: Data([UInt8(number.uint16Value & 0xFF), UInt8(number.uint16Value >> 8)])
        default: Data()
        }
    }
}

/// A remote central as the app's peripheral manager sees it (`CBCentral`).
open class CBMCentral: CBMPeer, @unchecked Sendable {
    // @unchecked Sendable: `updateLength` is only read and written with `lock` held.
    private let lock = Lock()
    private var updateLength: Int

    /// The longest value one notification or indication can carry to it (ATT_MTU − 3) on its
    /// current link: the same object follows the central when it reconnects with another ATT_MTU.
    public var maximumUpdateValueLength: Int { lock.withLock { updateLength } }

    init(_ central: RemoteCentral) {
        updateLength = central.maximumUpdateValueLength
        super.init(identifier: central.identifier)
    }

    /// Takes the current link's figure (the peripheral manager's engine, as its events arrive).
    func update(_ central: RemoteCentral) {
        lock.withLock { updateLength = central.maximumUpdateValueLength }
    }
}

/// A read or write request from a central (`CBATTRequest`). For a read, set ``value`` and
/// answer with `respond(to:withResult:)`; for writes, answer the first request of the batch.
open class CBMATTRequest: NSObject, @unchecked Sendable {
    // @unchecked Sendable: `storedValue` is only read and written with `lock` held.
    let request: ATTRequest
    private let lock = Lock()
    private var storedValue: Data?

    /// The central asking.
    public let central: CBMCentral
    /// The characteristic asked about.
    public let characteristic: CBMCharacteristic
    /// The offset of the read or write.
    public let offset: Int

    init(_ request: ATTRequest, central: CBMCentral, characteristic: CBMCharacteristic) {
        self.request = request
        self.central = central
        self.characteristic = characteristic
        self.offset = request.offset
        self.storedValue = request.value
        super.init()
    }

    /// For a write, the value written; for a read, what the app answers with (from ``offset``).
    open var value: Data? {
        get { lock.withLock { storedValue } }
        set { lock.withLock { storedValue = newValue } }
    }
}
