/// Delivers a manager's events to any number of streams: each stream gets every event
/// yielded after it was created, in order. Events wait in a per-stream buffer until read,
/// so the bridge can report unread ones when it finishes. A stream that is dropped (no
/// stream value or iterator left) stops receiving events and frees its buffer.
final class EventBroadcaster<Event: Sendable>: @unchecked Sendable {
    // @unchecked Sendable: every stored property, and every field of every subscriber, is
    // guarded by `lock`; continuations are resumed after the lock is released.

    /// One stream's buffer. A class, so appending to a buffer inside the list of subscribers
    /// never copies it.
    //
    // (`@exclusivity(unchecked)` on the guarded properties: the lock already keeps accesses
    // apart, and the runtime's dynamic checks would cost a call on every access.)
    fileprivate final class Subscriber {
        @exclusivity(unchecked) var buffer = FIFO<Event>()
        @exclusivity(unchecked) var waiter: CheckedContinuation<Event?, Never>?
        /// When the waiter started waiting, in the simulation's time.
        @exclusivity(unchecked) var waitingSince: VirtualClock.Instant?
        /// The clock's token for the wait, while it is watched (outside runs: see `QuietWaits`).
        @exclusivity(unchecked) var quietWait: Int?
        @exclusivity(unchecked) var isFinished: Bool

        init(isFinished: Bool) {
            self.isFinished = isFinished
            // Room for a few unread events: a test's events come in small bursts (growing the
            // buffer from one event to two, then four, allocated each time).
            buffer.reserveCapacity(4)
        }
    }

    /// The subscribers by id, in the order they subscribed (ids only grow). A list: a manager
    /// has a stream or two, and a dictionary hashed the id on every event read.
    fileprivate struct Subscribers {
        private var entries: [(id: Int, subscriber: Subscriber)] = []

        var count: Int { entries.count }
        var inOrder: LazyMapSequence<[(id: Int, subscriber: Subscriber)], Subscriber> {
            entries.lazy.map(\.subscriber)
        }

        subscript(id: Int) -> Subscriber? {
            entries.first { $0.id == id }?.subscriber
        }

        mutating func add(_ subscriber: Subscriber, id: Int) {
            entries.append((id, subscriber))
        }

        @discardableResult
        mutating func removeValue(forKey id: Int) -> Subscriber? {
            guard let index = entries.firstIndex(where: { $0.id == id }) else { return nil }
            return entries.remove(at: index).subscriber
        }
    }

    fileprivate let lock = Lock()
    /// The simulation's clock, to say since when a stream has been awaited (and to watch a wait
    /// outside runs that nothing may end).
    fileprivate let clock: VirtualClock?
    /// The manager whose events these are (named when a wait is reported).
    fileprivate let owner: QuietWaits.Owner?
    @exclusivity(unchecked) fileprivate var subscribers = Subscribers()
    @exclusivity(unchecked) fileprivate var nextID = 0
    @exclusivity(unchecked) fileprivate var isFinished = false

    /// Creates a broadcaster of `owner`'s events; `clock` stamps when a stream starts being
    /// awaited, and watches such a wait outside runs (see `QuietWaits`).
    init(clock: VirtualClock? = nil, owner: QuietWaits.Owner? = nil) {
        self.clock = clock
        self.owner = owner
    }

    /// The earliest virtual time a stream of this broadcaster has been awaited since, if one
    /// is being awaited now.
    var awaitedSince: VirtualClock.Instant? {
        lock.withLock { subscribers.inOrder.compactMap(\.waitingSince).min() }
    }

    /// A new stream of the events yielded from now on.
    func stream() -> AsyncStream<Event> {
        let id = openTap()
        // The closures are made here, where the event type is known, so what they call runs
        // specialized code (a deinit of a generic class would run the generic code).
        let subscription = StreamSubscription { [self] in cancel(id) }
        return AsyncStream(
            unfolding: { [self] in
                let event = await next(id)
                // The stream holds the subscription: it unsubscribes when the stream goes.
                withExtendedLifetime(subscription) {}
                return event
            },
            onCancel: { subscription.cancel() })
    }

    /// Delivers an event to every stream.
    func yield(_ event: Event) {
        var waiters: [CheckedContinuation<Event?, Never>] = []
        var quietWaits: [Int] = []
        lock.withLock {
            guard !isFinished else { return }
            for subscriber in subscribers.inOrder {
                if let waiter = subscriber.waiter {
                    subscriber.waiter = nil
                    subscriber.waitingSince = nil
                    if let token = subscriber.quietWait.take() { quietWaits.append(token) }
                    waiters.append(waiter)
                } else {
                    subscriber.buffer.append(event)
                }
            }
        }
        for token in quietWaits { clock?.endQuietWait(token) }
        for waiter in waiters { waiter.resume(returning: event) }
    }

    /// Ends every stream (after its buffered events) and refuses further events.
    func finish() {
        var waiters: [CheckedContinuation<Event?, Never>] = []
        var quietWaits: [Int] = []
        lock.withLock {
            isFinished = true
            for subscriber in subscribers.inOrder {
                subscriber.isFinished = true
                if let waiter = subscriber.waiter {
                    subscriber.waiter = nil
                    subscriber.waitingSince = nil
                    if let token = subscriber.quietWait.take() { quietWaits.append(token) }
                    waiters.append(waiter)
                }
            }
        }
        for token in quietWaits { clock?.endQuietWait(token) }
        for waiter in waiters { waiter.resume(returning: nil) }
    }

    /// The events yielded but not yet read, per open stream, in order.
    var unreadEvents: [Event] {
        lock.withLock {
            subscribers.inOrder.flatMap { $0.buffer.waiting }
        }
    }

    /// The number of open streams.
    var streamCount: Int { lock.withLock { subscribers.count } }

    private func next(_ id: Int) async -> Event? {
        // An event already buffered is handed over without suspending (most reads in a test
        // find one: the operation that caused it has returned before the test reads).
        if case .some(let event) = lock.withLock({ takeReady(id) }) { return event }
        return await withCheckedContinuation { (continuation: CheckedContinuation<Event?, Never>) in
            let immediate: Event?? = lock.withLock {
                if let ready = takeReady(id) { return ready }
                let subscriber = subscribers[id]!
                subscriber.waiter = continuation
                subscriber.waitingSince = clock?.now
                return .none
            }
            if case .some(let event) = immediate {
                continuation.resume(returning: event)
            } else if let clock, let owner {
                watchQuietWait(of: id, on: clock, owner: owner)
            }
        }
    }

    /// What a read of stream `id` gets at once (called with `lock` held): the oldest buffered
    /// event, or the end of the stream (`.some(nil)`); `nil` when the read has to wait.
    private func takeReady(_ id: Int) -> Event?? {
        guard let subscriber = subscribers[id] else { return .some(nil) }
        if let event = subscriber.buffer.popFirst() { return .some(event) }
        if subscriber.isFinished {
            subscribers.removeValue(forKey: id)
            return .some(nil)
        }
        return .none
    }

    /// Outside runs nothing may end the wait of stream `id` that just began: the clock watches
    /// it, and reports it should it stand still (see `QuietWaits`). The token is kept with the
    /// waiter, unless the wait has ended already (an event came in between: then it is ended).
    private func watchQuietWait(of id: Int, on clock: VirtualClock, owner: QuietWaits.Owner) {
        guard let token = clock.beginQuietWait(.events(owner)) else { return }
        let kept = lock.withLock { () -> Bool in
            guard let subscriber = subscribers[id], subscriber.waiter != nil else { return false }
            subscriber.quietWait = token
            return true
        }
        if !kept { clock.endQuietWait(token) }
    }

    private func cancel(_ id: Int) {
        let (waiter, quietWait) = lock.withLock { () -> (CheckedContinuation<Event?, Never>?, Int?) in
            let subscriber = subscribers.removeValue(forKey: id)
            return (subscriber?.waiter, subscriber?.quietWait)
        }
        clock?.endQuietWait(quietWait)
        waiter?.resume(returning: nil)
    }
}

extension EventBroadcaster {
    /// Opens a tap: a subscriber without a stream, whose buffered events ``drain(_:)`` takes
    /// synchronously (the scenario engine reads a manager's events between steps this way).
    func openTap() -> Int {
        lock.withLock {
            defer { nextID += 1 }
            subscribers.add(Subscriber(isFinished: isFinished), id: nextID)
            return nextID
        }
    }

    /// The events a tap received since the last drain, in order.
    func drain(_ tap: Int) -> [Event] {
        lock.withLock {
            guard let subscriber = subscribers[tap] else { return [] }
            return subscriber.buffer.takeAll()
        }
    }

    /// Closes a tap.
    func closeTap(_ tap: Int) {
        lock.withLock { _ = subscribers.removeValue(forKey: tap) }
    }
}

/// Unsubscribes a stream of an ``EventBroadcaster`` when the stream's last reference (the
/// stream or an iterator of it) goes away.
private final class StreamSubscription: Sendable {
    let cancel: @Sendable () -> Void

    init(cancel: @escaping @Sendable () -> Void) {
        self.cancel = cancel
    }

    deinit { cancel() }
}
