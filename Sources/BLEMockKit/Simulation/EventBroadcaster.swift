/// Delivers a manager's events to any number of streams: each stream gets every event
/// yielded after it was created, in order. Events wait in a per-stream buffer until read,
/// so the bridge can report unread ones when it finishes.
final class EventBroadcaster<Event: Sendable>: @unchecked Sendable {
    // @unchecked Sendable: every stored property is guarded by `lock`; continuations are
    // resumed after the lock is released.

    fileprivate struct Subscriber {
        var buffer: [Event] = []
        var head = 0
        var waiter: CheckedContinuation<Event?, Never>?
        var isFinished = false

        var unread: Int { buffer.count - head }
    }

    fileprivate let lock = Lock()
    fileprivate var subscribers: [Int: Subscriber] = [:]
    fileprivate var nextID = 0
    fileprivate var isFinished = false

    /// A new stream of the events yielded from now on.
    func stream() -> AsyncStream<Event> {
        let id: Int = lock.withLock {
            defer { nextID += 1 }
            subscribers[nextID] = Subscriber(isFinished: isFinished)
            return nextID
        }
        return AsyncStream(unfolding: { await self.next(id) }, onCancel: { self.cancel(id) })
    }

    /// Delivers an event to every stream.
    func yield(_ event: Event) {
        var waiters: [CheckedContinuation<Event?, Never>] = []
        lock.withLock {
            guard !isFinished else { return }
            for id in subscribers.keys {
                if let waiter = subscribers[id]!.waiter {
                    subscribers[id]!.waiter = nil
                    waiters.append(waiter)
                } else {
                    subscribers[id]!.buffer.append(event)
                }
            }
        }
        for waiter in waiters { waiter.resume(returning: event) }
    }

    /// Ends every stream (after its buffered events) and refuses further events.
    func finish() {
        var waiters: [CheckedContinuation<Event?, Never>] = []
        lock.withLock {
            isFinished = true
            for id in subscribers.keys {
                subscribers[id]!.isFinished = true
                if let waiter = subscribers[id]!.waiter {
                    subscribers[id]!.waiter = nil
                    waiters.append(waiter)
                }
            }
        }
        for waiter in waiters { waiter.resume(returning: nil) }
    }

    /// The events yielded but not yet read, per open stream, in order.
    var unreadEvents: [Event] {
        lock.withLock {
            subscribers.keys.sorted().flatMap { id in subscribers[id]!.buffer[subscribers[id]!.head...] }
        }
    }

    /// The number of open streams.
    var streamCount: Int { lock.withLock { subscribers.count } }

    private func next(_ id: Int) async -> Event? {
        await withCheckedContinuation { (continuation: CheckedContinuation<Event?, Never>) in
            let immediate: Event?? = lock.withLock {
                guard var subscriber = subscribers[id] else { return .some(nil) }
                if subscriber.unread > 0 {
                    let event = subscriber.buffer[subscriber.head]
                    subscriber.head += 1
                    if subscriber.head == subscriber.buffer.count {
                        subscriber.buffer.removeAll(keepingCapacity: true)
                        subscriber.head = 0
                    } else if subscriber.head > 64, subscriber.head * 2 > subscriber.buffer.count {
                        subscriber.buffer.removeFirst(subscriber.head)
                        subscriber.head = 0
                    }
                    subscribers[id] = subscriber
                    return .some(event)
                }
                if subscriber.isFinished {
                    subscribers[id] = nil
                    return .some(nil)
                }
                subscribers[id]!.waiter = continuation
                return .none
            }
            if case .some(let event) = immediate { continuation.resume(returning: event) }
        }
    }

    private func cancel(_ id: Int) {
        let waiter = lock.withLock { subscribers.removeValue(forKey: id)?.waiter }
        waiter?.resume(returning: nil)
    }
}

extension EventBroadcaster {
    /// Opens a tap: a subscriber without a stream, whose buffered events ``drain(_:)`` takes
    /// synchronously (the scenario engine reads a manager's events between steps this way).
    func openTap() -> Int {
        lock.withLock {
            defer { nextID += 1 }
            subscribers[nextID] = Subscriber(isFinished: isFinished)
            return nextID
        }
    }

    /// The events a tap received since the last drain, in order.
    func drain(_ tap: Int) -> [Event] {
        lock.withLock {
            guard let subscriber = subscribers[tap] else { return [] }
            subscribers[tap]!.buffer.removeAll(keepingCapacity: true)
            subscribers[tap]!.head = 0
            return Array(subscriber.buffer[subscriber.head...])
        }
    }

    /// Closes a tap.
    func closeTap(_ tap: Int) {
        lock.withLock { _ = subscribers.removeValue(forKey: tap) }
    }
}
