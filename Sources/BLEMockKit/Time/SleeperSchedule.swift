/// The pure, lock-free bookkeeping behind a standalone ``VirtualClock``: the current instant
/// and the pending sleepers, ordered by (deadline, sequence). (A bridge's clock has none: its
/// sleepers are wake-up events on the world's schedule.)
///
/// It has no concurrency of its own: ``VirtualClock`` keeps one behind its lock, and tests
/// drive it synchronously with plain values as waiters. Its rules are the clock's rules:
///
/// - `now` never decreases.
/// - A sleeper whose deadline is not after `now` is never stored (it is due at once).
/// - Sleepers leave in (deadline, sequence) order, and `now` is set to a sleeper's deadline
///   as it leaves, before the caller resumes it.
/// - Sequence numbers are handed out in increasing order and never reused, so sleepers with
///   equal deadlines leave in the order their sequence numbers were taken.
struct SleeperSchedule<Waiter> {
    typealias Instant = VirtualClock.Instant

    /// Orders sleepers: earlier deadline first, then lower sequence number.
    struct Key: Hashable, Comparable {
        var deadline: Instant
        var sequence: UInt64

        static func < (lhs: Key, rhs: Key) -> Bool {
            (lhs.deadline, lhs.sequence) < (rhs.deadline, rhs.sequence)
        }
    }

    /// What happened to a sleeper handed to ``register(_:deadline:sequence:)``.
    enum Registration: Equatable {
        /// The sleeper is stored and will leave through ``popNext(through:)`` or ``remove(deadline:sequence:)``.
        case suspended
        /// The deadline is not after `now`: nothing was stored and the sleeper is due at once.
        case deadlineReached
    }

    /// The current instant. Never decreases.
    private(set) var now: Instant

    private var nextSequence: UInt64 = 0

    /// Pending sleepers sorted by *descending* key, so the earliest is removed from the end.
    private var entries: [(key: Key, waiter: Waiter)] = []

    /// Creates an empty schedule starting at `now`.
    init(now: Instant) {
        self.now = now
    }

    /// The number of pending sleepers.
    var count: Int { entries.count }

    /// The earliest pending deadline, if any.
    var nextDeadline: Instant? { entries.last?.key.deadline }

    /// The latest pending deadline, if any.
    var lastDeadline: Instant? { entries.first?.key.deadline }

    /// The pending keys in wake order (earliest first), for tests and diagnostics.
    var pendingKeys: [Key] { entries.reversed().map(\.key) }

    /// Hands out the next sequence number.
    mutating func makeSequence() -> UInt64 {
        defer { nextSequence += 1 }
        return nextSequence
    }

    /// Stores a sleeper unless its deadline has already been reached.
    mutating func register(_ waiter: Waiter, deadline: Instant, sequence: UInt64) -> Registration {
        guard deadline > now else { return .deadlineReached }
        let key = Key(deadline: deadline, sequence: sequence)
        entries.insert((key, waiter), at: insertionIndex(for: key))
        return .suspended
    }

    /// Removes and returns the sleeper stored under (deadline, sequence), if it is still
    /// pending (it is not after it has been popped or removed).
    mutating func remove(deadline: Instant, sequence: UInt64) -> Waiter? {
        let key = Key(deadline: deadline, sequence: sequence)
        let index = insertionIndex(for: key)
        guard entries.indices.contains(index), entries[index].key == key else { return nil }
        return entries.remove(at: index).waiter
    }

    /// Removes and returns the earliest sleeper if its deadline is at or before `target`,
    /// first moving `now` to that deadline. If no sleeper is due, moves `now` to `target`
    /// (when that is later) and returns `nil`, in one step, so that no sleeper due by
    /// `target` can be left behind.
    mutating func popNext(through target: Instant) -> Waiter? {
        guard let earliest = entries.last, earliest.key.deadline <= target else {
            now = max(now, target)
            return nil
        }
        entries.removeLast()
        now = max(now, earliest.key.deadline)
        return earliest.waiter
    }

    /// The index at which `key` keeps `entries` sorted in descending order: the number of
    /// entries whose key is greater than `key`.
    private func insertionIndex(for key: Key) -> Int {
        var low = 0
        var high = entries.count
        while low < high {
            let middle = (low + high) / 2
            if entries[middle].key > key {
                low = middle + 1
            } else {
                high = middle
            }
        }
        return low
    }
}
