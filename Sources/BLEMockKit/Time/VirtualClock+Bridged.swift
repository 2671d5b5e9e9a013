import BLECore

/// The clock a ``MockBLEBridge`` owns: no time or schedule of its own. Its `now` and its
/// sleepers are what the bridge last published from the world, which is the only source of
/// truth; a sleep is a wake-up event on the world's schedule, registered on the bridge.
extension VirtualClock {
    /// What a bridge's clock knows. Guarded by the clock's `lock`.
    struct Bridged {
        /// The bridge that owns the clock (set when the bridge first hands the clock out).
        weak var bridge: MockBLEBridge?
        /// Whether ``bridge`` was set.
        var attached = false
        /// The world's time, as the bridge last published it.
        var now: Instant = .zero
        /// The world's sleepers in wake order, as the bridge last published them, less those
        /// cancelled since.
        var sleepers: [World.Sleeper] = []
        /// The continuations of suspended sleepers, by id.
        var waiting: [SleeperID: Waiter] = [:]
        /// Sleepers whose tasks were cancelled, for the bridge to take off the world's schedule.
        var cancelled: [SleeperID] = []
        /// Sleepers cancelled before their continuation was registered.
        var abandoned: Set<SleeperID> = []
        /// Sleepers woken before their continuation was registered.
        var woken: Set<SleeperID> = []
        /// Whether the bridge has gone: a sleep can no longer be woken.
        var isGone = false
    }

    /// Creates the clock of a bridge, at the bridge's time (see ``attach(to:)``).
    convenience init(bridgedAt now: Instant, lock: Lock = Lock()) {
        self.init(now: now, isBridged: true, lock: lock)
    }

    /// Ties a bridge's clock to its bridge, once (held weakly: the bridge owns the clock).
    func attach(to bridge: MockBLEBridge) {
        lock.withLock {
            guard !bridged.attached else { return }
            bridged.attached = true
            bridged.bridge = bridge
        }
    }

    /// The bridge that owns this clock, if it still exists.
    var bridge: MockBLEBridge? {
        lock.withLock { bridged.bridge }
    }

    /// A bridge's clock's sleep: the bridge schedules the wake-up, and the task waits here,
    /// holding the bridge only weakly (a sleeping task does not keep it alive). A deadline not
    /// after the published time (never after the world's) is due at once, with no hop.
    func sleepOnBridge(until deadline: Instant) async throws {
        guard let id = try await beginSleepOnBridge(until: deadline) else { return }
        // Outside a run nothing moves the bridge's time while the task sleeps but other code:
        // watched, and reported should it stand still (see `QuietWaits`).
        let quietWait = beginQuietWait(.sleep(until: deadline))
        defer { endQuietWait(quietWait) }
        _ = try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                register(id, continuation)
            }
        } onCancel: {
            // The clean-up task reaches the bridge through the clock's weak reference: a bridge
            // nobody uses any more has nothing to forget, and a task waiting to run must not
            // keep it alive.
            if cancelSleeper(id) {
                HelperTask.start { await self.bridge?.forgetCancelled() }
            }
        }
    }

    /// The bridge's part of a sleep (see ``MockBLEBridge/beginSleep(until:)``); the bridge is
    /// held only for the call.
    private func beginSleepOnBridge(until deadline: Instant) async throws -> SleeperID? {
        let (bridge, due) = lock.withLock { (bridged.bridge, deadline <= bridged.now) }
        if due { return nil }
        guard let bridge else { throw Self.bridgeGone("sleep") }
        return try await bridge.beginSleep(until: deadline)
    }

    /// The error of a call on a bridge's clock whose bridge no longer exists.
    static func bridgeGone(_ call: String) -> APIMisuseError {
        .invalidConfiguration(
            "VirtualClock.\(call): this is a MockBLEBridge's clock and the bridge no longer exists; "
                + "keep the bridge alive while code uses its clock, or use a VirtualClock() of its own")
    }

    // MARK: What the bridge calls

    /// The bridge's time moved on.
    func publish(now: Instant) {
        lock.withLock { bridged.now = now }
    }

    /// The world's sleepers changed (a sleep began, or a cancelled one left the schedule).
    func publish(sleepers: [World.Sleeper]) {
        let watchers = lock.withLock { () -> [CheckedContinuation<Void, Never>] in
            setSleepers(sleepers)
            return takeSatisfiedWatchers()
        }
        for watcher in watchers { watcher.resume() }
    }

    /// Registers the continuation of sleeper `id` (whose wake-up the world has scheduled);
    /// resumes it at once with `CancellationError` if its task was cancelled already, as
    /// woken if its wake-up ran already, and with the bridge-gone error if the bridge went.
    func register(_ id: SleeperID, _ waiter: Waiter) {
        enum Registration { case waits, cancelled, woken, gone }
        let registration = lock.withLock { () -> Registration in
            if bridged.abandoned.remove(id) != nil { return .cancelled }
            if bridged.woken.remove(id) != nil { return .woken }
            if bridged.isGone { return .gone }
            bridged.waiting[id] = waiter
            return .waits
        }
        switch registration {
        case .waits: break
        case .cancelled: waiter.resume(throwing: CancellationError())
        case .woken: waiter.resume(returning: .advanced)
        case .gone: waiter.resume(throwing: Self.bridgeGone("sleep"))
        }
    }

    /// Sleeper `id`'s wake-up ran (the published time is its deadline): resumes its task, with
    /// `remaining` the world's sleepers left.
    func wake(_ id: SleeperID, remaining: [World.Sleeper]) {
        let waiter = lock.withLock { () -> Waiter? in
            setSleepers(remaining)
            guard let waiter = bridged.waiting.removeValue(forKey: id) else {
                // Its task has not registered yet: it finds the wake-up when it does (unless
                // it gave up already, and then finds that).
                if !bridged.abandoned.contains(id) { bridged.woken.insert(id) }
                return nil
            }
            return waiter
        }
        waiter?.resume(returning: .advanced)
    }

    /// The bridge went away: its sleepers can no longer be woken, and throw the bridge-gone
    /// error (as a sleep begun afterwards does).
    func bridgeWentAway() {
        let waiters = lock.withLock { () -> [Waiter] in
            bridged.isGone = true
            defer { bridged.waiting.removeAll() }
            return Array(bridged.waiting.values)
        }
        for waiter in waiters { waiter.resume(throwing: Self.bridgeGone("sleep")) }
    }

    /// Sleeper `id`'s task was cancelled: it leaves the clock's sleepers at once and its sleep
    /// throws `CancellationError`; the bridge takes its wake-up off the world's schedule on its
    /// next turn (``takeCancelledSleepers()``), before it runs anything. Returns whether the
    /// bridge has something to withdraw.
    func cancelSleeper(_ id: SleeperID) -> Bool {
        let (waiter, withdraw) = lock.withLock { () -> (Waiter?, Bool) in
            guard bridged.sleepers.contains(where: { $0.id == id }) || bridged.waiting[id] != nil else {
                // Woken already (its task is on its way out of the sleep): nothing to withdraw.
                return (nil, false)
            }
            bridged.cancelled.append(id)
            bridged.sleepers.removeAll { $0.id == id }
            guard let waiter = bridged.waiting.removeValue(forKey: id) else {
                bridged.abandoned.insert(id)
                return (nil, true)
            }
            return (waiter, true)
        }
        waiter?.resume(throwing: CancellationError())
        return withdraw
    }

    /// The sleepers cancelled since the last call, in the order they were.
    func takeCancelledSleepers() -> [SleeperID] {
        lock.withLock {
            guard !bridged.cancelled.isEmpty else { return [] }
            defer { bridged.cancelled.removeAll() }
            return bridged.cancelled
        }
    }

    /// Sets the published sleepers, leaving out those cancelled and not yet withdrawn. Call it
    /// holding `lock`.
    private func setSleepers(_ sleepers: [World.Sleeper]) {
        if bridged.cancelled.isEmpty {
            bridged.sleepers = sleepers
        } else {
            bridged.sleepers = sleepers.filter { !bridged.cancelled.contains($0.id) }
        }
    }
}
