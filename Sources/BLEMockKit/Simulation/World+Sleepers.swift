/// Identifies a task sleeping on a bridge's clock (``MockBLEBridge/clock``): its wake-up is a
/// ``World/ScheduledEvent/wake(_:)`` event on the world's schedule. Ids grow in the order the
/// sleeps began.
struct SleeperID: Hashable, Comparable, Sendable, CustomStringConvertible {
    let rawValue: UInt64

    static func < (lhs: SleeperID, rhs: SleeperID) -> Bool { lhs.rawValue < rhs.rawValue }

    var description: String { "sleeper \(rawValue)" }
}

extension World {
    /// A sleeper and when it wakes.
    struct Sleeper: Hashable, Sendable {
        var id: SleeperID
        var deadline: VirtualClock.Instant
    }

    /// Schedules the wake-up of a task that sleeps on the bridge's clock until `deadline`, and
    /// returns its id; returns `nil`, scheduling nothing, when `deadline` is not after `now`
    /// (that sleep ends at once).
    ///
    /// The wake-up is an event on the one schedule, so sleepers wake in time order among link
    /// events, advertisements, faults and timeouts. At its deadline a sleeper wakes after
    /// every other event due then, even one scheduled later (the task wakes to a world that
    /// has done everything due at that instant: a fault scheduled for it has happened);
    /// sleepers due at the same instant wake in the order their sleeps began.
    mutating func sleep(until deadline: VirtualClock.Instant) -> SleeperID? {
        guard deadline > now else { return nil }
        let id = SleeperID(rawValue: nextSleeperID)
        nextSleeperID += 1
        schedule.scheduleAfterEventsDue(.wake(id), at: deadline)
        sleeperCount += 1
        return id
    }

    /// A sleeper's task was cancelled: its wake-up leaves the schedule. Does nothing if it has
    /// woken already.
    mutating func cancelSleep(_ id: SleeperID) {
        if schedule.removeFirst(where: { $0 == .wake(id) }) { sleeperCount -= 1 }
    }

    /// The sleepers still to wake, in the order they will.
    var sleepers: [Sleeper] {
        guard sleeperCount > 0 else { return [] }
        return schedule.ordered(where: \.isWake).compactMap { entry in
            guard case .wake(let id) = entry.event else { return nil }
            return Sleeper(id: id, deadline: entry.deadline)
        }
    }

    /// Whether anything besides sleepers' wake-ups is scheduled.
    var hasEventsBesidesSleepers: Bool { schedule.count > sleeperCount }

    /// A sleeper's deadline has come (`now` is at it): the bridge resumes its task.
    mutating func wake(_ id: SleeperID) {
        sleeperCount -= 1
        effects.append(.wake(id))
    }
}

extension World.ScheduledEvent {
    /// Whether this is a sleeper's wake-up.
    var isWake: Bool {
        if case .wake = self { return true }
        return false
    }
}
