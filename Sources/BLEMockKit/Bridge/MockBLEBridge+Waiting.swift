import BLECore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

extension MockBLEBridge {
    /// Returns once `condition` holds: at once if it does, else as soon as the simulation
    /// changes so that it does (it is checked after every change). A test waits here for
    /// something another task started to reach the bridge — an operation pending, a request
    /// delivered, a central subscribed — instead of polling by yielding in a loop.
    ///
    /// ```swift
    /// let read = Task { try await central.readValue(for: characteristic) }
    /// await bridge.waitUntil { $0.pendingOperations.count == 1 }
    /// ```
    ///
    /// The condition runs on the bridge, so it may use the bridge's properties (``log``,
    /// ``now``, ``pendingOperations``, …) directly. Cancelling the calling task ends the wait.
    /// Inside a ``run(timeLimit:stallPatience:_:)`` scope the wait counts as waiting on the
    /// simulation: time moves on until the condition holds.
    public func waitUntil(_ condition: @escaping @Sendable (isolated MockBLEBridge) -> Bool) async {
        admitArrivals()
        guard !condition(self) else { return }
        let token = conditions.makeToken()
        pendingConditions.append((token, world.now, condition))
        // Outside a run nothing moves time while the test waits here but other code: watched,
        // and reported should it stand still (see `QuietWaits`).
        let quietWait = sleepClock.beginQuietWait(.condition)
        defer { sleepClock.endQuietWait(quietWait) }
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                conditions.register(token, continuation)
            }
        } onCancel: {
            conditions.end(token)
        }
    }

    /// The ``waitUntil(_:)`` calls still waiting: a token for each (the same for the same wait)
    /// and the instant it started waiting.
    package var waitsStarted: [(token: Int, since: VirtualClock.Instant)] {
        pendingConditions.lazy.filter { !self.conditions.hasEnded($0.token) }.map { ($0.token, $0.since) }
    }

    /// The ``waitUntil(_:)`` calls still waiting, as a run's stall and ``finish()`` report them.
    var unendedConditionWaits: [Leftover] {
        pendingConditions.filter { !conditions.hasEnded($0.token) }.map { entry in
            .operation(
                "bridge.waitUntil { … } (its condition never held)", central: nil, peripheral: nil,
                characteristic: nil, since: entry.since)
        }
    }

    /// How many ``waitUntil(_:)`` calls are suspended now, their condition not yet holding (read
    /// from any thread: a simulated system being uninstalled reports those it leaves waiting).
    package nonisolated var suspendedWaits: Int { conditions.suspendedCount }

    /// Resumes the waits whose condition now holds.
    func checkConditions() {
        guard !pendingConditions.isEmpty else { return }
        let finished = pendingConditions.filter { conditions.hasEnded($0.token) || $0.condition(self) }
        guard !finished.isEmpty else { return }
        pendingConditions.removeAll { entry in finished.contains { $0.token == entry.token } }
        for entry in finished {
            conditions.end(entry.token)
            conditions.forget(entry.token)
        }
    }
}

/// The continuations of ``MockBLEBridge/waitUntil(_:)`` calls, reachable from a task's
/// cancellation handler.
final class ConditionWaiters: @unchecked Sendable {
    // @unchecked Sendable: every stored property is only read and written with `lock` held;
    // continuations are resumed after it is released.
    private let lock: Lock
    private var next = 0
    private var waiting: [Int: CheckedContinuation<Void, Never>] = [:]
    /// Waits ended (satisfied or cancelled), until the bridge forgets their conditions; a
    /// continuation registered after its wait ended resumes at once.
    private var ended: Set<Int> = []

    init(lock: Lock = Lock()) {
        self.lock = lock
    }

    func makeToken() -> Int {
        lock.withLock {
            defer { next += 1 }
            return next
        }
    }

    func register(_ token: Int, _ continuation: CheckedContinuation<Void, Never>) {
        let alreadyEnded = lock.withLock {
            if ended.contains(token) { return true }
            waiting[token] = continuation
            return false
        }
        if alreadyEnded { continuation.resume() }
    }

    /// How many waits are suspended (their continuations registered, not yet resumed).
    var suspendedCount: Int { lock.withLock { waiting.count } }

    /// Whether the wait with this token has ended.
    func hasEnded(_ token: Int) -> Bool {
        lock.withLock { ended.contains(token) }
    }

    /// Ends a wait (its condition holds, or its task was cancelled).
    func end(_ token: Int) {
        let continuation = lock.withLock {
            ended.insert(token)
            return waiting.removeValue(forKey: token)
        }
        continuation?.resume()
    }

    /// The bridge forgot the condition of an ended wait.
    func forget(_ token: Int) {
        lock.withLock { _ = ended.remove(token) }
    }
}
