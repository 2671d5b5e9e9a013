#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Waits on a virtual clock that nothing may end, and when to report them.
///
/// Outside a run (``MockBLEBridge/run(timeLimit:stallPatience:_:)``, ``VirtualClock/run(timeLimit:stallPatience:_:)``)
/// nothing moves virtual time while a task waits: a test awaiting a manager's event, a sleep on
/// the clock or a ``MockBLEBridge/waitUntil(_:)`` ends only if other code moves time or acts.
/// When none does, the wait lasts for ever. A run reports such a wait as a stall; outside runs
/// these rules decide when one is reported instead: once it has waited a patience of wall time
/// during which virtual time stood still and nothing drove it. The wait goes on (another task
/// may still end it); the report says what waits, since when, and how to let time move.
///
/// A pure value: the clock keeps it under its lock, feeds it the wall clock's time, and
/// performs what it returns (arming a check, writing the reports).
struct QuietWaits {
    /// What waits.
    enum Wait: Sendable, Equatable {
        /// A task reading the events of a manager (its `events()` stream).
        case events(Owner)
        /// A task sleeping on the clock until an instant.
        case sleep(until: VirtualClock.Instant)
        /// A ``MockBLEBridge/waitUntil(_:)`` whose condition does not hold yet.
        case condition
        /// A ``MockBLEBridge/waitForApp(pausingSimulation:isolation:fileID:line:_:)`` whose
        /// condition does not hold yet, called at `site` (`file:line`).
        case appCondition(site: String)
        /// A caller of an operation of the async API (a connect, a read, `waitForPoweredOn`)
        /// suspended until something outside the simulation lets it go on: what the operation is
        /// (its manager, name and peripheral), and what it waits for.
        case operation(String, needs: String)
    }

    /// The manager whose events a stream reads.
    enum Owner: Sendable, Equatable {
        case central(UUID)
        case peripheral(UUID)
    }

    /// A wait being watched.
    struct Entry {
        var wait: Wait
        /// The virtual time when the quiet stretch began (the wait began, or time last moved).
        var since: VirtualClock.Instant
        /// The wall-clock time the quiet stretch began.
        var wallStart: ContinuousClock.Instant
        /// Whether it has been reported (once per wait).
        var reported = false
    }

    /// A wait to report: what waits, the virtual time it has waited at, and for how long.
    struct Report: Equatable {
        var wait: Wait
        var since: VirtualClock.Instant
        var waited: Duration
    }

    /// The waits being watched, by token.
    private(set) var entries: [Int: Entry] = [:]
    private var nextToken = 0
    /// Whether a check is armed (one at a time).
    private(set) var isArmed = false

    /// A wait begins at virtual time `now`, wall time `wall`: its token, and how long from now to
    /// arm a check after when none is armed.
    mutating func begin(
        _ wait: Wait, now: VirtualClock.Instant, wall: ContinuousClock.Instant, patience: Duration
    ) -> (token: Int, armAfter: Duration?) {
        let token = nextToken
        nextToken += 1
        entries[token] = Entry(wait: wait, since: now, wallStart: wall)
        guard !isArmed else { return (token, nil) }
        isArmed = true
        return (token, Self.checkDelay(patience))
    }

    /// A wait ended (its event came, it was cancelled, its stream went).
    mutating func end(_ token: Int) {
        entries.removeValue(forKey: token)
    }

    /// The armed check, at virtual time `now` and wall time `wall`: the waits that have been
    /// quiet for `patience` (reported once each), and when to check again, if any wait is left
    /// unreported. `driven` says whether something moves the clock's time by itself now (a run,
    /// or the wall clock): a wait then is not quiet, and its stretch starts again.
    mutating func check(
        now: VirtualClock.Instant, wall: ContinuousClock.Instant, driven: Bool, patience: Duration
    ) -> (reports: [Report], armAfter: Duration?) {
        var reports: [Report] = []
        var soonest: Duration?
        for token in entries.keys.sorted() {
            guard var entry = entries[token], !entry.reported else { continue }
            if driven || entry.since != now {
                entry.since = now
                entry.wallStart = wall
            }
            let waited = entry.wallStart.duration(to: wall)
            if waited >= patience {
                entry.reported = true
                reports.append(Report(wait: entry.wait, since: entry.since, waited: waited))
            } else {
                let left = patience - waited
                soonest = min(soonest ?? left, left)
            }
            entries[token] = entry
        }
        isArmed = soonest != nil
        return (reports, soonest.map(Self.checkDelay))
    }

    /// How long to wait before a check due in `delay`: at least a millisecond, so a patience of
    /// zero does not spin.
    private static func checkDelay(_ delay: Duration) -> Duration {
        max(delay, .milliseconds(1))
    }
}

extension QuietWaits {
    /// The text of `report`, for a wait on the clock of a bridge described by `bridge` (its seed
    /// and whether its timing is fast: `nil` for a clock of its own).
    static func message(_ report: Report, bridge: (seed: UInt64, fast: Bool)?) -> String {
        let fast = bridge?.fast == true
        let what: String
        let needs: String
        switch report.wait {
        case .events(.central(let identifier)):
            what = "a task reading the events of MockCentralManager \(identifier)"
            needs =
                fast
                ? "the event it waits for"
                : "an event that needs time (an advertisement, a connection event, a timeout)"
        case .events(.peripheral(let identifier)):
            what = "a task reading the events of MockPeripheralManager \(identifier)"
            needs = fast ? "the event it waits for" : "an event that needs time (a connection event, a timeout)"
        case .sleep(let deadline):
            what = "a task sleeping on the clock until \(deadline)"
            needs = "its deadline"
        case .condition:
            what = "a bridge.waitUntil { … }"
            needs = fast ? "the change it waits for" : "a change that needs time"
        case .appCondition(let site):
            what = "a bridge.waitForApp { … } at \(site)"
            needs = fast ? "the change it waits for" : "a change that needs time"
        case .operation(let operation, let awaited):
            what = "a task awaiting \(operation)"
            needs = awaited
        }
        let why =
            fast
            ? "Outside a run, in fast mode, an event comes only when code calls the bridge, so "
            : "Outside a run nothing moves virtual time while a task waits, so "
        let place: String
        let others: String
        let remedy: String
        if let bridge {
            place = "a MockBLEBridge (seed \(bridge.seed), \(fast ? "fast mode" : "realistic timing"))"
            others = "moves time or acts on the bridge"
            remedy =
                "Step time with `await bridge.advance(by:)` before waiting, or wait inside `bridge.run { }` (or "
                + "the `.mockBridge` trait), where time drives itself and a wait that cannot end throws "
                + "MockBLEBridge.Stall with the seed."
        } else {
            place = "a VirtualClock"
            others = "advances the clock"
            remedy =
                "Advance the clock from the test (`clock.advance(by:)`), or run the code in `clock.run { }`, "
                + "where time drives itself."
        }
        let head =
            "\(what), on \(place), has waited \(WaitReporting.tenths(report.waited)) s of wall time with virtual time "
            + "standing at \(report.since) and nothing driving it. "
        if case .operation = report.wait {
            // The simulation ran the operation as far as it can go by itself: what it waits for
            // is something only other code does (or time a run would move).
            return head
                + "It waits for \(needs), which outside a run only other code of the test brings about: if none "
                + "\(others), this wait never ends. \(remedy)"
        }
        return head
            + "\(why)\(needs) never comes: if no other code of the test \(others), this wait never ends. \(remedy)"
    }

}
