/// A `Clock` whose time moves only when told to, so code that sleeps can be tested
/// deterministically and instantly.
///
/// `VirtualClock` is a real standard-library `Clock`: pass it wherever a clock is accepted
/// (`Task.sleep(for:tolerance:clock:)`, `clock.sleep(for:)`, async algorithms that take a
/// clock). Sleeping on it suspends the caller until the clock passes the deadline; no
/// wall-clock time passes.
///
/// ```swift
/// let clock = VirtualClock()
/// try await clock.run {
///     for _ in 0 ..< 10 { try await clock.sleep(for: .seconds(1)) }
/// }
/// print(clock.now)                        // "10s"
/// ```
///
/// ## Rules
///
/// - ``now`` starts at the instant given to ``init(now:)`` and never goes backwards:
///   advancing to an earlier instant, or by a negative duration, changes nothing.
/// - Sleepers wake in (deadline, sequence) order, where the sequence is the order in which
///   their `sleep(until:tolerance:)` calls began; ``now`` equals a sleeper's deadline when
///   it is resumed. `tolerance` is ignored: virtual deadlines are exact.
/// - A sleep whose deadline is at or before ``now`` returns at once (but still throws
///   `CancellationError` if the task is cancelled).
/// - Cancelling a sleeping task removes its sleeper at once (``sleeperCount`` drops) and
///   makes its sleep throw `CancellationError`.
///
/// ## Who moves time
///
/// Inside ``run(timeLimit:stallPatience:_:)`` time drives itself: the scope's tasks run on
/// an executor of its own, and whenever all of them wait, the clock wakes the next sleeper,
/// so each woken task finishes its step (and goes back to sleep) before time moves on. That
/// is exact, for code that loops on sleeps as well as for a single sleep. Outside a run,
/// ``advance(to:)`` wakes the sleepers due, in order, and lands on its target; a woken task
/// runs after that call returns, so a sleep it starts then counts from the target.
///
/// ## A bridge's clock
///
/// The clock a ``MockBLEBridge`` owns (``MockBLEBridge/clock``) keeps no time of its own: its
/// ``now`` is the bridge's time, and each sleep on it is an event on the bridge's one
/// schedule, beside link events, advertisements, faults and timeouts. Sleepers wake in time
/// order among those events; at a sleeper's deadline, every other event due then runs first,
/// so the task wakes to a world that has done everything due at that instant (a fault
/// scheduled for it has happened). ``nextDeadline``, ``sleeperCount`` and
/// ``untilSleeping(count:)`` report the sleepers on that schedule. ``advance(by:)``,
/// ``advance(to:)`` and ``run(maximumSteps:)`` run the bridge's schedule (as
/// ``MockBLEBridge/advance(to:)`` does), and ``run(timeLimit:stallPatience:_:)`` is the bridge's
/// ``MockBLEBridge/run(timeLimit:stallPatience:_:)``.
public final class VirtualClock: Clock, @unchecked Sendable {
    // Why `@unchecked Sendable` is safe: all mutable state (`schedule`, `bridged`, the
    // watchers and the run's state) is read and written only inside `lock.withLock`. `lock`
    // and `isBridged` are immutable. Continuations are taken out under the lock and resumed
    // after it is released, so resumed tasks never run with the lock held.

    public typealias Duration = Swift.Duration

    /// How a suspended sleep ended without error.
    enum Wake: Sendable {
        /// The deadline was not after `now` when the sleeper registered.
        case deadlineReached
        /// The clock advanced past the deadline and resumed the sleeper.
        case advanced
    }

    typealias Waiter = CheckedContinuation<Wake, any Error>

    let lock: Lock

    /// Whether a bridge owns the clock (then `bridged` holds its state, and `schedule` is unused).
    let isBridged: Bool

    /// A standalone clock's time and sleepers. Guarded by `lock`.
    var schedule: SleeperSchedule<Waiter>
    /// A bridge's clock's view of the bridge's time and sleepers, and its sleepers'
    /// continuations. Guarded by `lock`.
    var bridged = Bridged()
    /// Tasks in ``untilSleeping(count:)``, by token. Guarded by `lock`.
    var sleepWatchers: [UInt64: (count: Int, continuation: CheckedContinuation<Void, Never>)] = [:]
    /// Guarded by `lock`.
    var nextWatcherToken: UInt64 = 0
    /// Whether a ``run(timeLimit:stallPatience:_:)`` drives the clock, and the virtual time it
    /// may not pass. Guarded by `lock`.
    var driving = false
    var runDeadline: Instant?
    /// Explicit advances inside a run, waiting for the driver to reach their targets.
    /// Guarded by `lock`.
    /// Made the first time an advance waits in a run; guarded by `lock` (itself locked on its
    /// own).
    var advanceWaiters: AdvanceWaiters?
    /// Waits outside runs that nothing may end, watched to be reported (see ``QuietWaits``).
    /// Guarded by `lock`.
    var quiet = QuietWaitWatch()

    /// Always zero: virtual deadlines are exact.
    public var minimumResolution: Duration { .zero }

    /// Creates a clock.
    ///
    /// - Parameter now: The starting instant. Defaults to ``Instant/zero``.
    public convenience init(now: Instant = .zero) {
        self.init(now: now, isBridged: false)
    }

    /// Creates a standalone clock, or a bridge's (see `VirtualClock+Bridged`).
    init(now: Instant, isBridged: Bool, lock: Lock = Lock()) {
        self.lock = lock
        schedule = SleeperSchedule(now: now)
        self.isBridged = isBridged
        bridged.now = now
    }

    /// The current virtual instant (a bridge's clock: the bridge's time).
    public var now: Instant {
        lock.withLock { isBridged ? bridged.now : schedule.now }
    }

    /// The earliest deadline among pending sleepers, or `nil` if nobody is sleeping.
    public var nextDeadline: Instant? {
        lock.withLock { isBridged ? bridged.sleepers.first?.deadline : schedule.nextDeadline }
    }

    /// The number of tasks currently suspended in ``sleep(until:tolerance:)``.
    public var sleeperCount: Int {
        lock.withLock { lockedSleeperCount }
    }

    /// The number of sleepers. Call it holding `lock`.
    var lockedSleeperCount: Int { isBridged ? bridged.sleepers.count : schedule.count }

    /// Suspends until the clock reaches `deadline`.
    ///
    /// Returns at once if `deadline` is not after ``now``. Otherwise the caller is suspended
    /// until ``advance(to:)``, ``advance(by:)`` or ``run(maximumSteps:)`` moves the clock to
    /// the deadline (on a bridge's clock: until the bridge's schedule reaches the sleeper).
    ///
    /// - Parameters:
    ///   - deadline: The instant to wake at.
    ///   - tolerance: Ignored; virtual deadlines are exact.
    /// - Throws: `CancellationError` if the task is cancelled before or while sleeping. The
    ///   sleeper is then removed from the clock. On a bridge's clock whose bridge no longer
    ///   exists, or goes away during the sleep (a sleeping task does not keep it alive),
    ///   `APIMisuseError.invalidConfiguration`.
    public func sleep(until deadline: Instant, tolerance: Duration? = nil) async throws {
        try Task.checkCancellation()
        if isBridged { return try await sleepOnBridge(until: deadline) }
        let sequence = lock.withLock { schedule.makeSequence() }
        // Outside a run nothing moves this clock while the task sleeps but other code: watched,
        // and reported should it stand still (see `QuietWaits`).
        let quietWait = beginQuietWait(.sleep(until: deadline))
        defer { endQuietWait(quietWait) }
        _ = try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: Waiter) in
                enum Outcome { case suspended, deadlineReached, cancelled }
                let (outcome, watchers) = lock.withLock { () -> (Outcome, [CheckedContinuation<Void, Never>]) in
                    // Checked under the lock: if cancellation has already happened, the
                    // handler below may have run before this registration and found nothing.
                    if Task.isCancelled { return (.cancelled, []) }
                    switch schedule.register(continuation, deadline: deadline, sequence: sequence) {
                    case .suspended: return (.suspended, takeSatisfiedWatchers())
                    case .deadlineReached: return (.deadlineReached, [])
                    }
                }
                for watcher in watchers { watcher.resume() }
                switch outcome {
                case .suspended: break
                case .deadlineReached: continuation.resume(returning: .deadlineReached)
                case .cancelled: continuation.resume(throwing: CancellationError())
                }
            }
        } onCancel: {
            let waiter = lock.withLock { schedule.remove(deadline: deadline, sequence: sequence) }
            waiter?.resume(throwing: CancellationError())
        }
    }
}

extension VirtualClock {
    /// Returns once at least `count` tasks are sleeping on the clock (at once if they are), or
    /// when the calling task is cancelled: a test waits here for code it started to reach its
    /// sleep, instead of polling ``sleeperCount``.
    public func untilSleeping(count: Int = 1) async {
        let token: UInt64 = lock.withLock {
            defer { nextWatcherToken += 1 }
            return nextWatcherToken
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let now = lock.withLock { () -> Bool in
                    if lockedSleeperCount >= count || Task.isCancelled { return true }
                    sleepWatchers[token] = (count, continuation)
                    return false
                }
                if now { continuation.resume() }
            }
        } onCancel: {
            lock.withLock { sleepWatchers.removeValue(forKey: token) }?.continuation.resume()
        }
    }

    /// The watchers whose count of sleepers is reached, removed. Call it holding `lock`.
    func takeSatisfiedWatchers() -> [CheckedContinuation<Void, Never>] {
        guard !sleepWatchers.isEmpty else { return [] }
        let count = lockedSleeperCount
        let satisfied = sleepWatchers.filter { $0.value.count <= count }
        for token in satisfied.keys { sleepWatchers[token] = nil }
        return satisfied.values.map(\.continuation)
    }
}

extension Clock where Self == VirtualClock {
    /// A new ``VirtualClock`` starting at ``VirtualClock/Instant/zero``.
    public static var virtual: VirtualClock { VirtualClock() }
}
