import BLECore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The simulated radio that mock centrals and peripherals talk through.
///
/// A bridge owns everything simulated: the managers on the air, their links, the GATT
/// servers, a virtual clock, a seeded random generator, and a log of every operation and
/// event. Bridges share nothing, so tests using separate bridges run in parallel safely.
///
/// ```swift
/// let bridge = MockBLEBridge()
/// let peripheral = MockPeripheralManager(bridge: bridge)
/// let central = MockCentralManager(bridge: bridge)
/// ```
///
/// **Time.** Virtual time only moves forward, and only when the simulation says so. Every
/// link is an ordered pipe drained at connection events: an operation's packets queue behind
/// what the same side sent before, and the operation completes when its last packet has
/// crossed. Outside a ``run(timeLimit:stallPatience:_:)`` scope, a call that waits for such an
/// operation runs the schedule forward to that point, firing everything due before it in
/// order (advertisements, notifications, faults), so sequential test code gets exact,
/// repeatable timestamps; inside one, the scope's driver moves time, one event at a time,
/// whenever every task of the scope waits. Background activity (periodic
/// advertising, timeouts, queued writes and notifications) runs when a test calls
/// ``advance(by:)`` or ``run(maximumEvents:)``, or when a later call waits for the link. In
/// fast mode (the default) every step takes no time. Managers run on the bridge's executor,
/// so a manager's call into its bridge does not hop threads.
public actor MockBLEBridge {
    /// How a bridge simulates the air.
    public struct Configuration: Sendable, Hashable {
        /// The seed of every random draw and derived identifier. Defaults to 0.
        public var seed: UInt64
        /// How long things take in virtual time. Defaults to ``LinkTiming/instant``.
        public var timing: LinkTiming
        /// For demos only: after virtual time moves forward by `d` (in ``advance(by:)`` or a
        /// timed operation), the bridge also waits `d × realTimePacing` of wall-clock time,
        /// so a simulation can be watched unfolding. Determinism is unaffected (the order of
        /// events never depends on it). `nil` (the default) never waits on the wall clock.
        public var realTimePacing: Double?
        /// Limits every link obeys whatever the managers prefer (ATT_MTU, queue capacities).
        /// Defaults to ``LinkLimits/none``.
        public var limits: LinkLimits

        /// Creates a configuration.
        public init(
            seed: UInt64 = 0, timing: LinkTiming = .instant, realTimePacing: Double? = nil, limits: LinkLimits = .none
        ) {
            self.seed = seed
            self.timing = timing
            self.realTimePacing = realTimePacing
            self.limits = limits
        }

        /// Fast mode: nothing takes time.
        public static var fast: Configuration { Configuration() }

        /// Realistic mode: ``LinkTiming/realistic`` timing, every draw seeded with `seed`.
        public static func realistic(seed: UInt64) -> Configuration {
            Configuration(seed: seed, timing: .realistic)
        }
    }

    /// The configuration the bridge was created with.
    public nonisolated let configuration: Configuration
    /// The bridge's virtual clock. Code under test that sleeps on it shares the simulation's
    /// time: its ``VirtualClock/now`` is the bridge's ``now``, and each sleep is an event on the
    /// bridge's one schedule, so sleepers wake in time order among link events,
    /// advertisements, faults and timeouts (after the other events due at the same instant).
    /// Advancing it advances the bridge (``advance(by:)``).
    public nonisolated var clock: VirtualClock {
        // The clock reaches its bridge through a weak reference, made the first time the clock
        // is handed out: a weak reference gives the bridge a side table, which makes every
        // retain and release of the bridge slower, and most bridges never hand out their clock.
        sleepClock.attach(to: self)
        return sleepClock
    }
    /// The clock, without attaching it (for the kit's own use: publishing time and sleepers).
    nonisolated let sleepClock: VirtualClock
    /// The bridge's time as its clock has it (``clock``'s `now`), read without handing out the
    /// clock (which gives the bridge a side table: see ``clock``).
    package nonisolated var clockNow: VirtualClock.Instant { sleepClock.now }

    // The state every call reads and changes, many times. Release builds leave out the
    // dynamic exclusivity checks on it (each access of an actor's stored property otherwise
    // registers with the runtime, a cost every call paid dozens of times); debug builds, which
    // the kit's tests run, keep them, so an overlapping access still traps there.
    #if DEBUG
        /// The simulation.
        var world: World
        /// The event streams of the managers on the bridge.
        var centralStreams = IdentifierMap<EventBroadcaster<CentralEvent>>()
        var peripheralStreams = IdentifierMap<EventBroadcaster<PeripheralEvent>>()
        /// The operation being started, and its result if it ended before its caller suspended.
        var starting: OperationID?
        var settled: Result<Reply, any Error>?
        /// Effects being performed (reused, so performing them allocates nothing).
        var spareEffects: [Effect] = []
        /// The world's time as last published to the clock.
        var clockTime: VirtualClock.Instant = .zero
        /// Whether the active run's driver moves time on.
        var driving = false
        /// Operations started by a callback-style front end, with what to call when they end.
        var completions: [OperationID: FrontEndCompletion] = [:]
        /// The callback-style front ends of centrals (the CoreBluetooth-shaped API), by central.
        var centralFrontEnds = IdentifierMap<CentralFrontEnd>()
        /// The callback-style front ends of peripherals, by peripheral.
        var peripheralFrontEnds = IdentifierMap<PeripheralFrontEnd>()
        /// What the bridge reaches on every change while front ends are attached.
        var frontEndSides = FrontEndSides()
        /// The conditions of ``waitUntil(_:)`` calls still waiting, and their continuations.
        var pendingConditions:
            [(token: Int, since: VirtualClock.Instant, condition: @Sendable (isolated MockBLEBridge) -> Bool)] = []
    #else
        @exclusivity(unchecked) var world: World
        @exclusivity(unchecked) var centralStreams = IdentifierMap<EventBroadcaster<CentralEvent>>()
        @exclusivity(unchecked) var peripheralStreams = IdentifierMap<EventBroadcaster<PeripheralEvent>>()
        @exclusivity(unchecked) var starting: OperationID?
        @exclusivity(unchecked) var settled: Result<Reply, any Error>?
        @exclusivity(unchecked) var spareEffects: [Effect] = []
        @exclusivity(unchecked) var clockTime: VirtualClock.Instant = .zero
        @exclusivity(unchecked) var driving = false
        @exclusivity(unchecked) var completions: [OperationID: FrontEndCompletion] = [:]
        @exclusivity(unchecked) var centralFrontEnds = IdentifierMap<CentralFrontEnd>()
        @exclusivity(unchecked) var peripheralFrontEnds = IdentifierMap<PeripheralFrontEnd>()
        @exclusivity(unchecked) var frontEndSides = FrontEndSides()
        @exclusivity(unchecked) var pendingConditions:
            [(token: Int, since: VirtualClock.Instant, condition: @Sendable (isolated MockBLEBridge) -> Bool)] = []
    #endif
    /// The request handlers of peripherals that answer with one.
    var handlers = IdentifierMap<RequestHandler>()
    /// The open L2CAP channels' ends.
    var channelEnds: [UInt64: ChannelEnds] = [:]
    /// Central ends of channels just opened, by the operation that opened each, until it
    /// completes (then its end goes to its caller) or ends after its caller gave up (then the
    /// end is dropped). A channel closed meanwhile keeps its end here: the open still returns it.
    var openedCentralEnds: [OperationID: L2CAPChannel] = [:]
    /// Central ends handed to async opening calls that are returning, by channel.
    var handedCentralEnds: [UInt64: L2CAPChannel] = [:]
    /// Callers suspended on operations.
    nonisolated let waiters: OperationWaiters
    /// How many callers are suspended in `suspend(_:)` now, and whether any was since
    /// cancellations were last taken (only those can have been cancelled).
    var suspendedCallers = 0
    var cancellationsPossible = false
    /// Wall-clock time demo pacing still owes (always zero without ``Configuration/realTimePacing``).
    var pendingPacing: Duration = .zero
    /// All the demo pacing waited so far (for tests: the scaled virtual time).
    var pacedInAll: Duration = .zero
    /// Managers created and not yet on the air.
    nonisolated let arrivals: ArrivalQueue
    /// The active ``run(timeLimit:stallPatience:_:)`` scope's executor, if any (front ends keep
    /// it, to ask ``RunRegistry/isActive`` on every call without looking it up).
    package nonisolated var runs: RunRegistry {
        sideObject({ madeRuns }, { madeRuns = $0 }) { RunRegistry(lock: locks[.runs]) }
    }
    /// The virtual time the active run may not pass.
    var runDeadline: VirtualClock.Instant?
    /// The active run's stall patience: the most wall time a direct call in it waits for the
    /// callbacks app queues are running (see ``applyHeldCalls()``).
    var runPatience: Duration = .zero
    /// The continuations of ``waitUntil(_:)`` calls.
    nonisolated var conditions: ConditionWaiters {
        sideObject({ madeConditions }, { madeConditions = $0 }) {
            ConditionWaiters(lock: locks[.conditions])
        }
    }
    /// Calls made during a run from tasks the run cannot see, once each.
    var untrackedCalls: [String] = []
    /// Whether front ends' queued calls are being applied: they are made on the run's behalf
    /// (by its driver, or as it ends), whatever task applies them.
    var applyingFrontEndCommands = false
    /// Whether ``applyEffects()`` is performing effects: a call from within one of them (a
    /// front end reading a manager's state as it hands an event on) leaves what the world
    /// decided meanwhile to that loop, which performs it next, in order.
    var applyingEffects = false
    /// Work the simulation hands to code outside it (delegate callbacks on app queues), which
    /// a run waits for before it moves time on.
    package nonisolated var outside: OutsideWork {
        sideObject({ madeOutside }, { madeOutside = $0 }) { OutsideWork(lock: locks[.outside]) }
    }
    /// What the system knows, for front ends that answer synchronously.
    package nonisolated var systemView: SystemView {
        sideObject({ madeSystemView }, { madeSystemView = $0 }) {
            SystemView(lock: locks[.systemView])
        }
    }
    /// Settings front ends keep on this bridge.
    package nonisolated var frontEndSettings: FrontEndSettings {
        sideObject({ madeFrontEndSettings }, { madeFrontEndSettings = $0 }) {
            FrontEndSettings(lock: locks[.settings])
        }
    }
    /// Explicit advances inside a run, waiting for the driver to reach their targets (made the
    /// first time an advance waits in a run).
    var advanceWaiters: AdvanceWaiters?

    private nonisolated let identifiers: IdentifierSource

    // The side objects, and their locks. The locks share one allocation; the objects a plain
    // test never reaches (runs, `waitUntil`, front ends) are made the first time they are
    // reached, under `SideLock.sideObjects`: each made with the bridge cost an allocation.
    private nonisolated let locks: LockGroup
    /// The locks of the group, one per side object, and the one under which the lazily made
    /// ones are made.
    fileprivate enum SideLock: Int, CaseIterable {
        case clock, waiters, arrivals, identifiers, sideObjects, runs, conditions, outside, systemView, settings
    }
    // nonisolated(unsafe): only read and written in `sideObject(_:_:_:)`'s closures, which it
    // calls with `SideLock.sideObjects` held.
    private nonisolated(unsafe) var madeRuns: RunRegistry?
    private nonisolated(unsafe) var madeConditions: ConditionWaiters?
    private nonisolated(unsafe) var madeOutside: OutsideWork?
    private nonisolated(unsafe) var madeSystemView: SystemView?
    private nonisolated(unsafe) var madeFrontEndSettings: FrontEndSettings?

    /// The side object `made` reads, made by `make` and handed to `keep` the first time. (Read
    /// and written through closures, so that every access of the stored property is made with
    /// the lock held: an `inout` argument's access would begin before the lock is taken.)
    private nonisolated func sideObject<Object: AnyObject>(
        _ made: () -> Object?, _ keep: (Object) -> Void, _ make: () -> Object
    ) -> Object {
        locks[.sideObjects].withLock {
            if let object = made() { return object }
            let object = make()
            keep(object)
            return object
        }
    }

    /// Creates a bridge.
    public init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
        let locks = LockGroup(count: SideLock.allCases.count)
        self.locks = locks
        self.sleepClock = VirtualClock(bridgedAt: .zero, lock: locks[.clock])
        sleepClock.describeBridge(seed: configuration.seed, fast: configuration.timing.isInstant)
        self.waiters = OperationWaiters(lock: locks[.waiters])
        self.arrivals = ArrivalQueue(lock: locks[.arrivals])
        self.world = World(seed: configuration.seed, timing: configuration.timing)
        world.bridgeProblem = configuration.problem
        world.limits = configuration.limits
        // The world's effects and these are swapped on every call: both get room at once.
        spareEffects.reserveCapacity(world.effects.capacity)
        self.identifiers = IdentifierSource(seed: configuration.seed, lock: locks[.identifiers])
    }

    deinit {
        // Tasks still sleeping on the clock can no longer be woken: they end with an error
        // rather than wait for ever.
        sleepClock.bridgeWentAway()
    }

    /// Creates a fast bridge with a seed.
    public init(seed: UInt64) {
        self.init(configuration: Configuration(seed: seed))
    }

    /// The bridge a manager creates for itself: seeded with the manager's seed, realistic
    /// when the manager's configuration is.
    init(managerConfiguration seed: UInt64?, realistic: Bool) {
        self.init(configuration: realistic ? .realistic(seed: seed ?? 0) : Configuration(seed: seed ?? 0))
    }

    /// The current virtual time.
    public var now: VirtualClock.Instant { world.now }

    /// Everything that happened so far, in order. Outside a run, calls that CoreBluetooth-shaped
    /// managers (BLECBM) made before this read, and have not reached the simulation yet (they are
    /// applied from the app's queue), are applied first, so a log read after them has them on
    /// every run.
    public var log: [BridgeLogEntry] {
        // Outside a run, the app's calls made before this read are in the log (in a run, the
        // driver applies them in its order).
        if !driving { applyHeldCalls() }
        return world.log
    }

    /// The ATT PDUs the simulated links have carried so far, counted as a real link would:
    /// each request and its response (a long read's Read Blobs, a long write's Prepare and
    /// Execute Writes, discovery pages, CCCD writes, the MTU exchange on connecting), each
    /// write command, each notification, and each indication with its confirmation, once it
    /// has crossed. The same in fast and realistic mode; scenario traces report it per step
    /// as `attPDUs`.
    public var attPDUCount: Int { world.attPDUCount }

    // MARK: Operations

    /// Runs an operation to its end: starts it, runs the schedule while that moves it on, and
    /// suspends only while it waits for something outside the simulation (a peripheral's
    /// answer, a peripheral becoming connectable) or, in a run, for the run's driver to move
    /// time (see ``serve(_:)``). Cancelling the caller's task ends the wait
    /// with `CancellationError` and withdraws the operation from the air where it can be.
    /// (`admitted`: the caller already put the managers created since the last call on the air.)
    @inline(__always)
    func perform(_ request: World.Request, admitted: Bool = false) async throws -> Reply {
        // A cancelled caller starts nothing on the air.
        try Task.checkCancellation()
        if !admitted { admitArrivals() }
        forgetCancelled()
        let began = world.now
        let id = world.makeOperationID()
        starting = id
        world.start(request, id: id)
        applyEffects()
        serve(id)
        starting = nil
        let result: Result<Reply, any Error>
        if let outcome = settled {
            settled = nil
            result = outcome
        } else {
            result = await suspend(id)
        }
        if configuration.realTimePacing != nil {
            pace(from: began)
            await waitForPacing()
        }
        return try result.get()
    }

    /// Runs a central manager's operation: the manager joins the bridge first, as on every
    /// call it makes (see ``perform(_:admitted:)``). One per role, taking the manager's fields
    /// rather than an ``ArrivalQueue/Arrival``, so that no call copies the configuration.
    @inline(__always)
    func perform(
        _ request: World.Request, central identifier: UUID, events: EventBroadcaster<CentralEvent>,
        configuration: MockCentralManager.Configuration, _ call: String = #function
    ) async throws -> Reply {
        arrive(central: identifier, events: events, configuration: configuration, call)
        return try await perform(request, admitted: true)
    }

    /// Runs a peripheral manager's operation (see ``perform(_:central:events:configuration:_:)``).
    @inline(__always)
    func perform(
        _ request: World.Request, peripheral identifier: UUID, events: EventBroadcaster<PeripheralEvent>,
        configuration: MockPeripheralManager.Configuration, _ call: String = #function
    ) async throws -> Reply {
        arrive(peripheral: identifier, events: events, configuration: configuration, call)
        return try await perform(request, admitted: true)
    }

    /// A central's call reaches the bridge: the managers created since the last call join the
    /// air, then this one (once), and a run notes a call from a task it cannot see.
    ///
    /// One per role, taking the manager's fields rather than an ``ArrivalQueue/Arrival``:
    /// building an arrival copies the manager's configuration, which every synchronous call
    /// would pay (measured: writes without response 12% slower with a single `arrive(_:)`).
    func arrive(
        central identifier: UUID, events: EventBroadcaster<CentralEvent>,
        configuration: MockCentralManager.Configuration, _ call: String
    ) {
        admitArrivals()
        join(central: identifier, events: events, configuration: configuration)
        if driving, !applyingFrontEndCommands { checkTracked("MockCentralManager.\(call)") }
        applyHeldCalls()
    }

    /// A peripheral manager's call reaches the bridge (see ``arrive(central:events:configuration:_:)``).
    func arrive(
        peripheral identifier: UUID, events: EventBroadcaster<PeripheralEvent>,
        configuration: MockPeripheralManager.Configuration, _ call: String
    ) {
        admitArrivals()
        join(peripheral: identifier, events: events, configuration: configuration)
        if driving, !applyingFrontEndCommands { checkTracked("MockPeripheralManager.\(call)") }
        applyHeldCalls()
    }

    /// Runs the schedule while operation `id` is pending and running it moves the operation
    /// on (it is not parked on something outside the simulation).
    ///
    /// Inside a run only what is due at the current instant runs here: time moves on only when
    /// every task of the run waits, one event at a time (the run's driver steps it), so a task
    /// that the way there wakes (a sleeper on the clock, a task waiting for an event) acts at
    /// its instant, before the operation goes on: a watchdog can cancel a connection attempt
    /// that takes longer than it allows.
    func serve(_ id: OperationID) {
        // (The world is only ever called through mutating methods here: a non-mutating call on
        // an actor's stored value copies the whole value first.)
        if driving {
            while world.serveStep(id, dueBy: world.now) {
                syncClock()
                applyEffects()
            }
            return
        }
        while world.serveStep(id) {
            syncClock()
            applyEffects()
        }
    }

    /// Suspends the caller until operation `id` completes or the caller's task is cancelled.
    private func suspend(_ id: OperationID) async -> Result<Reply, any Error> {
        // Only a caller in here can be cancelled (its handler is removed before this returns):
        // see `forgetCancelled()`.
        suspendedCallers += 1
        cancellationsPossible = true
        // Outside a run nothing but other code lets the operation go on (the schedule ran it as
        // far as it goes by itself): watched, and reported should it stand still (see
        // `QuietWaits`). Described only here, where a caller suspends.
        let quietWait = driving ? nil : world.quietWait(for: id).flatMap { sleepClock.beginQuietWait($0) }
        defer {
            suspendedCallers -= 1
            sleepClock.endQuietWait(quietWait)
        }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                waiters.register(id, continuation)
            }
        } onCancel: {
            // The clean-up holds the bridge weakly: a bridge nobody uses any more has nothing to
            // forget, and a task waiting to run must not keep it alive.
            if waiters.cancel(id) {
                HelperTask.start { [weak self] in await self?.forgetCancelled() }
            }
        }
    }

    /// Tells the world about operations whose callers gave up, and takes the wake-ups of
    /// cancelled sleepers on ``clock`` off the schedule.
    func forgetCancelled() {
        // With no caller suspended since the cancellations were last taken, there is none to
        // take (and the waiters' lock is not touched on every call). Callers that left
        // `suspend(_:)` did so after their cancellation handlers, so theirs are there now.
        if cancellationsPossible {
            cancellationsPossible = suspendedCallers > 0
            let cancelled = waiters.takeCancelled()
            if !cancelled.isEmpty {
                for id in cancelled { world.cancel(id) }
                applyEffects()
            }
        }
        forgetCancelledSleepers()
    }

    /// Runs `body` on the world, then performs what it decided, and serves the operations
    /// it unblocked.
    ///
    /// A call that lets a waiting operation go on (a peripheral's answer, a peripheral that
    /// starts advertising for a pending connection) runs the schedule until that operation
    /// ends or waits again, as the operation's own call would have: so a request queued
    /// behind an answered one is delivered, and a pending connection completes.
    @discardableResult
    func mutate<T>(_ body: (inout World) throws -> T) rethrows -> T {
        let parked = world.takeParkedOperations()
        defer {
            applyEffects()
            for id in parked where world.isServable(id) { serve(id) }
        }
        return try body(&world)
    }

    // MARK: Time

    /// Runs the simulation forward by `duration`: every scheduled event due by then (sleepers
    /// on ``clock`` among them), in order of time, with the time set to each one's deadline.
    ///
    /// A negative duration is taken as zero: time never goes back, and nothing that was due
    /// later runs (as `Task.sleep(for:)` returns at once for a negative duration).
    public func advance(by duration: Duration) async {
        await advance(to: world.now.advanced(by: max(duration, .zero)))
    }

    /// Runs the simulation forward to `instant` (nothing happens if it is in the past).
    ///
    /// Inside a ``run(timeLimit:stallPatience:_:)`` scope the scope's driver does the running,
    /// letting the tasks each event wakes run before the next, and this call returns when time
    /// reaches `instant`. Outside a scope the events and sleepers due run here, in order; a
    /// task a sleeper wakes runs after this call returns, at `instant`. Cancelling the calling
    /// task stops the advance early: outside a scope at the last event it ran (time never
    /// passes an event that has not run; a caller cancelled before the call moves nothing),
    /// inside one at once, wherever the driver has got to (which then no longer stops at
    /// `instant`).
    public func advance(to instant: VirtualClock.Instant) async {
        admitArrivals()
        applyHeldCalls()
        forgetCancelled()
        guard instant > world.now else { return }
        let started = world.now
        if driving {
            // The run's driver resumes it at `instant`; cancelling the caller resumes it at once,
            // wherever the driver has got to (and the driver no longer stops there).
            let waiters = advanceWaiters ?? AdvanceWaiters()
            advanceWaiters = waiters
            await waiters.wait(waiters.add(instant))
        } else {
            runSchedule(to: instant)
        }
        if configuration.realTimePacing != nil {
            pace(from: started)
            await waitForPacing()
        }
    }

    /// Runs every event due by `instant`, in order, then moves the time there (nothing
    /// happens if it is in the past). Stops early if the calling task is cancelled, with the
    /// time at the last event it ran: moving it on to `instant` would leave events due before
    /// then unrun, to run later stamped with a time past their deadlines.
    func runSchedule(to instant: VirtualClock.Instant) {
        guard instant > world.now else { return }
        while let next = world.schedule.nextDeadline, next <= instant {
            if Task.isCancelled { return }
            runEvents(through: next)
        }
        // (Cancelled after the last event due, or before any: time stays at the last one run.)
        if Task.isCancelled { return }
        setTime(instant)
    }

    /// For a front end whose time follows the wall clock: runs the schedule to `instant`
    /// (nothing moves if it is in the past) and returns the time of the next scheduled event.
    package func followTime(to instant: VirtualClock.Instant) -> VirtualClock.Instant? {
        admitArrivals()
        forgetCancelled()
        runSchedule(to: instant)
        return world.schedule.nextDeadline
    }

    /// Runs scheduled events until none is left, or `maximumEvents` have run (periodic
    /// advertising never ends while someone scans). Returns whether the schedule emptied.
    ///
    /// Sleepers on ``clock`` wake on the way when their turn comes, and do not count as
    /// events: a sleep due after the last event (a timeout the code under test keeps) neither
    /// keeps this call running nor is woken by it.
    @discardableResult
    public func run(maximumEvents: Int = 10_000) async -> Bool {
        admitArrivals()
        forgetCancelled()
        var count = 0
        while count < maximumEvents, world.hasEventsBesidesSleepers {
            let sleepers = world.sleeperCount
            world.runNextEvent()
            syncClock()
            applyEffects()
            if world.sleeperCount == sleepers { count += 1 }
        }
        let emptied = !world.hasEventsBesidesSleepers
        // The sleepers due at the time the last event left: they wake after the events due then.
        if emptied { runDue() }
        return emptied
    }

    /// Runs every scheduled event due by `limit`, then moves the time to `limit`.
    func runEvents(through limit: VirtualClock.Instant) {
        while world.runNextEvent(dueBy: limit) {
            syncClock()
            applyEffects()
        }
        setTime(limit)
    }

    /// Publishes the world's time to the clock (nothing to do while time stands still, as it
    /// does all through a fast-mode call). Sleepers wake through the schedule, not here.
    func syncClock() {
        guard world.now != clockTime else { return }
        clockTime = world.now
        sleepClock.publish(now: world.now)
    }

    /// Moves time forward to `instant` (callers have run what is due by then, sleepers' wake-ups
    /// included).
    func setTime(_ instant: VirtualClock.Instant) {
        world.moveTime(to: instant)
        syncClock()
        checkConditions()
    }

    /// Demo pacing: owes the wall-clock equivalent of the virtual time since `start`
    /// (scaled), when ``Configuration/realTimePacing`` is set. Never used otherwise. What is
    /// owed saturates at ``longestPacing``: a huge factor, or a huge advance, waits (in effect)
    /// for ever rather than trapping when the scaled time overflows a `Duration`.
    func pace(from start: VirtualClock.Instant) {
        guard let scale = configuration.realTimePacing, scale > 0, world.now > start else { return }
        let elapsed = start.duration(to: world.now)
        let scaled =
            elapsed / Self.longestPacing * scale < 1 ? elapsed * scale : Self.longestPacing
        pendingPacing = min(pendingPacing + scaled, Self.longestPacing)
    }

    /// The most demo pacing a bridge owes or counts: `Int64.max` seconds.
    static let longestPacing = Duration.seconds(Int64.max)

    /// Waits the accumulated demo pacing on the wall clock (see ``pace(from:)``).
    func waitForPacing() async {
        guard pendingPacing > .zero else { return }
        let wait = pendingPacing
        pendingPacing = .zero
        pacedInAll = min(pacedInAll + wait, Self.longestPacing)
        // In steps of a day at most: the runtime traps on a sleep whose deadline does not fit its
        // timestamps (one of `longestPacing` does not).
        let clock = ContinuousClock()
        var left = wait
        while left > .zero {
            let step = min(left, Self.longestPacingStep)
            do { try await clock.sleep(for: step) } catch { return }
            left -= step
        }
    }

    /// The longest wall-clock sleep of one step of demo pacing.
    static let longestPacingStep = Duration.seconds(86_400)

    // MARK: Identifiers

    /// The identifier derived for a new manager, from the bridge's seed, its role and what
    /// names it: its restore identifier (the same for every manager with it, so a relaunched
    /// app's manager takes over what the system kept for its predecessor), else its name (a
    /// peripheral's `name`) and how many managers of that role and name came before it, else
    /// how many unnamed managers of its role came before it. Creating a manager never shifts
    /// the identifier of one with another name or restore identifier, nor of another role.
    nonisolated func makeIdentifier(role: IdentifierSource.Role, name: String? = nil, restoreIdentifier: String?)
        -> UUID
    {
        if let restoreIdentifier { return identifiers.restored(role: role, restoreIdentifier: restoreIdentifier) }
        return identifiers.next(role: role, name: name)
    }

    /// The identifier a new manager takes, and what is wrong with it: `nil`, or the
    /// configuration problem of an identifier another manager on this bridge already has.
    /// Each live manager has its own identifier: a manager with a restore identifier takes
    /// over its predecessor's only once that one's app was terminated (see
    /// ``IdentifierClaims``), and a second live manager with the same restore identifier is
    /// refused as any other clash is.
    nonisolated func claimIdentifier(
        role: IdentifierSource.Role, name: String? = nil, configured: UUID?, restoreIdentifier: String?
    ) -> (UUID, problem: String?, ticket: Int) {
        let identifier = configured ?? makeIdentifier(role: role, name: name, restoreIdentifier: restoreIdentifier)
        let (claim, ticket) = identifiers.claim(identifier, restoreIdentifier: restoreIdentifier)
        guard claim == .taken else { return (identifier, nil, ticket) }
        guard let restoreIdentifier else {
            return (
                identifier,
                "identifier \(identifier.uuidString) is already used by another manager on this bridge; give each "
                    + "manager its own identifier, or leave identifier nil to derive one",
                ticket
            )
        }
        let given = configured == nil ? "" : "given "
        return (
            identifier,
            "restore identifier \"\(restoreIdentifier)\" (\(given)identifier \(identifier.uuidString)) is already "
                + "used by another \(role.rawValue) manager on this bridge whose app was not terminated; give each "
                + "live manager its own restore identifier (a manager takes over its predecessor's only after "
                + "simulateAppTermination() on that one)",
            ticket
        )
    }

    /// The app of the manager with `identifier` was terminated and the system keeps what it
    /// held (a restore identifier): the next manager with `restoreIdentifier` takes over its
    /// identifier.
    nonisolated func identifierAwaitsRelaunch(_ identifier: UUID, restoreIdentifier: String) {
        identifiers.awaitRelaunch(of: identifier, restoreIdentifier: restoreIdentifier)
    }

    /// The app let go of the manager with `identifier` and `ticket` (what its claim returned),
    /// which shuts down (unless its app was terminated and the system keeps it): a manager
    /// created after this, with the same restore identifier (or identifier), starts afresh under
    /// it, as CoreBluetooth lets an app make its manager again. Call it where the app lets go,
    /// before the app can make the next; a call once a later manager holds the identifier does
    /// nothing.
    package nonisolated func releaseIdentifier(_ identifier: UUID, ticket: Int) {
        identifiers.release(identifier, ticket: ticket)
    }
}

/// Hands out identifiers derived from the seed, by role and name (see
/// ``MockBLEBridge/makeIdentifier(role:name:restoreIdentifier:)``), so the same test creates the
/// same identifiers every run, and an unrelated manager created earlier does not shift them.
final class IdentifierSource: @unchecked Sendable {
    // @unchecked Sendable: the counters and `claims` are only read and written under `lock`;
    // `root` is immutable.

    /// The roles of managers that take identifiers; the raw value names the role's stream.
    enum Role: String, Sendable {
        case central, peripheral
    }

    private let lock: Lock
    private let root: SeededGenerator
    /// How many unnamed centrals and peripherals have taken an identifier.
    private var unnamedCentrals: UInt64 = 0
    private var unnamedPeripherals: UInt64 = 0
    /// How many managers of each role and name have taken one.
    private var named: [String: UInt64] = [:]
    /// The identifiers managers took, and those a relaunched app's manager may take over.
    private var claims = IdentifierClaims()

    init(seed: UInt64, lock: Lock = Lock()) {
        root = SeededGenerator(seed: seed).derived("identifiers")
        self.lock = lock
    }

    /// The next identifier of a role (and name): the n-th manager of that role and name gets
    /// the n-th child of the role's (and name's) stream.
    func next(role: Role, name: String? = nil) -> UUID {
        let index: UInt64 = lock.withLock {
            if let name {
                let key = role.rawValue + "/name:" + name
                named[key, default: 0] += 1
                return named[key]!
            }
            switch role {
            case .central:
                unnamedCentrals += 1
                return unnamedCentrals
            case .peripheral:
                unnamedPeripherals += 1
                return unnamedPeripherals
            }
        }
        var generator = name.map { root.derived(role.rawValue).derived("name:" + $0) } ?? root.derived(role.rawValue)
        generator = generator.derived(index)
        return generator.uuid()
    }

    /// The identifier for a role and restore identifier: always the same on one bridge.
    func restored(role: Role, restoreIdentifier: String) -> UUID {
        var generator = root.derived(role.rawValue).derived("restore:" + restoreIdentifier)
        return generator.uuid()
    }

    /// Claims an identifier for a new manager (see ``IdentifierClaims/claim(_:restoreIdentifier:)``),
    /// with the ticket it then holds it with (``IdentifierClaims/ticket(of:)``).
    func claim(_ identifier: UUID, restoreIdentifier: String?) -> (IdentifierClaims.Claim, ticket: Int) {
        lock.withLock {
            let claim = claims.claim(identifier, restoreIdentifier: restoreIdentifier)
            return (claim, claims.ticket(of: identifier))
        }
    }

    /// Lets the next manager with `restoreIdentifier` take over `identifier` (its app was
    /// terminated).
    func awaitRelaunch(of identifier: UUID, restoreIdentifier: String) {
        lock.withLock { claims.awaitRelaunch(of: identifier, restoreIdentifier: restoreIdentifier) }
    }

    /// Lets a manager created later have `identifier` afresh (see
    /// ``IdentifierClaims/release(_:ticket:)``).
    func release(_ identifier: UUID, ticket: Int) {
        lock.withLock { claims.release(identifier, ticket: ticket) }
    }
}

extension LockGroup {
    /// The lock of a bridge's side object.
    fileprivate subscript(_ which: MockBLEBridge.SideLock) -> Lock { self[which.rawValue] }
}
