import BLECore
import BLEMockKit
import Foundation

/// The central role with CoreBluetooth's API (`CBCentralManager`): scan, connect, retrieve,
/// with results at a ``CBMCentralManagerDelegate`` on the queue given (the main queue when
/// `nil`).
///
/// A manager created the CoreBluetooth way — `CBMCentralManager(delegate: self, queue: nil)` in
/// unchanged app code — runs on the current test's bridge when there is one (inside
/// `MockBLEBridge.run(timeLimit:stallPatience:_:)`, a test trait's scope,
/// `MockBLEBridge.$current.withValue(bridge) { … }`, or a delegate callback of a manager on a
/// bridge), else on the installed ``SimulatedSystem`` (from any thread or queue), else on
/// CoreBluetooth (Apple platforms) or reporting `unsupported` (Linux).
/// ``init(bridge:delegate:queue:options:configuration:)`` puts one on a bridge explicitly.
///
/// A manager the app lets go of leaves the air, as CoreBluetooth's does: its scan stops, its
/// connections and connection attempts end, and the callbacks of operations still in flight
/// are dropped. A test that looks at what the app waits for after its run (`finish()`, say)
/// keeps the manager until then.
open class CBMCentralManager: CBMManager, @unchecked Sendable {
    // @unchecked Sendable: `storedDelegate` is only read and written with `lock` held; the
    // backend is Sendable.
    let backend: any CentralBackend
    let lock = Lock()
    private weak var storedDelegate: (any CBMCentralManagerDelegate)?
    /// What the manager records, while a ``sessionRecorder`` is set.
    private var storedRecording: CentralRecording?

    /// Creates a manager with no delegate on the main queue.
    public convenience override init() {
        self.init(delegate: nil, queue: nil, options: nil)
    }

    /// Creates a manager whose delegate is called on `queue` (the main queue when `nil`).
    public convenience init(delegate: (any CBMCentralManagerDelegate)?, queue: DispatchQueue?) {
        self.init(delegate: delegate, queue: queue, options: nil)
    }

    /// Creates a manager with options (``CBMCentralManagerOptionRestoreIdentifierKey``,
    /// ``CBMCentralManagerOptionShowPowerAlertKey``). It runs on the current test's bridge
    /// when there is one (`MockBLEBridge.current`), else on the installed ``SimulatedSystem``.
    public init(delegate: (any CBMCentralManagerDelegate)?, queue: DispatchQueue?, options: [String: Any]? = nil) {
        backend = Self.backend(queue: queue, options: options)
        storedDelegate = delegate
        super.init()
        backend.attach(self)
    }

    /// Creates a manager with no delegate on the main queue, as ``init()`` does: the initializer
    /// CoreBluetoothMock gives subclasses (`super.init(true)`), whose argument means nothing.
    /// (CoreBluetoothMock's makes an inert object; this one works as any manager does, on the
    /// current test's bridge or the installed ``SimulatedSystem``.)
    public init(_ dummy: Bool) {
        backend = Self.backend(queue: nil, options: nil)
        super.init()
        backend.attach(self)
    }

    /// The backend of a manager made now: on the current test's bridge, else on the installed
    /// simulated system, else the platform's.
    private static func backend(queue: DispatchQueue?, options: [String: Any]?) -> any CentralBackend {
        if let joined = BridgeScope.currentForManager {
            return MockCentralEngine(
                bridge: joined.bridge, system: joined.system, queue: queue, options: options, configuration: nil)
        }
        return NativeSupport.centralBackend(queue: queue, options: options)
    }

    /// Creates a manager on a bridge, whatever the current scope: the explicit factory.
    ///
    /// - Parameters:
    ///   - bridge: The simulation to run on.
    ///   - delegate: Receives the manager's callbacks.
    ///   - queue: The queue callbacks arrive on (the main queue when `nil`).
    ///   - options: CoreBluetooth's options (restore identifier, power alert).
    ///   - configuration: The simulated central's behaviour; `nil` picks fast or realistic
    ///     from the bridge's timing, pairing as CoreBluetooth does when an access needs
    ///     encryption (at once in fast mode). A configuration given here is used as it is.
    public init(
        bridge: MockBLEBridge, delegate: (any CBMCentralManagerDelegate)?, queue: DispatchQueue?,
        options: [String: Any]? = nil, configuration: MockCentralManager.Configuration? = nil
    ) {
        backend = MockCentralEngine(
            bridge: bridge, system: nil, queue: queue, options: options, configuration: configuration)
        storedDelegate = delegate
        super.init()
        backend.attach(self)
    }

    /// Creates a manager on `joined`'s bridge (invalid at once if it was found through a
    /// simulated system that is uninstalled by the time it joins).
    init(
        joining joined: BridgeScope.Joined, delegate: (any CBMCentralManagerDelegate)?, queue: DispatchQueue?,
        options: [String: Any]?, configuration: MockCentralManager.Configuration?
    ) {
        backend = MockCentralEngine(
            bridge: joined.bridge, system: joined.system, queue: queue, options: options, configuration: configuration)
        storedDelegate = delegate
        super.init()
        backend.attach(self)
    }

    /// Receives the manager's callbacks, on its queue.
    open var delegate: (any CBMCentralManagerDelegate)? {
        get { lock.withLock { storedDelegate } }
        set { lock.withLock { storedDelegate = newValue } }
    }

    /// Records the session — what the app does through this manager and its peripherals and
    /// what their delegates are told — while set (e.g. in a debug build); `nil`, the default,
    /// records nothing. The app's delegates are called as without it, with the same arguments.
    ///
    /// A read's value and a notification reach `peripheral(_:didUpdateValueFor:error:)`
    /// alike: a value is recorded as a read's while a read of that characteristic is waiting.
    /// Writes with response are recorded when the peripheral confirms them; writes without
    /// response, on a bridge, as the simulated stack takes them: with the value as it crosses
    /// (cut to the link's length), or, for one that never crossed (its queue full, or the
    /// characteristic without the property), with the error the bridge logs for it, so a
    /// replay does not deliver it (on CoreBluetooth itself, as the app makes them).
    public var sessionRecorder: SessionRecorder? {
        get { lock.withLock { storedRecording?.recorder } }
        set {
            let recording = newValue.map { CentralRecording(recorder: $0) }
            lock.withLock {
                storedRecording = recording
                backend.recordingChanged(recording)
            }
        }
    }

    /// The recording state, while recording.
    var recording: CentralRecording? { lock.withLock { storedRecording } }

    /// The delegate the backends call: the app's, or a recording stand-in for it.
    var deliveryDelegate: (any CBMCentralManagerDelegate)? {
        let (delegate, recording) = lock.withLock { (storedDelegate, storedRecording) }
        guard let recording else { return delegate }
        return RecordingCentralManagerDelegate(wrapping: delegate, recording: recording)
    }

    open override var state: CBMManagerState { backend.state }

    open override var authorization: CBMManagerAuthorization { backend.authorization }

    /// Whether the manager is scanning.
    open var isScanning: Bool { backend.isScanning }

    /// The central manager's optional features (`CBCentralManager.Feature`).
    public typealias Feature = CBMCentralManagerFeature

    /// Whether the system supports these features.
    /// On a bridge where a test set `CBMCentralManagerMock.simulateFeaturesSupport`, its answer.
    open class func supports(_ features: CBMCentralManagerFeature) -> Bool {
        if let bridge = BridgeScope.current, let answer = FeatureBook.value(for: bridge) { return answer(features) }
        return features.isSubset(of: .extendedScanAndConnect)
    }

    /// Scans for peripherals advertising one of `serviceUUIDs` (any when `nil`); each is
    /// reported with `centralManager(_:didDiscover:advertisementData:rssi:)`. Options:
    /// ``CBMCentralManagerScanOptionAllowDuplicatesKey``,
    /// ``CBMCentralManagerScanOptionSolicitedServiceUUIDsKey``. Ignored unless powered on.
    open func scanForPeripherals(withServices serviceUUIDs: [CBMUUID]?, options: [String: Any]? = nil) {
        backend.scanForPeripherals(withServices: serviceUUIDs, options: options)
        let duplicates = AdvertisementData.number(options?[CBMCentralManagerScanOptionAllowDuplicatesKey])?.boolValue
        recording?.recorder.record(
            .scanStarted(services: serviceUUIDs?.map(\.bluetoothUUID), allowDuplicates: duplicates ?? false))
    }

    /// Stops scanning. Ignored unless powered on, as CoreBluetooth ignores it (the call is noted
    /// in ``CBMCentralManager/apiMisuses``).
    open func stopScan() {
        backend.stopScan()
        recording?.recorder.record(.scanStopped)
    }

    /// Connects to a peripheral; the delegate gets `centralManager(_:didConnect:)` or
    /// `centralManager(_:didFailToConnect:error:)`. The attempt does not time out, as in
    /// CoreBluetooth: it completes when the peripheral is in range and connectable. A peripheral
    /// already connected to this manager (the app has had its `didConnect`, and the link is
    /// still up) gets no second `didConnect`; the call is noted in
    /// ``CBMCentralManager/apiMisuses``.
    open func connect(_ peripheral: CBMPeripheral, options: [String: Any]? = nil) {
        backend.connect(peripheral, options: options)
    }

    /// Cancels a connection or a pending attempt; the delegate gets
    /// `centralManager(_:didDisconnectPeripheral:error:)` with no error. An attempt cancelled
    /// before its `didConnect` reached the delegate gets no `didConnect`, even when the link came
    /// up meanwhile (at once, in fast mode): only the disconnection. A peripheral never
    /// connected gets no callback. A peripheral object that is not this manager's (another
    /// manager's, or one from before Bluetooth last went off), or a call made while the manager
    /// is not powered on (on a restored peripheral), is ignored, as CoreBluetooth ignores it;
    /// the call is noted in ``CBMCentralManager/apiMisuses``.
    open func cancelPeripheralConnection(_ peripheral: CBMPeripheral) {
        backend.cancelPeripheralConnection(peripheral)
    }

    /// The peripherals known to the system with these identifiers. None unless powered on, as
    /// CoreBluetooth answers (the call is noted in ``CBMCentralManager/apiMisuses``).
    open func retrievePeripherals(withIdentifiers identifiers: [UUID]) -> [CBMPeripheral] {
        backend.retrievePeripherals(withIdentifiers: identifiers)
    }

    /// The peripherals connected to the system that have one of these services. None unless
    /// powered on, as CoreBluetooth answers (the call is noted in ``CBMCentralManager/apiMisuses``).
    open func retrieveConnectedPeripherals(withServices serviceUUIDs: [CBMUUID]) -> [CBMPeripheral] {
        backend.retrieveConnectedPeripherals(withServices: serviceUUIDs)
    }

    /// Asks for `centralManager(_:connectionEventDidOccur:for:)` when matching peripherals
    /// connect or disconnect (from any app), replacing any earlier registration; `nil` (or no
    /// matching option) matches every peripheral. Nothing stops the events but another
    /// registration that matches none of them (CoreBluetooth documents no way to stop them).
    open func registerForConnectionEvents(options: [CBMConnectionEventMatchingOption: Any]? = nil) {
        backend.registerForConnectionEvents(options: options)
    }
}
