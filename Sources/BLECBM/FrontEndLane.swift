import BLEMockKit
import Foundation

/// The two-way lane between app code on a dispatch queue and a simulated manager on a bridge:
/// the app's calls become commands applied on the bridge, and what the simulation decides comes
/// back as blocks on the app's queue, in the simulation's order.
///
/// Every lane of a bridge feeds one ``CommandQueue``, so commands from different managers and
/// from test hooks (a spec's `simulateReset()`) reach the simulation in one order.
///
/// A run (`MockBLEBridge.run`) sees the lane: its queue is registered as a probe, every command
/// and callback counts as outside activity, and the run moves virtual time only once the app has
/// reacted to what it was told and its calls have been applied.
final class FrontEndLane<Target: Actor>: Sendable {
    /// Unowned: the target (a manager on the bridge) keeps the bridge alive, or, for a spec's
    /// peripheral, the bridge keeps the lane.
    unowned let bridge: MockBLEBridge
    let target: Target
    let queue: DispatchQueue
    /// Orders the commands of this lane's manager among those made at the same instant.
    let key: UUID
    private let commands: CommandQueue
    private let probe: Int?
    /// Where the probe is registered (kept: the lane may outlive the last reference to the
    /// bridge by a moment as its owner is torn down).
    private let outside: OutsideWork
    /// The queue commands are applied from outside runs (see ``CommandQueue``): the app's, for a
    /// lane that delivers callbacks there; none for a test hook's lane.
    private let applyQueue: DispatchQueue?

    /// Creates a lane to `queue` (the main queue when `nil`) for commands on `target` (a
    /// manager on `bridge`'s executor, identified by `key`). A lane that never delivers
    /// (`delivers: false`: test hooks called from the test) registers no probe.
    init(bridge: MockBLEBridge, target: Target, key: UUID, queue: DispatchQueue?, delivers: Bool = true) {
        self.bridge = bridge
        self.target = target
        self.key = key
        let queue = queue ?? .main
        self.queue = queue
        commands = CommandQueue.of(bridge)
        commands.register(queue, for: key)
        applyQueue = delivers ? queue : nil
        outside = bridge.outside
        probe =
            delivers
            ? outside.addProbe {
                // Twice through the queue: a block running there as the probe is queued (the main
                // actor's test body, a callback) may queue more behind the probe's first pass, and
                // the calls those make belong to this instant too (applied in their order with the
                // other queues' calls, not in a batch of their own after them).
                await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                    queue.async { queue.async { continuation.resume() } }
                }
            } : nil
    }

    deinit {
        if let probe { outside.removeProbe(probe) }
    }

    /// Queues a command for the target (see ``CommandQueue`` for the order commands run in).
    ///
    /// The command runs on the bridge's executor, which the target shares. It calls `body`
    /// through a reference to it without the isolation in its type (the two have one calling
    /// convention), reinterpreted inside a struct as ``MockBLEBridge`` does for its managers:
    /// `assumeIsolated` would allocate its closure on every command. Debug builds still check
    /// that the command runs on the target's executor.
    func command(_ body: @escaping @Sendable (isolated Target) -> Void) {
        commands.enqueue(key: key, applyingOn: applyQueue, isolatedCommand(body))
    }

    /// Queues the command a manager's release makes (its shutting down, as the app lets go of
    /// it). A release happens on whichever thread drops the last reference (the test's body, an
    /// app queue as a callback holding it ends), so in a run it is not ordered by where it was
    /// made (see ``CommandQueue/enqueue(key:applyingOn:isRelease:_:)``): two managers let go of
    /// at one instant shut down in the same order on every run.
    func releaseCommand(_ body: @escaping @Sendable (isolated Target) -> Void) {
        commands.enqueue(key: key, applyingOn: applyQueue, isRelease: true, isolatedCommand(body))
    }

    /// `body`, called on the target through a reference without the isolation in its type.
    private func isolatedCommand(_ body: @escaping @Sendable (isolated Target) -> Void) -> @Sendable () -> Void {
        let target = target
        let plain = unsafeBitCast(IsolatedCommand(run: body), to: PlainCommand<Target>.self)
        return {
            #if DEBUG
                target.preconditionIsolated("a front end's command runs on its manager's executor")
            #endif
            plain.run(target)
        }
    }

    /// Queues a command that reaches the target by itself (see `CentralIsolation`): the one
    /// closure given is the command, where ``command(_:)`` wraps its body in a second (a
    /// difference an operation pays for on every call).
    func plainCommand(_ body: @escaping @Sendable () -> Void) {
        commands.enqueue(key: key, applyingOn: applyQueue, body)
    }

    /// Runs `body` on the app's queue, after every block handed over before it (call it on the
    /// bridge's executor, where the simulation decides what happens, so callbacks keep the
    /// simulation's order).
    func deliver(_ body: @escaping @Sendable () -> Void) {
        commands.deliver(on: queue, body)
    }

    /// Runs `then(engine, result)` on the app's queue, as ``deliver(_:)`` runs a body: one
    /// closure for the queue, where wrapping the call in a body of its own makes two (an
    /// operation's outcome, on every call).
    func deliver(
        _ then: @escaping @Sendable (MockCentralEngine, Result<MockCentralManager.FrontEndResult, any Error>) -> Void,
        _ engine: MockCentralEngine, _ result: Result<MockCentralManager.FrontEndResult, any Error>
    ) {
        commands.deliver(on: queue, then, engine, result)
    }
}

/// A command isolated to its target, and the same command without the isolation in its type
/// (see ``FrontEndLane/command(_:)``).
private struct IsolatedCommand<Target: Actor> {
    let run: @Sendable (isolated Target) -> Void
}

private struct PlainCommand<Target: Actor> {
    let run: @Sendable (Target) -> Void
}

/// The front ends' commands on one bridge.
///
/// **Order.** Outside a run they are applied as they arrive, by one task at a time. While a run
/// (`MockBLEBridge.run`) is active they are held back, and applied each time the run's driver
/// finds the app's queues caught up, before virtual time moves on, and before a direct call (a
/// manager's of the async API, a test hook) reaches the bridge, so that one made after them on the
/// same thread comes after them in the simulation too: so calls that app
/// code makes from several queues at one virtual instant are applied in an order that does not
/// depend on which thread got there first. Calls made on one queue keep the order they were made
/// in (a serial queue, the main thread and the run's own executor each run one thing at a time);
/// the queues take turns in a fixed order:
/// 1. the run's body, on the run's executor;
/// 2. the main queue, on whichever thread serves it (a body on the main actor, and apps whose
///    queue is the main queue);
/// 3. each app queue a manager on this bridge uses, by the smallest identifier of those
///    managers (seed-derived, so the same in every run);
/// 4. any other thread, by the identifier of the manager called.
///
/// The driver applies the calls held before its last pass through the app queues began (see
/// ``HeldCommands``); a direct call applies all that are held.
///
/// **Time.** On a simulated system whose time follows the wall clock, each batch first brings
/// the bridge's time up to the wall clock's, so a call happens at the instant it was made.
final class CommandQueue: @unchecked Sendable {
    // @unchecked Sendable: `arrived`, `spare`, `held`, `queueRanks`, `draining`,
    // `wallClock` and `drainsOnAppQueues` are only read and written with `lock` held.

    /// Where a command was made (the first key of the order above).
    enum Origin: Hashable, Comparable {
        case body
        case main
        case queue(UUID)
        case manager(UUID)

        static func < (lhs: Origin, rhs: Origin) -> Bool {
            switch (lhs, rhs) {
            case (.queue(let left), .queue(let right)), (.manager(let left), .manager(let right)):
                left.uuidString < right.uuidString
            default: lhs.rank < rhs.rank
            }
        }

        private var rank: Int {
            switch self {
            case .body: 0
            case .main: 1
            case .queue: 2
            case .manager: 3
            }
        }
    }

    /// Marks an app queue (as a dispatch-queue specific), so a command knows the queue it was
    /// made on.
    final class QueueTag: Sendable {}

    /// The key under which app queues carry their ``QueueTag`` (a constant: the key's identity).
    private static let queueTagKey = DispatchSpecificKey<QueueTag>()

    /// Held while a queue's tag is looked up and, if it has none, set (a constant: the tag lives
    /// on the queue, which managers of any bridge may register at once).
    private static let tagging = Lock()

    /// Unowned: the bridge keeps this queue (in its front-end settings), and everything that
    /// hands it commands (a lane, a spec's hooks) holds the bridge; a drain holds it strongly.
    private unowned let bridge: MockBLEBridge
    /// The bridge's outside work (kept: reached on every command and callback).
    private let outside: OutsideWork
    /// The bridge's runs (kept: asked whether one is active on every command).
    private let runs: RunRegistry
    private let lock = Lock()
    /// The commands made while no run was active, as they arrived: applied in that order (and,
    /// should a run take them over, before those made in the run).
    private var arrived: [FrontEndCommand] = []
    /// An applied batch's storage, emptied, for the next batch (a batch per call and callback:
    /// not allocating one each time matters on this path).
    private var spare: [FrontEndCommand] = []
    /// The commands made while a run was active.
    private var held = HeldCommands<FrontEndCommand>()
    /// For each tagged app queue, the smallest identifier of this bridge's managers on it, with
    /// the queue's tag (kept: a tag freed with its queue could give its identity to another
    /// queue's, which would then take this queue's place in the order).
    private var queueRanks: [ObjectIdentifier: (tag: QueueTag, rank: UUID)] = [:]
    /// Whether a drain task is applying commands (outside runs).
    private var draining = false
    private var wallClock: (@Sendable () -> VirtualClock.Instant)?
    /// Whether commands made outside runs are applied from the app queue of the manager that
    /// made them (see ``enqueue(key:applyingOn:isRelease:_:)``); see ``applyOffAppQueues()``.
    private var drainsOnAppQueues = true

    private init(bridge: MockBLEBridge) {
        self.bridge = bridge
        outside = bridge.outside
        runs = bridge.runs
    }

    /// The bridge's queue (made, and its settler registered, the first time).
    static func of(_ bridge: MockBLEBridge) -> CommandQueue {
        bridge.frontEndSettings.object(for: ObjectIdentifier(CommandQueue.self)) {
            let queue = CommandQueue(bridge: bridge)
            _ = bridge.outside.addSettler(
                OutsideWork.Settler(
                    mark: { [weak queue] in queue?.markHeld() },
                    apply: { [weak queue] bridge, upToMark in queue?.applyHeld(on: bridge, upToMark: upToMark) ?? false
                    }
                ))
            return queue
        }
    }

    /// Notes that the manager identified by `key` calls back on `queue`: commands made on that
    /// queue take its place in the order.
    func register(_ queue: DispatchQueue, for key: UUID) {
        // (Not by identity: on Linux `DispatchQueue.main` is a new object at each access.)
        guard !Self.isMain(queue) else { return }
        let tag = Self.tag(of: queue)
        lock.withLock {
            let current = queueRanks[ObjectIdentifier(tag)]?.rank
            if current == nil || key.uuidString < current!.uuidString {
                queueRanks[ObjectIdentifier(tag)] = (tag, key)
            }
        }
    }

    /// The tag of an app queue, set the first time it is asked for.
    private static func tag(of queue: DispatchQueue) -> QueueTag {
        // One tag a queue, whichever bridges' managers on whichever threads register it at once
        // (a second tag set over the first would leave the managers registered with the first
        // out of the queue's place in the order).
        tagging.withLock { () -> QueueTag in
            if let existing = queue.getSpecific(key: queueTagKey) { return existing }
            let tag = QueueTag()
            queue.setSpecific(key: queueTagKey, value: tag)
            return tag
        }
    }

    /// The stream a manager's identifier is drawn from (see `MockBLEBridge.claimIdentifier`) when
    /// the app makes it on its own delegate queue, `queue` (not the main queue): named by the
    /// queue's label. Apps that make their managers in `queue.async` on their own queues do so at
    /// the same moment, in an order that depends on their threads; drawn from one stream, the
    /// first to get there would take the first identifier, and the apps' identifiers (and with
    /// them the order of their calls, and the bridge's log) would change from run to run. `nil`
    /// when the caller is not on `queue`: the manager takes the next identifier of its role.
    static func identifierStream(madeOn queue: DispatchQueue?) -> String? {
        guard let queue, !isMain(queue) else { return nil }
        let tag = tag(of: queue)
        guard DispatchQueue.getSpecific(key: queueTagKey) === tag else { return nil }
        return "dispatch queue " + queue.label
    }

    /// What the main queue carries to tell it apart from app queues (under ``mainQueueKey``).
    private final class MainQueueTag: Sendable {}

    /// The key of the main queue's ``MainQueueTag`` (a constant: the key's identity).
    private static let mainQueueKey = DispatchSpecificKey<MainQueueTag>()

    /// Tags the main queue, once (an immutable mark, the same for every bridge).
    private static let mainQueueTagged: Bool = {
        DispatchQueue.main.setSpecific(key: mainQueueKey, value: MainQueueTag())
        return true
    }()

    /// Whether `queue` is the main queue (not by identity: on Linux `DispatchQueue.main` is a
    /// new object at each access).
    static func isMain(_ queue: DispatchQueue) -> Bool {
        _ = mainQueueTagged
        return queue.getSpecific(key: mainQueueKey) != nil
    }

    /// Whether the caller runs on the main queue, on whichever thread serves it.
    private static var isOnMainQueue: Bool {
        _ = mainQueueTagged
        return DispatchQueue.getSpecific(key: mainQueueKey) != nil
    }

    /// Applies commands made outside runs from the global executor rather than from the app's
    /// queue (a simulated system's bridge).
    ///
    /// A batch applied from an app's queue enters the bridge there, and the Swift runtime runs
    /// whatever else waits for the bridge in the same turn, on the same thread: a test's `await`
    /// on the bridge (`waitUntil`, `finish()`, a manager of the async API) then goes on on that
    /// app's queue, where the test's `queue.sync` onto it traps, and the app's queue waits for the
    /// test meanwhile. On a per-test bridge a test awaits the bridge in its run, where commands are
    /// applied by the run; on the simulated system, whose time follows the wall clock, the test
    /// awaits it while the apps call it, so its commands go to the global executor: a hop per
    /// batch, for a test that waits on the wall clock anyway.
    func applyOffAppQueues() {
        lock.withLock { drainsOnAppQueues = false }
    }

    /// Makes each batch start by bringing the bridge's time up to `now()` (a system whose time
    /// follows the wall clock); `nil` stops.
    func followTime(_ now: (@Sendable () -> VirtualClock.Instant)?) {
        lock.withLock { wallClock = now }
    }

    /// Where a command made now, for the manager identified by `key`, comes from.
    func origin(for key: UUID) -> Origin {
        if bridge.isOnRunExecutor { return .body }
        // (On Linux, once the test runner has let the main thread go, a worker thread serves the
        // main queue: the main actor's code runs there, off the main thread.)
        if Thread.isMainThread || Self.isOnMainQueue { return .main }
        if let tag = DispatchQueue.getSpecific(key: Self.queueTagKey),
            let rank = lock.withLock({ queueRanks[ObjectIdentifier(tag)]?.rank })
        {
            return .queue(rank)
        }
        return .manager(key)
    }

    /// Queues a command (to run on the bridge's executor) for the manager identified by `key`;
    /// outside runs it is applied from `queue` when one is given (the manager's app queue).
    ///
    /// In a run, a release (`isRelease`: a manager's shutting down as the app lets go of it) takes
    /// its place among the body's commands, whatever thread made it: the body's next call (a new
    /// manager with the same restore identifier, say) comes after it, and releases next to each
    /// other are applied in the order of their managers' identifiers (which thread dropped the
    /// last reference, and when, is a race; the order they shut down in is not).
    func enqueue(
        key: UUID, applyingOn queue: DispatchQueue? = nil, isRelease: Bool = false,
        _ command: @escaping @Sendable () -> Void
    ) {
        let bridge = bridge
        let runs = runs
        // Only a run sorts what it holds: outside one, commands are applied as they arrive.
        let origin = runs.isActive ? (isRelease ? .body : origin(for: key)) : nil
        // Whether this call starts a drain, whether a run's driver is to apply it, and whether a
        // drain it starts may run on the app's queue.
        let (start, forRun, onAppQueue) = lock.withLock { () -> (Bool, Bool, Bool) in
            if let origin {
                held.hold(FrontEndCommand(command), from: origin, releasing: isRelease ? key : nil)
            } else {
                arrived.append(FrontEndCommand(command))
            }
            // While a run is active, its driver applies what is held (checked under the lock:
            // the run applies what is held once more after it ends).
            if draining { return (false, origin != nil, false) }
            if runs.isActive { return (false, true, false) }
            draining = true
            return (true, false, drainsOnAppQueues)
        }
        // A call a run's driver applies is outside activity it waits for; one a drain applies is
        // noted once applied, with what it changed (see `drain(on:)`).
        if forRun { outside.noteActivity() }
        guard start else { return }
        // Outside a run, the commands of a manager are applied from its app queue, after the
        // block that made them: the bridge's work then runs on the thread the app's callbacks
        // run on (the task prefers an executor of that queue), with no hand-over to another
        // thread and back for each call and callback (not on a simulated system's bridge: see
        // `applyOffAppQueues()`).
        if #available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *), let queue, onAppQueue,
            !runs.isActive
        {
            Task(executorPreference: QueueExecutor(queue)) { await self.drain(on: bridge) }
        } else {
            bridge.startTracked { await self.drain(on: bridge) }
        }
    }

    /// Hands `body` to `queue`; while it runs, `MockBLEBridge.current` is this bridge, so a
    /// manager created or a spec's `simulate…` called in a callback reaches it.
    ///
    /// The callback is noted as outside activity once it has run (what it changed is what a
    /// run's driver and `waitForApp` look for; a probe through the queue, queued after it,
    /// returns only then).
    func deliver(on queue: DispatchQueue, _ body: @escaping @Sendable () -> Void) {
        // (The bridge is held until the callback has run: this queue holds it unowned.)
        let (bridge, outside) = (bridge, outside)
        outside.beginCallback()
        queue.async { Self.run(body, on: bridge, outside) }
    }

    /// Hands `then(engine, result)` to `queue`, as ``deliver(on:_:)`` hands a body.
    func deliver(
        on queue: DispatchQueue,
        _ then: @escaping @Sendable (MockCentralEngine, Result<MockCentralManager.FrontEndResult, any Error>) -> Void,
        _ engine: MockCentralEngine, _ result: Result<MockCentralManager.FrontEndResult, any Error>
    ) {
        let (bridge, outside) = (bridge, outside)
        outside.beginCallback()
        queue.async { Self.run({ then(engine, result) }, on: bridge, outside) }
    }

    /// Runs a callback on the app's queue: `MockBLEBridge.current` is `bridge` meanwhile (and
    /// so ``KitCallback/isRunning`` is true), and once it has run it counts as outside activity.
    private static func run(_ callback: () -> Void, on bridge: MockBLEBridge, _ outside: OutsideWork) {
        MockBLEBridge.$current.withValue(bridge) { callback() }
        outside.endCallback()
    }

    /// Notes the commands held now: the run's driver applies those (see ``applyHeld(on:upToMark:)``).
    private func markHeld() {
        lock.withLock { held.mark() }
    }

    /// Takes the queued commands for a run's driver, in the order to apply them: those made
    /// outside a run as they arrived, then those made in the run (all, or those held by the last
    /// mark: `upToMark`; see ``HeldCommands``). Hand the batch back with ``recycle(_:)`` once
    /// applied.
    private func take(upToMark: Bool) -> ([FrontEndCommand], VirtualClock.Instant?) {
        lock.withLock {
            var batch = spare
            spare = []
            swap(&batch, &arrived)
            held.take(upToMark: upToMark, into: &batch)
            return (batch, wallClock?())
        }
    }

    /// Keeps an applied batch's storage for the next batch.
    private func recycle(_ batch: inout [FrontEndCommand]) {
        batch.removeAll(keepingCapacity: true)
        let storage = batch
        lock.withLock { if spare.capacity < storage.capacity { spare = storage } }
    }

    /// Applies queued commands on the bridge until none are left (outside runs).
    private func drain(on bridge: MockBLEBridge) async {
        // What the batch changed (a peripheral now retrievable, say) may be what an app's
        // `waitForApp` waits for: it checks again.
        while await applyArrived(on: bridge) { outside.noteActivity() }
    }

    /// One batch of a drain: the commands that have arrived, applied in their order; `false`
    /// (and the drain ends) when none have. Taken on the bridge's executor as it is applied, so
    /// a direct call that applies what has arrived first (`MockBLEBridge.applyHeldCalls()`, a
    /// test's next call on the bridge) never overtakes a batch a drain has taken.
    private func applyArrived(on bridge: isolated MockBLEBridge) -> Bool {
        // One lock a batch: the applied batch's storage becomes the next arrivals', and the
        // drain ends once nothing has arrived.
        let taken = lock.withLock { () -> ([FrontEndCommand], VirtualClock.Instant?)? in
            guard !arrived.isEmpty else {
                draining = false
                return nil
            }
            var batch = spare
            spare = []
            swap(&batch, &arrived)
            return (batch, wallClock?())
        }
        guard let taken else { return false }
        var batch = taken.0
        bridge.applyFrontEndCommands(batch, catchingUpTo: taken.1)
        recycle(&batch)
        return true
    }

    /// The run's driver: applies the held commands in their order (all, or those held by the
    /// last mark: `upToMark`). Returns whether there were any.
    private func applyHeld(on bridge: isolated MockBLEBridge, upToMark: Bool) -> Bool {
        var (batch, now) = take(upToMark: upToMark)
        guard !batch.isEmpty else { return false }
        bridge.applyFrontEndCommands(batch, catchingUpTo: now)
        recycle(&batch)
        outside.noteActivity()
        return true
    }
}

/// Runs a task's jobs on a dispatch queue (see ``CommandQueue/enqueue(key:applyingOn:_:)``).
@available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
package final class QueueExecutor: TaskExecutor {
    private let queue: DispatchQueue

    /// An executor running jobs on `queue`, one after another, after what is queued there.
    package init(_ queue: DispatchQueue) { self.queue = queue }

    package func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        queue.async { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
    }
}
