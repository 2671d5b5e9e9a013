/// Makes a failing plan minimal, one candidate at a time: it proposes a simpler plan, is told
/// whether that plan still fails (the same way), keeps it if it does, and proposes again
/// until nothing simpler fails.
///
/// A pure value with no concurrency: ``Exploration`` runs each candidate and reports back,
/// and tests drive it with any predicate. The moves, tried in this order and from the start
/// again after each one kept:
/// 1. remove a fault (the latest first);
/// 2. a plain disconnect at a heavier fault's instant, in its place (a peripheral out of range
///    or reset, a central's Bluetooth turned off: each ends links, and a link that drops is
///    the simplest way to end one), when the exploration's fault kinds include disconnects;
/// 3. roomier conditions, each on its own: ATT_MTU 517, the managers' own queues, no
///    jitter, a 30 ms interval, 4 packets per event;
/// 4. a fault aimed at the first target;
/// 5. a fault moved later: halfway to the end of the window, else a quarter or an eighth
///    of the way;
/// 6. a queue twice as large (up to 64).
/// Then, when the ATT_MTU is still below 517, a binary search finds the largest ATT_MTU that
/// still fails.
public struct ExplorationShrinker: Sendable {
    /// The simplest plan known to fail.
    public private(set) var current: ExplorationPlan
    /// The simplifications kept, in words, in order.
    public private(set) var steps: [String] = []
    /// How many candidates were proposed.
    public private(set) var tried = 0

    private let windowEnd: Duration
    private let maximumTries: Int
    /// The kinds a fault may become (a heavier fault becomes a disconnect only when it is one).
    private let faultKinds: Set<PlannedFault.Kind>
    /// The moves one step away from ``current``, in the order they are tried: each made into
    /// a plan only when proposed (all of them as plans at once would take memory in the square
    /// of the faults: a copy of the plan per move).
    private var moves: [Move] = []
    private var position = 0
    private var phase = Phase.greedy
    private var proposed: Candidate?
    /// The group of the last step kept (consecutive steps of one group read as one).
    private var lastGroup: String?

    /// A simpler plan, the step that makes it in words, and the group of steps it belongs
    /// to (moving one fault later, raising the ATT_MTU), if any.
    struct Candidate {
        var plan: ExplorationPlan
        var step: String
        var group: String?
    }

    /// One simplification of a plan, described rather than made (see ``moves``).
    enum Move {
        case removeFault(Int)
        case plainDisconnect(Int)
        case roomyMTU
        case writeQueueAsConfigured, updateQueueAsConfigured, noPhoneProfile, noJitter, roomyInterval, roomyPackets
        case firstTarget(Int)
        case later(Int, divisor: Int64)
        case largerWriteQueue, largerUpdateQueue
    }

    private enum Phase {
        case greedy
        /// Binary search of the largest failing ATT_MTU: `low` fails, `high` does not.
        case mtu(low: Int, high: Int)
        case done
    }

    /// Starts shrinking a plan known to fail; faults move at most to `windowEnd`; at most
    /// `maximumTries` candidates are proposed; a fault becomes another only of `faultKinds`
    /// (an exploration passes its budget's, so a minimal plan has only kinds it was asked to
    /// try).
    public init(
        failing plan: ExplorationPlan, windowEnd: Duration, maximumTries: Int = 300,
        faultKinds: Set<PlannedFault.Kind> = Set(PlannedFault.Kind.allCases)
    ) {
        current = plan
        self.windowEnd = windowEnd
        self.maximumTries = maximumTries
        self.faultKinds = faultKinds
        // (No move is listed when none may be tried.)
        if maximumTries > 0 { moves = Self.moves(of: plan, faultKinds: faultKinds) }
    }

    /// Whether shrinking has ended (``current`` is minimal, or the tries ran out).
    public var isFinished: Bool {
        if case .done = phase { return true }
        return tried >= maximumTries
    }

    /// The next plan to try, or `nil` when shrinking has ended. Each call must be followed
    /// by ``record(stillFails:)`` before the next.
    public mutating func next() -> ExplorationPlan? {
        precondition(proposed == nil, "ExplorationShrinker.next() called twice without record(stillFails:)")
        guard tried < maximumTries else {
            phase = .done
            return nil
        }
        while true {
            switch phase {
            case .greedy:
                while position < moves.count {
                    // A move that changes nothing here (a fault already at its latest) is skipped.
                    guard let candidate = Self.apply(moves[position], to: current, windowEnd: windowEnd) else {
                        position += 1
                        continue
                    }
                    proposed = candidate
                    tried += 1
                    return candidate.plan
                }
                let mtu = current.conditions.mtu
                phase = mtu < 517 ? .mtu(low: mtu, high: 517) : .done
            case .mtu(let low, let high):
                guard high - low > 1 else {
                    phase = .done
                    continue
                }
                var plan = current
                plan.conditions.mtu = (low + high) / 2
                proposed = Candidate(plan: plan, step: "ATT_MTU raised to \(plan.conditions.mtu)", group: "mtu")
                tried += 1
                return plan
            case .done:
                return nil
            }
        }
    }

    /// Says whether the plan ``next()`` proposed still fails in the same way.
    public mutating func record(stillFails: Bool) {
        guard let candidate = proposed else {
            preconditionFailure("ExplorationShrinker.record(stillFails:) called without a proposed plan")
        }
        proposed = nil
        if stillFails { keep(candidate) }
        switch phase {
        case .greedy:
            if stillFails {
                moves = Self.moves(of: current, faultKinds: faultKinds)
                position = 0
            } else {
                position += 1
            }
        case .mtu(let low, let high):
            let middle = (low + high) / 2
            phase = stillFails ? .mtu(low: middle, high: high) : .mtu(low: low, high: middle)
        case .done:
            break
        }
    }

    /// Keeps a candidate that still fails; consecutive steps of one group (a fault moved
    /// later and later, the ATT_MTU raised and raised) read as their last.
    private mutating func keep(_ candidate: Candidate) {
        current = candidate.plan
        if let group = candidate.group, group == lastGroup { steps.removeLast() }
        steps.append(candidate.step)
        lastGroup = candidate.group
    }

    /// The simpler plans one move away from `plan`, in the order they are tried.
    static func simplifications(
        of plan: ExplorationPlan, windowEnd: Duration,
        faultKinds: Set<PlannedFault.Kind> = Set(PlannedFault.Kind.allCases)
    ) -> [Candidate] {
        moves(of: plan, faultKinds: faultKinds).compactMap { apply($0, to: plan, windowEnd: windowEnd) }
    }

    /// The moves that may simplify `plan`, in the order they are tried (one that turns out to
    /// change nothing is skipped when it comes up).
    static func moves(of plan: ExplorationPlan, faultKinds: Set<PlannedFault.Kind>) -> [Move] {
        let faults = plan.faults.indices
        var result: [Move] = faults.reversed().map { .removeFault($0) }
        if faultKinds.contains(.disconnect) {
            result += faults.filter { Self.endsLinks(plan.faults[$0].kind) }.map { .plainDisconnect($0) }
        }
        result += [
            .roomyMTU, .writeQueueAsConfigured, .updateQueueAsConfigured, .noPhoneProfile, .noJitter, .roomyInterval,
            .roomyPackets,
        ]
        result += faults.filter { plan.faults[$0].target != 0 }.map { .firstTarget($0) }
        // Halfway to the end of the window, else a quarter, else an eighth of the way.
        for index in faults { result += [2, 4, 8].map { .later(index, divisor: $0) } }
        result += [.largerWriteQueue, .largerUpdateQueue]
        return result
    }

    /// The plan `move` makes of `plan`, with the step in words, or `nil` when it changes nothing.
    static func apply(_ move: Move, to plan: ExplorationPlan, windowEnd: Duration) -> Candidate? {
        var simpler = plan
        let roomy = LinkConditions.roomy
        func condition(_ change: (inout LinkConditions) -> Void, _ step: String, group: String? = nil) -> Candidate? {
            change(&simpler.conditions)
            return simpler.conditions == plan.conditions ? nil : Candidate(plan: simpler, step: step, group: group)
        }
        switch move {
        case .removeFault(let index):
            simpler.faults.remove(at: index)
            return Candidate(plan: simpler, step: "removed: \(plan.faults[index])")
        case .plainDisconnect(let index):
            let heavier = plan.faults[index]
            simpler.faults[index] = PlannedFault(.disconnect, at: heavier.at, target: heavier.target)
            return Candidate(
                plan: simpler, step: "a plain disconnect instead: \(simpler.faults[index]) (was: \(heavier))")
        case .roomyMTU:
            return condition({ $0.mtu = roomy.mtu }, "ATT_MTU raised to \(roomy.mtu)", group: "mtu")
        case .writeQueueAsConfigured:
            return condition(
                { $0.writeWithoutResponseQueueCapacity = nil }, "write-without-response queue as configured")
        case .updateQueueAsConfigured:
            return condition({ $0.updateQueueCapacity = nil }, "update queue as configured")
        case .noPhoneProfile:
            return condition({ $0.centralProfile = nil }, "no phone profile")
        case .noJitter:
            return condition({ $0.jitter = .zero }, "no jitter")
        case .roomyInterval:
            return condition(
                { $0.connectionInterval = roomy.connectionInterval },
                "interval \(FixtureDuration.string(roomy.connectionInterval))")
        case .roomyPackets:
            return condition(
                { $0.packetsPerConnectionEvent = roomy.packetsPerConnectionEvent },
                "\(roomy.packetsPerConnectionEvent) packets per event")
        case .firstTarget(let index):
            simpler.faults[index].target = 0
            return Candidate(plan: simpler, step: "first target: \(simpler.faults[index])")
        case .later(let index, let divisor):
            let fault = plan.faults[index]
            guard fault.at < windowEnd else { return nil }
            let later = Duration.milliseconds(
                Int64(((fault.at + (windowEnd - fault.at) / divisor) / .milliseconds(1)).rounded(.down)))
            guard later > fault.at else { return nil }
            simpler.faults[index].at = later
            return Candidate(plan: simpler, step: "moved later: \(simpler.faults[index])", group: "later \(index)")
        case .largerWriteQueue:
            guard let capacity = plan.conditions.writeWithoutResponseQueueCapacity, capacity < 64 else { return nil }
            simpler.conditions.writeWithoutResponseQueueCapacity = min(64, capacity * 2)
            return Candidate(
                plan: simpler, step: "write-without-response queue \(min(64, capacity * 2))", group: "commands")
        case .largerUpdateQueue:
            guard let capacity = plan.conditions.updateQueueCapacity, capacity < 64 else { return nil }
            simpler.conditions.updateQueueCapacity = min(64, capacity * 2)
            return Candidate(plan: simpler, step: "update queue \(min(64, capacity * 2))", group: "updates")
        }
    }

    /// Whether a fault of `kind` ends links in a heavier way than a disconnect does (what a
    /// disconnect at its instant may stand in for).
    private static func endsLinks(_ kind: PlannedFault.Kind) -> Bool {
        switch kind {
        case .outOfRange, .reset, .powerCycle, .bluetoothReset: true
        case .disconnect, .fade, .attError, .coreBluetoothError, .neverAnswered, .pairingRefused: false
        }
    }
}
