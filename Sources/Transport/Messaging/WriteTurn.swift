/// One sender at a time between asking whether the transmit queue has room and writing, as a
/// plain value the channel actor owns.
///
/// The race it closes: a channel actor is reentrant at every `await`, so two concurrent sends
/// could both hear "room for one more" and both write; CoreBluetooth drops the write that does
/// not fit, silently, and both sends would report success. A send takes the turn for each
/// packet (its check and its write) and hands it on in the order the senders asked.
struct WriteTurn: Sendable {
    /// A sender waiting for the turn.
    typealias Waiter = CheckedContinuation<Void, any Error>

    /// Whether a sender has the turn.
    private(set) var isTaken = false
    private var waiters: [(id: UInt64, waiter: Waiter)] = []
    private var nextID: UInt64 = 0

    /// A fresh id for a sender about to wait (needed by its cancellation handler).
    mutating func makeID() -> UInt64 {
        defer { nextID += 1 }
        return nextID
    }

    /// Takes the turn if it is free (returns `true`).
    mutating func take() -> Bool {
        guard !isTaken else { return false }
        isTaken = true
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

    /// Gives the turn back: the longest-waiting sender gets it, or it is free.
    mutating func release() {
        guard !waiters.isEmpty else {
            isTaken = false
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
