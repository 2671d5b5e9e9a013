/// An ordered hand-off of delegate callbacks from CoreBluetooth's queue to an actor.
///
/// CoreBluetooth calls its delegates synchronously on the queue given to the manager. The
/// delegate ``post(_:)``s each callback here (never blocking, never reordering), and one
/// consumer task started by ``startConsuming(_:)`` hands them to the actor one at a time, each
/// handled to the end before the next is taken. Callbacks are therefore handled in exactly
/// the order CoreBluetooth delivered them, which `Task { await actor.handle(...) }` per
/// callback would not guarantee.
///
/// Callbacks carry CoreBluetooth objects, which are not `Sendable`; they travel in a
/// ``Handoff`` box (see there why that is safe).
///
/// The type does not touch CoreBluetooth; it is unit-tested on every platform.
final class CallbackInbox<Callback>: Sendable {
    /// A callback in transit from the delegate to the actor.
    struct Handoff: @unchecked Sendable {
        // @unchecked Sendable: a callback is created on the manager's queue, posted once, and
        // consumed once by an actor whose executor is that same queue
        // (DispatchQueueExecutor); the consumer task only moves the box. So the
        // non-Sendable objects inside are never used by two threads at once.

        /// The callback.
        let callback: Callback
    }

    private let stream: AsyncStream<Handoff>
    private let continuation: AsyncStream<Handoff>.Continuation

    /// Creates an empty inbox.
    init() {
        (stream, continuation) = AsyncStream.makeStream(of: Handoff.self, bufferingPolicy: .unbounded)
    }

    /// Queues a callback for the consumer. Ignored after ``finish()``.
    func post(_ callback: Callback) {
        continuation.yield(Handoff(callback: callback))
    }

    /// Ends the inbox: the consumer handles what was posted before, then stops.
    func finish() {
        continuation.finish()
    }

    /// Starts the one consumer: `handle` receives each callback in posting order and finishes
    /// with it before the next is taken. Returns the consumer task, which ends after
    /// ``finish()`` (or when `handle` returns `false`, e.g. because its actor is gone).
    ///
    /// Call it once: the inbox has one consumer.
    @discardableResult
    func startConsuming(_ handle: @escaping @Sendable (Handoff) async -> Bool) -> Task<Void, Never> {
        let stream = self.stream
        return Task {
            for await handoff in stream {
                guard await handle(handoff) else { return }
            }
        }
    }
}
