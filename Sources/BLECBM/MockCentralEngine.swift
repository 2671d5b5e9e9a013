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
    ///
    /// The mirror changes in the order of the app's callbacks (each change is delivered on the
    /// app's queue as the bridge makes it), so what a callback reads of it is the link as of that
    /// callback, whatever the bridge does meanwhile: the same seed gives the same decisions (and
    /// the same log) on every run.
    struct LinkMirror {
        /// Which link it mirrors (a link to the same peripheral made later has another).
        var generation: UInt64
        /// The longest write without response (ATT_MTU − 3).
        var maximumWriteLength: Int
        /// Write commands the bridge holds in its queue.
        var queued = 0
        /// Write commands the app made that the app's queue has not heard reach the bridge.
        var inFlight = 0
        /// Whether the app was told it cannot send (`canSendWriteWithoutResponse` false) and has
        /// not heard `peripheralIsReady(toSendWriteWithoutResponse:)` since.
        var toldFull = false
        /// Whether the bridge's queue has been full since the app was told so: the simulation
        /// then says when it has room again (its own ready callback).
        var simulationFilled = false

        /// Answers `canSendWriteWithoutResponse` with the queue holding at most `capacity`.
        mutating func canSend(capacity: Int) -> Bool {
            let room = queued + inFlight < capacity
            if !room { toldFull = true }
            return room
        }

        /// The bridge's queue holds `queued` writes now (one of the app's in flight reached it,
        /// when `arrived`). Returns whether the app hears `peripheralIsReady` now: it was told it
        /// could not send because of writes still on their way, and the simulation, whose queue
        /// never filled, will not say when there is room (the writes reached it at separate
        /// instants, and some were sent meanwhile), so the mirror says so itself, once.
        mutating func bridgeQueue(holds queued: Int, arrived: Bool, capacity: Int) -> Bool {
            if arrived { inFlight -= 1 }
            self.queued = queued
            if queued >= capacity { simulationFilled = true }
            guard toldFull, !simulationFilled, queued + inFlight < capacity else { return false }
            toldFull = false
            return true
        }

        /// The simulation said there is room again (its ready callback reaches the app).
        mutating func simulationReady() {
            toldFull = false
            simulationFilled = false
        }
    }

    typealias Command = @Sendable (isolated MockCentralManager) -> Void

    let central: MockCentralManager
    let lane: FrontEndLane<MockCentralManager>
    /// The spec simulations on the bridge (CoreBluetoothMock-style peripherals).
    let specs: SpecSimulation.Registry
    /// The names the system gives peripherals (advertised until connected, then GAP).
    let names: SystemPeripheralNameBook
    let lock = Lock()
    private weak var manager: CBMCentralManager?
    private var mirroredState: CBMManagerState = .unknown
    /// (Read and written with `lock` held.)
    var scanning = false
    /// The peripheral objects the app has, held weakly: as CoreBluetooth's manager does, this
    /// one keeps none alive (see ``peripheralReleased(_:)``), unless it is CoreBluetoothMock's
    /// (``keepsPeripherals``).
    private var peripherals: [UUID: PeripheralEntry] = [:]
    /// Whether the manager keeps the peripheral objects it hands out alive (CoreBluetoothMock's
    /// `CBMCentralManagerMock` does; CoreBluetooth's manager, and ``CBMCentralManager``, do not).
    private var keepsPeripherals = false
    /// Peripherals whose callbacks are withheld, and which, until the callback that ends their
    /// link or attempt (see ``endWithholding(_:)``).
    private var withheld: [UUID: Withholding] = [:]
    /// The ends still to come of links and attempts the app replaced with a new `connect` before
    /// it heard them end (a cancel, then a connect before `didDisconnectPeripheral`), oldest
    /// first, each with what was withheld about it: the callbacks that end those belong to them,
    /// not to the new attempt, which stays `connecting` (see ``endWithholding(_:)``).
    private var supersededEnds: [UUID: [Withholding?]] = [:]
    /// The errors spec delegates refused connections with, by peripheral, until their attempts'
    /// failures are reported (see ``connectionFailure(_:_:)``).
    private var refusals: [UUID: UncheckedError] = [:]
    /// How many failed attempts the central's events have reported, by peripheral (counted on
    /// the bridge's executor, in the simulation's order): a connect whose attempt failed this
    /// way is not reported a second time by its operation's outcome (see ``operation(_:madeAfter:then:)``).
    private var failedAttemptEvents: [UUID: UInt64] = [:]
    private var linkMirrors: [UUID: LinkMirror] = [:]
    /// The generation of the last link mirror made.
    private var linkGeneration: UInt64 = 0
    private var misuses: [String] = []
    /// (Read and written with `lock` held.)
    var storedRecording: CentralRecording?
    /// Where the bridge keeps the calls that got no callback (for stall reports and failed tests).
    private let unansweredCalls: UnansweredCallLog
    /// The simulated system the manager was made on, when it found its bridge through one (not
    /// when made on a bridge explicitly, or on the current test's bridge).
    private let system: SimulatedSystem?
    /// This engine, held weakly, for the completions of its operations.
    private let weakSelf = WeakHolder<MockCentralEngine>()
    private var invalidated = false
    /// The central's state as the simulation last reported it (the app's mirror follows on its
    /// queue).
    var simulatedState: CBMManagerState = .unknown
    /// How many times Bluetooth has left `poweredOn`: in the simulation (`simulated`, counted on
    /// the bridge's executor), and as the app has heard it (`heard`, counted as its callbacks
    /// run). A connect the app makes while `heard` is behind is made while Bluetooth is off, as
    /// far as the simulation goes (CoreBluetooth ignores it), for an object a power-off it has not
    /// heard of yet disconnected, or made invalid.
    var powerLosses: (simulated: UInt64, heard: UInt64) = (0, 0)
    /// The state the manager was made to start in, authorized (the state it returns to when the
    /// app is authorized again, unless a test set Bluetooth's state since).
    private let startingState: ManagerState
    /// What a restoration the test simulated starts once the manager is first powered on.
    private var pendingRestoration: Restoration?
    /// Restored peripherals reported connected: their link comes up with no `didConnect`.
    private var restoredConnected: Set<UUID> = []
    /// The streams of channels just opened, by channel, until the app's `didOpen` takes them
    /// (made on the bridge's executor as the opening completes: see ``prepareStreams(for:)``).
    private var openedStreams: [UInt64: L2CAPChannelStreams] = [:]

    var bridge: MockBLEBridge { lane.bridge }

    init(
        bridge: MockBLEBridge, system: SimulatedSystem?, queue: DispatchQueue?, options: [String: Any]?,
        configuration: MockCentralManager.Configuration?
    ) {
        self.system = system
        var configuration = configuration ?? Self.defaultConfiguration(on: bridge)
        if let restoreIdentifier = options?[CBMCentralManagerOptionRestoreIdentifierKey] as? String {
            configuration.restoreIdentifier = restoreIdentifier
        }
        if let state = Self.initialState(on: bridge) {
            configuration.initialState = state
            // A state that never settles (unknown, resetting) stays until a test changes it,
            // as in CoreBluetoothMock: the kit's configuration says so with `.stuck`.
            if let holding = StateTransition.holding(state) { configuration.stateTransition = holding }
        }
        startingState = configuration.initialState
        if !Self.isAuthorized(on: bridge) { configuration.initialState = .unauthorized }
        // A new CBCentralManager's first state callback carries its real state (it does not
        // pass through `resetting`).
        if case .realistic(let duration) = configuration.stateTransition {
            configuration.stateTransition = .delayed(duration)
        }
        let central = MockCentralManager(
            configuration: configuration, bridge: bridge, joinsAtFirstCall: true,
            identifierStream: CommandQueue.identifierStream(madeOn: queue))
        self.central = central
        lane = FrontEndLane(bridge: bridge, target: central, key: central.identifier, queue: queue)
        specs = SpecSimulation.registry(on: bridge)
        names = SystemPeripheralNameBook.of(bridge)
        unansweredCalls = UnansweredCallLog.of(bridge)
        weakSelf.object = self
        Self.registry(on: bridge).add(self)
    }

    /// A CoreBluetooth-shaped central's configuration when the test gives none: the bridge's
    /// mode, and pairing as CoreBluetooth does it, on its own when an access needs encryption
    /// (at once in fast mode, where the async API's central never pairs unless told to).
    static func defaultConfiguration(on bridge: MockBLEBridge) -> MockCentralManager.Configuration {
        guard bridge.configuration.timing.isInstant else { return .realistic(seed: bridge.configuration.seed) }
        var fast = MockCentralManager.Configuration.fast
        fast.pairing = .automatic(duration: .zero, outcome: .succeeds)
        return fast
    }

    // MARK: The engines of a bridge

    /// The engines on one bridge, held weakly.
    typealias Registry = WeakList<MockCentralEngine>

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

    /// Whether the app may use Bluetooth on `bridge`: with any authorization but
    /// `allowedAlways`, managers are `unauthorized`, as CoreBluetooth (and CoreBluetoothMock)
    /// report.
    static func isAuthorized(on bridge: MockBLEBridge) -> Bool {
        AuthorizationBook.value(for: bridge) == .allowedAlways
    }

    /// Sets the app's authorization on `bridge`: every manager becomes `unauthorized` when it is
    /// not `allowedAlways`, and goes back to Bluetooth's simulated state when it is again.
    static func setAuthorization(_ authorization: CBMManagerAuthorization, on bridge: MockBLEBridge) {
        let wasAuthorized = isAuthorized(on: bridge)
        AuthorizationBook.set(authorization, for: bridge)
        let authorized = authorization == .allowedAlways
        guard authorized != wasAuthorized else { return }
        for engine in engines(on: bridge) {
            let power = initialState(on: bridge) ?? engine.startingState
            engine.simulateStateChange(authorized ? CBMManagerState(power) : .unauthorized)
        }
    }

    /// The central's Bluetooth state changes (the user turned Bluetooth off, say).
    func simulateStateChange(_ state: CBMManagerState) {
        guard !isInvalidated else { return }
        let target = state.managerState
        command { $0.simulateStateChange(target) }
    }

    deinit {
        // A manager the app lets go of leaves the air, as CoreBluetooth's does: its scan stops
        // and its connections and attempts end; a manager the app makes next with the same
        // restore identifier starts afresh (its commands come after these).
        central.releaseIdentifier()
        // Peripheral objects the app still keeps no longer keep their delegates: with their
        // manager gone they hear nothing more, and an app that is the delegate of one it keeps
        // would keep itself alive.
        releaseKeptDelegates()
        let unansweredCalls = unansweredCalls
        lane.releaseCommand { central in
            Self.noteOperationsEnded(byReleasing: central, in: unansweredCalls)
            central.detachFrontEnd()
            central.shutDown()
        }
    }

    /// The app let go of the manager: the operations it started that were still waiting (a
    /// connection attempt to a peripheral out of range, a read) end with it and get no callback,
    /// as with CoreBluetooth. Noted, so that a failed test whose app waited for one of them names
    /// it (the test's own references usually go before its failure is reported).
    /// (The manager's name is made only for such an operation: a `uuidString` costs about a
    /// microsecond, and every manager's release comes here.)
    private static func noteOperationsEnded(byReleasing central: isolated MockCentralManager, in log: UnansweredCallLog)
    {
        let waiting = central.bridge.assumeIsolated { $0.pendingOperations }
        for case .operation(let summary, let owner, let peripheral, _, _) in waiting where owner == central.identifier {
            let target = peripheral.map { " on peripheral \($0.uuidString.prefix(8))" } ?? ""
            // Why a connection attempt had not completed, said now: once the manager is gone, a
            // failed test's report no longer finds the attempt to explain it.
            let reason =
                summary == "connect"
                ? peripheral.flatMap { peripheral in
                    central.bridge.assumeIsolated { $0.whyUnconnectable(peripheral) }.map { ", \($0)" }
                } : nil
            log.note(
                "\(name(of: central.identifier)), unanswered: \(summary)\(target)\(reason ?? ""): the app let go of the "
                    + "manager while it was still waiting (its operations end with it, with no callback; a test's "
                    + "references to its app go as its test method returns)")
        }
    }

    /// The system this manager was on was uninstalled: the manager is invalid from now on, as
    /// CoreBluetoothMock's `tearDownSimulation()` leaves its managers. Its delegate hears the
    /// state `unknown`, its peripheral objects are disconnected and invalid (as below powered
    /// off); later calls are ignored (and noted as misuses).
    func invalidate() {
        let first = lock.withLock { () -> Bool in
            defer { invalidated = true }
            return !invalidated
        }
        guard first else { return }
        // What the app had under way ends with no callback but the state `unknown`: a test then
        // waiting for a discovery, a connection or a read is told why (its stall, or its failure).
        let underWay = lock.withLock { () -> [String] in
            let links = peripherals.values.filter {
                $0.object?.storedState == .connected || $0.object?.storedState == .connecting
            }
            return (scanning ? ["its scan"] : [])
                + (links.isEmpty ? [] : ["\(links.count) connection\(links.count == 1 ? "" : "s") (made or pending)"])
        }
        if !underWay.isEmpty {
            unansweredCalls.note(
                "\(name): \(underWay.joined(separator: " and ")) ended with the simulated system's uninstall, with no "
                    + "callback but the state unknown")
        }
        command { [self] central in
            central.detachFrontEnd()
            central.shutDown()
            deliver { [self] in
                // As below powered off: the peripheral objects are disconnected and invalid. A
                // CoreBluetoothMock manager's objects keep their delegates no longer: an app that
                // keeps its peripheral and is its delegate would otherwise keep itself, its
                // manager and the bridge alive for the rest of the process. (Let go of once the
                // delegate has heard the state, which the app may be.)
                let released = lock.withLock {
                    setState(.unknown)
                    let kept = takeKeptDelegates()
                    return (kept, forgetPeripherals())
                }
                withExtendedLifetime(released) {
                    guard let (manager, delegate) = managerAndDelegate else { return }
                    delegate.centralManagerDidUpdateState(manager)
                }
            }
        }
    }

    /// Whether this manager joins a simulated system that is uninstalled, so is as invalid as the
    /// managers made before the uninstall, not a live manager on a simulation that has ended:
    /// - it found its bridge through the system (an app made it on its own queue, say), and the
    ///   test uninstalled the system as, or after, it was made;
    /// - or it was made on the bridge the uninstalled system had made (explicitly, or in a
    ///   callback of one of its managers, where that bridge is still `MockBLEBridge.current`: see
    ///   ``BridgeScope/testBridge``).
    ///
    /// A bridge a test installed a system on (``SimulatedSystem/install(on:initialState:installedBy:)``)
    /// stays the test's: a manager made on it explicitly joins it. (Asked after the engine is
    /// registered on the bridge: an uninstall that did not find it there had marked the system
    /// uninstalled, and its bridge retired, already.)
    static func joinsUninstalledSystem(_ system: SimulatedSystem?, bridge: MockBLEBridge) -> Bool {
        if let system { return !system.isInstalled }
        return bridge.frontEndSettings[SpecSimulation.retiredKey] == SpecSimulation.retiredSystemsOwn
    }

    /// Whether the manager's system was uninstalled.
    var isInvalidated: Bool { lock.withLock { invalidated } }

    func attach(_ manager: CBMCentralManager) {
        // CoreBluetoothMock's manager keeps the peripherals it hands out; CoreBluetooth's keeps
        // none (see `peripheralReleased(_:)`).
        let keeps = manager is CBMCentralManagerMock
        lock.withLock {
            self.manager = manager
            keepsPeripherals = keeps
        }
        // The peripherals it hands out keep their delegates until the test ends: a test on a
        // bridge of its own ends it with `finish()` (the trait and `runOnMockBridge` release
        // them as a seed's run ends).
        if keeps {
            lane.bridge.frontEndSettings.onFinish(for: ObjectIdentifier(TestEnd.self)) { TestEnd.release($0) }
        }
        if Self.joinsUninstalledSystem(system, bridge: lane.bridge) { return invalidate() }
        let frontEnd = CentralFrontEnd(
            event: { [weak self] event in self?.handle(event) },
            commandQueue: { [weak self] peripheral, queued in
                guard let self else { return }
                deliver { [self] in bridgeQueueChanged(peripheral, holds: queued, arrived: false, generation: nil) }
            },
            linkOpened: { [weak self] peripheral, maximumWriteLength in
                guard let self else { return }
                deliver { [self] in lock.withLock { openLink(peripheral, maximumWriteLength: maximumWriteLength) } }
            })
        // A manager refused for another live manager's restore identifier never joins the
        // bridge: it reports `unsupported`, as CoreBluetooth does for a second manager with a
        // restore identifier in use, and its misuses say why.
        if let problem = central.duplicateProblem {
            return command { [self] _ in
                misuse("init(delegate:queue:options:): \(problem)")
                handle(.stateChanged(.unsupported))
            }
        }
        // A restore identifier with a restoration the test simulated: the delegate hears it first.
        let restored = restoreIdentifier.flatMap { identifier in
            RestorationBook.value(for: bridge)?(identifier).map { UncheckedDictionary(restoring($0)) }
        }
        command { [self] central in
            if let restored {
                deliver { [self] in
                    guard let (manager, delegate) = managerAndDelegate else { return }
                    delegate.centralManager(manager, willRestoreState: restored.value)
                }
            }
            central.attachFrontEnd(frontEnd)
        }
    }

    /// What a simulated restoration starts once the manager is powered on: connections to the
    /// restored peripherals, and the scan.
    struct Restoration {
        var peripherals: [CBMPeripheral] = []
        var scan: (services: [BluetoothUUID]?, options: ScanOptions)?
    }

    /// The dictionary the delegate's `willRestoreState` gets for one the test simulated, as
    /// CoreBluetoothMock makes it: the specs it lists become this manager's peripheral objects
    /// (`connected` when the spec is connected, by another app, and in range; else
    /// `connecting`; `disconnected` when it is not connectable or not simulated on this
    /// bridge), and scan services or options make the manager scanning. The links come up and
    /// the scan starts once the manager is powered on (a connected one's at once: the system
    /// holds it); a peripheral restored as connected reports no `didConnect`, a connecting one
    /// does when it connects.
    private func restoring(_ dictionary: [String: Any]) -> [String: Any] {
        var restored = dictionary
        var restoration = Restoration()
        if let specs = dictionary[CBMCentralManagerRestoredStatePeripheralsKey] as? [CBMPeripheralSpec] {
            restored[CBMCentralManagerRestoredStatePeripheralsKey] = specs.map { spec -> CBMPeripheral in
                // The system kept these peripherals for the app: it had been connected to them.
                guard let simulation = SpecSimulation.existing(for: spec, on: bridge) else {
                    names.update { $0.noteConnected(spec.identifier) }
                    return peripheralObject(RemotePeripheral(identifier: spec.identifier, name: spec.name))
                }
                let state = simulation.snapshot
                names.update { $0.noteConnected(state.identifier) }
                let peripheral = peripheralObject(RemotePeripheral(identifier: state.identifier, name: state.name))
                guard state.services != nil else { return peripheral }
                let connected = state.isConnectedBySystem && state.proximity != .outOfRange
                lock.withLock {
                    peripheral.storedState = connected ? .connected : .connecting
                    if connected { restoredConnected.insert(state.identifier) }
                }
                restoration.peripherals.append(peripheral)
                return peripheral
            }
        }
        let services = dictionary[CBMCentralManagerRestoredStateScanServicesKey] as? [CBMUUID]
        let options = dictionary[CBMCentralManagerRestoredStateScanOptionsKey] as? [String: Any]
        if services != nil || options != nil {
            restoration.scan = (
                services?.map(\.bluetoothUUID),
                ScanOptions(
                    allowDuplicates: Self.bool(options?[CBMCentralManagerScanOptionAllowDuplicatesKey]),
                    solicitedServiceUUIDs: (options?[CBMCentralManagerScanOptionSolicitedServiceUUIDsKey]
                        as? [CBMUUID])?.map(\.bluetoothUUID) ?? [])
            )
        }
        lock.withLock {
            if restoration.scan != nil { scanning = true }
            pendingRestoration = restoration
        }
        return restored
    }

    /// On the bridge's executor, as the central's state changes: at the first `poweredOn`, the
    /// restored peripherals connect and the restored scan starts (Bluetooth in another state
    /// first ends both: no link is up, and there is no scan).
    func startRestoration(_ state: ManagerState) {
        guard
            let restoration = lock.withLock({ pendingRestoration.take() })
        else { return }
        guard state == .poweredOn else {
            lock.withLock { restoredConnected.removeAll() }
            return
        }
        if let scan = restoration.scan {
            let (services, options) = scan
            command { try? $0.scanForPeripherals(withServices: services, options: options) }
        }
        // The system had been connected to them for the app: it knows them, whether or not a
        // central of the test ever discovered them.
        let known = restoration.peripherals.map(\.identifier)
        if !known.isEmpty { command { $0.systemKnows(known) } }
        let losses = lock.withLock { powerLosses.simulated }
        for peripheral in restoration.peripherals { attempt(peripheral, madeAfter: losses) }
    }

    /// Whether the link to a peripheral restored as connected came up (its `didConnect` is not
    /// reported: the app was told it is connected).
    func isRestoredConnection(_ peripheral: UUID) -> Bool {
        lock.withLock { restoredConnected.remove(peripheral) != nil }
    }

    /// The restore identifier this manager was created with, if any.
    var restoreIdentifier: String? { central.configuration.restoreIdentifier }

    // MARK: Plumbing

    /// Queues a command for the bridge, in the order the app called.
    func command(_ body: @escaping Command) { lane.command(body) }

    /// Runs `body` on the app's queue after the commands queued before it have been applied
    /// (a callback the app's own call decides, such as a refusal, keeps its place among the
    /// simulation's callbacks).
    func reply(_ body: @escaping @Sendable () -> Void) {
        command { [self] _ in deliverAbout(body) }
    }

    /// Starts an operation on the bridge; `then` runs on the app's queue with this engine and
    /// the operation's result, unless the engine is gone by then.
    ///
    /// The bridge keeps the completion until the operation ends, which may be never (a test that
    /// ends with a realistic read in flight): it holds the engine weakly, and `then` gets the
    /// engine as an argument rather than capturing it, so a pending operation does not keep the
    /// engine, its manager and so the bridge alive once the app lets go of its manager.
    ///
    /// A GATT operation that fails because its link went away (the peripheral dropped it,
    /// ATT's transaction timeout ended it, the app cancelled the connection, Bluetooth turned
    /// off), or that reaches the bridge once the link is gone, gets no callback: iOS reports
    /// only the disconnection, and a request still pending then never completes (so an app
    /// waiting for its callback waits for ever on a device too, and a run reports the stall).
    ///
    /// An operation made after `powerLosses` (see ``powerLosses``) is dropped, unanswered, when
    /// Bluetooth has gone off since then in the simulation: it reached the system after the
    /// power-off that made its peripheral object invalid, and CoreBluetooth ignores a call on
    /// such an object (it does not connect once Bluetooth is back on).
    func operation(
        _ operation: MockCentralManager.FrontEndOperation, madeAfter powerLosses: UInt64? = nil,
        then: @escaping @Sendable (MockCentralEngine, Result<MockCentralManager.FrontEndResult, any Error>) -> Void
    ) {
        let engine = weakSelf
        let central = central
        lane.plainCommand {
            if let powerLosses, let self = engine.object,
                self.lock.withLock({ self.powerLosses.simulated }) != powerLosses
            {
                return self.unanswered(operation, Self.offFirst)
            }
            // A connect's attempt that fails is reported by the central's event (which comes
            // first): its outcome is reported only when no event did (a connect refused at once).
            let connecting: UUID? = if case .connect(let peripheral, _, _) = operation { peripheral } else { nil }
            let failuresBefore = connecting.flatMap { id in engine.object?.failedAttemptsReported(id) }
            CentralIsolation.run(on: central) { central in
                central.begin(operation) { result in
                    // (An app terminated meanwhile hears nothing more: its operations end unheard.)
                    guard let self = engine.object, !CentralIsolation.handedOver(self.central) else { return }
                    if case .failure = result, let connecting, let failuresBefore,
                        self.failedAttemptsReported(connecting) != failuresBefore
                    {
                        return
                    }
                    // With Bluetooth off, or a link that went down, the app hears only of that. An app
                    // waiting for this callback waits for ever, on a device too: noted, where a stall
                    // or a failed test can say it.
                    let poweredOn = self.lock.withLock { self.simulatedState == .poweredOn }
                    if !poweredOn { return self.unanswered(operation, Self.offFirst) }
                    if case .failure(let error) = result, let peripheral = operation.linkPeripheral,
                        !CentralIsolation.isConnected(self.central, peripheral)
                    {
                        // Refused as not connected, the call found no link: one that went down
                        // before it, or one not up yet (a restored peripheral's, say).
                        let found = (error as? CoreBluetoothError)?.code == .notConnected
                        return self.unanswered(operation, found ? Self.noLink : Self.downFirst)
                    }
                    // (Powered on, checked above on this executor: what deliverAbout would check again.)
                    if case .success(.channel(let channel)) = result { self.prepareStreams(for: channel) }
                    self.lane.deliver(then, self, result)
                }
            }
        }
    }

    /// How many failed attempts to connect to `peripheral` the central's events have reported.
    private func failedAttemptsReported(_ peripheral: UUID) -> UInt64 {
        lock.withLock { failedAttemptEvents[peripheral, default: 0] }
    }

    /// Counts a failed attempt the central's event reports (on the bridge's executor).
    func noteFailedAttemptReported(_ peripheral: UUID) {
        lock.withLock { failedAttemptEvents[peripheral, default: 0] &+= 1 }
    }

    /// Makes the streams of a channel whose opening just completed, on the bridge's executor, so
    /// that they hear every byte that arrives after it (see ``takeStreams(of:)``).
    private func prepareStreams(for channel: L2CAPChannel) {
        let lane = lane
        let streams = lane.bridge.assumeIsolated { bridge in
            CBML2CAPChannel.streams(over: channel, atCentral: true, on: bridge, appQueue: lane.queue) { body in
                lane.command { _ in lane.bridge.assumeIsolated(body) }
            }
        }
        lock.withLock { openedStreams[channel.id] = streams }
    }

    /// The streams made for a channel as its opening completed (taken once, by `didOpen`).
    func takeStreams(of channel: L2CAPChannel) -> L2CAPChannelStreams? {
        lock.withLock { openedStreams.removeValue(forKey: channel.id) }
    }

    /// Why an operation that Bluetooth's leaving `poweredOn` overtook gets no callback.
    static let offFirst =
        "Bluetooth left poweredOn first (turned off, reset or refused: CoreBluetooth calls back only the state change)"

    /// Why an operation under way when its link went down gets no callback.
    static let downFirst = "the link went down first (CoreBluetooth calls back only didDisconnectPeripheral)"

    /// Why an operation that found no link gets no callback: it went down before the call was
    /// applied, or had not come up yet.
    static let noLink =
        "the peripheral had no link when the call was applied (it went down before, or was not up yet): "
        + "CoreBluetooth answers such a call with no callback"

    /// Notes that `operation` gets no callback, and why.
    private func unanswered(_ operation: MockCentralManager.FrontEndOperation, _ why: String) {
        let target = operation.linkPeripheral.map { " on peripheral \($0.uuidString.prefix(8))" } ?? ""
        unansweredCalls.note("\(name), unanswered: \(operation.name)\(target): \(why)")
    }

    /// Runs `body` on the app's queue, after every callback handed over before it.
    func deliver(_ body: @escaping @Sendable () -> Void) { lane.deliver(body) }

    /// Runs a callback about peripherals on the app's queue (as ``deliver(_:)``), unless
    /// Bluetooth is not `poweredOn` in the simulation now: then the peripheral objects it would
    /// name are invalid (CoreBluetooth), so it is dropped, as a response in flight when the radio
    /// turns off is lost. One that came before the radio turned off reaches the app before the
    /// state change does, as the simulation's order has it. (Decided here, in that order, not
    /// when the app's queue gets to it, which would depend on threads.) Call it on the bridge's
    /// executor.
    func deliverAbout(_ body: @escaping @Sendable () -> Void) {
        guard lock.withLock({ simulatedState == .poweredOn }) else { return }
        lane.deliver(body)
    }

    /// The CoreBluetoothMock-style spec simulated for a peripheral on this bridge, if any: its
    /// delegate is asked about connections, discoveries, subscriptions and descriptors as
    /// CoreBluetoothMock asks it.
    func spec(_ peripheral: UUID) -> SpecSimulation? { specs.simulation(of: peripheral) }

    /// The error a spec's delegate refuses a request with, if it does.
    func refusal(_ peripheral: UUID, _ ask: (SpecSimulation) -> Result<Void, any Error>) -> (any Error)? {
        guard let simulation = spec(peripheral), case .failure(let error) = ask(simulation) else { return nil }
        return error
    }

    /// Notes a call CoreBluetooth would refuse (it logs "API MISUSE" and ignores it).
    func misuse(_ message: String) {
        let invalid = lock.withLock { () -> Bool in
            misuses.append(message)
            return invalidated
        }
        unansweredCalls.note("\(name), ignored: \(message)")
        // A manager an app kept from a system since uninstalled (a singleton's), called while
        // another is installed: that system's stall or failure says so, or nothing would.
        if invalid, let system = SimulatedSystem.current, system.bridge !== lane.bridge {
            UnansweredCallLog.of(system.bridge).note(
                "\(name), of a simulated system uninstalled before this one (an app kept it past its test), "
                    + "ignored: \(message) (the manager is invalid and hears nothing of this system: make a new one)")
        }
    }

    /// The calls refused so far, oldest first.
    var apiMisuses: [String] { lock.withLock { misuses } }

    /// The manager as reports name it: `CBMCentralManager` and the start of its identifier.
    var name: String { Self.name(of: central.identifier) }

    /// The name reports give the manager of the central `identifier`.
    static func name(of identifier: UUID) -> String { "CBMCentralManager \(identifier.uuidString.prefix(8))" }

    /// The object for a peripheral (the same one each time), with its name brought up to date.
    func peripheralObject(_ remote: RemotePeripheral) -> CBMPeripheral {
        lock.withLock {
            if let existing = peripherals[remote.identifier]?.object {
                if let name = remote.name { existing.storedName = name }
                return existing
            }
            let created = CBMPeripheral(remote, backend: self, lock: lock)
            created.keepsDelegate = keepsPeripherals
            peripherals[remote.identifier] = PeripheralEntry(object: created, kept: keepsPeripherals ? created : nil)
            return created
        }
    }

    /// The object for a peripheral, if this manager has one now.
    func knownPeripheral(_ identifier: UUID) -> CBMPeripheral? { lock.withLock { peripherals[identifier]?.object } }

    /// With the lock held: the peripheral objects the app still has.
    var peripheralObjects: [CBMPeripheral] { peripherals.values.compactMap(\.object) }

    /// With the lock held: whether `peripheral` is this manager's current object for its
    /// peripheral.
    func isCurrent(_ peripheral: CBMPeripheral) -> Bool { peripherals[peripheral.identifier]?.object === peripheral }

    /// Which of a peripheral's callbacks are withheld.
    enum Withholding {
        /// All of them, the one that ends the link too: the manager cancelled the link or attempt
        /// because the app let go of the peripheral's object (there is no object to tell).
        case all
        /// `didConnect`: the app cancelled while the peripheral was still `connecting` to it, so
        /// a link the simulation brought up meanwhile is not reported (CoreBluetooth reports a
        /// cancelled pending connection with `didDisconnectPeripheral` alone).
        case didConnect
    }

    /// A peripheral object, held weakly (and also strongly, `kept`, by a manager that keeps its
    /// peripherals).
    struct PeripheralEntry {
        weak var object: CBMPeripheral?
        var kept: CBMPeripheral?
    }

    /// The app let go of its object for a peripheral: if the manager's link to it is up or being
    /// made, and the app has no other object for it by the time the bridge gets there, the link
    /// is cancelled and noted as a misuse, as CoreBluetooth does ("API MISUSE: Cancelling
    /// connection for unused peripheral"): an app that connects a peripheral it did not keep
    /// never gets it on a device. The callbacks about it are not delivered. (Called from the
    /// object's `deinit`: it takes no lock, and queues a command in the order of the app's calls.)
    func peripheralReleased(_ identifier: UUID) {
        command { [weak self] central in self?.cancelForRelease(identifier, central) }
    }

    /// On the bridge: ``peripheralReleased(_:)``'s cancellation, if still due.
    private func cancelForRelease(_ identifier: UUID, _ central: isolated MockCentralManager) {
        guard knownPeripheral(identifier) == nil else { return }
        let link = central.restoredLink(to: identifier)
        guard link.isConnected || link.isConnecting else { return }
        lock.withLock { withheld[identifier] = .all }
        if link.isConnecting { noteAttemptEnded(byReleasing: identifier, central) }
        misuse(
            "API MISUSE: Cancelling connection for unused peripheral \(identifier), Did you forget to keep a "
                + "reference to it? (the app let go of its CBMPeripheral while \(link.isConnected ? "connected" : "connecting"))"
        )
        try? central.cancelPeripheralConnection(identifier)
    }

    /// The app let go of a peripheral it was connecting to: the attempt ends with no callback.
    /// Noted with since when it waited and why it had not completed (a peripheral out of range,
    /// say), so that a failed test whose app waited for the connection names it (the test's own
    /// references usually go before its failure is reported).
    private func noteAttemptEnded(byReleasing identifier: UUID, _ central: isolated MockCentralManager) {
        let (waiting, why) = central.bridge.assumeIsolated { bridge in
            (bridge.pendingOperations, bridge.whyUnconnectable(identifier))
        }
        let since = waiting.lazy.compactMap { leftover -> VirtualClock.Instant? in
            guard case .operation("connect", let owner, let peripheral, _, let since) = leftover,
                owner == central.identifier, peripheral == identifier
            else { return nil }
            return since
        }.first
        unansweredCalls.note(
            "\(Self.name(of: central.identifier)), unanswered: connect on peripheral \(identifier.uuidString.prefix(8)): "
                + "the app let go of the peripheral while it was still connecting"
                + (since.map { " (since \($0))" } ?? "") + (why.map { ", to a peripheral " + $0 } ?? "")
                + " (the attempt ends with it, with no callback)")
    }

    /// Whether a `didConnect` about `identifier` is withheld (on the app's queue): something is
    /// withheld about it (about the older attempt it belongs to, while one the app replaced has
    /// not ended), or the app let go of its object for it (it had one, and has none now) and the
    /// release's command, which cancels the link, may not have reached the bridge yet
    /// (CoreBluetooth cancels as the object goes).
    func withholdsDidConnect(_ identifier: UUID) -> Bool {
        lock.withLock {
            if supersededEnds[identifier]?.first.map({ $0 != nil }) == true { return true }
            return withheld[identifier] != nil || peripherals[identifier].map { $0.object == nil } == true
        }
    }

    /// What the callback that ends a link or an attempt is to the app (see ``endWithholding(_:)``).
    struct Ending {
        /// The callback is withheld.
        var withheld = false
        /// It ends a link or attempt the app has replaced with a new `connect`: the peripheral
        /// stays `connecting`.
        var superseded = false
    }

    /// For the callback that ends a link or an attempt (a disconnection, a failed attempt), on
    /// the app's queue: ends the withholding of the oldest link or attempt still to end (one
    /// the app replaced, if any; else the current one's), and says whether this callback is
    /// withheld too and whether a newer attempt follows.
    func endWithholding(_ identifier: UUID) -> Ending {
        lock.withLock {
            if var older = supersededEnds[identifier], !older.isEmpty {
                let ended = older.removeFirst()
                supersededEnds[identifier] = older.isEmpty ? nil : older
                return Ending(withheld: ended == .all, superseded: true)
            }
            return Ending(withheld: withheld.removeValue(forKey: identifier) == .all)
        }
    }

    /// With the lock held: a new attempt to `peripheral` replaces a link or attempt the app
    /// cancelled and has not heard end; what was withheld about that one goes with it.
    private func supersede(_ peripheral: CBMPeripheral) {
        supersededEnds[peripheral.identifier, default: []].append(withheld.removeValue(forKey: peripheral.identifier))
        peripheral.storedState = .connecting
    }

    /// With the lock held: forgets the peripheral objects (their links are gone: see
    /// ``removeAllLinks()``).
    func removeAllPeripherals() {
        peripherals.removeAll()
    }

    /// With the lock held: forgets every link's mirror and what was withheld about it (Bluetooth
    /// leaving powered on ended every link and attempt, and reports none of those ends: a
    /// withholding kept until one would outlive the power cycle and hide the next connection's
    /// callbacks).
    func removeAllLinks() {
        linkMirrors.removeAll()
        withheld.removeAll()
        supersededEnds.removeAll()
    }

    /// With the lock held: the mirror of the link to a peripheral, if connected.
    func link(_ peripheral: UUID) -> LinkMirror? { linkMirrors[peripheral] }

    /// With the lock held: changes the mirror of the link to a peripheral, if connected (and,
    /// when `generation` is given, if it is still that link); returns the mirror's generation.
    @discardableResult
    func updateLink(_ peripheral: UUID, generation: UInt64? = nil, _ body: (inout LinkMirror) -> Void) -> UInt64? {
        guard let mirror = linkMirrors[peripheral], generation == nil || mirror.generation == generation else {
            return nil
        }
        body(&linkMirrors[peripheral]!)
        return mirror.generation
    }

    /// On the app's queue: the bridge's queue of writes without response to `peripheral` holds
    /// `queued` now (a write of the app's reached it, when `arrived`, on the link of
    /// `generation`); the app hears `peripheralIsReady` if the mirror owes it one (see
    /// ``LinkMirror/bridgeQueue(holds:arrived:capacity:)``).
    func bridgeQueueChanged(_ peripheral: UUID, holds queued: Int, arrived: Bool, generation: UInt64?) {
        let capacity = central.writeWithoutResponseCapacity ?? .max
        var ready = false
        let object = lock.withLock { () -> CBMPeripheral? in
            _ = updateLink(peripheral, generation: generation) {
                ready = $0.bridgeQueue(holds: queued, arrived: arrived, capacity: capacity)
            }
            return ready ? peripherals[peripheral]?.object : nil
        }
        guard let object else { return }
        object.deliveryDelegate?.peripheralIsReady(toSendWriteWithoutResponse: object)
    }

    /// With the lock held: a link to a peripheral is up (a new one, or one the system kept for
    /// a restored manager).
    func openLink(_ peripheral: UUID, maximumWriteLength: Int) {
        linkGeneration += 1
        linkMirrors[peripheral] = LinkMirror(generation: linkGeneration, maximumWriteLength: maximumWriteLength)
    }

    /// With the lock held: forgets the link to a peripheral (it dropped).
    func dropLink(_ peripheral: UUID) { linkMirrors[peripheral] = nil }

    /// With the lock held: sets the mirrored manager state.
    func setState(_ state: CBMManagerState) {
        if mirroredState == .poweredOn && state != .poweredOn { powerLosses.heard += 1 }
        mirroredState = state
        if state != .poweredOn { scanning = false }
    }

    /// The manager's recording state, while it records (kept here: read on every call and
    /// callback).
    var recording: CentralRecording? { lock.withLock { storedRecording } }

    func recordingChanged(_ recording: CentralRecording?) {
        lock.withLock { storedRecording = recording }
    }

    /// The simulation knows what became of each write without response: the engine records
    /// it as the bridge applies it.
    var recordsWritesWithoutResponse: Bool { true }

    /// The manager and its delegate, if both are still there.
    var managerAndDelegate: (CBMCentralManager, any CBMCentralManagerDelegate)? {
        guard let manager = lock.withLock({ manager }), let delegate = manager.deliveryDelegate else { return nil }
        return (manager, delegate)
    }

    // MARK: Manager

    var state: CBMManagerState { lock.withLock { invalidated ? .unknown : mirroredState } }

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
        guard state == .poweredOn else { return misuse("stopScan: the manager is not powered on") }
        lock.withLock { scanning = false }
        command { $0.stopScan() }
    }

    func connect(_ peripheral: CBMPeripheral, options: [String: Any]?) {
        guard state == .poweredOn else { return misuse("connect: the manager is not powered on") }
        let reconnects = Self.bool(options?[CBMConnectPeripheralOptionEnableAutoReconnect])
        // Whether the app has had didConnect, and the power-offs it has heard of.
        let mine = lock.withLock { () -> (Bool, UInt64)? in
            guard isCurrent(peripheral) else { return nil }
            let wasConnected = peripheral.storedState == .connected
            switch peripheral.storedState {
            case .disconnected: peripheral.storedState = .connecting
            // A connect after a cancel the app has not heard end (its link is going, or its
            // attempt was cancelled): a new attempt, `connecting` from now on, while the old
            // link's or attempt's end is still reported to the app when it comes.
            case .disconnecting: supersede(peripheral)
            case .connecting where withheld[peripheral.identifier] == .didConnect: supersede(peripheral)
            default: break
            }
            // (A connect ignored as the link is up changes nothing, its options neither.)
            if !wasConnected { peripheral.reconnectsAutomatically = reconnects }
            return (wasConnected, powerLosses.heard)
        }
        guard let (wasConnected, heardPowerLosses) = mine else {
            return misuse(
                "connect: \(peripheral.identifier) is not one of this manager's current peripherals (retrieve or "
                    + "discover it again)")
        }
        if wasConnected {
            // The app has had didConnect, and (decided where the simulation does, in call order)
            // the link is still up: CoreBluetooth calls nothing back for this connect, so an app
            // that waits for a second didConnect waits for ever. Noted, so a test can tell why.
            let identifier = peripheral.identifier
            command { [weak self] central in
                guard central.isConnected(identifier) else { return }
                self?.misuse(
                    "connect: \(identifier) is already connected to this manager; no second didConnect follows")
            }
        }
        // (A spec's delegate is asked about a new connection, not about one that is up; nor when
        // the device is connected already, to another central or another app: the connection
        // is shared, as in CoreBluetoothMock.)
        // A refused connection is an attempt like any other, which fails where its link would
        // have come up (at once in fast mode; after the connection latency in realistic timing,
        // as CoreBluetoothMock waits a connection interval): an app that starts listening for
        // the outcome just after its call hears it, and the bridge's log has it. The app gets
        // the delegate's error as it was given.
        let refused =
            wasConnected
            ? nil
            : refusal(
                peripheral.identifier,
                { $0.hasConnection ? .success(()) : $0.delegate.peripheralDidReceiveConnectionRequest($0.spec) })
        // (Set or cleared at each connect: a refused attempt the app cancelled leaves no error behind.)
        lock.withLock { refusals[peripheral.identifier] = refused.map { UncheckedError($0) } }
        attempt(peripheral, madeAfter: heardPowerLosses, refusal: refused.map(Self.simulationError))
    }

    /// The error the simulation fails a refused attempt with: the CoreBluetooth error the spec's
    /// delegate gave (a `CBMError`), else `connectionFailed`.
    private static func simulationError(_ error: any Error) -> CoreBluetoothError {
        guard let error = error as? CBMError, let code = CoreBluetoothError.Code(rawValue: error.code.rawValue) else {
            return CoreBluetoothError(.connectionFailed)
        }
        return CoreBluetoothError(code)
    }

    /// The error to report for a failed attempt to `peripheral`: the refusal its spec's delegate
    /// gave, if the attempt was refused (taken: reported once), else the simulation's `error`.
    func connectionFailure(_ peripheral: UUID, _ error: any Error) -> any Error {
        lock.withLock { refusals.removeValue(forKey: peripheral)?.error } ?? CBMError.bridging(error)
    }

    /// Starts a connection attempt, made after `powerLosses` (see ``powerLosses``): the app's
    /// (the count it has heard of), or the system's automatic reconnection (the simulation's,
    /// when the link dropped). Bluetooth going off since then drops it. One the peripheral
    /// refuses (`refusal`) fails with that error where its link would have come up.
    func attempt(_ peripheral: CBMPeripheral, madeAfter powerLosses: UInt64, refusal: CoreBluetoothError? = nil) {
        // (The object held weakly: an attempt keeps no peripheral alive the app let go of, so
        // that its release cancels the attempt, as CoreBluetooth's does.)
        operation(.connect(peripheral.identifier, timeout: nil, refusal: refusal), madeAfter: powerLosses) {
            [weak peripheral] engine, result in
            // The central's events report the outcome; an attempt the simulation refused at
            // once (it never became an attempt) is reported here. An attempt the app cancelled
            // is reported as a disconnection, with no error (the central's event).
            guard let peripheral, case .failure(let error) = result,
                (error as? CoreBluetoothError)?.code != .operationCancelled
            else { return }
            let ending = engine.endWithholding(peripheral.identifier)
            // (One restored as connected was told it is: it hears it disconnected.)
            let restored = engine.isRestoredConnection(peripheral.identifier)
            let report = engine.lock.withLock { () -> Bool in
                guard peripheral.storedState == (restored ? .connected : .connecting) else { return false }
                if !ending.superseded { peripheral.storedState = .disconnected }
                return true
            }
            let failure = engine.connectionFailure(peripheral.identifier, error)
            guard report else { return }
            engine.reportFailedConnection(peripheral, failure, restoredConnected: restored)
        }
    }

    /// Tells the delegate a connection did not come up (on the app's queue): `didFailToConnect`,
    /// or `didDisconnectPeripheral` for a peripheral restored as connected, which the app was
    /// told is connected (its link did not come back, as from a link that went down).
    func reportFailedConnection(_ peripheral: CBMPeripheral, _ failure: any Error, restoredConnected: Bool) {
        guard let (manager, delegate) = managerAndDelegate else { return }
        if restoredConnected {
            delegate.centralManager(manager, didDisconnectPeripheral: peripheral, error: failure)
        } else {
            delegate.centralManager(manager, didFailToConnect: peripheral, error: failure)
        }
    }

    func cancelPeripheralConnection(_ peripheral: CBMPeripheral) {
        // Why CoreBluetooth would ignore the call (as API misuse), if it would: then the
        // peripheral's state is left alone.
        let refusal = lock.withLock { () -> String? in
            // Another manager's object, or one a power-off made invalid, is not this manager's.
            guard isCurrent(peripheral) else {
                return "\(peripheral.identifier) is not one of this manager's current peripherals (retrieve or "
                    + "discover it again)"
            }
            // A restored peripheral before the manager is powered on (the only objects current
            // then, with those of a manager whose system was uninstalled): CoreBluetooth accepts
            // commands only while powered on, so the restored connection still comes up.
            guard mirroredState == .poweredOn, !invalidated else { return "the manager is not powered on" }
            peripheral.reconnectsAutomatically = false
            if peripheral.storedState == .connected { peripheral.storedState = .disconnecting }
            // (The app has not heard didConnect: a link that comes up before the cancel reaches
            // the simulation, as in fast mode, is not reported; the cancel's disconnection is.)
            if peripheral.storedState == .connecting, withheld[peripheral.identifier] == nil {
                withheld[peripheral.identifier] = .didConnect
            }
            return nil
        }
        if let refusal { return misuse("cancelPeripheralConnection: \(refusal)") }
        let identifier = peripheral.identifier
        command { try? $0.cancelPeripheralConnection(identifier) }
    }

    // CoreBluetooth answers these only while powered on (otherwise it logs API misuse and returns
    // none).

    func retrievePeripherals(withIdentifiers identifiers: [UUID]) -> [CBMPeripheral] {
        guard state == .poweredOn else {
            misuse("retrievePeripherals(withIdentifiers:): the manager is not powered on (none returned)")
            return []
        }
        let known = bridge.systemView.knownPeripherals(withIdentifiers: identifiers)
        var seen = Set<UUID>()
        let found = identifiers.compactMap { identifier -> RemotePeripheral? in
            guard seen.insert(identifier).inserted else { return nil }
            // A spec's peripheral is known as its spec says now (a `simulateCaching()` or
            // `simulateMacChange()` just made counts at once); other peripherals as the
            // simulation knows them.
            if let simulation = spec(identifier) {
                let state = simulation.snapshot
                guard simulation.isActive, state.identifier == identifier, state.isKnown else { return nil }
                return known.first { $0.identifier == identifier }
                    ?? RemotePeripheral(identifier: identifier, name: state.name)
            }
            return known.first { $0.identifier == identifier }
        }
        names.update { names in for peripheral in found { names.noteRetrieved(peripheral.identifier) } }
        return found.map { peripheralObject(names.naming($0)) }
    }

    func retrieveConnectedPeripherals(withServices serviceUUIDs: [CBMUUID]) -> [CBMPeripheral] {
        guard state == .poweredOn else {
            misuse("retrieveConnectedPeripherals(withServices:): the manager is not powered on (none returned)")
            return []
        }
        let services = serviceUUIDs.map(\.bluetoothUUID)
        var found = bridge.systemView.connectedPeripherals(withServices: services)
        // A spec another app connects to (`simulateConnection()`) counts at once, with its services.
        for simulation in specs.all where simulation.isActive {
            let state = simulation.snapshot
            guard state.isConnectedBySystem, !found.contains(where: { $0.identifier == state.identifier }),
                state.services?.contains(where: { services.contains($0.uuid.bluetoothUUID) }) == true
            else { continue }
            found.append(RemotePeripheral(identifier: state.identifier, name: state.name))
        }
        // Connected to the system: it has read their GAP names.
        names.update { names in for peripheral in found { names.noteConnected(peripheral.identifier) } }
        return found.map { peripheralObject(names.naming($0)) }
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

/// Reaching a central's isolated state from code already on its executor (the bridge's: a
/// command, an operation's completion) without `assumeIsolated`, which allocates its closure on
/// every call: a function isolated to the central is called through a reference to it without
/// the isolation in its type (the two have one calling convention), reinterpreted inside a
/// struct, as the kit's bridge reaches itself from its managers. Nothing is allocated. Debug
/// builds still check the executor.
enum CentralIsolation {
    /// Runs `body` isolated to `central`; call it on the central's executor.
    static func run(on central: MockCentralManager, _ body: (isolated MockCentralManager) -> Void) {
        #if DEBUG
            central.preconditionIsolated("a front end reaches its central on the central's executor")
        #endif
        unsafeBitCast(IsolatedRunner(run: runIsolated), to: PlainRunner.self).run(central, body)
    }

    /// Whether the app that made `central` was terminated and its central handed over (the
    /// app hears nothing more); call it on the central's executor.
    static func handedOver(_ central: MockCentralManager) -> Bool {
        var answer = false
        run(on: central) { answer = $0.handedOver }
        return answer
    }

    /// Whether `central` is connected to `peripheral` now; call it on the central's executor.
    static func isConnected(_ central: MockCentralManager, _ peripheral: UUID) -> Bool {
        var answer = false
        run(on: central) { answer = $0.isConnected(peripheral) }
        return answer
    }

    private static func runIsolated(
        _ central: isolated MockCentralManager, _ body: (isolated MockCentralManager) -> Void
    ) {
        body(central)
    }

    private struct IsolatedRunner {
        let run: (isolated MockCentralManager, (isolated MockCentralManager) -> Void) -> Void
    }

    private struct PlainRunner {
        let run: (MockCentralManager, (isolated MockCentralManager) -> Void) -> Void
    }
}
