import BLECore
import BLEMockKit
import Foundation

/// The peripheral role with CoreBluetooth's API (`CBPeripheralManager`): publish services,
/// advertise, answer requests, notify subscribers, with results at a
/// ``CBMPeripheralManagerDelegate`` on the queue given (the main queue when `nil`).
///
/// Created while a test's bridge is current it runs on that bridge, else on the installed
/// ``SimulatedSystem``, as ``CBMCentralManager`` does;
/// ``init(bridge:delegate:queue:options:configuration:)`` puts one on a bridge explicitly.
open class CBMPeripheralManager: CBMManager, @unchecked Sendable {
    // @unchecked Sendable: `storedDelegate` is only read and written with `lock` held.
    let backend: any PeripheralBackend
    let lock = Lock()
    private weak var storedDelegate: (any CBMPeripheralManagerDelegate)?

    /// Creates a manager with no delegate on the main queue.
    public convenience override init() {
        self.init(delegate: nil, queue: nil, options: nil)
    }

    /// Creates a manager whose delegate is called on `queue` (the main queue when `nil`).
    public convenience init(delegate: (any CBMPeripheralManagerDelegate)?, queue: DispatchQueue?) {
        self.init(delegate: delegate, queue: queue, options: nil)
    }

    /// Creates a manager with options. It runs on the current test's bridge when there is one
    /// (`MockBLEBridge.current`), else on the installed ``SimulatedSystem``.
    public init(delegate: (any CBMPeripheralManagerDelegate)?, queue: DispatchQueue?, options: [String: Any]? = nil) {
        if let joined = BridgeScope.currentForManager {
            backend = MockPeripheralEngine(
                bridge: joined.bridge, system: joined.system, queue: queue, options: options, configuration: nil)
        } else {
            backend = NativeSupport.peripheralBackend(queue: queue, options: options)
        }
        storedDelegate = delegate
        super.init()
        backend.attach(self)
    }

    /// Creates a manager on a bridge, whatever the current scope: the explicit factory.
    public init(
        bridge: MockBLEBridge, delegate: (any CBMPeripheralManagerDelegate)?, queue: DispatchQueue?,
        options: [String: Any]? = nil, configuration: MockPeripheralManager.Configuration? = nil
    ) {
        backend = MockPeripheralEngine(
            bridge: bridge, system: nil, queue: queue, options: options, configuration: configuration)
        storedDelegate = delegate
        super.init()
        backend.attach(self)
    }

    /// Receives the manager's callbacks, on its queue.
    open var delegate: (any CBMPeripheralManagerDelegate)? {
        get { lock.withLock { storedDelegate } }
        set { lock.withLock { storedDelegate = newValue } }
    }

    open override var state: CBMManagerState { backend.state }

    /// The app's authorization to share data over Bluetooth in the peripheral role, as
    /// CoreBluetooth told it before `CBManager.authorization`
    /// (`CBPeripheralManager.authorizationStatus()`, deprecated there since iOS 13): the class's
    /// ``CBMManager/authorization-type.property`` under its older names.
    public class func authorizationStatus() -> CBMPeripheralManagerAuthorizationStatus {
        CBMPeripheralManagerAuthorizationStatus(authorization)
    }

    /// Whether the manager is advertising.
    open var isAdvertising: Bool { backend.isAdvertising }

    /// Publishes a service (and its characteristics and descriptors); the delegate gets
    /// `peripheralManager(_:didAdd:error:)`. Only while powered on: otherwise the call is
    /// ignored, with no callback, and noted in ``apiMisuses`` (as CoreBluetooth logs "API
    /// MISUSE"). A service object this manager has already published is not published again:
    /// the delegate gets `invalidParameters`, and the call is noted in ``apiMisuses``.
    open func add(_ service: CBMMutableService) { backend.add(service) }

    /// Removes a published service. Only while powered on: otherwise ignored and noted in
    /// ``apiMisuses`` (CoreBluetooth's peripheral manager takes commands only while powered on,
    /// and its local database is cleared when its state falls below powered off).
    open func remove(_ service: CBMMutableService) { backend.remove(service) }

    /// Removes every published service. Only while powered on (otherwise ignored and noted in
    /// ``apiMisuses``).
    open func removeAllServices() { backend.removeAllServices() }

    /// Starts advertising ``CBMAdvertisementDataLocalNameKey`` and
    /// ``CBMAdvertisementDataServiceUUIDsKey`` (the keys CoreBluetooth honours); the delegate
    /// gets `peripheralManagerDidStartAdvertising(_:error:)`. Only while powered on (otherwise
    /// ignored and noted in ``apiMisuses``).
    ///
    /// As CoreBluetooth does in the foreground, what goes on the air fits in the advertising
    /// packet's 28 bytes (each field with its 2-byte header): the service UUIDs first, those that
    /// do not fit in the overflow area (found only by a scan for them), then the local name, in
    /// what is left or the scan response's 10 bytes, shortened when it does not fit (with a
    /// 128-bit service UUID, its first 8 bytes). In the background
    /// (``simulatedPeripheral``'s `simulateBackgroundExecution(true)`)
    /// there is no name and every service UUID is in the overflow area.
    open func startAdvertising(_ advertisementData: [String: Any]?) { backend.startAdvertising(advertisementData) }

    /// Stops advertising. Only while powered on (otherwise ignored and noted in ``apiMisuses``:
    /// advertising has already stopped as Bluetooth left that state).
    open func stopAdvertising() { backend.stopAdvertising() }

    /// Sends a value to the subscribed centrals (all of them when `centrals` is `nil`).
    /// Returns `false`, sending nothing, when the update queue is full; the delegate then gets
    /// `peripheralManagerIsReady(toUpdateSubscribers:)` when there is room. Returns `false`
    /// too while not powered on, and for a characteristic that is not in a service this manager
    /// published (never added, removed, or its add not yet done): both noted in ``apiMisuses``,
    /// as no ready callback follows them.
    ///
    /// An injected `.updateValue` failure (`ErrorInjection`) loses the update: this call answers
    /// before the simulation sees it, and CoreBluetooth's has no error to report, so it has
    /// returned `true`; the bridge's log has the update, with the injected error. To make the
    /// app meet `false`, shrink the update queue (`LinkLimits.updateQueueCapacity`).
    open func updateValue(
        _ value: Data, for characteristic: CBMMutableCharacteristic, onSubscribedCentrals centrals: [CBMCentral]?
    ) -> Bool {
        backend.updateValue(value, for: characteristic, onSubscribedCentrals: centrals)
    }

    /// Answers a read or write request (for writes, the first of the batch). For a read, set
    /// the request's `value` first. CoreBluetooth asks for exactly one answer per request: a
    /// second one, or one after the request's central went away, is ignored (the central has
    /// its answer, or is gone) and noted in ``apiMisuses``. So is an answer to a write batch's
    /// request other than its first (a long write's later part): it answers nothing, and the
    /// batch waits for its answer (until ATT's 30-second transaction timeout drops the link),
    /// or, when its central went away meanwhile, waits for nothing (the note says which).
    open func respond(to request: CBMATTRequest, withResult result: CBMATTError.Code) {
        backend.respond(to: request, withResult: result)
    }

    /// Asks for a connection latency for a central (accepted; the simulation keeps its timing).
    open func setDesiredConnectionLatency(_ latency: CBMPeripheralManagerConnectionLatency, for central: CBMCentral) {}

    /// Publishes an L2CAP channel; the delegate gets `peripheralManager(_:didPublishL2CAPChannel:error:)`.
    /// Only while powered on (otherwise ignored and noted in ``apiMisuses``).
    open func publishL2CAPChannel(withEncryption encryptionRequired: Bool) {
        backend.publishL2CAPChannel(withEncryption: encryptionRequired)
    }

    /// Unpublishes an L2CAP channel; the delegate gets `peripheralManager(_:didUnpublishL2CAPChannel:error:)`.
    /// The channels open on the PSM close, as CoreBluetooth's do: their streams at both ends end.
    /// Only while powered on (otherwise ignored, with no callback, and noted in ``apiMisuses``).
    open func unpublishL2CAPChannel(_ psm: UInt16) { backend.unpublishL2CAPChannel(psm) }

    /// The simulated peripheral manager behind this manager, for the kit's test hooks, or
    /// `nil` when it is not on a bridge.
    public var simulatedPeripheral: MockPeripheralManager? { (backend as? MockPeripheralEngine)?.peripheral }

    /// The calls CoreBluetooth would have refused with an "API MISUSE" log and ignored, with no
    /// callback (adding a service, advertising, updating a value or publishing a channel while
    /// not powered on; updating a characteristic that is not published), the answers it ignores
    /// (``respond(to:withResult:)`` to a request already answered, or whose central went away,
    /// or to a write batch's request other than its first),
    /// advertising data of the wrong type (a local name that is not a `String`, service
    /// UUIDs that are not `CBMUUID`s: an exception on a device; here the key is left out),
    /// and services CoreBluetooth does not take (a cached value on a characteristic that can be
    /// written or can notify, a value over 512 bytes, a Client Characteristic Configuration
    /// descriptor of the app's, the `broadcast` or `extendedProperties` property on a
    /// characteristic of the app's; their add fails with ``CBMError/Code/invalidParameters``),
    /// oldest first. A test can assert it is empty.
    ///
    /// A manager made with no bridge current and no ``SimulatedSystem`` installed, on a
    /// platform without CoreBluetooth, is `unsupported`: the commands it ignored are listed here
    /// too.
    public var apiMisuses: [String] {
        (backend as? MockPeripheralEngine)?.apiMisuses ?? (backend as? UnsupportedPeripheralBackend)?.notes.all ?? []
    }
}

/// Connection latencies a peripheral manager may ask for (`CBPeripheralManagerConnectionLatency`).
public enum CBMPeripheralManagerConnectionLatency: Int, Sendable {
    case low = 0
    case medium = 1
    case high = 2
}

/// What a ``CBMPeripheralManager`` runs on.
protocol PeripheralBackend: AnyObject, Sendable {
    var state: CBMManagerState { get }
    var isAdvertising: Bool { get }
    func attach(_ manager: CBMPeripheralManager)
    func add(_ service: CBMMutableService)
    func remove(_ service: CBMMutableService)
    func removeAllServices()
    func startAdvertising(_ advertisementData: [String: Any]?)
    func stopAdvertising()
    func updateValue(_ value: Data, for characteristic: CBMMutableCharacteristic, onSubscribedCentrals: [CBMCentral]?)
        -> Bool
    func respond(to request: CBMATTRequest, withResult result: CBMATTError.Code)
    func publishL2CAPChannel(withEncryption encryptionRequired: Bool)
    func unpublishL2CAPChannel(_ psm: UInt16)
}

/// A peripheral manager on a system without Bluetooth LE: `unsupported`, every call ignored.
final class UnsupportedPeripheralBackend: PeripheralBackend, @unchecked Sendable {
    // @unchecked Sendable: immutable after init (`notes` keeps its own lock).
    let queue: DispatchQueue
    let notes = UnsupportedSystemNotes(manager: "peripheral manager", type: "CBMPeripheralManager")

    init(queue: DispatchQueue) { self.queue = queue }

    var state: CBMManagerState { .unsupported }
    var isAdvertising: Bool { false }

    func attach(_ manager: CBMPeripheralManager) {
        queue.async { [weak manager] in
            guard let manager, let delegate = manager.delegate else { return }
            delegate.peripheralManagerDidUpdateState(manager)
        }
    }

    func add(_ service: CBMMutableService) { notes.ignored("add") }
    func remove(_ service: CBMMutableService) {}
    func removeAllServices() {}
    func startAdvertising(_ advertisementData: [String: Any]?) { notes.ignored("startAdvertising") }
    func stopAdvertising() {}
    func updateValue(_ value: Data, for characteristic: CBMMutableCharacteristic, onSubscribedCentrals: [CBMCentral]?)
        -> Bool
    {
        notes.ignored("updateValue")
        return false
    }
    func respond(to request: CBMATTRequest, withResult result: CBMATTError.Code) {}
    func publishL2CAPChannel(withEncryption encryptionRequired: Bool) { notes.ignored("publishL2CAPChannel") }
    func unpublishL2CAPChannel(_ psm: UInt16) {}
}
