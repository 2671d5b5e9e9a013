/// At most `capacity` senders at a time (one, by default), handed on in the order they asked,
/// as a plain value the channel actor owns.
///
/// With one, the race it closes: a channel actor is reentrant at every `await`, so two
/// concurrent sends could both hear "room for one more" and both write; CoreBluetooth drops the
/// write that does not fit, silently, and both sends would report success. A send takes the
/// turn for each packet (its check and its write). With `maximumPartialMessages`, it bounds
/// the messages in flight: the peer holds each as a partial message until its last packet,
/// and refuses one more than that.
struct WriteTurn: Sendable {
    /// A sender waiting for the turn.
    typealias Waiter = CheckedContinuation<Void, any Error>

    /// How many senders may hold a turn at once.
    let capacity: Int
    /// How many senders hold a turn.
    private(set) var holders = 0
    private var waiters: [(id: UInt64, waiter: Waiter)] = []
    private var nextID: UInt64 = 0

    /// A turn for `capacity` senders at once (at least one).
    init(capacity: Int = 1) {
        self.capacity = max(1, capacity)
    }

    /// Whether every turn is held.
    var isTaken: Bool { holders >= capacity }

    /// A fresh id for a sender about to wait (needed by its cancellation handler).
    mutating func makeID() -> UInt64 {
        defer { nextID += 1 }
        return nextID
    }

    /// Takes the turn if it is free (returns `true`).
    mutating func take() -> Bool {
        guard !isTaken else { return false }
        holders += 1
        return true
    }

    /// Queues `waiter` for the turn, unless its task is already cancelled (it is resumed
    /// with `CancellationError`) or the turn came free meanwhile (it is resumed holding it).
    mutating func wait(_ waiter: Waiter, id: UInt64) {
        if Task.isCancelled {
            waiter.resume(throwing: CancellationError())
        } else if take() {
            waiter.resume()
        } else {
            waiters.append((id, waiter))
        }
    }

    /// Gives a turn back: the longest-waiting sender gets it, or it is free.
    mutating func release() {
        guard !waiters.isEmpty else {
            holders -= 1
            return
        }
        waiters.removeFirst().waiter.resume()
    }

    /// Resumes the waiter `id`, if still waiting, with `CancellationError`.
    mutating func cancel(_ id: UInt64) {
        guard let position = waiters.firstIndex(where: { $0.id == id }) else { return }
        waiters.remove(at: position).waiter.resume(throwing: CancellationError())
    }

    /// Resumes every waiter with `error` (the channel closed).
    mutating func fail(with error: any Error) {
        let all = waiters
        waiters.removeAll()
        for (_, waiter) in all { waiter.resume(throwing: error) }
    }
}
