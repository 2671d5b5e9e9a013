import BLECore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A mock peripheral manager: the peripheral role (`PeripheralManaging`) on a simulated
/// radio — the app's own GATT server in tests, or a simulated device for a central to talk to.
///
/// ```swift
/// let bridge = MockBLEBridge()
/// let peripheral = MockPeripheralManager(bridge: bridge)
/// let battery = try await peripheral.add(
///     GATTService(uuid: "180F", characteristics: [
///         GATTCharacteristic(uuid: "2A19", properties: [.read, .notify], permissions: [.readable])
///     ]))
/// try await peripheral.startAdvertising(AdvertisementData(localName: "Battery", serviceUUIDs: ["180F"]))
/// ```
public actor MockPeripheralManager: PeripheralManaging {
    /// How the mock peripheral behaves. Every field defaults to fast mode.
    public struct Configuration: Sendable {
        /// The state the manager settles in: `poweredOn`, `poweredOff`, `unauthorized` or
        /// `unsupported` (`unknown` and `resetting` are not settled states: only
        /// ``StateTransition/stuck(_:)`` keeps a manager in one). Defaults to
        /// `ManagerState.poweredOn`.
        public var initialState: ManagerState
        /// How the state gets there. Defaults to ``StateTransition/instant``.
        public var stateTransition: StateTransition
        /// The device's GAP name, which centrals see as the peripheral's name (else the
        /// advertised local name). Defaults to `nil`.
        public var name: String?
        /// The ATT_MTU this peripheral prefers on each link. Defaults to `.fixed(517)`.
        public var mtu: MTUMode
        /// Whether `updateValue` with a value longer than a central's maximum update length
        /// throws `APIMisuseError.valueTooLong(operation:length:maximum:)` instead of
        /// truncating it as CoreBluetooth does. Defaults to `false`.
        public var strictLengths: Bool
        /// Whether a misuse CoreBluetooth lets pass quietly (a notification or indication cut
        /// to the link's length, an error response to a write command, an answer to a read
        /// request longer than an attribute holds) throws its `APIMisuseError` at the call
        /// instead of being recorded in ``MockBLEBridge/misuses`` (which
        /// ``MockBLEBridge/finish()`` reports); a `respond(to:withResult:value:)` refused so
        /// leaves the request unanswered. A ``RequestHandling/handler(_:)``'s answers are no
        /// call that could throw: their misuses are recorded either way. Defaults to `false`,
        /// as CoreBluetooth.
        public var strictMisuse: Bool
        /// The transmit queue of notifications and indications. Defaults to
        /// ``QueueBehavior/unlimited``.
        public var updateQueue: QueueBehavior
        /// The time between advertisements, 20 ms…10.24 s (Bluetooth's legacy advertising
        /// intervals). Defaults to 100 ms. With realistic timing the advertisements keep this
        /// rhythm whether or not anyone listens: a scan that starts between two hears the next
        /// (within the rest of the interval, plus the 0–10 ms advDelay).
        public var advertisingInterval: Duration
        /// The signal strength centrals see, in dBm (-127…20), until a proximity is simulated.
        /// Defaults to -50.
        public var rssi: Int
        /// The largest random deviation (in dB, drawn from the seeded generator) added to
        /// each RSSI a central sees, 0…147. The RSSI seen stays within the −127…20 dBm a
        /// controller reports: a deviation past either bound gives the bound (so `rssi: 20,
        /// rssiVariation: 10` reports 10…20). Defaults to 0.
        public var rssiVariation: Int
        /// How long after it starts advertising the first advertisement goes out (not
        /// negative); the next ones follow every ``advertisingInterval`` (plus a random
        /// 0–10 ms advDelay in realistic timing). Defaults to zero: the first goes out as
        /// advertising starts, heard by the centrals scanning then, in fast and realistic
        /// timing alike (no delay is drawn).
        public var advertisingDelay: Duration
        /// Whether the peripheral advertises once per `startAdvertising` instead of at every
        /// interval (a one-time advertisement). Defaults to `false`.
        public var advertisesOnce: Bool
        /// How reads and writes of dynamic characteristics are answered. Defaults to
        /// ``RequestHandling/automatic``.
        public var requestHandling: RequestHandling
        /// For a ``RequestHandling/handler(_:)``: whether a long write (prepared writes, then
        /// executed) reaches the handler once, with the whole value from its first offset, rather
        /// than once per prepared part. For the CoreBluetoothMock-shaped front end, whose spec
        /// delegates see a write as one value.
        package var handlerGetsWholeLongWrites = false
        /// For a ``RequestHandling/handler(_:)``: a handler that answers in its place and may
        /// leave a request to be answered later (it returns `nil`), with
        /// `answer(_:with:)`: the central waits meanwhile, as for a manual peripheral's answer,
        /// and the log has no request or response entries, as for any handler's answer. For the
        /// CoreBluetoothMock-shaped front end, whose spec delegates answer a CoreBluetooth-shaped
        /// central's requests on that central's app queue.
        package var deferringHandler: (@Sendable (ATTRequest) -> RequestResponse?)?
        /// How long this peripheral's links survive once nothing is heard from it (it reset,
        /// went out of range, or dropped its links without a word), in place of the bridge's
        /// ``LinkTiming/supervisionTimeout``; `nil` (the default) uses the bridge's. For the
        /// CoreBluetoothMock-shaped front end, whose specs carry their own (4 s by default);
        /// the front end gives zero…32 s (zero: the links drop at once).
        package var supervisionTimeout: Duration?
        /// The connection intervals this peripheral asks for once a link is up (its connection
        /// parameter update request), in place of the bridge's
        /// ``LinkTiming/peripheralProfile``'s preference, for its own links only: the central
        /// grants one within its rules (its ``LinkTiming/centralProfile``, else any whole
        /// 1.25 ms step within 7.5 ms…4 s), as ``NegotiatedLink`` does, and the link's connection
        /// events fall at it. Nothing else of the profiles changes: without profiles the link
        /// still carries ``LinkTiming/packetsPerConnectionEvent`` ATT packets per event. `nil`
        /// (the default) takes the bridge's. Instant timing (fast mode) ignores it. For the
        /// CoreBluetoothMock-shaped front end, whose specs carry their own interval.
        package var preferredConnectionIntervals: ClosedRange<Duration>?
        /// How many bytes of a long write the peripheral's GATT server holds between its Prepare
        /// Writes and the Execute Write (its prepare queue), at least 1; `nil` holds any long
        /// write. A Prepare Write that would take the queue past it is answered with 0x09 Prepare
        /// Queue Full (Bluetooth Core Specification, Vol 3, Part F, 3.4.6.1); the central
        /// cancels the write (an Execute Write with flags 0x00 drops the parts queued) and
        /// reports the error (`ATTError.prepareQueueFull`; CoreBluetooth's
        /// `CBATTError.prepareQueueFull`): the value is not written, and the peripheral's app
        /// never hears of it. A value of at most ATT_MTU − 3 bytes goes as one Write Request and
        /// never uses the queue. For firmware with a small buffer for long writes. Defaults to
        /// `nil`.
        public var preparedWriteCapacity: Int?
        /// Failures to inject into this peripheral's operations (service add, advertising
        /// start, update value). Defaults to none.
        public var errorInjection: [ErrorInjection]
        /// Whether the accessory asks connected iPhones for access to their notifications
        /// (ANCS); each central then reports its user's decision. Defaults to `false`.
        public var requestsANCSAuthorization: Bool
        /// The restore identifier (as `CBPeripheralManagerOptionRestoreIdentifierKey`): when the
        /// app is terminated (``MockPeripheralManager/simulateAppTermination()``) the system
        /// keeps its services, advertising and links, and a new manager with the same
        /// identifier on the bridge gets them back with a
        /// `PeripheralEvent.willRestoreState(_:)` event, then its state (its own configuration's
        /// error injections apply, and an invalid configuration is refused as a new manager's
        /// is); its L2CAP PSMs and channels are not kept; a manager made after one that shut
        /// down (``MockPeripheralManager/shutDown()``) with the same one starts afresh. Two live
        /// managers of a role on one bridge cannot share one (see ``identifier``). Defaults to
        /// `nil`.
        public var restoreIdentifier: String?
        /// The seed of this peripheral's own random draws; `nil` derives them from the
        /// bridge's seed. Defaults to `nil`.
        public var seed: UInt64?
        /// The peripheral's identifier; `nil` derives one from the bridge's seed and its
        /// ``restoreIdentifier``, or else its ``name`` and how many peripherals of that name
        /// (or, unnamed, how many unnamed ones) were created on the bridge before it: adding a
        /// peripheral of another name, or a central, never shifts it. Each manager on a bridge has its own:
        /// a manager given one another manager on the bridge already has refuses every call
        /// with `APIMisuseError.invalidConfiguration(_:)` (a manager with a
        /// ``restoreIdentifier`` takes over its predecessor's once that one's app was terminated
        /// with `simulateAppTermination()`; a second live manager with the same restore
        /// identifier is refused the same way, with a message naming the restore identifier; one
        /// made after its predecessor shut down (``MockPeripheralManager/shutDown()``, or a
        /// CoreBluetooth-shaped manager the app let go of) starts afresh under the identifier).
        /// Defaults to `nil`.
        public var identifier: UUID?

        /// Creates a configuration.
        public init(
            initialState: ManagerState = .poweredOn, stateTransition: StateTransition = .instant,
            name: String? = nil, mtu: MTUMode = .fixed(517), strictLengths: Bool = false, strictMisuse: Bool = false,
            updateQueue: QueueBehavior = .unlimited, advertisingInterval: Duration = .milliseconds(100),
            rssi: Int = -50, rssiVariation: Int = 0, advertisingDelay: Duration = .zero, advertisesOnce: Bool = false,
            requestHandling: RequestHandling = .automatic, errorInjection: [ErrorInjection] = [],
            requestsANCSAuthorization: Bool = false, restoreIdentifier: String? = nil, seed: UInt64? = nil,
            identifier: UUID? = nil, preparedWriteCapacity: Int? = nil
        ) {
            self.restoreIdentifier = restoreIdentifier
            self.requestsANCSAuthorization = requestsANCSAuthorization
            self.initialState = initialState
            self.stateTransition = stateTransition
            self.name = name
            self.mtu = mtu
            self.strictLengths = strictLengths
            self.strictMisuse = strictMisuse
            self.updateQueue = updateQueue
            self.advertisingInterval = advertisingInterval
            self.rssi = rssi
            self.rssiVariation = rssiVariation
            self.advertisingDelay = advertisingDelay
            self.advertisesOnce = advertisesOnce
            self.requestHandling = requestHandling
            self.errorInjection = errorInjection
            self.seed = seed
            self.identifier = identifier
            self.preparedWriteCapacity = preparedWriteCapacity
        }

        /// Fast mode: powered on, instant, answering requests automatically.
        public static var fast: Configuration { Configuration() }

        /// Realistic mode: the state settles after 100 ms through `resetting`, a device-like
        /// MTU (247), a notification queue of 20 packets, RSSI varying by ±4 dB, draws seeded
        /// with `seed`.
        public static func realistic(seed: UInt64) -> Configuration {
            Configuration(
                stateTransition: .realistic(duration: .milliseconds(100)), mtu: .device,
                updateQueue: .realistic(capacity: 20), rssiVariation: 4, seed: seed)
        }

        var isRealistic: Bool {
            stateTransition != .instant || updateQueue != .unlimited || mtu != .fixed(517) || rssiVariation != 0
        }
    }

    /// The bridge this peripheral is on.
    public nonisolated var bridge: MockBLEBridge { heldBridge ?? residentBridge }
    /// The bridge, held: for every manager but a bridge's resident (see
    /// ``init(configuration:bridge:joinsAtFirstCall:resident:)``).
    private nonisolated let heldBridge: MockBLEBridge?
    /// The bridge, unowned: a resident is kept by its bridge, and holding it would keep the
    /// bridge alive for ever.
    private nonisolated unowned let residentBridge: MockBLEBridge
    /// The configuration it was created with.
    public nonisolated let configuration: Configuration
    /// The peripheral's identifier (as `CBPeripheral.identifier` on the central side).
    public nonisolated let identifier: UUID
    nonisolated let broadcaster: EventBroadcaster<PeripheralEvent>
    /// Why this manager refuses every call: its identifier (or its restore identifier) belongs
    /// to another live manager on the bridge. `nil` for every other manager.
    package nonisolated let duplicateProblem: String?
    /// Which claim of its identifier this manager holds (see ``IdentifierClaims``): once a later
    /// manager holds the identifier, this one's release leaves it alone.
    nonisolated let identifierTicket: Int
    /// The world a refused manager runs on instead of its bridge's. (Boxed: a world held
    /// inline would make every manager hundreds of bytes larger.)
    var refusedWorld: RefusedWorld?
    /// Whether the app was terminated while the system keeps this peripheral for its next
    /// manager (a restore identifier): this object is the dead app's, and letting it go
    /// (``shutDown()``, a front end detaching) must not touch what the successor takes over.
    private(set) var handedOver = false
    /// Whether the app let go of this manager (``shutDown()``, its app not terminated): its
    /// identifier is free for the next manager, and once one holds it this object answers from a
    /// world of its own (see ``successorHolds()``).
    private var letGo = false

    /// Runs on the bridge's executor, so calls between the manager and its bridge do not hop.
    public nonisolated var unownedExecutor: UnownedSerialExecutor { bridge.unownedExecutor }

    /// Creates a mock peripheral on a bridge: `bridge`, or else the bridge of the current
    /// ``MockBLEBridge/run(timeLimit:stallPatience:_:)`` scope (``MockBLEBridge/current``, which
    /// a test's bridge trait sets too), or else a new one of its own.
    public init(configuration: Configuration = Configuration(), bridge: MockBLEBridge? = nil) {
        self.init(configuration: configuration, bridge: bridge, joinsAtFirstCall: false)
    }

    /// Creates a mock peripheral that joins the air at its first call rather than at the bridge's next
    /// turn (`joinsAtFirstCall`): for a front end whose calls are ordered by the bridge's
    /// command queue, so that managers created on several threads at once join in that order.
    ///
    /// A `resident` is a peripheral its bridge keeps (a CoreBluetoothMock-style spec's, kept in
    /// the bridge's front-end settings for as long as the bridge lives): it does not keep the
    /// bridge alive, and must not be used once the bridge is gone.
    ///
    /// Without a name, identifier or restore identifier in `configuration`, an `identifierStream`
    /// names the stream its identifier is drawn from, as a name does.
    package init(
        configuration: Configuration, bridge: MockBLEBridge?, joinsAtFirstCall: Bool, resident: Bool = false,
        identifierStream: String? = nil
    ) {
        let bridge =
            bridge ?? MockBLEBridge.current
            ?? MockBLEBridge(managerConfiguration: configuration.seed, realistic: configuration.isRealistic)
        heldBridge = resident ? nil : bridge
        residentBridge = bridge
        self.configuration = configuration
        let (identifier, problem, ticket) = bridge.claimIdentifier(
            role: .peripheral, name: configuration.name ?? identifierStream, configured: configuration.identifier,
            restoreIdentifier: configuration.restoreIdentifier)
        self.broadcaster = EventBroadcaster(clock: bridge.sleepClock, owner: .peripheral(identifier))
        self.identifier = identifier
        self.duplicateProblem = problem
        self.identifierTicket = ticket
        guard let problem else {
            if !joinsAtFirstCall { bridge.arrivals.add(.peripheral(identifier, broadcaster, configuration)) }
            return
        }
        refusedWorld = RefusedWorld(.peripheral(identifier, broadcaster, configuration), problem: problem)
    }

    deinit {
        // A manager that goes away ends its event streams (the bridge keeps nothing that
        // would call back into it).
        broadcaster.finish()
    }

    /// Test hook: this peripheral's preferred ATT_MTU for links made from now on (another
    /// firmware, say); links up already keep theirs.
    ///
    /// - Throws: `APIMisuseError.invalidConfiguration(_:)` for a mode with no value in 23…517.
    public func simulateMTUPreference(_ mtu: MTUMode) throws {
        if let problem = mtu.problem() {
            throw APIMisuseError.invalidConfiguration("simulateMTUPreference: \(problem)")
        }
        world { $0.peripherals[identifier]?.configuration.mtu = mtu }
    }

    /// Test hook: the peripheral's Bluetooth state changes. Leaving `poweredOn` stops
    /// advertising and drops every link (centrals see `peripheralDisconnected`; L2CAP channels
    /// close with the links). As CoreBluetooth's header says, `poweredOff` keeps the published
    /// services and L2CAP PSMs, and advertising goes on once powered on again; a state below it
    /// (`resetting`, `unauthorized`, `unsupported`, `unknown`) removes them, and once powered
    /// on the app publishes them and starts advertising again.
    public func simulateStateChange(_ state: ManagerState) {
        world { $0.setState(.peripheral(identifier), to: state) }
    }

    /// Test hook: the peripheral resets (reboots): its subscriptions end at once, and each
    /// connected central loses its link with `connectionTimeout` when the supervision timeout
    /// passes (at once in fast mode). It keeps its services and advertising.
    public func simulateReset() {
        world { $0.apply(.reset(peripheral: identifier)) }
    }

    /// The peripheral drops every link without a word (CoreBluetoothMock's
    /// `simulateDisconnection(withError:)` with a connection timeout): its end of each link is
    /// gone at once (its subscriptions end), nothing crosses any more (requests get no answer),
    /// and each central loses its link with `connectionTimeout` when the supervision timeout
    /// passes, as after ``simulateReset()``, but without a reset. It keeps its services and
    /// advertising.
    package func simulateSilentDisconnection() {
        world { $0.dropLinksSilently(of: identifier) }
    }

    /// Test hook: the peripheral moves (see ``Proximity``); out of range, its links drop with
    /// `connectionTimeout` after the supervision timeout and scans no longer see it.
    public func simulateProximityChange(_ proximity: Proximity) {
        world { $0.apply(.proximity(peripheral: identifier, proximity)) }
    }

    /// How much the peripheral's RSSI varies from now on, each reading drawn within ±`spread`
    /// dBm (its configuration's ``Configuration/rssiVariation``, changed while it runs; for
    /// CoreBluetoothMock's `simulateRSSIDeviation(_:)`, which applies at once).
    package func setRSSIVariation(_ spread: Int) {
        world { $0.setRSSIVariation(of: identifier, spread) }
    }

    /// Test hook: the peripheral advertises different data from now on (if advertising).
    public func simulateAdvertisementChange(_ advertisement: AdvertisementData) {
        world { $0.apply(.advertisementChange(peripheral: identifier, advertisement)) }
    }

    /// Test hook: the peripheral's GAP name changes; connected centrals are told.
    public func simulateNameChange(_ name: String?) {
        world { $0.apply(.nameChange(peripheral: identifier, name)) }
    }

    /// Test hook: the system already knows this peripheral, as if a central had discovered or
    /// connected to it before (CoreBluetoothMock's `simulateCaching()`): centrals can retrieve
    /// it by identifier and connect without scanning.
    public func simulateCaching() {
        world { $0.cache(peripheral: identifier) }
    }

    /// Test hook: another app (or the system) holds a connection to this peripheral, or lets
    /// it go: while it does, `retrieveConnectedPeripherals(withServices:)` finds it and a
    /// central connects to it whether or not it advertises.
    public func simulateConnectionBySystem(_ connected: Bool = true) {
        world { $0.setConnectedToSystem(peripheral: identifier, connected) }
    }

    /// Installs an error injection for this peripheral's operations from now on.
    ///
    /// It is checked as the configuration's ``Configuration/errorInjection`` is: an injection
    /// that configuration would refuse (see ``ErrorInjection``) is not installed, and this
    /// manager then refuses every call with `APIMisuseError.invalidConfiguration(_:)`, whose
    /// message begins `"MockPeripheralManager.inject(_:): "` and names the problem.
    public func inject(_ injection: ErrorInjection) {
        world { $0.inject(injection, owner: identifier) }
    }

    /// The app let go of this manager: one made after it with its identifier (its restore
    /// identifier) starts afresh under it (see ``MockBLEBridge/releaseIdentifier(_:ticket:)``).
    /// Nothing for a manager refused for another's identifier, nor once a later manager holds
    /// the identifier.
    package nonisolated func releaseIdentifier() {
        if duplicateProblem == nil { bridge.releaseIdentifier(identifier, ticket: identifierTicket) }
    }

    /// Takes this manager off the air and ends its event streams; see the bridge's log for
    /// what was dropped. The manager is unusable afterwards (its state is `unknown`). Its
    /// links drop; centrals' connections still pending to it stay pending, as a device's do
    /// (they do not time out), and complete once a manager made again under its identifier
    /// can be connected to.
    ///
    /// A manager made after this one with its ``Configuration/restoreIdentifier`` (or
    /// ``Configuration/identifier``) starts afresh under the identifier, as an app that makes its
    /// `CBPeripheralManager` again gets a working one: with no services and not advertising
    /// (those went with this manager), where this one was (its proximity), its app still in the
    /// background if it was, and with the bonds the system keeps. This object keeps answering as
    /// shut down, and nothing it is asked reaches the new one. (The CoreBluetooth-shaped
    /// `CBMPeripheralManager` of BLECBM shuts down so when the app lets go of it.)
    public func shutDown() {
        // (After a termination with a restore identifier the system keeps the peripheral for
        // the app's next manager: the terminated one shutting down leaves it alone.)
        guard !handedOver else { return }
        world { $0.shutDown(peripheral: identifier) }
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
            return bridge.peripheralStreams[identifier] !== broadcaster
        }
        if holds { refusedWorld = RefusedWorld(shutDown: .peripheral(identifier, broadcaster, configuration)) }
        return holds
    }

    /// Why this manager refuses `operation` before it reaches the bridge, if it does: its
    /// identifier is another manager's there (`invalidConfiguration`), its app was terminated
    /// and the system keeps its peripheral for the next manager, or the app let go of it and a
    /// later manager holds its identifier (`managerShutDown`: the requests and links are the
    /// next manager's). Calls that go to the world are refused by the world the manager answers
    /// from (``refusedWorld``).
    /// (`operation` is only evaluated for a refusal: naming it costs a string on every call.)
    func refusal(_ operation: @autoclosure () -> String) -> APIMisuseError? {
        if let duplicateProblem { return .invalidConfiguration(duplicateProblem) }
        return handedOver || (letGo && successorHolds()) ? .managerShutDown(operation: operation()) : nil
    }

    /// Runs `body` with the bridge, which shares this actor's executor; joins the bridge first.
    func withBridge<T: Sendable, E: Error>(
        _ call: String = #function, _ body: @Sendable (isolated MockBLEBridge) throws(E) -> T
    ) throws(E) -> T {
        try bridge.onSharedExecutor { bridge throws(E) in
            bridge.arrive(peripheral: identifier, events: broadcaster, configuration: configuration, call)
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

    public var state: ManagerState { world { $0.state(of: .peripheral(identifier)) } }

    public func waitForPoweredOn() async -> ManagerState {
        if refusal("waitForPoweredOn") != nil { return state }
        // Settled already (at once in fast mode): the state, without starting an operation.
        let settled = world { $0.settledState(of: .peripheral(identifier)) }
        if let settled { return settled }
        let reply = try? await bridge.perform(
            .waitForPoweredOn(.peripheral(identifier)), peripheral: identifier, events: broadcaster,
            configuration: configuration)
        if case .state(let state) = reply { return state }
        return state
    }

    /// A new stream of this manager's events, from now on. Events wait in the stream's buffer
    /// until read; ``MockBLEBridge/finish()`` reports the unread ones of streams still held.
    /// A stream nobody holds any more (neither the stream nor an iterator of it) stops
    /// receiving events and frees its buffer.
    public nonisolated func events() -> AsyncStream<PeripheralEvent> { broadcaster.stream() }

    public func add(_ service: GATTService) throws -> LocalService {
        try world { try $0.addService(peripheral: identifier, service: service) }
    }

    public func remove(_ service: LocalService) throws {
        try world { try $0.removeService(peripheral: identifier, service: service) }
    }

    public func removeAllServices() { world { $0.removeAllServices(peripheral: identifier) } }

    public var services: [LocalService] { world { $0.localServices(peripheral: identifier) } }

    public func startAdvertising(_ advertisement: AdvertisementData) throws {
        if let problem = advertisement.airProblem {
            throw APIMisuseError.invalidArgument("MockPeripheralManager.startAdvertising(_:): " + problem)
        }
        try startAdvertisingAsGiven(advertisement)
    }

    /// Starts advertising `advertisement` whatever its length: a CoreBluetoothMock spec's
    /// advertisement, which its tests give as they like, is advertised as Nordic's mock does.
    package func startAdvertisingAsGiven(_ advertisement: AdvertisementData) throws {
        try world { try $0.startAdvertising(peripheral: identifier, advertisement: advertisement) }
    }

    public func stopAdvertising() { world { $0.stopAdvertising(peripheral: identifier) } }

    public var isAdvertising: Bool { world { $0.isAdvertising(peripheral: identifier) } }

    /// Answers a read request (with the value from its offset on) or the first request of a
    /// write batch, with a result code (`ATTError.Code.success` or an ATT error).
    ///
    /// A read's value longer than an attribute holds from the request's offset on (512 bytes
    /// in all) is cut to it and recorded as a misuse (``Misuse/Kind/valueTruncated``); an error
    /// answer to a write command is ignored and recorded as one (``Misuse/Kind/responseToCommand``).
    /// With ``Configuration/strictMisuse`` either throws its `APIMisuseError` instead
    /// (`valueTooLong`, `responseToCommand`), and a refused read answer leaves the request
    /// unanswered. The value of an answer to a write is ignored, as CoreBluetooth ignores the
    /// value of the request it is answered with (which holds what the central wrote): an ATT
    /// Write Response carries no value.
    public func respond(to request: ATTRequest, withResult result: ATTError.Code, value: Data?) throws {
        try respond(to: request, withResult: result, value: value, call: "respond(to:withResult:value:)")
    }

    /// ``respond(to:withResult:value:)`` for a front end whose own call is `call` (named in a
    /// misuse's error).
    package func respond(
        to request: ATTRequest, withResult result: ATTError.Code, value: Data?, call: String
    ) throws {
        if let refusal = refusal("respond") { throw refusal }
        try withBridge { try $0.respond(peripheral: identifier, to: request, result: result, value: value, call: call) }
    }

    public func updateValue(
        _ value: Data, for characteristic: LocalCharacteristic, onSubscribedCentrals centrals: [UUID]?
    ) throws -> Bool {
        try world {
            try $0.updateValue(peripheral: identifier, value: value, characteristic: characteristic, centrals: centrals)
        }
    }

    public func subscribedCentrals(for characteristic: LocalCharacteristic) -> [RemoteCentral] {
        world { $0.subscribedCentrals(peripheral: identifier, characteristic: characteristic) }
    }

    /// The value the peripheral holds for a published characteristic: its cached value, or a
    /// dynamic one's current value (what automatic request handling answers reads with, and
    /// what writes and writes without response stored), or `nil` when this manager did not
    /// publish it.
    public func value(of characteristic: LocalCharacteristic) -> Data? {
        world { try? $0.requirePublished(characteristic, of: identifier).value }
    }

    /// Sets the current value of a dynamic characteristic: what automatic request handling
    /// answers reads with (as setting `CBMutableCharacteristic.value`).
    public func setValue(_ value: Data, for characteristic: LocalCharacteristic) throws {
        try world { try $0.setValue(peripheral: identifier, value: value, characteristic: characteristic) }
    }

    /// The longest notification a connected central receives (ATT_MTU − 3), or `nil` if it
    /// is not connected.
    public func maximumUpdateValueLength(for central: UUID) -> Int? {
        world { $0.maximumUpdateValueLength(peripheral: identifier, central: central) }
    }

    public func publishL2CAPChannel(requiresEncryption: Bool) throws -> UInt16 {
        try world { try $0.publishL2CAPChannel(peripheral: identifier, requiresEncryption: requiresEncryption) }
    }

    public func unpublishL2CAPChannel(_ psm: UInt16) throws {
        try world { try $0.unpublishL2CAPChannel(peripheral: identifier, psm: psm) }
    }

    /// Test hook: the app moves to the background (`true`) or back to the foreground. In the
    /// background, as on iOS, the advertisement centrals receive has no local name,
    /// manufacturer data or service data, and its service UUIDs move to the overflow area
    /// (where only scans for those services find them).
    public func simulateBackgroundExecution(_ isInBackground: Bool) {
        world { $0.setBackground(.peripheral(identifier), isInBackground) }
    }

    /// Test hook: the system terminates the app. With a ``Configuration/restoreIdentifier`` the
    /// system keeps the manager's services, advertising and links, and a manager created later
    /// with the same restore identifier receives them (see ``restoredState``), followed by the
    /// events that happened for the app meanwhile (requests, subscriptions), in order; without
    /// one this is ``shutDown()``. Either way this manager's event streams end and it must not be used
    /// again: it reports `unknown` and refuses every call with `managerShutDown`. With a restore
    /// identifier its own ``shutDown()`` then does nothing and nothing it is asked reaches what
    /// the system keeps (which is the next manager's), and a front end attached to it hears
    /// nothing more.
    ///
    /// Its L2CAP PSMs are unpublished and its channels close at both ends either way (state
    /// restoration does not keep them): each central sees the close as when an app closes a
    /// channel, and opening a channel at one of the PSMs fails with `psmNotSupported` until a
    /// manager publishes it again. The error injections it installed go with it: they fire no
    /// more, and `finish()` lists those that never fired, as for a manager shut down.
    public func simulateAppTermination() {
        // The app is gone: its front end hears nothing more (not even how its operations end),
        // and what this object does from now on leaves the peripheral the system keeps alone.
        // (A manager refused for another's identifier has only its own world: terminating it
        // leaves the other alone.)
        let keeps = duplicateProblem == nil && world { $0.keepsForRestoration(.peripheral(identifier)) }
        if keeps {
            handedOver = true
            detachFrontEnd(handingOver: true)
        }
        world { $0.terminate(peripheral: identifier) }
        // The next manager with this restore identifier takes over this identifier.
        if keeps, let restoreIdentifier = configuration.restoreIdentifier {
            bridge.identifierAwaitsRelaunch(identifier, restoreIdentifier: restoreIdentifier)
        }
        // The system's peripheral keeps this identifier for the next manager: this object
        // answers from a world where it is shut down.
        if keeps { refusedWorld = RefusedWorld(shutDown: .peripheral(identifier, broadcaster, configuration)) }
    }

    /// What the system restored to this manager when it was created with the restore
    /// identifier of a terminated one, or `nil`. The same state is this manager's first event.
    public var restoredState: RestoredPeripheralState? {
        world { $0.restoredState(peripheral: identifier) }
    }

    /// Test hook: this peripheral loses its bond with a central (a factory reset, say). The
    /// central still has its keys, so its next connection fails with
    /// `peerRemovedPairingInformation` until it removes its own bond.
    public func simulateBondRemoval(of central: UUID) {
        world { $0.removeBond(LinkKey(central: central, peripheral: identifier), onCentral: false) }
    }

    /// Test hook: drops the link to a central from this side. The central sees a disconnect
    /// with `error`, its waiting operations fail with it, and its subscriptions end.
    public func simulateDisconnection(
        of central: UUID, error: CoreBluetoothError = CoreBluetoothError(.peripheralDisconnected)
    ) {
        guard refusal("simulateDisconnection") == nil else { return }
        withBridge { $0.simulateDisconnection(central: central, peripheral: identifier, error: error) }
    }
}
