import BLECore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

extension World {
    /// Something scheduled to happen at a virtual time.
    enum ScheduledEvent: Sendable, Equatable {
        /// A peripheral sends an advertisement (repeating at its interval while anyone scans).
        case advertise(peripheral: UUID)
        /// One of a peripheral's additional advertising sets sends its advertisement.
        case advertiseSet(peripheral: UUID, index: Int)
        /// A connect call gives up.
        case connectionTimeout(OperationID)
        /// A connection attempt's latency has passed.
        case linkEstablished(LinkKey)
        /// A manager's state moves on by itself (realistic state transitions).
        case stateStep(Manager, ManagerState)
        /// A connection event of the link in a slot: packets cross both ways.
        case connectionEvent(slot: Int, generation: Int)
        /// Pairing on a link ends, for operation `id`.
        case pairingDone(LinkKey, generation: Int, OperationID)
        /// A fault a test scheduled, by its place in ``World/scheduledFaults`` (the event itself
        /// holds plain data only, so the schedule copies its entries without retaining anything).
        case fault(index: Int)
        /// A peripheral out of range for the supervision timeout loses its links.
        case supervisionTimeout(UUID)
        /// The central of a link whose peripheral reset notices it: the supervision timeout.
        case peerLost(LinkKey, generation: Int)
        /// An exploration's fault (by its index in the plan) fires.
        case planned(index: Int)
        /// A lasting exploration fault on `target` ends.
        case plannedEnd(index: Int, target: UUID)
        /// A task sleeping on the bridge's clock wakes (see ``World/sleep(until:)``).
        case wake(SleeperID)
        /// A link's ATT transaction timer: the request outstanding may have waited too long.
        case transactionTimer(LinkKey, generation: Int)
        /// A relaunched app's manager (a central once powered on) gets the events held while its
        /// app was gone.
        case releaseHeld(Manager)
    }

    /// Schedules a fault a test asked for at `instant`.
    mutating func scheduleFault(_ fault: Fault, at instant: VirtualClock.Instant) {
        let index = nextFaultIndex
        nextFaultIndex += 1
        scheduledFaults[index] = fault
        schedule.schedule(.fault(index: index), at: instant)
    }

    /// The deadline of the next scheduled event.
    var nextDeadline: VirtualClock.Instant? { schedule.nextDeadline }

    /// Runs the next scheduled event if it is due at or before `limit`, first moving `now` to
    /// its deadline; returns whether one ran.
    @discardableResult
    mutating func runNextEvent(dueBy limit: VirtualClock.Instant) -> Bool {
        guard let next = schedule.nextDeadline, next <= limit else { return false }
        return runNextEvent()
    }

    /// Runs the next scheduled event, however far ahead, first moving `now` to its deadline;
    /// returns whether there was one.
    @discardableResult
    mutating func runNextEvent() -> Bool {
        guard let deadline = schedule.nextDeadline, let entry = schedule.popFirst(dueBy: deadline) else { return false }
        if entry.deadline > now { now = entry.deadline }
        handle(entry.event)
        return true
    }

    /// Moves `now` forward to `instant` without running anything (callers run what is due
    /// first). Time never goes backwards.
    mutating func moveTime(to instant: VirtualClock.Instant) {
        if instant > now { now = instant }
    }

    private mutating func handle(_ event: ScheduledEvent) {
        switch event {
        case .advertise(let peripheral): advertisementDue(from: peripheral)
        case .advertiseSet(let peripheral, let index): advertisingSetDue(from: peripheral, index: index)
        case .connectionTimeout(let id): connectionTimedOut(id)
        case .linkEstablished(let key): finishAttempt(key)
        case .stateStep(let manager, let state): setState(manager, to: state, automatic: true)
        case .connectionEvent(let slot, let generation): connectionEvent(slot: slot, generation: generation)
        case .pairingDone(let key, let generation, let id): pairingDone(key, generation: generation, operation: id)
        case .fault(let index):
            if let fault = scheduledFaults.removeValue(forKey: index) { apply(fault) }
        case .planned(let index): firePlanned(index)
        case .plannedEnd(let index, let target): endPlanned(index, target: target)
        case .supervisionTimeout(let peripheral): supervisionTimedOut(peripheral)
        case .wake(let id): wake(id)
        case .transactionTimer(let key, let generation): transactionTimerFired(key, generation: generation)
        case .releaseHeld(let manager): releaseHeld(manager)
        case .peerLost(let key, let generation):
            guard links[key]?.generation == generation else { return }
            let error = CoreBluetoothError(.connectionTimeout)
            tearDown(key, reason: error, pendingError: error)
        }
    }

    // MARK: Seeded draws of time

    /// One connection interval of `timing` (or the `negotiated` one of a link with profiles or
    /// a peripheral's own preference) with jitter drawn from `random` (zero with instant
    /// timing). The jitter is at most the interval it varies: the timing's is checked against
    /// its own interval and the profiles', not against a peripheral's own.
    static func connectionInterval(
        _ timing: LinkTiming, negotiated: Duration? = nil, using random: inout SeededGenerator
    ) -> Duration {
        guard timing.connectionInterval > .zero else { return .zero }
        let interval = negotiated ?? timing.connectionInterval
        let spread = min(timing.jitter, interval)
        let jitter = spread > .zero ? random.duration(in: (.zero - spread)...spread) : .zero
        return max(interval + jitter, .milliseconds(1))
    }

    /// One connection interval before a link exists (the MTU exchange), from the central's stream.
    mutating func connectionInterval(forCentral central: UUID) -> Duration {
        guard timing.connectionInterval > .zero else { return .zero }
        guard centrals.contains(central) else { return timing.connectionInterval }
        return Self.connectionInterval(timing, using: &centrals[central]!.random.connection)
    }

    /// A connection latency in `range`, from the central's own stream.
    mutating func drawLatency(in range: ClosedRange<Duration>, forCentral central: UUID) -> Duration {
        guard range.lowerBound != range.upperBound, centrals.contains(central) else { return range.lowerBound }
        return centrals[central]!.random.connection.duration(in: range)
    }
}
