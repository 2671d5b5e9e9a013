/// The calls waiting for a CoreBluetooth callback, keyed by what the callback will name
/// (a peripheral, a characteristic, a service being added), each resumed exactly once.
///
/// CoreBluetooth answers requests on one attribute in the order they were made, so waiters
/// of one key form a FIFO queue: ``resume(_:with:)`` completes the oldest. A waiter whose task
/// is cancelled is resumed at once with `CancellationError` but keeps its place in the queue
/// as an *abandoned* entry, because its request is still in flight: the callback that answers
/// it is absorbed instead of being handed to the next waiter. ``failAll(where:with:)`` ends
/// every waiter of a dropped link or a powered-off manager with the error given.
///
/// Every waiter is resumed exactly once: by a result, by a failure, or by cancellation,
/// whichever comes first; later attempts find nothing to resume. Continuations are resumed
/// after the lock is released.
///
/// The type does not touch CoreBluetooth; it is unit-tested on every platform.
final class PendingOperations<Key: Hashable & Sendable, Value: Sendable>: @unchecked Sendable {
    // @unchecked Sendable: every stored property is read and written only inside `lock`;
    // continuations are taken out under the lock and resumed after it is released.

    private enum Entry {
        /// Registered by `wait`, not yet waiting (the cancellation handler may run first).
        case reserved
        /// Waiting for its result.
        case waiting(CheckedContinuation<Value, any Error>)
        /// Cancelled before it started waiting: it must not start.
        case cancelledEarly
        /// Cancelled while its request was in flight; absorbs that request's answer.
        case abandoned
    }

    private struct Slot {
        var token: UInt64
        var entry: Entry

        /// Whether the request was issued (so an answer is owed to this slot).
        var isStarted: Bool {
            switch entry {
            case .waiting, .abandoned: true
            case .reserved, .cancelledEarly: false
            }
        }
    }

    private let lock = Lock()
    private var queues: [Key: [Slot]] = [:]
    private var nextToken: UInt64 = 0

    /// Creates an empty set of pending operations.
    init() {}

    /// Registers a waiter for `key`, runs `start` (which issues the CoreBluetooth request) and
    /// waits until the request is answered, failed, or the task is cancelled.
    ///
    /// `start` runs on the caller's actor, after the waiter is registered, so an answer can
    /// never arrive before someone waits for it. It does not run when the task is already
    /// cancelled.
    func wait(
        for key: Key, isolation: isolated (any Actor)? = #isolation, start: () -> Void
    ) async throws -> Value {
        let token = reserve(key)
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation(isolation: isolation) { continuation in
                if register(continuation, token: token, key: key) { start() }
            }
        } onCancel: {
            cancel(token: token, key: key)
        }
    }

    /// Completes the oldest request for `key` with `result`. Returns `false` when no request
    /// was pending (a late or unsolicited callback); an abandoned (cancelled) request
    /// swallows the result and returns `true`.
    @discardableResult
    func resume(_ key: Key, with result: Result<Value, any Error>) -> Bool {
        let outcome: (found: Bool, continuation: CheckedContinuation<Value, any Error>?) = lock.withLock {
            guard var queue = queues[key], let index = queue.firstIndex(where: { $0.isStarted }) else {
                return (false, nil)
            }
            let slot = queue.remove(at: index)
            queues[key] = queue.isEmpty ? nil : queue
            if case .waiting(let continuation) = slot.entry { return (true, continuation) }
            return (true, nil)
        }
        outcome.continuation?.resume(with: result)
        return outcome.found
    }

    /// Completes every issued request for `key` with `result` (e.g. every `connect` call
    /// waiting for one peripheral). Returns the number of requests completed.
    @discardableResult
    func resumeAll(_ key: Key, with result: Result<Value, any Error>) -> Int {
        let continuations: [CheckedContinuation<Value, any Error>?] = lock.withLock {
            guard let queue = queues[key] else { return [] }
            let started = queue.filter(\.isStarted)
            let rest = queue.filter { !$0.isStarted }
            queues[key] = rest.isEmpty ? nil : rest
            return started.map { if case .waiting(let continuation) = $0.entry { continuation } else { nil } }
        }
        for continuation in continuations { continuation?.resume(with: result) }
        return continuations.count
    }

    /// Fails every request whose key matches with `error`, and forgets the abandoned ones.
    /// Returns the number of waiters failed.
    @discardableResult
    func failAll(where matches: (Key) -> Bool = { _ in true }, with error: any Error) -> Int {
        let continuations: [CheckedContinuation<Value, any Error>] = lock.withLock {
            var failed: [CheckedContinuation<Value, any Error>] = []
            for key in queues.keys where matches(key) {
                for slot in queues[key]! {
                    if case .waiting(let continuation) = slot.entry { failed.append(continuation) }
                }
                queues[key] = nil
            }
            return failed
        }
        for continuation in continuations { continuation.resume(throwing: error) }
        return continuations.count
    }

    /// The keys with a request waiting, in no particular order.
    var waitingKeys: [Key] {
        lock.withLock {
            queues.compactMap { key, slots in
                slots.contains { if case .waiting = $0.entry { true } else { false } } ? key : nil
            }
        }
    }

    /// Whether a request for `key` is waiting (abandoned requests do not count).
    func isWaiting(for key: Key) -> Bool {
        lock.withLock { queues[key]?.contains { if case .waiting = $0.entry { true } else { false } } ?? false }
    }

    /// The number of requests in flight, including abandoned ones still owed an answer.
    var count: Int { lock.withLock { queues.values.reduce(0) { $0 + $1.count } } }

    private func reserve(_ key: Key) -> UInt64 {
        lock.withLock {
            defer { nextToken += 1 }
            queues[key, default: []].append(Slot(token: nextToken, entry: .reserved))
            return nextToken
        }
    }

    /// Stores the continuation; returns `false` (after failing it) when cancelled meanwhile.
    private func register(_ continuation: CheckedContinuation<Value, any Error>, token: UInt64, key: Key) -> Bool {
        let accepted: Bool = lock.withLock {
            guard let index = queues[key]?.firstIndex(where: { $0.token == token }) else { return false }
            if case .cancelledEarly = queues[key]![index].entry {
                queues[key]!.remove(at: index)
                if queues[key]!.isEmpty { queues[key] = nil }
                return false
            }
            queues[key]![index].entry = .waiting(continuation)
            return true
        }
        if !accepted { continuation.resume(throwing: CancellationError()) }
        return accepted
    }

    private func cancel(token: UInt64, key: Key) {
        let continuation: CheckedContinuation<Value, any Error>? = lock.withLock {
            guard let index = queues[key]?.firstIndex(where: { $0.token == token }) else { return nil }
            switch queues[key]![index].entry {
            case .reserved:
                queues[key]![index].entry = .cancelledEarly
                return nil
            case .waiting(let continuation):
                queues[key]![index].entry = .abandoned
                return continuation
            case .cancelledEarly, .abandoned:
                return nil
            }
        }
        continuation?.resume(throwing: CancellationError())
    }
}
