import BLECore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A mock central manager: the central role (`CentralManaging`) on a simulated radio.
///
/// With no arguments it behaves as a simple, instant, always-succeeding mock on a bridge of
/// its own. Put it on a shared ``MockBLEBridge`` to talk to mock peripherals:
///
/// ```swift
/// let bridge = MockBLEBridge()
/// let central = MockCentralManager(bridge: bridge)
/// ```
///
/// The manager keeps no state of its own: the bridge holds it, and the manager runs on the
/// bridge's executor.
public actor MockCentralManager: CentralManaging {
    /// How the mock central behaves. Every field defaults to fast mode: powered on at once,
    /// instant, unlimited, always succeeding.
    public struct Configuration: Sendable, Hashable {
        /// The state the manager settles in: `poweredOn`, `poweredOff`, `unauthorized` or
        /// `unsupported` (`unknown` and `resetting` are not settled states: only
        /// ``StateTransition/stuck(_:)`` keeps a manager in one). Defaults to
        /// `ManagerState.poweredOn`.
        public var initialState: ManagerState
        /// How the state gets there. Defaults to ``StateTransition/instant``.
        public var stateTransition: StateTransition
        /// The ATT_MTU this central prefers on each link. Defaults to `.fixed(517)`.
        public var mtu: MTUMode
        /// Whether a write without response longer than ATT_MTU − 3 throws
        /// `APIMisuseError.valueTooLong(operation:length:maximum:)` instead of being
        /// truncated as on a device. Defaults to `false`.
        public var strictLengths: Bool
        /// Whether a misuse CoreBluetooth lets pass quietly (a write without response cut to
        /// the link's length, dropped by a full queue, or sent to a characteristic without
        /// the property) throws its `APIMisuseError` at the call instead of being recorded in
        /// ``MockBLEBridge/misuses`` (which ``MockBLEBridge/finish()`` reports). Defaults to
        /// `false`, as CoreBluetooth.
        public var strictMisuse: Bool
        /// The queue of writes without response. Defaults to ``QueueBehavior/unlimited``.
        public var writeWithoutResponseQueue: QueueBehavior
        /// How connection attempts behave. Defaults to always succeeding, no limit.
        public var connection: ConnectionBehavior
        /// Failures to inject into this central's operations. Defaults to none.
        public var errorInjection: [ErrorInjection]
        /// Whether the central pairs when an access needs encryption. Defaults to
        /// ``PairingBehavior/never``; the realistic preset pairs on first access, as iOS does
        /// (and so does a CoreBluetooth-shaped central made without a configuration, at once in
        /// fast mode).
        public var pairing: PairingBehavior
        /// Whether the user allows peripherals that request it (see
        /// ``MockPeripheralManager/Configuration/requestsANCSAuthorization``) to receive ANCS
        /// notifications; reported when they connect. Defaults to `false`.
        public var grantsANCSAuthorization: Bool
        /// The restore identifier (as `CBCentralManagerOptionRestoreIdentifierKey`): when the
        /// app is terminated (``MockCentralManager/simulateAppTermination()``) the system keeps
        /// its connections and scan, and a new manager with the same identifier on the bridge
        /// gets them back with a `CentralEvent.willRestoreState(_:)` event, then reports its
        /// state as a new manager does (its own configuration applies: its initial state and
        /// transition, and its error injections; a state that settles below `poweredOn` drops
        /// the links the system kept). Two live managers of a role on one bridge cannot share one
        /// (see ``identifier``). Defaults to `nil`.
        public var restoreIdentifier: String?
        /// The seed of this central's own random draws (MTU, connection failures, injection
        /// probabilities); `nil` derives them from the bridge's seed. When the central creates
        /// its own bridge, that bridge uses this seed too. Defaults to `nil`.
        public var seed: UInt64?
        /// The central's identifier; `nil` derives one from the bridge's seed and its
        /// ``restoreIdentifier``, or else from how many centrals without one were created on
        /// the bridge before it (peripherals do not count). Each manager on a bridge has its own:
        /// a manager given one another manager on the bridge already has refuses every call
        /// with `APIMisuseError.invalidConfiguration(_:)` (a manager with a
        /// ``restoreIdentifier`` takes over its predecessor's once that one's app was terminated
        /// with `simulateAppTermination()`; a second live manager with the same restore
        /// identifier is refused the same way, with a message naming the restore identifier; one
        /// made after its predecessor shut down (``shutDown()``, or a CoreBluetooth-shaped manager
        /// the app let go of) starts afresh under the identifier). Defaults to `nil`.
        public var identifier: UUID?

        /// Creates a configuration.
        public init(
            initialState: ManagerState = .poweredOn, stateTransition: StateTransition = .instant,
            mtu: MTUMode = .fixed(517), strictLengths: Bool = false, strictMisuse: Bool = false,
            writeWithoutResponseQueue: QueueBehavior = .unlimited, connection: ConnectionBehavior = .init(),
            errorInjection: [ErrorInjection] = [], pairing: PairingBehavior = .never,
            grantsANCSAuthorization: Bool = false, restoreIdentifier: String? = nil, seed: UInt64? = nil,
            identifier: UUID? = nil
        ) {
            self.restoreIdentifier = restoreIdentifier
            self.initialState = initialState
            self.stateTransition = stateTransition
            self.mtu = mtu
            self.strictLengths = strictLengths
            self.strictMisuse = strictMisuse
            self.writeWithoutResponseQueue = writeWithoutResponseQueue
            self.connection = connection
            self.errorInjection = errorInjection
            self.pairing = pairing
            self.grantsANCSAuthorization = grantsANCSAuthorization
            self.seed = seed
            self.identifier = identifier
        }

        /// Fast mode: powered on, instant, unlimited, always succeeding unless told otherwise.
        public static var fast: Configuration { Configuration() }

        /// Realistic mode: the state settles after 100 ms through `resetting`, a device-like
        /// MTU (185), a write-without-response queue of 20 packets, pairing on first access,
        /// draws seeded with `seed`.
        /// Pair it with a bridge in realistic mode (a central creating its own bridge does so).
        public static func realistic(seed: UInt64) -> Configuration {
            Configuration(
                stateTransition: .realistic(duration: .milliseconds(100)), mtu: .device,
                writeWithoutResponseQueue: .realistic(capacity: 20), pairing: .onFirstAccess, seed: seed)
        }

        /// Whether any field asks for realistic behaviour (used to pick a bridge's timing).
        var isRealistic: Bool {
            stateTransition != .instant || writeWithoutResponseQueue != .unlimited || mtu != .fixed(517)
        }
    }

    /// The bridge this central is on.
    public nonisolated let bridge: MockBLEBridge
    /// The configuration it was created with.
    public nonisolated let configuration: Configuration
    /// The central's identifier (as `CBCentral.identifier` on the peripheral side).
    public nonisolated let identifier: UUID
    nonisolated let broadcaster: EventBroadcaster<CentralEvent>
    /// Why this manager refuses every call: its identifier (or its restore identifier) belongs
    /// to another live manager on the bridge. `nil` for every other manager.
    package nonisolated let duplicateProblem: String?
    /// Which claim of its identifier this manager holds (see ``IdentifierClaims``): once a later
    /// manager holds the identifier, this one's release leaves it alone.
    nonisolated let identifierTicket: Int
    /// The world a refused manager runs on instead of its bridge's. (Boxed: a world held
    /// inline would make every manager hundreds of bytes larger.)
    var refusedWorld: RefusedWorld?
    /// Whether the app was terminated while the system keeps this central for its next
    /// manager (a restore identifier): this object is the dead app's, and letting it go
    /// (``shutDown()``, a front end detaching) must not touch what the successor takes over.
    /// (A front end reads it too: it drops what the dead app's operations still report.)
    package private(set) var handedOver = false
    /// Whether the app let go of this manager (``shutDown()``, its app not terminated): its
    /// identifier is free for the next manager, and once one holds it this object answers from a
    /// world of its own (see ``successorHolds()``).
    private var letGo = false

    /// Runs on the bridge's executor, so calls between the manager and its bridge do not hop.
    public nonisolated var unownedExecutor: UnownedSerialExecutor { bridge.unownedExecutor }

    /// Creates a mock central on a bridge: `bridge`, or else the bridge of the current
    /// ``MockBLEBridge/run(timeLimit:stallPatience:_:)`` scope (``MockBLEBridge/current``, which
    /// a test's bridge trait sets too), or else a new one of its own.
    public init(configuration: Configuration = Configuration(), bridge: MockBLEBridge? = nil) {
        self.init(configuration: configuration, bridge: bridge, joinsAtFirstCall: false)
    }

    /// Creates a mock central that joins the air at its first call rather than at the bridge's next
    /// turn (`joinsAtFirstCall`): for a front end whose calls are ordered by the bridge's
    /// command queue, so that managers created on several threads at once join in that order.
    /// Without an identifier or restore identifier in `configuration`, an `identifierStream`
    /// names the stream its identifier is drawn from (the n-th central of that stream takes its
    /// n-th identifier), rather than the role's.
    package init(
        configuration: Configuration, bridge: MockBLEBridge?, joinsAtFirstCall: Bool, identifierStream: String? = nil
    ) {
        let bridge =
            bridge ?? MockBLEBridge.current
            ?? MockBLEBridge(managerConfiguration: configuration.seed, realistic: configuration.isRealistic)
        self.bridge = bridge
        self.configuration = configuration
        let (identifier, problem, ticket) = bridge.claimIdentifier(
            role: .central, name: identifierStream, configured: configuration.identifier,
            restoreIdentifier: configuration.restoreIdentifier)
        self.broadcaster = EventBroadcaster(clock: bridge.sleepClock, owner: .central(identifier))
        self.identifier = identifier
        self.duplicateProblem = problem
        self.identifierTicket = ticket
        guard let problem else {
            if !joinsAtFirstCall { bridge.arrivals.add(.central(identifier, broadcaster, configuration)) }
            return
        }
        refusedWorld = RefusedWorld(.central(identifier, broadcaster, configuration), problem: problem)
    }

    deinit {
        // A manager that goes away ends its event streams (the bridge keeps nothing that
        // would call back into it).
        broadcaster.finish()
    }

    /// Test hook: the central's Bluetooth state changes (e.g. the user turns Bluetooth off).
    /// Leaving `poweredOn` stops scanning and drops every link with `peripheralDisconnected`.
    public func simulateStateChange(_ state: ManagerState) {
        world { $0.setState(.central(identifier), to: state) }
    }

    /// Installs an error injection for this central's operations from now on.
    ///
    /// It is checked as the configuration's ``Configuration/errorInjection`` is: an injection
    /// that configuration would refuse (see ``ErrorInjection``) is not installed, and this
    /// manager then refuses every call with `APIMisuseError.invalidConfiguration(_:)`, whose
    /// message begins `"MockCentralManager.inject(_:): "` and names the problem.
    public func inject(_ injection: ErrorInjection) {
        world { $0.inject(injection, owner: identifier) }
    }

    /// Test hook: the app moves to the background (`true`) or back to the foreground. In the
    /// background, as on iOS, scans report each peripheral once whatever
    /// `ScanOptions.allowDuplicates` says.
    public func simulateBackgroundExecution(_ isInBackground: Bool) {
        world { $0.setBackground(.central(identifier), isInBackground) }
    }

    /// Test hook: the system terminates the app (to reclaim memory, say). With a
    /// ``Configuration/restoreIdentifier`` the system keeps the manager's links, pending
    /// connections and scan for the app, and a manager created later with the same restore
    /// identifier receives them (see ``restoredState``), followed, once it is powered on, by
    /// the events that happened for the app meanwhile (notifications, disconnections,
    /// connections, discoveries), in order; without one this is
    /// ``shutDown()``. Either way this manager's event streams end, its waiting operations
    /// fail with `operationCancelled`, and it must not be used again: it reports `unknown` and
    /// refuses every call with `managerShutDown`. With a restore identifier its own
    /// ``shutDown()`` then does nothing and nothing it is asked reaches what the system keeps
    /// (which is the next manager's), and a front end attached to it hears nothing more.
    ///
    /// Its L2CAP channels close at both ends either way (state restoration does not keep them):
    /// each peripheral sees the close as when an app closes a channel, and sends at either end
    /// throw `notConnected`. The error injections it installed (its configuration's and its
    /// ``inject(_:)`` calls') go with it: they fire no more, and `finish()` lists those that never
    /// fired, as for a manager shut down; a relaunched manager has its own configuration's.
    public func simulateAppTermination() {
        // The app is gone: its front end hears nothing more (not even how its operations end),
        // and what this object does from now on leaves the central the system keeps alone.
        // (A manager refused for another's identifier has only its own world: terminating it
        // leaves the other alone.)
        let keeps = duplicateProblem == nil && world { $0.keepsForRestoration(.central(identifier)) }
        if keeps {
            handedOver = true
            detachFrontEnd(handingOver: true)
        }
        world { $0.terminate(central: identifier) }
        // The next manager with this restore identifier takes over this identifier.
        if keeps, let restoreIdentifier = configuration.restoreIdentifier {
            bridge.identifierAwaitsRelaunch(identifier, restoreIdentifier: restoreIdentifier)
        }
        // The system's central keeps this identifier for the next manager: this object answers
        // from a world where it is shut down.
        if keeps { refusedWorld = RefusedWorld(shutDown: .central(identifier, broadcaster, configuration)) }
    }

    /// What the system restored to this manager when it was created with the restore
    /// identifier of a terminated one, or `nil`. The same state is this manager's first event.
    public var restoredState: RestoredCentralState? {
        world { $0.restoredState(central: identifier) }
    }

    /// Test hook: the user forgets a peripheral in Settings ("Forget This Device"): this
    /// central's bond with it is removed; an access needing encryption pairs again.
    public func simulateBondRemoval(of peripheral: UUID) {
        world { $0.removeBond(LinkKey(central: identifier, peripheral: peripheral), onCentral: true) }
    }

    /// The app let go of this manager: one made after it with its identifier (its restore
    /// identifier) starts afresh under it (see ``MockBLEBridge/releaseIdentifier(_:ticket:)``).
    /// Nothing for a manager refused for another's identifier, nor once a later manager holds
    /// the identifier.
    package nonisolated func releaseIdentifier() {
        if duplicateProblem == nil { bridge.releaseIdentifier(identifier, ticket: identifierTicket) }
    }

    /// Takes this manager off the air and ends its event streams; see the bridge's log for
    /// what was dropped. The manager is unusable afterwards (its state is `unknown`).
    ///
    /// Letting go of a manager does not do this: it ends the manager's event streams, but its
    /// scan and links stay on the bridge (a peripheral still counts it among its subscribers)
    /// until the bridge goes. A test that models the app releasing its manager, which ends its
    /// connections in CoreBluetooth, calls `shutDown()` (the CoreBluetooth-shaped
    /// `CBMCentralManager` of BLECBM does so when it is released).
    public func shutDown() {
        // (After a termination with a restore identifier the system keeps the central for the
        // app's next manager: the terminated one shutting down leaves it alone.)
        guard !handedOver else { return }
        world { $0.shutDown(central: identifier) }
        // (Once: and not for a manager refused for another's identifier, whose world is its own.)
        guard duplicateProblem == nil, !letGo else { return }
        // A manager the app makes next with this identifier (its restore identifier) starts
        // afresh under it.
        letGo = true
        releaseIdentifier()
    }

    /// For a manager the app let go of: whether a later manager holds its identifier on the
    /// bridge now. From then on this object answers from a world of its own where it is shut
    /// down (``refusedWorld``, made here), so nothing it is asked reaches the later manager
    /// (until then its calls reach its shut-down record, which refuses them and logs it). It
    /// does not join the bridge to find out: joining would make it the manager under its
    /// identifier again once the later one shut down too.
    private func successorHolds() -> Bool {
        if refusedWorld != nil { return true }
        let holds = bridge.assumeIsolated { bridge in
            bridge.admitArrivals()
            return bridge.centralStreams[identifier] !== broadcaster
        }
        if holds { refusedWorld = RefusedWorld(shutDown: .central(identifier, broadcaster, configuration)) }
        return holds
    }

    /// Why this manager refuses `operation` before it reaches the bridge, if it does: its
    /// identifier is another manager's there (`invalidConfiguration`), its app was terminated
    /// and the system keeps its central for the next manager, or the app let go of it and a
    /// later manager holds its identifier (`managerShutDown`). Calls that go to the world are
    /// refused by the world the manager answers from (``refusedWorld``).
    /// (`operation` is only evaluated for a refusal: naming it costs a string on every call.)
    func refusal(_ operation: @autoclosure () -> String) -> APIMisuseError? {
        if let duplicateProblem { return .invalidConfiguration(duplicateProblem) }
        return handedOver || (letGo && successorHolds()) ? .managerShutDown(operation: operation()) : nil
    }

    /// The name of the operation `call` (a `#function`) names, as a refusal says it.
    static func operationName(_ call: String) -> String { String(call.prefix { $0 != "(" }) }

    /// Runs `body` with the bridge, which shares this actor's executor; joins the bridge first.
    func withBridge<T: Sendable, E: Error>(
        _ call: String = #function, _ body: @Sendable (isolated MockBLEBridge) throws(E) -> T
    ) throws(E) -> T {
        try bridge.onSharedExecutor { bridge throws(E) in
            bridge.arrive(central: identifier, events: broadcaster, configuration: configuration, call)
            return try body(bridge)
        }
    }

    /// Runs `body` on the bridge's world (joining it first), then performs what it decided; a
    /// refused manager's `body` runs on its own world, which refuses every call (as does a
    /// manager the app let go of, once a later one holds its identifier).
    func world<T: Sendable, E: Error>(
        _ call: String = #function, _ body: @Sendable (inout World) throws(E) -> T
    ) throws(E) -> T {
        if letGo, refusedWorld == nil { _ = successorHolds() }
        if let refusedWorld { return try body(&refusedWorld.world) }
        return try withBridge(call) { bridge throws(E) in
            defer { bridge.applyEffects() }
            return try body(&bridge.world)
        }
    }

    /// Runs an operation on the bridge (joining it first).
    @inline(__always)
    func perform(_ request: World.Request, _ call: String = #function) async throws -> Reply {
        if let refusal = refusal(Self.operationName(call)) { throw refusal }
        return try await bridge.perform(
            request, central: identifier, events: broadcaster, configuration: configuration, call)
    }

    public var state: ManagerState { world { $0.state(of: .central(identifier)) } }

    public func waitForPoweredOn() async -> ManagerState {
        // Settled already (at once in fast mode): the state, without starting an operation.
        let settled = world { $0.settledState(of: .central(identifier)) }
        if let settled { return settled }
        let reply = try? await perform(.waitForPoweredOn(.central(identifier)))
        if case .state(let state) = reply { return state }
        return state
    }

    /// A new stream of this manager's events, from now on. Events wait in the stream's buffer
    /// until read; ``MockBLEBridge/finish()`` reports the unread ones of streams still held.
    /// A stream nobody holds any more (neither the stream nor an iterator of it) stops
    /// receiving events and frees its buffer.
    public nonisolated func events() -> AsyncStream<CentralEvent> { broadcaster.stream() }

    public var isScanning: Bool { world { $0.isScanning(central: identifier) } }

    public func scanForPeripherals(withServices serviceUUIDs: [BluetoothUUID]?, options: ScanOptions) throws {
        try world { try $0.startScan(central: identifier, services: serviceUUIDs, options: options) }
    }

    public func stopScan() { world { $0.stopScan(central: identifier) } }

    public func connect(_ peripheral: UUID, options: ConnectOptions) async throws {
        _ = try await perform(.connect(central: identifier, peripheral: peripheral, timeout: options.timeout))
    }

    public func cancelPeripheralConnection(_ peripheral: UUID) throws {
        try world { try $0.cancelConnection(central: identifier, peripheral: peripheral) }
    }

    public func isConnected(_ peripheral: UUID) -> Bool {
        world { $0.isConnected(central: identifier, peripheral: peripheral) }
    }

    public func retrievePeripherals(withIdentifiers identifiers: [UUID]) -> [RemotePeripheral] {
        world { $0.retrievePeripherals(central: identifier, withIdentifiers: identifiers) }
    }

    public func retrieveConnectedPeripherals(withServices serviceUUIDs: [BluetoothUUID]) -> [RemotePeripheral] {
        world { $0.retrieveConnectedPeripherals(central: identifier, withServices: serviceUUIDs) }
    }

    /// Runs a GATT procedure on the link to `peripheral`.
    @inline(__always)
    private func gatt(_ kind: GATTProcedure.Kind, on peripheral: UUID, _ call: String = #function) async throws
        -> Reply
    {
        try await perform(.gatt(central: identifier, peripheral: peripheral, kind), call)
    }

    public func discoverServices(_ serviceUUIDs: [BluetoothUUID]?, for peripheral: UUID) async throws -> [RemoteService]
    {
        try await gatt(.discoverServices(serviceUUIDs), on: peripheral).services
    }

    public func discoverIncludedServices(_ serviceUUIDs: [BluetoothUUID]?, for service: RemoteService) async throws
        -> [RemoteService]
    {
        try await gatt(.discoverIncludedServices(service, serviceUUIDs), on: service.peripheral).services
    }

    public func discoverCharacteristics(_ characteristicUUIDs: [BluetoothUUID]?, for service: RemoteService)
        async throws -> [RemoteCharacteristic]
    {
        try await gatt(.discoverCharacteristics(service, characteristicUUIDs), on: service.peripheral).characteristics
    }

    public func discoverDescriptors(for characteristic: RemoteCharacteristic) async throws -> [RemoteDescriptor] {
        try await gatt(.discoverDescriptors(characteristic), on: characteristic.peripheral).descriptors
    }

    /// Discovers everything on a peripheral with the same procedures, in the same order, as
    /// the protocol's default implementation (services, then each service's characteristics,
    /// then each characteristic's descriptors); made here, on the manager, so that each
    /// procedure reaches the bridge directly rather than through a call of its own.
    @discardableResult
    public func discoverAll(for peripheral: UUID) async throws -> [RemoteCharacteristic] {
        var all: [RemoteCharacteristic] = []
        for service in try await gatt(.discoverServices(nil), on: peripheral).services {
            let characteristics = try await gatt(.discoverCharacteristics(service, nil), on: service.peripheral)
                .characteristics
            if all.isEmpty { all.reserveCapacity(characteristics.count) }
            for characteristic in characteristics {
                _ = try await gatt(.discoverDescriptors(characteristic), on: characteristic.peripheral)
                all.append(characteristic)
            }
        }
        return all
    }

    public func services(of peripheral: UUID) -> [RemoteService] {
        world { $0.discoveredServices(central: identifier, peripheral: peripheral) }
    }

    public func characteristics(of service: RemoteService) -> [RemoteCharacteristic] {
        world { $0.discoveredCharacteristics(central: identifier, service: service) }
    }

    public func readValue(for characteristic: RemoteCharacteristic) async throws -> Data {
        try await gatt(.read(characteristic), on: characteristic.peripheral).data
    }

    /// One Read Blob at `offset` (a scenario's `readRequest`).
    func readBlob(of characteristic: RemoteCharacteristic, offset: Int) async throws -> Data {
        try await gatt(.readBlob(characteristic, offset: offset), on: characteristic.peripheral).data
    }

    public func readValue(for descriptor: RemoteDescriptor) async throws -> Data {
        try await gatt(.readDescriptor(descriptor), on: descriptor.peripheral).data
    }

    public func writeValue(_ value: Data, for characteristic: RemoteCharacteristic, type: WriteType) async throws {
        guard type == .withResponse else {
            _ = try writeWithoutResponse(value, for: characteristic)
            return
        }
        _ = try await gatt(.write(characteristic, value), on: characteristic.peripheral)
    }

    /// A write without response, as ``writeValue(_:for:type:)`` makes it, saying what the stack
    /// did with it (for a recording wrapper on this central's executor).
    package func writeWithoutResponse(
        _ value: Data, for characteristic: RemoteCharacteristic
    ) throws -> WriteWithoutResponseOutcome {
        try world { try $0.writeWithoutResponse(central: identifier, characteristic: characteristic, value: value) }
    }

    public func writeValue(_ value: Data, for descriptor: RemoteDescriptor) async throws {
        _ = try await gatt(.writeDescriptor(descriptor, value), on: descriptor.peripheral)
    }

    public func setNotifyValue(_ enabled: Bool, for characteristic: RemoteCharacteristic) async throws {
        _ = try await gatt(.setNotify(characteristic, enabled: enabled), on: characteristic.peripheral)
    }

    /// Enables indications on a characteristic that supports both notifications and
    /// indications (a scenario's `subscribe` with `"indicate": true`); on one that supports
    /// only one kind, as ``setNotifyValue(_:for:)``.
    func subscribeToIndications(of characteristic: RemoteCharacteristic) async throws {
        _ = try await gatt(.setNotify(characteristic, enabled: true, indications: true), on: characteristic.peripheral)
    }

    /// Test hook: this central's preferred ATT_MTU for links made from now on (an app on
    /// another iOS version, say); links up already keep theirs.
    ///
    /// - Throws: `APIMisuseError.invalidConfiguration(_:)` for a mode with no value in 23…517.
    public func simulateMTUPreference(_ mtu: MTUMode) throws {
        if let problem = mtu.problem() {
            throw APIMisuseError.invalidConfiguration("simulateMTUPreference: \(problem)")
        }
        world { $0.centrals[identifier]?.configuration.mtu = mtu }
    }

    public func readRSSI(for peripheral: UUID) async throws -> Int {
        try await perform(.readRSSI(central: identifier, peripheral: peripheral)).rssi
    }

    public func maximumWriteValueLength(for peripheral: UUID, type: WriteType) throws -> Int {
        try world { try $0.maximumWriteValueLength(central: identifier, peripheral: peripheral, type: type) }
    }

    public func openL2CAPChannel(_ psm: UInt16, on peripheral: UUID) async throws -> L2CAPChannel {
        if let refusal = refusal("openL2CAPChannel") { throw refusal }
        withBridge { _ in }
        return try await bridge.openL2CAPChannel(central: identifier, peripheral: peripheral, psm: psm)
    }

    public func registerForConnectionEvents(options: ConnectionEventOptions?) {
        world { $0.registerForConnectionEvents(central: identifier, options: options) }
    }

    public func isANCSAuthorized(_ peripheral: UUID) -> Bool {
        world { $0.isANCSAuthorized(central: identifier, peripheral: peripheral) }
    }

    /// Test hook: the user grants or revokes a connected peripheral's access to ANCS
    /// notifications (in Settings); the central gets an `CentralEvent.ancsAuthorizationUpdated(_:isAuthorized:)`
    /// event if it changed. Only peripherals that request ANCS authorization have one.
    public func simulateANCSAuthorizationChange(_ authorized: Bool, for peripheral: UUID) {
        world { $0.setANCSAuthorization(authorized, key: LinkKey(central: identifier, peripheral: peripheral)) }
    }

    public func canSendWriteWithoutResponse(to peripheral: UUID) -> Bool {
        world { $0.canSendWriteWithoutResponse(central: identifier, peripheral: peripheral) }
    }
}
