import BLECore
import BLEMockKit
import Foundation

/// What services, characteristics and descriptors share (`CBAttribute`): a UUID.
open class CBMAttribute: NSObject, @unchecked Sendable {
    // @unchecked Sendable: subclasses keep their mutable state behind their peripheral's lock.

    /// The attribute's UUID.
    public let uuid: CBMUUID

    init(uuid: CBMUUID) {
        self.uuid = uuid
        super.init()
    }
}

/// A service of a remote peripheral (`CBService`): the same object for the same service while
/// the peripheral stays connected; after a disconnection, discovery makes new ones.
open class CBMService: CBMAttribute, @unchecked Sendable {
    let remote: RemoteService
    let lock: Lock
    private weak var owner: CBMPeripheral?
    private var discoveredCharacteristics: [CBMCharacteristic]?
    private var discoveredIncludedServices: [CBMService]?
    /// With the lock held: ``identifier``, once read.
    var storedIdentifier: UUID?

    init(_ remote: RemoteService, peripheral: CBMPeripheral) {
        self.remote = remote
        self.owner = peripheral
        self.lock = peripheral.lock
        super.init(uuid: CBMUUID(bluetoothUUID: remote.uuid))
    }

    /// A service of the app's own (``CBMMutableService``): it has no remote handles (its
    /// `remote` is a placeholder with handle 0, which no peripheral's attributes match).
    init(local uuid: CBMUUID, primary: Bool) {
        self.remote = RemoteService(
            peripheral: localPlaceholder, uuid: uuid.bluetoothUUID, isPrimary: primary, handle: 0, endHandle: 0)
        self.owner = nil
        self.lock = Lock()
        super.init(uuid: uuid)
    }

    /// The peripheral the service belongs to. (Its setter is internal, as CoreBluetoothMock's:
    /// a test that imports BLECBM `@testable` may set it.)
    open internal(set) var peripheral: CBMPeripheral? {
        get { lock.withLock { owner } }
        set { lock.withLock { owner = newValue } }
    }
    /// Whether it is a primary service.
    open var isPrimary: Bool { remote.isPrimary }
    /// The characteristics discovered so far, or `nil` before any discovery.
    open var characteristics: [CBMCharacteristic]? { lock.withLock { discoveredCharacteristics } }
    /// The included services discovered so far, or `nil` before any discovery.
    open var includedServices: [CBMService]? { lock.withLock { discoveredIncludedServices } }

    /// With the lock held: merges newly discovered characteristics, keeping existing objects.
    func mergeCharacteristics(_ found: [CBMCharacteristic]) {
        discoveredCharacteristics = merged(discoveredCharacteristics, found, by: { $0.remote.handle })
    }

    /// With the lock held: merges newly discovered included services.
    func mergeIncludedServices(_ found: [CBMService]) {
        discoveredIncludedServices = merged(discoveredIncludedServices, found, by: { $0.remote.handle })
    }

    /// With the lock held: drops the included services at these handles (the peripheral
    /// invalidated them).
    func removeIncludedServices(at handles: Set<UInt16>) {
        discoveredIncludedServices?.removeAll { handles.contains($0.remote.handle) }
    }

    public override var description: String {
        "<CBMService: \(uuid.uuidString), primary: \(isPrimary)>"
    }
}

/// A characteristic of a remote peripheral (`CBCharacteristic`).
open class CBMCharacteristic: CBMAttribute, @unchecked Sendable {
    let remote: RemoteCharacteristic
    let lock: Lock
    private weak var owner: CBMService?
    var storedValue: Data?
    var storedDescriptors: [CBMDescriptor]?
    var notifying = false
    /// How many `setNotifyValue` calls on it are still on their way.
    var notifyRequests = 0
    /// With the lock held: ``identifier``, once read.
    var storedIdentifier: UUID?

    init(_ remote: RemoteCharacteristic, service: CBMService) {
        self.remote = remote
        self.owner = service
        self.lock = service.lock
        super.init(uuid: CBMUUID(bluetoothUUID: remote.uuid))
    }

    /// A characteristic of the app's own (``CBMMutableCharacteristic``), with a placeholder
    /// remote identity (handle 0).
    init(local uuid: CBMUUID, properties: CBMCharacteristicProperties, value: Data?) {
        let service = RemoteService(
            peripheral: localPlaceholder, uuid: uuid.bluetoothUUID, isPrimary: true, handle: 0, endHandle: 0)
        self.remote = RemoteCharacteristic(
            service: service, uuid: uuid.bluetoothUUID,
            properties: CharacteristicProperties(rawValue: properties.rawValue),
            handle: 0)
        self.owner = nil
        self.lock = Lock()
        self.storedValue = value
        super.init(uuid: uuid)
    }

    /// With the lock held: the service the characteristic belongs to (for a local one, set
    /// when its service is built).
    func setService(_ service: CBMService) { owner = service }

    /// The service the characteristic belongs to. (Its setter is internal, as
    /// CoreBluetoothMock's, as are those of ``value`` and ``isNotifying``: a test that imports
    /// BLECBM `@testable` may set them, say to hand the app a value the peripheral did not send.)
    open internal(set) var service: CBMService? {
        get { lock.withLock { owner } }
        set { lock.withLock { owner = newValue } }
    }

    /// The service the characteristic belongs to (CoreBluetoothMock's name for it, from the time
    /// its `service` was not optional).
    public var optionalService: CBMService? { service }
    /// What the characteristic supports.
    open var properties: CBMCharacteristicProperties {
        CBMCharacteristicProperties(rawValue: remote.properties.rawValue)
    }
    /// The latest value read or notified, or `nil` before any.
    open internal(set) var value: Data? {
        get { lock.withLock { storedValue } }
        set { lock.withLock { storedValue = newValue } }
    }
    /// The descriptors discovered so far, or `nil` before any discovery.
    open var descriptors: [CBMDescriptor]? { lock.withLock { storedDescriptors } }
    /// Whether notifications or indications are on for this characteristic.
    open internal(set) var isNotifying: Bool {
        get { lock.withLock { notifying } }
        set { lock.withLock { notifying = newValue } }
    }
    /// Whether the characteristic is broadcast (always `false`, as on current systems).
    open var isBroadcasted: Bool { false }

    public override var description: String {
        "<CBMCharacteristic: \(uuid.uuidString), properties: \(remote.properties), notifying: \(isNotifying)>"
    }
}

/// A descriptor of a remote characteristic (`CBDescriptor`).
open class CBMDescriptor: CBMAttribute, @unchecked Sendable {
    let remote: RemoteDescriptor
    let lock: Lock
    private weak var owner: CBMCharacteristic?
    var storedValue: Any?
    /// With the lock held: ``identifier``, once read.
    var storedIdentifier: UUID?

    init(_ remote: RemoteDescriptor, characteristic: CBMCharacteristic) {
        self.remote = remote
        self.owner = characteristic
        self.lock = characteristic.lock
        super.init(uuid: CBMUUID(bluetoothUUID: remote.uuid))
    }

    /// A descriptor of the app's own (``CBMMutableDescriptor``), with a placeholder remote
    /// identity (handle 0).
    init(local uuid: CBMUUID, value: Any?) {
        let service = RemoteService(
            peripheral: localPlaceholder, uuid: uuid.bluetoothUUID, isPrimary: true, handle: 0, endHandle: 0)
        let characteristic = RemoteCharacteristic(service: service, uuid: uuid.bluetoothUUID, properties: [], handle: 0)
        self.remote = RemoteDescriptor(characteristic: characteristic, uuid: uuid.bluetoothUUID, handle: 0)
        self.owner = nil
        self.lock = Lock()
        self.storedValue = value
        super.init(uuid: uuid)
    }

    /// With the lock held: the characteristic the descriptor belongs to (for a local one, set
    /// when its characteristic is built).
    func setCharacteristic(_ characteristic: CBMCharacteristic) { owner = characteristic }

    /// The characteristic the descriptor belongs to. (Its setter is internal, as
    /// CoreBluetoothMock's, as is that of ``value``: a test that imports BLECBM `@testable` may
    /// set them.)
    open internal(set) var characteristic: CBMCharacteristic? {
        get { lock.withLock { owner } }
        set { lock.withLock { owner = newValue } }
    }

    /// The characteristic the descriptor belongs to (CoreBluetoothMock's name for it, from the
    /// time its `characteristic` was not optional).
    public var optionalCharacteristic: CBMCharacteristic? { characteristic }

    /// The latest value read, typed as CoreBluetooth types it: an `NSNumber` for the extended
    /// properties and client or server configuration descriptors, a `String` for the user
    /// description, `Data` for the others; `nil` before any read.
    open internal(set) var value: Any? {
        get { lock.withLock { storedValue } }
        set { lock.withLock { storedValue = newValue } }
    }

    /// A descriptor value as CoreBluetooth types it.
    static func typedValue(_ data: Data, uuid: BluetoothUUID) -> Any {
        switch uuid.value16 {
        case 0x2900, 0x2902, 0x2903:
            let bytes = Array(data.prefix(2)) + [0, 0]
            return NSNumber(value: UInt16(bytes[0]) | UInt16(bytes[1]) << 8)
        case 0x2901:
            return String(decoding: data, as: UTF8.self)
        default:
            return data
        }
    }

    public override var description: String { "<CBMDescriptor: \(uuid.uuidString)>" }
}

/// The peripheral identifier of a local attribute's placeholder remote identity.
let localPlaceholder = UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))

/// `existing` with the objects of `found` whose key it lacks added, in key order.
func merged<Object, Key: Comparable>(_ existing: [Object]?, _ found: [Object], by key: (Object) -> Key) -> [Object] {
    var result = existing ?? []
    for object in found where !result.contains(where: { key($0) == key(object) }) {
        result.append(object)
    }
    return result.sorted { key($0) < key($1) }
}
