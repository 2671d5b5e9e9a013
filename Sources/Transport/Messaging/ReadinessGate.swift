/// Senders waiting for a transmit queue to have room again, as a plain value the channel
/// actor owns.
///
/// The race it closes: a sender asks the manager whether it can send (an `await` on
/// another actor), and the "ready" event may be handled by the channel while that call is
/// in flight. So the sender reads ``generation`` *before* asking, and waits only if the
/// generation is unchanged when the answer is "no"; every ready signal bumps it.
struct ReadinessGate: Sendable {
    /// A suspended sender.
    typealias Waiter = CheckedContinuation<Void, any Error>

    /// Bumped by every ``signal()``.
    private(set) var generation: UInt64 = 0
    private var waiters: [UInt64: Waiter] = [:]
    private var nextID: UInt64 = 0

    /// The number of suspended senders.
    var waiterCount: Int { waiters.count }

    /// A fresh id for a waiter about to register (needed by its cancellation handler).
    mutating func makeID() -> UInt64 {
        defer { nextID += 1 }
        return nextID
    }

    /// Registers `waiter` under `id`, unless the queue became ready since `generation` or
    /// the task is already cancelled, in which case `waiter` is resumed at once.
    mutating func register(_ waiter: Waiter, id: UInt64, since generation: UInt64) {
        if Task.isCancelled {
            waiter.resume(throwing: CancellationError())
        } else if generation != self.generation {
            waiter.resume()
        } else {
            waiters[id] = waiter
        }
    }

    /// The queue has room: bumps the generation and resumes every waiter, in id order.
    mutating func signal() {
        generation &+= 1
        for waiter in takeAll() { waiter.resume() }
    }

    /// Resumes every waiter with `error` (the link went down, or the channel closed).
    mutating func fail(with error: any Error) {
        generation &+= 1
        for waiter in takeAll() { waiter.resume(throwing: error) }
    }

    /// Resumes the waiter `id`, if still waiting, with `CancellationError`.
    mutating func cancel(_ id: UInt64) {
        waiters.removeValue(forKey: id)?.resume(throwing: CancellationError())
    }

    private mutating func takeAll() -> [Waiter] {
        let all = waiters.sorted { $0.key < $1.key }.map(\.value)
        waiters.removeAll()
        return all
    }
}
