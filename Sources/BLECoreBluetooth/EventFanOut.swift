/// Delivers a manager's events to any number of `AsyncStream`s: every stream receives every
/// event yielded after it was created, in order, and all streams finish at ``finish()``.
///
/// Each stream buffers without limit (a slow reader loses nothing). A stream created after
/// ``finish()`` is already finished. Yields, finishing and stream termination may happen on
/// any thread; continuations are used only after the lock is released, so a stream's
/// `onTermination` (which takes the lock) can run synchronously from ``finish()``.
///
/// The type does not touch CoreBluetooth; it is unit-tested on every platform.
final class EventFanOut<Event: Sendable>: @unchecked Sendable {
    // @unchecked Sendable: `subscribers`, `nextID` and `isFinished` are read and written only
    // inside `lock`; AsyncStream continuations are themselves Sendable and used outside it.

    private let lock = Lock()
    private var subscribers: [Int: AsyncStream<Event>.Continuation] = [:]
    private var nextID = 0
    private var isFinished = false

    /// Creates a fan-out with no streams.
    init() {}

    /// A new stream of the events yielded from now on.
    func stream() -> AsyncStream<Event> {
        let (stream, continuation) = AsyncStream.makeStream(of: Event.self, bufferingPolicy: .unbounded)
        let id: Int? = lock.withLock {
            guard !isFinished else { return nil }
            defer { nextID += 1 }
            subscribers[nextID] = continuation
            return nextID
        }
        guard let id else {
            continuation.finish()
            return stream
        }
        continuation.onTermination = { [weak self] _ in self?.remove(id) }
        return stream
    }

    /// Delivers an event to every open stream. Ignored after ``finish()``.
    func yield(_ event: Event) {
        for continuation in snapshot() { continuation.yield(event) }
    }

    /// Ends every stream (after the events it buffered) and refuses later events and streams.
    func finish() {
        let continuations: [AsyncStream<Event>.Continuation] = lock.withLock {
            isFinished = true
            defer { subscribers = [:] }
            return subscribers.keys.sorted().map { subscribers[$0]! }
        }
        for continuation in continuations { continuation.finish() }
    }

    /// The number of streams still open (not finished, not cancelled by their reader).
    var streamCount: Int { lock.withLock { subscribers.count } }

    /// Whether ``finish()`` was called.
    var finished: Bool { lock.withLock { isFinished } }

    private func snapshot() -> [AsyncStream<Event>.Continuation] {
        lock.withLock { subscribers.keys.sorted().map { subscribers[$0]! } }
    }

    private func remove(_ id: Int) {
        _ = lock.withLock { subscribers.removeValue(forKey: id) }
    }
}
