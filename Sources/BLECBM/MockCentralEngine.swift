import BLECore
import BLEMockKit
import Foundation

/// A ``CBMCentralManager`` on a bridge: the app's calls become commands applied on the bridge
/// in the order they were made; what the simulation decides comes back as delegate callbacks
/// on the app's queue, in the simulation's order, each one updating the objects the app sees
/// just before its callback (as CoreBluetooth does).
///
/// The app may call in from any thread; everything it reads synchronously (states, services,
/// values, `canSendWriteWithoutResponse`) is a mirror kept behind one lock, which the
/// peripheral and attribute objects share.
final class MockCentralEngine: CentralBackend, @unchecked Sendable {
    // @unchecked Sendable: every mutable property is only read and written with `lock` held.

    /// What the engine mirrors of one link.
    struct LinkMirror {
        /// The longest write without response (ATT_MTU − 3).
        var maximumWriteLength: Int
        /// Write commands the bridge holds in its queue.
        var queued = 0
        /// Write commands the app made that have not reached the bridge yet.
        var inFlight = 0
    }

    typealias Command = @Sendable (isolated MockCentralManager) -> Void

    let central: MockCentralManager
    let lane: FrontEndLane<MockCentralManager>
    let lock = Lock()
    private weak var manager: CBMCentralManager?
    private var mirroredState: CBMManagerState = .unknown
    private var scanning = false
    private var peripherals: [UUID: CBMPeripheral] = [:]
    private var linkMirrors: [UUID: LinkMirror] = [:]
    private var misuses: [String] = []

    var bridge: MockBLEBridge { lane.bridge }

    init(
        bridge: MockBLEBridge, queue: DispatchQueue?, options: [String: Any]?,
        configuration: MockCentralManager.Configuration?
    ) {
        var configuration =
            configuration
            ?? (bridge.configuration.timing.isInstant ? .fast : .realistic(seed: bridge.configuration.seed))
        if let restoreIdentifier = options?[CBMCentralManagerOptionRestoreIdentifierKey] as? String {
            configuration.restoreIdentifier = restoreIdentifier
        }
        if let state = Self.initialState(on: bridge) { configuration.initialState = state }
        let central = MockCentralManager(configuration: configuration, bridge: bridge)
        self.central = central
        lane = FrontEndLane(bridge: bridge, target: central, queue: queue)
        Self.registry(on: bridge).add(self)
    }

    // MARK: The engines of a bridge

    /// The engines on one bridge, held weakly.
    final class Registry: @unchecked Sendable {
        // @unchecked Sendable: `engines` is only read and written with `lock` held.
        private struct Weak { weak var engine: MockCentralEngine? }
        private let lock = Lock()
        private var engines: [Weak] = []

        func add(_ engine: MockCentralEngine) {
            lock.withLock {
                engines.removeAll { $0.engine == nil }
                engines.append(Weak(engine: engine))
            }
        }

        var all: [MockCentralEngine] { lock.withLock { engines.compactMap(\.engine) } }
    }

    static func registry(on bridge: MockBLEBridge) -> Registry {
        bridge.frontEndSettings.object(for: ObjectIdentifier(Registry.self)) { Registry() }
    }

    /// The engines on a bridge, oldest first.
    static func engines(on bridge: MockBLEBridge) -> [MockCentralEngine] { registry(on: bridge).all }

    private static let initialStateKey = "BLECBM.initialState"

    /// The state managers created on `bridge` start in, if a test set one.
    static func initialState(on bridge: MockBLEBridge) -> ManagerState? {
        bridge.frontEndSettings[initialStateKey].flatMap(CBMManagerState.init(rawValue:)).map(\.managerState)
    }

    /// Sets the state managers created on `bridge` start in.
    static func setInitialState(_ state: CBMManagerState, on bridge: MockBLEBridge) {
        bridge.frontEndSettings[initialStateKey] = state.rawValue
    }

    /// The central's Bluetooth state changes (the user turned Bluetooth off, say).
    func simulateStateChange(_ state: CBMManagerState) {
        let target = state.managerState
        command { $0.simulateStateChange(target) }
    }

    deinit {
        let central = central
        lane.bridge.startTracked { await central.detachFrontEnd() }
    }

    func attach(_ manager: CBMCentralManager) {
        lock.withLock { self.manager = manager }
        let frontEnd = CentralFrontEnd(
            event: { [weak self] event in self?.handle(event) },
            commandQueue: { [weak self] peripheral, queued in
                guard let self else { return }
                lock.withLock { linkMirrors[peripheral]?.queued = queued }
            },
            linkOpened: { [weak self] peripheral, maximumWriteLength in
                guard let self else { return }
                lock.withLock { linkMirrors[peripheral] = LinkMirror(maximumWriteLength: maximumWriteLength) }
            })
        // A restore identifier with a restoration the test simulated: the delegate hears it first.
        if let identifier = restoreIdentifier, let restore = RestorationBook.value(for: bridge),
            let dictionary = restore(identifier)
        {
            let restored = UncheckedDictionary(dictionary)
            deliver { [self] in
                guard let (manager, delegate) = managerAndDelegate else { return }
                delegate.centralManager(manager, willRestoreState: restored.value)
            }
        }
        command { $0.attachFrontEnd(frontEnd) }
    }

    /// The restore identifier this manager was created with, if any.
    var restoreIdentifier: String? { central.configuration.restoreIdentifier }

    // MARK: Plumbing

    /// Queues a command for the bridge, in the order the app called.
    func command(_ body: @escaping Command) { lane.command(body) }

    /// Starts an operation on the bridge; `then` runs on the app's queue with its result.
    func operation(
        _ operation: MockCentralManager.FrontEndOperation,
        then: @escaping @Sendable (Result<MockCentralManager.FrontEndResult, any Error>) -> Void
    ) {
        command { central in
            central.begin(operation) { [self] result in deliver { then(result) } }
        }
    }

    /// Runs `body` on the app's queue, after every callback handed over before it.
    func deliver(_ body: @escaping @Sendable () -> Void) { lane.deliver(body) }

    /// The CoreBluetoothMock-style spec simulated for a peripheral on this bridge, if any: its
    /// delegate is asked about connections, discoveries, subscriptions and descriptors as
    /// CoreBluetoothMock asks it.
    func spec(_ peripheral: UUID) -> SpecSimulation? { SpecSimulation.simulation(of: peripheral, on: bridge) }

    /// The error a spec's delegate refuses a request with, if it does.
    func refusal(_ peripheral: UUID, _ ask: (SpecSimulation) -> Result<Void, any Error>) -> (any Error)? {
        guard let simulation = spec(peripheral), case .failure(let error) = ask(simulation) else { return nil }
        return error
    }

    /// Notes a call CoreBluetooth would refuse (it logs "API MISUSE" and ignores it).
    func misuse(_ message: String) {
        lock.withLock { misuses.append(message) }
    }

    /// The calls refused so far, oldest first.
    var apiMisuses: [String] { lock.withLock { misuses } }

    /// The object for a peripheral (the same one each time), with its name brought up to date.
    func peripheralObject(_ remote: RemotePeripheral) -> CBMPeripheral {
        lock.withLock {
            if let existing = peripherals[remote.identifier] {
                if let name = remote.name { existing.storedName = name }
                return existing
            }
            let created = CBMPeripheral(remote, backend: self, lock: lock)
            peripherals[remote.identifier] = created
            return created
        }
    }

    /// With the lock held: the mirror of the link to a peripheral, if connected.
    func link(_ peripheral: UUID) -> LinkMirror? { linkMirrors[peripheral] }

    /// With the lock held: changes the mirror of the link to a peripheral, if connected.
    func updateLink(_ peripheral: UUID, _ body: (inout LinkMirror) -> Void) {
        guard linkMirrors[peripheral] != nil else { return }
        body(&linkMirrors[peripheral]!)
    }

    /// With the lock held: forgets the link to a peripheral (it dropped).
    func dropLink(_ peripheral: UUID) { linkMirrors[peripheral] = nil }

    /// With the lock held: sets the mirrored manager state.
    func setState(_ state: CBMManagerState) {
        mirroredState = state
        if state != .poweredOn { scanning = false }
    }

    /// The manager and its delegate, if both are still there.
    var managerAndDelegate: (CBMCentralManager, any CBMCentralManagerDelegate)? {
        guard let manager = lock.withLock({ manager }), let delegate = manager.delegate else { return nil }
        return (manager, delegate)
    }

    // MARK: Manager

    var state: CBMManagerState { lock.withLock { mirroredState } }

    var authorization: CBMManagerAuthorization { AuthorizationBook.value(for: bridge) }

    var isScanning: Bool { lock.withLock { scanning } }

    func scanForPeripherals(withServices serviceUUIDs: [CBMUUID]?, options: [String: Any]?) {
        guard state == .poweredOn else { return misuse("scanForPeripherals: the manager is not powered on") }
        lock.withLock { scanning = true }
        let services = serviceUUIDs?.map(\.bluetoothUUID)
        let scanOptions = ScanOptions(
            allowDuplicates: Self.bool(options?[CBMCentralManagerScanOptionAllowDuplicatesKey]),
            solicitedServiceUUIDs: (options?[CBMCentralManagerScanOptionSolicitedServiceUUIDsKey] as? [CBMUUID])?
                .map(\.bluetoothUUID) ?? [])
        command { try? $0.scanForPeripherals(withServices: services, options: scanOptions) }
    }

    func stopScan() {
        lock.withLock { scanning = false }
        command { $0.stopScan() }
    }

    func connect(_ peripheral: CBMPeripheral, options: [String: Any]?) {
        guard state == .poweredOn else { return misuse("connect: the manager is not powered on") }
        lock.withLock { if peripheral.storedState == .disconnected { peripheral.storedState = .connecting } }
        if let error = refusal(peripheral.identifier, { $0.delegate.peripheralDidReceiveConnectionRequest($0.spec) }) {
            deliver { [self] in
                lock.withLock { peripheral.storedState = .disconnected }
                guard let (manager, delegate) = managerAndDelegate else { return }
                delegate.centralManager(manager, didFailToConnect: peripheral, error: error)
            }
            return
        }
        operation(.connect(peripheral.identifier, timeout: nil)) { [self] result in
            // The central's events report the outcome; an attempt the simulation refused at
            // once (it never became an attempt) is reported here.
            guard case .failure(let error) = result else { return }
            let report = lock.withLock { () -> Bool in
                guard peripheral.storedState == .connecting else { return false }
                peripheral.storedState = .disconnected
                return true
            }
            guard report, let (manager, delegate) = managerAndDelegate else { return }
            delegate.centralManager(manager, didFailToConnect: peripheral, error: CBMError.bridging(error))
        }
    }

    func cancelPeripheralConnection(_ peripheral: CBMPeripheral) {
        lock.withLock { if peripheral.storedState == .connected { peripheral.storedState = .disconnecting } }
        let identifier = peripheral.identifier
        command { try? $0.cancelPeripheralConnection(identifier) }
    }

    // CoreBluetooth answers these only while powered on (otherwise it logs API misuse).

    func retrievePeripherals(withIdentifiers identifiers: [UUID]) -> [CBMPeripheral] {
        guard state == .poweredOn else { return [] }
        return bridge.systemView.knownPeripherals(withIdentifiers: identifiers).map(peripheralObject)
    }

    func retrieveConnectedPeripherals(withServices serviceUUIDs: [CBMUUID]) -> [CBMPeripheral] {
        guard state == .poweredOn else { return [] }
        return bridge.systemView.connectedPeripherals(withServices: serviceUUIDs.map(\.bluetoothUUID)).map(
            peripheralObject)
    }

    func registerForConnectionEvents(options: [CBMConnectionEventMatchingOption: Any]?) {
        let matching = options.map { options in
            ConnectionEventOptions(
                serviceUUIDs: (options[.serviceUUIDs] as? [CBMUUID])?.map(\.bluetoothUUID) ?? [],
                peripheralIdentifiers: options[.peripheralUUIDs] as? [UUID] ?? [])
        }
        command { $0.registerForConnectionEvents(options: matching) }
    }

    /// A Boolean option, given as a Bool or an `NSNumber`.
    static func bool(_ value: Any?) -> Bool {
        (value as? Bool) ?? (value as? NSNumber)?.boolValue ?? false
    }
}

/// A restoration dictionary handed to the app's queue (its values are the app's plist-like
/// values and the module's objects, never mutated after the test built them).
struct UncheckedDictionary: @unchecked Sendable {
    let value: [String: Any]
    init(_ value: [String: Any]) { self.value = value }
}
