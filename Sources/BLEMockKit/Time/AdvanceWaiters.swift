/// Explicit advances inside a run (a bridge's ``MockBLEBridge/run(timeLimit:stallPatience:_:)``
/// or a clock's ``VirtualClock/run(timeLimit:stallPatience:_:)``), each waiting for the run's
/// driver to reach its target. A caller cancelled meanwhile returns at once, and its target no
/// longer stops the driver: so the list holds only the advances still waiting.
///
/// Reachable from any thread (a cancellation handler ends a wait), with a lock of its own.
final class AdvanceWaiters: @unchecked Sendable {
    // @unchecked Sendable: `next` and `waiting` are only read and written with `lock` held;
    // continuations are resumed after it is released.
    private let lock = Lock()
    private var next = 0
    /// The advances waiting, oldest first; a continuation is `nil` until its caller suspends.
    private var waiting: [(target: VirtualClock.Instant, token: Int, continuation: CheckedContinuation<Void, Never>?)] =
        []

    /// Lists an advance to `target` (before its caller suspends, so the driver's next step sees
    /// it) and returns its token for ``wait(_:)``.
    func add(_ target: VirtualClock.Instant) -> Int {
        lock.withLock {
            defer { next += 1 }
            waiting.append((target, next, nil))
            return next
        }
    }

    /// Waits until the driver reaches the advance's target (``reach(through:)``), the run ends
    /// (``endAll()``) or the caller is cancelled.
    func wait(_ token: Int) async {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let ended = lock.withLock { () -> Bool in
                    guard let index = waiting.firstIndex(where: { $0.token == token }) else { return true }
                    waiting[index].continuation = continuation
                    return false
                }
                if ended { continuation.resume() }
            }
        } onCancel: {
            end { $0.token == token }
        }
    }

    /// The nearest target of the advances still waiting.
    /// (Asked at every step of a run's driver: no array is made for it.)
    var horizon: VirtualClock.Instant? { lock.withLock { waiting.lazy.map(\.target).min() } }

    /// The targets of the advances still waiting, oldest first (for a stall's report).
    var targets: [VirtualClock.Instant] { lock.withLock { waiting.map(\.target) } }

    /// The driver reached `instant`: the advances to it or before return.
    func reach(through instant: VirtualClock.Instant) {
        end { $0.target <= instant }
    }

    /// The run ended: every advance still waiting returns.
    func endAll() {
        end { _ in true }
    }

    /// Takes the advances `ends` picks off the list and resumes those suspended (one not yet
    /// suspended returns as it would suspend, finding itself gone).
    private func end(
        _ ends: (_ advance: (target: VirtualClock.Instant, token: Int, continuation: CheckedContinuation<Void, Never>?))
            -> Bool
    ) {
        let ended = lock.withLock { () -> [CheckedContinuation<Void, Never>] in
            let picked = waiting.filter(ends).compactMap(\.continuation)
            waiting.removeAll(where: ends)
            return picked
        }
        for continuation in ended { continuation.resume() }
    }
}
