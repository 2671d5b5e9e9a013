import BLECore

/// The callers suspended on a bridge's operations, reachable from a task's cancellation
/// handler (which runs on any thread, outside the bridge's executor).
///
/// A caller registers its continuation under the operation's id; the bridge resumes it with
/// the operation's result; a cancellation handler resumes it at once with
/// `CancellationError` and leaves the id for the bridge to withdraw from the world.
final class OperationWaiters: @unchecked Sendable {
    // @unchecked Sendable: `waiting`, `cancelled` and `abandoned` are only read and written
    // with `lock` held; continuations are resumed after the lock is released.
    typealias Waiter = CheckedContinuation<Result<Reply, any Error>, Never>

    private let lock: Lock
    private var waiting: [OperationID: Waiter] = [:]
    /// Operations whose callers gave up, for the bridge to withdraw.
    private var cancelled: [OperationID] = []
    /// Operations whose callers gave up before registering.
    private var abandoned: Set<OperationID> = []
    /// Tasks waiting until some caller is suspended, by token.
    private var watchers: [Int: CheckedContinuation<Void, Never>] = [:]
    private var nextWatcher = 0

    init(lock: Lock = Lock()) {
        self.lock = lock
    }

    /// Registers the continuation of operation `id`'s caller (resumed at once if the caller
    /// already gave up).
    func register(_ id: OperationID, _ waiter: Waiter) {
        let (gaveUp, watching) = lock.withLock { () -> (Bool, [CheckedContinuation<Void, Never>]) in
            if abandoned.remove(id) != nil { return (true, []) }
            waiting[id] = waiter
            defer { watchers.removeAll() }
            return (false, Array(watchers.values))
        }
        if gaveUp { waiter.resume(returning: .failure(CancellationError())) }
        for watcher in watching { watcher.resume() }
    }

    /// Returns once some caller is suspended on an operation (at once if one is), once `done`
    /// holds (checked now and at each ``wakeWatchers()``), or when the calling task is cancelled.
    func untilSuspended(orUntil done: @Sendable () -> Bool = { false }) async {
        let token = lock.withLock {
            defer { nextWatcher += 1 }
            return nextWatcher
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let now = lock.withLock { () -> Bool in
                    if !waiting.isEmpty || Task.isCancelled || done() { return true }
                    watchers[token] = continuation
                    return false
                }
                if now { continuation.resume() }
            }
        } onCancel: {
            lock.withLock { watchers.removeValue(forKey: token) }?.resume()
        }
    }

    /// Resumes operation `id`'s caller with its result; returns whether one was waiting.
    @discardableResult
    func resume(_ id: OperationID, with result: Result<Reply, any Error>) -> Bool {
        guard let waiter = lock.withLock({ waiting.removeValue(forKey: id) }) else { return false }
        waiter.resume(returning: result)
        return true
    }

    /// The caller of operation `id` gave up: it resumes with `CancellationError`. Returns
    /// whether the bridge has something to withdraw.
    func cancel(_ id: OperationID) -> Bool {
        let waiter: Waiter? = lock.withLock {
            cancelled.append(id)
            guard let waiter = waiting.removeValue(forKey: id) else {
                abandoned.insert(id)
                return nil
            }
            return waiter
        }
        waiter?.resume(returning: .failure(CancellationError()))
        return true
    }

    /// Wakes every task in ``untilSuspended(orUntil:)`` to check its condition again.
    func wakeWatchers() {
        let watching = lock.withLock { () -> [CheckedContinuation<Void, Never>] in
            defer { watchers.removeAll() }
            return Array(watchers.values)
        }
        for watcher in watching { watcher.resume() }
    }

    /// The operations whose callers gave up since the last call, in the order they did.
    func takeCancelled() -> [OperationID] {
        lock.withLock {
            guard !cancelled.isEmpty else { return [] }
            defer { cancelled.removeAll() }
            return cancelled
        }
    }

    /// The operations with a suspended caller.
    var suspended: [OperationID] { lock.withLock { waiting.keys.sorted() } }
}
