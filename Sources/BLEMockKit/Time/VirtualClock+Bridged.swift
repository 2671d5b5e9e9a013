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
    }

    /// Creates the clock of a bridge, at the bridge's time (see ``attach(to:)``).
    convenience init(bridgedAt now: Instant) {
        self.init(now: now, isBridged: true)
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

    /// A bridge's clock's sleep: the bridge schedules the wake-up. A deadline not after the
    /// published time (never after the world's) is due at once, with no hop.
    func sleepOnBridge(until deadline: Instant) async throws {
        let (bridge, due) = lock.withLock { (bridged.bridge, deadline <= bridged.now) }
        if due { return }
        guard let bridge else { throw Self.bridgeGone("sleep") }
        try await bridge.sleepOnClock(until: deadline)
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
    /// resumes it at once with `CancellationError` if its task was cancelled already.
    func register(_ id: SleeperID, _ waiter: Waiter) {
        let gaveUp = lock.withLock { () -> Bool in
            if bridged.abandoned.remove(id) != nil { return true }
            bridged.waiting[id] = waiter
            return false
        }
        if gaveUp { waiter.resume(throwing: CancellationError()) }
    }

    /// Sleeper `id`'s wake-up ran (the published time is its deadline): resumes its task, with
    /// `remaining` the world's sleepers left.
    func wake(_ id: SleeperID, remaining: [World.Sleeper]) {
        let waiter = lock.withLock { () -> Waiter? in
            setSleepers(remaining)
            return bridged.waiting.removeValue(forKey: id)
        }
        waiter?.resume(returning: .advanced)
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
