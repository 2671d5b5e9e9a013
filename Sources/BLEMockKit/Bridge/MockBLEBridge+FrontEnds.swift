import BLECore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// What a callback-style front end of a central (the CoreBluetooth-shaped API) hears from the
/// bridge, on the bridge's executor, in the order the simulation decided it.
package struct CentralFrontEnd: Sendable {
    /// An event of the central (the same its event streams get).
    package var event: @Sendable (CentralEvent) -> Void
    /// Write commands left the central's queue for a peripheral: this many remain queued.
    package var commandQueue: @Sendable (_ peripheral: UUID, _ queued: Int) -> Void
    /// A link to a peripheral opened (called just before its `connected` event), with the
    /// longest value a write without response may carry on it (ATT_MTU − 3).
    package var linkOpened: @Sendable (_ peripheral: UUID, _ maximumWriteLength: Int) -> Void

    /// Creates a front end from its callbacks.
    package init(
        event: @escaping @Sendable (CentralEvent) -> Void,
        commandQueue: @escaping @Sendable (_ peripheral: UUID, _ queued: Int) -> Void,
        linkOpened: @escaping @Sendable (_ peripheral: UUID, _ maximumWriteLength: Int) -> Void
    ) {
        self.event = event
        self.commandQueue = commandQueue
        self.linkOpened = linkOpened
    }
}

/// What a callback-style front end of a peripheral manager hears from the bridge, on the
/// bridge's executor, in the order the simulation decided it.
package struct PeripheralFrontEnd: Sendable {
    /// An event of the peripheral manager (the same its event streams get).
    package var event: @Sendable (PeripheralEvent) -> Void
    /// Updates left the peripheral's update queue: this many remain queued.
    package var updateQueue: @Sendable (_ queued: Int) -> Void

    /// Creates a front end from its callbacks.
    package init(
        event: @escaping @Sendable (PeripheralEvent) -> Void, updateQueue: @escaping @Sendable (_ queued: Int) -> Void
    ) {
        self.event = event
        self.updateQueue = updateQueue
    }
}

extension MockBLEBridge {
    /// Starts an operation whose caller does not wait: `completion` runs on the bridge's
    /// executor when it ends. The operation runs as far as the events due now take it; what
    /// lies later in virtual time runs as time moves (a run's driver, ``advance(by:)``).
    func begin(
        _ request: World.Request,
        _ completion: @escaping @Sendable (Result<MockCentralManager.FrontEndResult, any Error>) -> Void
    ) {
        // (The managers' arrivals were admitted as the caller's call reached the bridge.)
        forgetCancelled()
        let id = world.makeOperationID()
        completions[id] = FrontEndCompletion(run: completion)
        world.start(request, id: id)
        applyEffects()
        runDue()
    }

    /// An operation's outcome as a front end gets it (`opened`: the central end of the channel
    /// it opened, if it did).
    func frontEndResult(
        _ result: Result<Reply, any Error>, opened: L2CAPChannel?
    ) -> Result<MockCentralManager.FrontEndResult, any Error> {
        result.flatMap { reply in
            switch reply {
            case .done, .state: .success(.done)
            case .value(let data): .success(.value(data))
            case .services(let services): .success(.services(services))
            case .characteristics(let characteristics): .success(.characteristics(characteristics))
            case .descriptors(let descriptors): .success(.descriptors(descriptors))
            case .rssi(let rssi): .success(.rssi(rssi))
            case .channel:
                opened.map { .success(.channel($0)) } ?? .failure(CoreBluetoothError(.notConnected))
            }
        }
    }

    /// Brings the system view up to date for the front ends (after every change while one is
    /// attached).
    func updateSystemView() {
        guard !centralFrontEnds.isEmpty, frontEndSides.systemViewChanges != world.systemChanges else { return }
        frontEndSides.systemViewChanges = world.systemChanges
        systemView.update(world.systemKnowledge())
    }

    /// Applies front-end commands in order, on the bridge's executor (each command runs its
    /// manager's synchronous API through `assumeIsolated`: managers share this executor), then
    /// runs the events due now. With `instant`, the schedule first runs up to it. The caller
    /// notes the batch as outside activity once it returns (what the effects of each call
    /// would note on their own).
    package func applyFrontEndCommands(
        _ batch: [FrontEndCommand], catchingUpTo instant: VirtualClock.Instant? = nil
    ) {
        frontEndSides.inBatch = true
        defer { frontEndSides.inBatch = false }
        if let instant {
            // A front end whose time follows the wall clock: the calls happen now.
            admitArrivals()
            forgetCancelled()
            runSchedule(to: instant)
        }
        applyingFrontEndCommands = true
        for command in batch { command.run() }
        applyingFrontEndCommands = false
        runDue()
    }

    /// Runs the events due at the current virtual time (all of fast mode's work).
    func runDue() {
        while let next = world.schedule.nextDeadline, next <= world.now {
            _ = world.runNextEvent()
            syncClock()
            applyEffects()
        }
    }

    /// What may explain a wait that does not end, as a stall report gives it
    /// (``MockBLEBridge/Stall/hints``): for a front end's note on a test that failed waiting on
    /// the wall clock, where nothing reports a stall.
    package var waitHints: [String] { world.stallHints() }

    /// Why a connection attempt to `peripheral` cannot complete now, as a clause about it
    /// ("which is out of range"), or nil if it can: for a front end's notes.
    package func whyUnconnectable(_ peripheral: UUID) -> String? { world.unconnectable(peripheral)?.phrase }

    /// Waits until `condition`, which reads the app's own state, holds: it is checked now, after
    /// every delegate callback the kit's CoreBluetooth-shaped API delivers, and after every step
    /// of a ``run(timeLimit:stallPatience:_:)`` scope's time. It runs on the caller's isolation
    /// (the main actor for an app on the main queue), so it may read state the app keeps there.
    ///
    /// Inside a run, once the condition holds, the app's queues first finish the blocks they were
    /// handed (the callback that made it hold, on a queue of the app's own, may still be running),
    /// and the condition is read again: the wait returns when it still holds, and it waits on
    /// when it no longer does. Before it returns, the calls the app made up to then (those that
    /// callback makes after changing the state among them) are applied, in their order: what the
    /// caller does next comes after them on every run (a test hook, a read of ``log``, letting go
    /// of the app, whose managers then shut down).
    ///
    /// ```swift
    /// try await bridge.run { @MainActor in
    ///     let app = BlinkyApp()
    ///     app.start()
    ///     try await bridge.waitForApp { app.isLEDOn != nil }
    /// }
    /// ```
    ///
    /// Inside a run, a condition that never holds ends as the run does: with ``Stall`` once
    /// nothing more can happen, or at the run's time limit.
    ///
    /// With `pausingSimulation`, nothing happens in the simulation while the condition does not
    /// hold: virtual time stands still, and the app's calls through the CoreBluetooth-shaped API
    /// are held, not applied, until it does. Then they are applied in their deterministic order
    /// before the wait returns, and the callbacks they bring about run: what the caller then has
    /// an app do comes after them, whichever queues the two are made on.
    /// For what the app does on its own, outside the simulation — an app that creates its
    /// managers in `queue.async` — so that every run of a seed starts from the same point:
    ///
    /// ```swift
    /// let app = WatchApp()                       // creates its managers on its own queues
    /// try await bridge.waitForApp(pausingSimulation: true) { app.managersCreated }
    /// ```
    ///
    /// The condition must come to hold without the simulation's help: a paused wait whose
    /// condition never holds ends with ``Stall`` (``Stall/Reason/paused``) once nothing has
    /// happened for the run's stall patience. The condition is read again after each callback
    /// and call the kit sees, and every few milliseconds while the run waits for such activity,
    /// so app work that calls nothing (set-up on its own queue) is seen too.
    ///
    /// A stalled run's report names each wait that had not ended, with where it was called
    /// and since when: the app's condition never held.
    ///
    /// - Parameters:
    ///   - pausingSimulation: Whether the simulation waits until the condition holds.
    ///   - isolation: The caller's isolation (inferred), on which `condition` is read.
    ///   - fileID: Where the wait is called (for a stall report; the caller's, by default).
    ///   - line: The line it is called on (the caller's, by default).
    ///   - condition: The app's state to wait for; read on the caller's isolation.
    /// - Throws: `CancellationError` when the calling task is cancelled (as a stalled run
    ///   cancels its body).
    public func waitForApp(
        pausingSimulation: Bool = false, isolation: isolated (any Actor)? = #isolation, fileID: String = #fileID,
        line: Int = #line, _ condition: () -> Bool
    ) async throws {
        if pausingSimulation { outside.holdTime() }
        defer { if pausingSimulation { outside.releaseTime() } }
        // Noted (for a stall report) once it has to wait; outside a run, watched too, and
        // reported should it stand still (see `QuietWaits`), as a `waitUntil` is.
        var wait: Int?
        var quietWait: Int?
        defer {
            if let wait { outside.endAppWait(wait) }
            sleepClock.endQuietWait(quietWait)
        }
        while true {
            let seen = outside.activity
            if condition() {
                // In a run, the callback that made the condition hold may still be running on its
                // app queue (activity it notes, a call it makes, wakes this wait at once): the app
                // queues finish what they were handed first, so the calls it makes after are made
                // before the caller goes on, whichever thread got there first.
                guard runs.isActive, outside.hasProbes else { return }
                // (Time stands still meanwhile: the run's driver would otherwise take this
                // suspension for the body waiting, and move time on before the caller goes on.)
                outside.holdTime()
                let ending = pausingSimulation ? 2 : 1
                outside.beginEndingWait(holding: ending)
                let holds: Bool
                if pausingSimulation {
                    // The calls the app made while the simulation was paused are applied before the
                    // caller goes on: left to the run's driver, which runs beside a caller on
                    // another executor (a body on the main actor), a call the caller has an app
                    // make next at this instant would be applied with them, and so before them or
                    // after by their order, or after them, as the threads go.
                    _ = await passProbesUntilQuiet(marking: false)
                    holds = condition()
                    if holds { await settleHeldCalls(endingWaitHolding: ending) }
                } else {
                    await outside.passProbes()
                    holds = condition()
                    // The calls the app made before its state made the condition hold (in the
                    // callback that set it, say) are applied before the caller goes on: what the
                    // caller does next (lets go of the app, whose managers then shut down; reads
                    // the log) comes after them, as it would on a device, rather than take its
                    // place among them by where it was made.
                    if holds { _ = await runSettlers(ownPauses: ending) }
                }
                outside.endEndingWait(holding: ending)
                outside.releaseTime()
                if holds { return }
                continue
            }
            try Task.checkCancellation()
            if wait == nil {
                wait = outside.beginAppWait(
                    AppWait(site: "\(fileID):\(line)", paused: pausingSimulation, since: clock.now))
                if !runs.isActive { quietWait = sleepClock.beginQuietWait(.appCondition(site: "\(fileID):\(line)")) }
            }
            await outside.untilActivity(after: seen)
        }
    }
}

/// Settings front ends keep per bridge (a test's simulated app authorization, say), so that
/// no front end needs state of its own beyond the bridge.
package final class FrontEndSettings: @unchecked Sendable {
    // @unchecked Sendable: `values`, `objects` and `finishHandlers` are only read and written with `lock` held.
    private let lock: Lock
    private var values: [String: Int] = [:]
    /// Class instances, so a lookup is a class cast (a cast out of `any Sendable` costs a
    /// conformance check on every call, and front ends look objects up per event).
    private var objects: [ObjectIdentifier: AnyObject] = [:]
    private var finishHandlers: [(owner: ObjectIdentifier, handler: @Sendable (MockBLEBridge) -> Void)] = []

    init(lock: Lock = Lock()) {
        self.lock = lock
        // Room for the objects a CoreBluetooth-shaped manager looks up as it is created.
        objects.reserveCapacity(8)
    }

    /// The setting stored under `key`, if any.
    package subscript(key: String) -> Int? {
        get { lock.withLock { values[key] } }
        set { lock.withLock { values[key] = newValue } }
    }

    /// Registers, once for `owner`, what a front end does when the simulation is finished
    /// (``MockBLEBridge/finish()``): `handler` is called on the bridge's executor, after the
    /// bridge has ended its operations and streams. A second registration for the same owner
    /// is ignored.
    package func onFinish(for owner: ObjectIdentifier, _ handler: @escaping @Sendable (MockBLEBridge) -> Void) {
        lock.withLock {
            guard !finishHandlers.contains(where: { $0.owner == owner }) else { return }
            finishHandlers.append((owner, handler))
        }
    }

    /// What front ends registered with ``onFinish(for:_:)``, in the order they did.
    var finishers: [@Sendable (MockBLEBridge) -> Void] {
        lock.withLock { finishHandlers.map(\.handler) }
    }

    /// The object a front end keeps on this bridge for `owner` (a peripheral spec declared
    /// once and used by many tests, say), made by `make` the first time.
    package func object<T: AnyObject & Sendable>(for owner: ObjectIdentifier, make: () -> T) -> T {
        lock.withLock {
            if let existing = objects[owner] as? T { return existing }
            let made = make()
            objects[owner] = made
            return made
        }
    }
}

/// A ``MockBLEBridge/waitForApp(pausingSimulation:isolation:fileID:line:_:)`` under way.
struct AppWait: Sendable {
    /// Where it was called (`file:line`).
    var site: String
    /// Whether it pauses the simulation.
    var paused: Bool
    /// The virtual instant it started waiting at.
    var since: VirtualClock.Instant

    /// How a stall report names it.
    var name: String {
        "bridge.waitForApp\(paused ? "(pausingSimulation: true)" : "") { … } at \(site) (the app's condition never held)"
    }
}

/// A front end's command, applied on the bridge's executor in its turn (see
/// ``MockBLEBridge/applyFrontEndCommands(_:catchingUpTo:)``). A struct: an array of bare
/// functions holds each in its most general form, which wraps every function put in it in a
/// thunk of its own (an allocation per command); a struct's field keeps the function as made.
package struct FrontEndCommand: Sendable {
    /// The command.
    package let run: @Sendable () -> Void

    /// A command that runs `run`.
    package init(_ run: @escaping @Sendable () -> Void) { self.run = run }
}

/// What a callback-style front end's operation calls when it ends (see
/// ``MockBLEBridge/begin(_:_:)``): a struct, for the reason ``FrontEndCommand`` is one (the
/// bridge keeps these in a dictionary).
struct FrontEndCompletion {
    let run: @Sendable (Result<MockCentralManager.FrontEndResult, any Error>) -> Void
}

/// What the bridge reaches after every change while front ends are attached, kept on its
/// executor so that reaching it does not take the side objects' lock each time.
struct FrontEndSides {
    /// The world's `systemChanges` the system view was last brought up to date with.
    var systemViewChanges: UInt64 = .max
    /// Whether a batch of front-end commands is being applied (its caller notes the activity).
    var inBatch = false
    private var madeOutside: OutsideWork?

    /// The bridge's outside work (``MockBLEBridge/outside``, looked up the first time).
    mutating func outside(of bridge: MockBLEBridge) -> OutsideWork {
        if let madeOutside { return madeOutside }
        let outside = bridge.outside
        madeOutside = outside
        return outside
    }
}

/// What the system knows, for a front end that must answer synchronously (CoreBluetooth's
/// `retrievePeripherals(withIdentifiers:)` and `retrieveConnectedPeripherals(withServices:)`):
/// the bridge brings it up to date after every change while a front end is attached.
package final class SystemView: @unchecked Sendable {
    // @unchecked Sendable: `known` and `connected` are only read and written with `lock` held.
    private let lock: Lock
    private var known: [RemotePeripheral] = []
    private var connected: [(peripheral: RemotePeripheral, services: [BluetoothUUID])] = []

    init(lock: Lock = Lock()) {
        self.lock = lock
    }

    /// The peripherals known to the system (discovered or connected by any central) among
    /// `identifiers`, each once, in the order asked.
    package func knownPeripherals(withIdentifiers identifiers: [UUID]) -> [RemotePeripheral] {
        var seen = Set<UUID>()
        return lock.withLock {
            identifiers.compactMap { identifier in
                guard seen.insert(identifier).inserted else { return nil }
                return known.first { $0.identifier == identifier }
            }
        }
    }

    /// The peripherals connected to the system that have one of `services` (as far as the
    /// system knows them: see ``World/systemKnowledge()``).
    package func connectedPeripherals(withServices services: [BluetoothUUID]) -> [RemotePeripheral] {
        lock.withLock {
            connected.filter { entry in entry.services.contains { services.contains($0) } }.map(\.peripheral)
        }
    }

    /// Takes what the system knows now (see ``World/systemKnowledge()``).
    func update(_ knowledge: World.SystemKnowledge) {
        lock.withLock {
            known = knowledge.known
            connected = knowledge.connected
        }
    }
}

extension World {
    /// What the system knows, as a ``SystemView`` answers it.
    struct SystemKnowledge {
        var known: [RemotePeripheral]
        var connected: [(peripheral: RemotePeripheral, services: [BluetoothUUID])]
    }

    /// The peripherals the system knows and those connected to it with their services.
    /// (`mutating` though it changes nothing: so the bridge calls it on its world in place; a
    /// non-mutating call, like passing the world to another object, copied all of it on every
    /// change.)
    mutating func systemKnowledge() -> SystemKnowledge {
        // What the system knows of a connected peripheral's services: all of them when another
        // app holds it, else those the centrals linked to it discovered (as CoreBluetoothMock
        // answers: a peripheral just connected is not found by its services until discovered).
        var linked: [UUID: [BluetoothUUID]] = [:]
        for key in links.keys {
            let discovered = centrals[key.central]?.services[key.peripheral]?.map(\.uuid) ?? []
            linked[key.peripheral, default: []] += discovered
        }
        // One pass in the order peripherals came, each looked up once (this runs after every
        // change the view shows, while a front end is attached).
        var known: [RemotePeripheral] = []
        var connected: [(peripheral: RemotePeripheral, services: [BluetoothUUID])] = []
        for peripheral in peripheralOrder {
            let isKnown = self.known.contains(peripheral)
            let heldBySystem = connectedToSystem.contains(peripheral)
            let services = heldBySystem ? nil : linked[peripheral]
            guard isKnown || heldBySystem || services != nil else { continue }
            let remote = remotePeripheral(peripheral)
            if isKnown { known.append(remote) }
            if heldBySystem {
                connected.append((remote, peripherals[existing: peripheral].database.localServices.map(\.uuid)))
            } else if let services {
                connected.append((remote, services))
            }
        }
        return SystemKnowledge(known: known, connected: connected)
    }
}

/// Work the simulation hands to code outside it — delegate callbacks on the app's dispatch
/// queues — and the tasks waiting on what that code does.
///
/// A ``MockBLEBridge/run(timeLimit:stallPatience:_:)`` scope sees only its own tasks; app code
/// called back on a dispatch queue runs elsewhere. So a front end registers each queue it calls
/// back on as a probe, and notes activity whenever it hands the app a callback or the app calls
/// it. Before moving time on, a run's driver passes a probe through every queue (so whatever was
/// queued there before has run), and moves time only when that produced no new activity.
package final class OutsideWork: @unchecked Sendable {
    // @unchecked Sendable: every stored property is only read and written with `lock` held
    // (`ran` with `callbacksRan`); continuations are resumed after it is released.
    private let lock: Lock
    private var probes: [Int: @Sendable () async -> Bool] = [:]
    private var nextToken = 0
    private var count: UInt64 = 0
    private var tickers: [Int: CheckedContinuation<Void, Never>] = [:]
    private var waker: (@Sendable () -> Void)?
    /// The settlers, in the order they were registered, and their tokens (read on every pass
    /// of a run's driver: handed out as they are, not sorted and copied each time).
    private var settlers: [Settler] = []
    private var settlerTokens: [Int] = []
    private var holds = 0
    /// The activity count at which a run's driver last found the app queues quiet, or `nil`
    /// (see ``noteQuiet(at:)``).
    private var quietMark: UInt64?
    /// The answers app code owes the simulation: a peripheral's request each (see
    /// ``oweAnswer(peripheral:request:)``).
    private var owedAnswers: Set<OwedAnswer> = []

    /// An answer app code owes: to `request` of `peripheral`.
    private struct OwedAnswer: Hashable {
        let peripheral: UUID
        let request: UInt64
    }
    private var appWaits: [Int: AppWait] = [:]
    /// How many app waits have ended (each one that had to wait).
    private var appWaitsEnded: UInt64 = 0
    private var unansweredCallSource: (@Sendable () -> [String])?
    /// Callbacks handed to app queues that have not run yet (see ``beginCallback()``).
    private var callbacksInFlight = 0
    /// How many of those a direct call gave up waiting for (blocked, as like as not, on the test:
    /// the next calls wait only for the others; see ``waitForCallbacks(upTo:)``).
    private var callbacksGivenUp = 0
    /// Whether a direct call waits for the callbacks in flight (then the end of the last one it
    /// waits for signals `callbacksRan`).
    private var callbackWaiter = false
    /// Where a direct call waits for the callbacks in flight (`ran`: the last one has run).
    private let callbacksRan = Condition()
    private var ran = false

    init(lock: Lock = Lock()) {
        self.lock = lock
    }

    /// Notes a callback handed to an app queue; call ``endCallback()`` once it has run.
    package func beginCallback() {
        lock.withLock { callbacksInFlight += 1 }
    }

    /// Notes that a callback handed over with ``beginCallback()`` has run: outside activity (see
    /// ``noteActivity()``, in the same lock: a callback costs one lock more than before), and a
    /// direct call waiting for the callbacks in flight goes on once none is left.
    package func endCallback() {
        noteActivity(endingCallback: true)
    }

    /// Blocks the caller (a run's executor, in a direct call) until every callback handed to an
    /// app queue has run, or `patience` of wall time has passed, or the calling task is
    /// cancelled. A callback still running then is taken to wait for the test (on a semaphore the
    /// test signals after this call, say): the call goes on with what the apps have called so
    /// far, and later calls wait only for callbacks beyond those it gave up on (each would
    /// otherwise wait the whole patience again), until they have run.
    func waitForCallbacks(upTo patience: Duration) {
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: patience)
        callbacksRan.withLock {
            // (The waiter is noted under `lock` as it finds callbacks in flight: the end of the last
            // one then signals, and cannot before this thread waits, as it holds `callbacksRan`.)
            ran = false
            let waits = lock.withLock { () -> Bool in
                callbackWaiter = callbacksInFlight > callbacksGivenUp
                return callbackWaiter
            }
            guard waits else { return }
            // (In slices, to see the caller's cancellation.)
            while !ran {
                let left = clock.now.duration(to: deadline)
                guard left > .zero, !Task.isCancelled else { break }
                callbacksRan.wait(for: min(left, Self.cancellationCheckInterval))
            }
            let gaveUp = !ran
            lock.withLock {
                callbackWaiter = false
                if gaveUp { callbacksGivenUp = callbacksInFlight }
            }
        }
    }

    /// How often a direct call waiting for callbacks checks whether its task was cancelled.
    static let cancellationCheckInterval: Duration = .milliseconds(10)

    /// Sets what wakes an active run's driver on outside activity (it may be waiting for
    /// outside work after finding nothing scheduled).
    func setWaker(_ waker: (@Sendable () -> Void)?) {
        lock.withLock { self.waker = waker }
    }

    /// Registers a probe: an async call that returns once the work queued before it has run
    /// (for a serial dispatch queue, an empty block sent through it). Returns its token.
    package func addProbe(_ probe: @escaping @Sendable () async -> Void) -> Int {
        addProbe(reportingQuiet: {
            await probe()
            return true
        })
    }

    /// Registers a probe that also says whether it found the simulation quiet: `false` when
    /// work reached the simulation from elsewhere while it passed (code on the probed queue
    /// calling the bridge, whose answer queues more there behind the probe). Returns its token.
    package func addProbe(reportingQuiet probe: @escaping @Sendable () async -> Bool) -> Int {
        lock.withLock {
            defer { nextToken += 1 }
            probes[nextToken] = probe
            return nextToken
        }
    }

    /// Removes a probe.
    package func removeProbe(_ token: Int) {
        lock.withLock { _ = probes.removeValue(forKey: token) }
    }

    /// Work a front end holds back while a run is active (the app's calls made at one virtual
    /// instant), which the run's driver has it apply.
    package struct Settler: Sendable {
        /// Notes what is held now: the driver calls it as it starts each pass through the app
        /// queues, and a later ``apply`` with `upToMark` applies only what was held by the last
        /// mark.
        let mark: @Sendable () -> Void
        /// Applies what is held, on the bridge's executor: all of it, or (`upToMark`) only what
        /// was held when ``mark`` was last called. Returns whether it applied anything.
        let apply: @Sendable (_ bridge: isolated MockBLEBridge, _ upToMark: Bool) -> Bool

        /// A settler of `mark` and `apply`.
        package init(
            mark: @escaping @Sendable () -> Void,
            apply: @escaping @Sendable (_ bridge: isolated MockBLEBridge, _ upToMark: Bool) -> Bool
        ) {
            self.mark = mark
            self.apply = apply
        }
    }

    /// Registers a settler: work a front end holds back while a run is active (the app's calls
    /// made at one virtual instant), which the run's driver has it apply, on the bridge's
    /// executor, each time the app has caught up and before virtual time moves on (and once
    /// more when the run ends). Returns its token.
    ///
    /// The driver applies only what was held before its last pass through the app queues
    /// began: a call made after that (by code that ran as the pass went on: a body on the main
    /// actor going on, a callback) may have siblings of its instant still queued on a queue
    /// the pass had already gone through, and waits for the next pass, which finds them.
    package func addSettler(_ settler: Settler) -> Int {
        lock.withLock {
            defer { nextToken += 1 }
            settlers.append(settler)
            settlerTokens.append(nextToken)
            return nextToken
        }
    }

    /// Removes a settler.
    package func removeSettler(_ token: Int) {
        lock.withLock {
            guard let index = settlerTokens.firstIndex(of: token) else { return }
            settlers.remove(at: index)
            settlerTokens.remove(at: index)
        }
    }

    /// Whether a settler is registered (a front end holds the app's calls in runs).
    var hasSettlers: Bool { lock.withLock { !settlers.isEmpty } }

    /// The settlers, in the order they were registered.
    var registeredSettlers: [Settler] {
        lock.withLock { settlers }
    }

    /// Has every settler note what it holds now (see ``Settler/mark``).
    func markSettlers() {
        for settler in registeredSettlers { settler.mark() }
    }

    /// Notes that a run's driver found the app queues quiet with the activity count at `mark`:
    /// its next step moves time only if there has been no activity since (see
    /// ``timeGate(owedTo:)``): activity in between (an app's call, a callback, a pause ending:
    /// a body on the main actor going on) means the driver looks again first.
    func noteQuiet(at mark: UInt64) {
        lock.withLock { quietMark = mark }
    }

    /// Pauses the simulation (see ``MockBLEBridge/waitForApp(pausingSimulation:isolation:fileID:line:_:)``).
    func holdTime() {
        lock.withLock { holds += 1 }
    }

    /// Ends a pause; the run's driver goes on once none is left. The last release counts as
    /// outside activity: whoever paused (a body on the main actor in `waitForApp`) goes on now,
    /// and may call the simulation at this instant, which the driver waits for before it moves
    /// time.
    func releaseTime() {
        let wake = lock.withLock { () -> (@Sendable () -> Void)? in
            holds -= 1
            guard holds == 0 else { return nil }
            count &+= 1
            return waker
        }
        wake?()
    }

    /// Whether the simulation is paused.
    var isHoldingTime: Bool { lock.withLock { holds > 0 } }

    /// How many pauses hold the simulation (see ``holdTime()``).
    var holdCount: Int { lock.withLock { holds } }

    /// How many of the pauses are those of `waitForApp` calls whose condition held, as they end
    /// (see ``beginEndingWait(holding:)``).
    private var endingWaitHolds = 0

    /// Notes that a `waitForApp` whose condition holds ends, holding `holds` of the pauses (the
    /// simulation's, if it paused it, and the one it holds time with as it ends) until it calls
    /// ``endEndingWait(holding:)``: meanwhile the test's own calls apply the app's held calls as
    /// outside any pause (see ``pausesHoldingTestCalls``).
    func beginEndingWait(holding holds: Int) {
        lock.withLock { endingWaitHolds += holds }
    }

    /// Ends what ``beginEndingWait(holding:)`` began.
    func endEndingWait(holding holds: Int) {
        lock.withLock { endingWaitHolds -= holds }
    }

    /// How many of the pauses are those of `waitForApp` calls that are ending: a call the test
    /// makes meanwhile (a simulated device's task answering the app's requests as a pausing wait
    /// applies them) applies the app's held calls as it would once they have ended, rather than
    /// leave them to the wait's next round, before or after it as the threads go.
    var pausesHoldingTestCalls: Int { lock.withLock { endingWaitHolds } }

    /// Notes that app code owes the simulation its answer to `request` of `peripheral` (a
    /// request handed to a CoreBluetooth-shaped peripheral manager's delegate, which a device
    /// lets the app answer from any thread within ATT's 30 s): while the request waits for it,
    /// a run's driver does not move virtual time, so an answer made on another queue a moment
    /// later comes at the instant the request came, on every run. It waits for it up to the
    /// run's stall patience of wall time, then lets time go on as a device's would (see
    /// ``expireOwedAnswers()``).
    package func oweAnswer(peripheral: UUID, request: UInt64) {
        lock.withLock { _ = owedAnswers.insert(OwedAnswer(peripheral: peripheral, request: request)) }
    }

    /// The answer to `request` of `peripheral` was given (or will not be: nobody was told of
    /// it). (A request that went away, its link or its manager gone, is forgotten without it:
    /// see ``holdsTime(owedTo:)``.)
    package func settleAnswer(peripheral: UUID, request: UInt64) {
        let wake = lock.withLock { () -> (@Sendable () -> Void)? in
            let settled = OwedAnswer(peripheral: peripheral, request: request)
            guard owedAnswers.remove(settled) != nil, owedAnswers.isEmpty else { return nil }
            return waker
        }
        wake?()
    }

    /// Whether a run's driver may move time now (see ``timeGate(owedTo:)``).
    enum TimeGate {
        /// Time may move.
        case open
        /// Time must not move: the simulation is paused, or app code owes an answer.
        case held
        /// Something happened outside since the driver found the app queues quiet: it looks
        /// again first (see ``noteQuiet(at:)``).
        case lookAgain
    }

    /// Whether virtual time may move: not while the simulation is paused, or app code owes an
    /// answer to a request that `isWaiting` says still waits for it (the others are forgotten:
    /// their central went away, say), and not before the driver has looked again at app queues
    /// that were busy since it found them quiet. (One lock for all three: a run's driver asks
    /// at every step.)
    func timeGate(owedTo isWaiting: (_ peripheral: UUID, _ request: UInt64) -> Bool) -> TimeGate {
        lock.withLock {
            if holds > 0 { return .held }
            if !owedAnswers.isEmpty {
                owedAnswers = owedAnswers.filter { isWaiting($0.peripheral, $0.request) }
                if !owedAnswers.isEmpty { return .held }
            }
            if let quietMark, quietMark != count { return .lookAgain }
            return .open
        }
    }

    /// Stops the answers owed now from holding time (the app did not give them within the
    /// run's stall patience: it may never, as a device's app may not, and then ATT's
    /// transaction timeout is what happens next). Returns whether any was owed.
    func expireOwedAnswers() -> Bool {
        lock.withLock {
            defer { owedAnswers.removeAll() }
            return !owedAnswers.isEmpty
        }
    }

    /// Whether a probe or a settler is registered, for a run's driver about to settle. When
    /// none is, there is nothing outside to wait for: the quiet mark is forgotten, and the next
    /// step moves time whatever activity there was (see ``noteQuiet(at:)``).
    func beginSettling() -> Bool {
        lock.withLock {
            if !probes.isEmpty || !settlers.isEmpty { return true }
            quietMark = nil
            return false
        }
    }

    /// Whether a probe is registered.
    var hasProbes: Bool { lock.withLock { !probes.isEmpty } }

    /// How much outside activity there has been so far.
    package var activity: UInt64 { lock.withLock { count } }

    /// Notes outside activity (a callback ran, the app called in) and wakes the tasks waiting
    /// for some.
    package func noteActivity() {
        noteActivity(endingCallback: false)
    }

    private func noteActivity(endingCallback: Bool) {
        let (waiting, wake, callbacksDone) = lock.withLock {
            () -> ([CheckedContinuation<Void, Never>], (@Sendable () -> Void)?, Bool) in
            count &+= 1
            var callbacksDone = false
            if endingCallback {
                callbacksInFlight -= 1
                // (One given up on has run, or one after it: either way, fewer are blocked.)
                callbacksGivenUp = min(callbacksGivenUp, callbacksInFlight)
                if callbacksInFlight == callbacksGivenUp, callbackWaiter {
                    callbackWaiter = false
                    callbacksDone = true
                }
            }
            // (Noted on every call and callback: with no one waiting, nothing to copy.)
            guard !tickers.isEmpty else { return ([], self.waker, callbacksDone) }
            defer { tickers.removeAll() }
            return (Array(tickers.values), self.waker, callbacksDone)
        }
        if callbacksDone {
            callbacksRan.withLock {
                ran = true
                callbacksRan.signal()
            }
        }
        for ticker in waiting { ticker.resume() }
        wake?()
    }

    /// Wakes the tasks waiting for activity (time moved on: what they wait for may hold now).
    func wakeWaiters() {
        let waiting = lock.withLock { () -> [CheckedContinuation<Void, Never>] in
            guard !tickers.isEmpty else { return [] }
            defer { tickers.removeAll() }
            return Array(tickers.values)
        }
        for ticker in waiting { ticker.resume() }
    }

    /// Returns at the next activity after `seen` (at once if there was some), the next
    /// ``wakeWaiters()``, or when the calling task is cancelled.
    func untilActivity(after seen: UInt64) async {
        let token = lock.withLock {
            defer { nextToken += 1 }
            return nextToken
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let now = lock.withLock { () -> Bool in
                    if count != seen || Task.isCancelled { return true }
                    tickers[token] = continuation
                    return false
                }
                if now { continuation.resume() }
            }
        } onCancel: {
            lock.withLock { tickers.removeValue(forKey: token) }?.resume()
        }
    }

    /// Notes a ``MockBLEBridge/waitForApp(pausingSimulation:isolation:fileID:line:_:)`` that
    /// waits (for a stall report); returns its token.
    func beginAppWait(_ wait: AppWait) -> Int {
        lock.withLock {
            defer { nextToken += 1 }
            appWaits[nextToken] = wait
            return nextToken
        }
    }

    /// Notes that a wait ended.
    func endAppWait(_ token: Int) {
        lock.withLock {
            _ = appWaits.removeValue(forKey: token)
            appWaitsEnded &+= 1
        }
    }

    /// Whether an app wait is under way.
    var hasAppWaits: Bool { lock.withLock { !appWaits.isEmpty } }

    /// How many app waits have ended so far.
    var endedAppWaits: UInt64 { lock.withLock { appWaitsEnded } }

    /// The app waits under way, oldest first.
    var pendingAppWaits: [AppWait] {
        lock.withLock { appWaits.sorted { $0.key < $1.key }.map(\.value) }
    }

    /// The app waits under way, oldest first, each with a token (the same for the same wait),
    /// the instant it started waiting and where it was called: what a simulated system whose
    /// time follows the wall clock reports when one outlasts its patience.
    package var appWaitsStarted: [(token: Int, since: VirtualClock.Instant, site: String)] {
        lock.withLock { appWaits.sorted { $0.key < $1.key }.map { ($0.key, $0.value.since, $0.value.site) } }
    }

    /// Sets where the front end keeps what a stall report and a failed test tell: the app's
    /// calls that got no callback, as with CoreBluetooth (ignored, or ended by a link that went
    /// down or by Bluetooth turning off), each naming its manager (a callback the app waits for
    /// may be one of theirs). Set once, for the bridge's life.
    package func setUnansweredCalls(_ source: @escaping @Sendable () -> [String]) {
        lock.withLock { unansweredCallSource = source }
    }

    /// The app's calls that got no callback, oldest first (asked with the lock released: the
    /// source takes its own).
    package var unansweredCalls: [String] { lock.withLock { unansweredCallSource }?() ?? [] }

    /// What a failed test says of the app's calls that got no callback, made on `place` (the
    /// simulated system, a bridge seed); `nil` when there were none.
    package func unansweredCallsNote(madeOn place: String) -> String? {
        let unanswered = unansweredCalls
        guard !unanswered.isEmpty else { return nil }
        return "calls the app made on \(place) that got no callback, as with CoreBluetooth:\n"
            + unanswered.map { "- \($0)" }.joined(separator: "\n")
    }

    /// Passes every probe once: the work queued on each app queue before now has run. Returns
    /// whether every probe found the simulation quiet as it passed.
    @discardableResult
    func passProbes() async -> Bool {
        var quiet = true
        for probe in lock.withLock({ Array(probes.values) }) where !(await probe()) { quiet = false }
        return quiet
    }
}
