import BLECore

/// Everything one exploration run is made of: the seed of its bridge, its link conditions
/// and its fault schedule. The same plan and the same test body give the same run, byte for
/// byte: a plan is how a failure found by exploring is replayed
/// (``Exploration/replay(_:timeLimit:stallPatience:failsOnLeftovers:_:)``).
public struct ExplorationPlan: Sendable, Hashable {
    /// The bridge's seed (every random draw of the run).
    public var seed: UInt64
    /// The link conditions imposed on every link.
    public var conditions: LinkConditions
    /// The faults, each at its virtual time from the run's start.
    public var faults: [PlannedFault]

    /// Creates a plan.
    public init(seed: UInt64, conditions: LinkConditions = .roomy, faults: [PlannedFault] = []) {
        self.seed = seed
        self.conditions = conditions
        self.faults = faults
    }

    /// Why the plan cannot be run as written, if so: the first fault with a
    /// ``PlannedFault/problem``, by its index (`faults[2]: …`).
    /// ``Exploration/replay(_:timeLimit:stallPatience:failsOnLeftovers:_:)`` refuses such a plan.
    public var problem: String? {
        for (index, fault) in faults.enumerated() {
            if let problem = fault.problem {
                return "faults[\(index)] (\(fault.kind) at \(FixtureDuration.string(fault.at))): \(problem)"
            }
        }
        return nil
    }

    /// The configuration of the run's bridge: realistic timing with the plan's conditions.
    public var configuration: MockBLEBridge.Configuration {
        MockBLEBridge.Configuration(seed: seed, timing: conditions.timing, limits: conditions.limits)
    }

    /// Draws the plan of `seed` within `budget`, faults falling in `window`. The draws come
    /// from a stream of their own (derived from the seed by the name `"exploration"`), so
    /// the plan takes nothing from the bridge's draws.
    ///
    /// Each seed draws from a random subset of the budget's fault kinds (swarm testing). An
    /// injected-error fault aims, three times in four, at one of `targets` its kind can fail
    /// (the operations a calibration run made, ``ExplorationOutcome/targets``), drawn evenly:
    /// "the next write on the control characteristic", rather than "the next write". A rare
    /// operation is then hit as often as a frequent one. A ``PlannedFault/Kind/bluetoothReset``
    /// (unless it is the budget's only kind) is drawn after the others, for one seed in four
    /// whose plan has room for another fault, so a seed's other faults and conditions are those
    /// drawn before the kind existed.
    ///
    /// A budget with a ``ExplorationBudget/problem`` (which ``Exploration`` refuses) is drawn
    /// from as if each of its ranges were brought within the range the problem names, and
    /// `window` within ``ExplorationBudget/durations``: a plan is drawn in bounded time, within
    /// what a bridge accepts, rather than trapping on a duration no plan holds.
    public static func draw(
        seed: UInt64, budget: ExplorationBudget, window: ClosedRange<Duration>, targets: [PlannedFault.Target] = []
    ) -> ExplorationPlan {
        draw(seed: seed, budget: budget, window: window, targets: targets, targetTimes: [:])
    }

    /// ``draw(seed:budget:window:targets:)``, knowing when the calibration run made each target
    /// (``ExplorationOutcome/targetTimes``): an injected error that aims at one made before the
    /// window's end (a connection, a discovery, a subscription made once, at the start) has its
    /// time brought, in proportion, before that instant, so it is armed when the operation
    /// comes; drawn anywhere in the window it would mostly come after the app's only such
    /// operation and never fire. (No draw is added: the other faults are drawn as before.)
    static func draw(
        seed: UInt64, budget: ExplorationBudget, window: ClosedRange<Duration>, targets: [PlannedFault.Target],
        targetTimes: [PlannedFault.Target: Duration]
    ) -> ExplorationPlan {
        let budget = budget.clampedForDrawing
        let window = window.clamped(to: ExplorationBudget.durations)
        var random = SeededGenerator(seed: seed).derived("exploration")
        let conditions = drawConditions(budget, &random)
        var faults: [PlannedFault] = []
        // A Bluetooth reset, the newest kind, is drawn apart, after the others (unless it is the
        // budget's only kind): a seed's plan is then the one earlier versions drew, a reset added.
        let resetApart = budget.faultKinds.contains(.bluetoothReset) && budget.faultKinds.count > 1
        let kinds = swarm(budget.orderedKinds.filter { !resetApart || $0 != .bluetoothReset }, &random)
        let timeout = conditions.timing.supervisionTimeout
        if !kinds.isEmpty {
            let count = random.int(in: max(0, budget.faultCount.lowerBound)...max(0, budget.faultCount.upperBound))
            for _ in 0..<count {
                if var fault = drawFault(kinds, budget, window: window, timeout: timeout, &random) {
                    if fault.kind.isInjection {
                        aim(&fault, among: targets, budget, &random)
                        if let aim = fault.aim, let made = targetTimes[aim] {
                            fault.at = before(made, asked: aim.operation == .connect, fault.at, in: window)
                        }
                    }
                    faults.append(fault)
                }
            }
        }
        // One seed in four with room for another fault gets a reset: about as many as a kind
        // drawn the other way.
        if resetApart, faults.count < budget.faultCount.upperBound, random.bool(probability: 0.25),
            let reset = drawFault([.bluetoothReset], budget, window: window, timeout: timeout, &random)
        {
            faults.append(reset)
        }
        faults.sort { ($0.at, $0.kind) < ($1.at, $1.kind) }
        return ExplorationPlan(seed: seed, conditions: conditions, faults: faults)
    }

    private static func drawConditions(_ budget: ExplorationBudget, _ random: inout SeededGenerator)
        -> LinkConditions
    {
        let mtuRange = budget.mtu.clamped(to: MTUMode.validRange)
        let realWorld = MTUMode.realWorldValues.filter(mtuRange.contains)
        let mtu =
            !realWorld.isEmpty && random.bool(probability: 0.5)
            ? realWorld[random.int(in: 0..<realWorld.count)] : random.int(in: mtuRange)
        // Connection intervals are whole multiples of 1.25 ms (Core, Vol 6, Part B, 4.5.1).
        let unit = Duration.microseconds(1_250)
        let lowest = Int((budget.connectionInterval.lowerBound / unit).rounded(.up))
        let highest = max(lowest, Int((budget.connectionInterval.upperBound / unit).rounded(.down)))
        let interval = unit * random.int(in: lowest...highest)
        // Jitter in whole tenths of a millisecond, never more than the interval.
        let tenth = Duration.microseconds(100)
        let jitterTop = min(budget.jitter.upperBound, interval)
        let jitterSteps = max(0, Int((jitterTop / tenth).rounded(.down)))
        let jitterLow = min(jitterSteps, max(0, Int((budget.jitter.lowerBound / tenth).rounded(.up))))
        let jitter = tenth * random.int(in: jitterLow...jitterSteps)
        let packets = random.int(
            in: max(
                1, budget.packetsPerConnectionEvent.lowerBound)...max(
                    1, budget.packetsPerConnectionEvent.upperBound))
        let commands = budget.writeWithoutResponseQueueCapacity.map {
            random.int(in: max(1, $0.lowerBound)...max(1, $0.upperBound))
        }
        let updates = budget.updateQueueCapacity.map { random.int(in: max(1, $0.lowerBound)...max(1, $0.upperBound)) }
        // Drawn last, and only from a budget with profiles: other budgets draw as before.
        let profile = budget.profiles.isEmpty ? nil : budget.profiles[random.int(in: 0..<budget.profiles.count)]
        return LinkConditions(
            mtu: mtu, connectionInterval: interval, jitter: jitter, packetsPerConnectionEvent: packets,
            writeWithoutResponseQueueCapacity: commands, updateQueueCapacity: updates, centralProfile: profile)
    }

    /// Draws a fault; `timeout` is the supervision timeout of the run's links (720 ms but for
    /// intervals of 360 ms or more: see ``LinkConditions/timing``).
    private static func drawFault(
        _ kinds: [PlannedFault.Kind], _ budget: ExplorationBudget, window: ClosedRange<Duration>,
        timeout: Duration, _ random: inout SeededGenerator
    ) -> PlannedFault? {
        let kind = kinds[random.int(in: 0..<kinds.count)]
        let at = wholeMilliseconds(random.duration(in: window))
        let target = random.int(in: 0...3)
        var fault = PlannedFault(kind, at: at, target: target)
        switch kind {
        case .outOfRange:
            // Longer than the supervision timeout, so links drop.
            let shortest = max(budget.faultDuration.lowerBound, timeout + .milliseconds(100))
            fault.duration = wholeMilliseconds(
                random.duration(in: shortest...max(shortest, budget.faultDuration.upperBound)))
        case .fade:
            // Shorter than the supervision timeout, so links survive.
            fault.duration = wholeMilliseconds(random.duration(in: .milliseconds(50)...(timeout - .milliseconds(120))))
        case .powerCycle, .bluetoothReset:
            fault.duration = wholeMilliseconds(random.duration(in: budget.faultDuration))
        case .disconnect:
            let errors: [CoreBluetoothError.Code] = [.connectionTimeout, .peripheralDisconnected, .unknown]
            fault.coreBluetoothError = errors[random.int(in: 0..<errors.count)]
        case .attError:
            // Only an ATT request has an ATT error response (not a connect or an RSSI read).
            let operations = budget.operations.filter(\.isATTRequest).sorted { $0.rawValue < $1.rawValue }
            guard !operations.isEmpty, !budget.attErrors.isEmpty else { return nil }
            fault.operation = operations[random.int(in: 0..<operations.count)]
            fault.attError = budget.attErrors[random.int(in: 0..<budget.attErrors.count)]
        case .coreBluetoothError:
            guard budget.operations.contains(.connect) else { return nil }
            fault.operation = .connect
            fault.coreBluetoothError = .connectionFailed
        case .neverAnswered:
            let operations = budget.operations.intersection([.read, .write, .subscribe]).sorted {
                $0.rawValue < $1.rawValue
            }
            guard !operations.isEmpty else { return nil }
            fault.operation = operations[random.int(in: 0..<operations.count)]
        case .reset, .pairingRefused:
            break
        }
        return fault
    }

    /// The fault kinds one seed draws from: each of the budget's, one time in two, and at least
    /// one ("swarm testing": a seed with few kinds gets more of each, so faults that a busier
    /// mix would mask, or that are rarely drawn, get seeds of their own).
    private static func swarm(_ kinds: [PlannedFault.Kind], _ random: inout SeededGenerator) -> [PlannedFault.Kind] {
        guard kinds.count > 1 else { return kinds }
        let chosen = kinds.filter { _ in random.bool(probability: 0.5) }
        return chosen.isEmpty ? [kinds[random.int(in: 0..<kinds.count)]] : chosen
    }

    /// Aims an injected-error fault, three times in four, at one of the targets its kind can fail.
    /// (Nothing is drawn when there is no target, so plans drawn without targets are as before.)
    private static func aim(
        _ fault: inout PlannedFault, among targets: [PlannedFault.Target], _ budget: ExplorationBudget,
        _ random: inout SeededGenerator
    ) {
        let allowed: Set<ErrorInjection.Operation> =
            switch fault.kind {
            case .attError: budget.operations.filter(\.isATTRequest)
            case .coreBluetoothError: budget.operations.intersection([.connect])
            case .neverAnswered: budget.operations.intersection([.read, .write, .subscribe])
            default: []
            }
        let candidates = targets.filter { allowed.contains($0.operation) }
        guard !candidates.isEmpty, random.bool(probability: 0.75) else { return }
        let target = candidates[random.int(in: 0..<candidates.count)]
        fault.operation = target.operation
        fault.characteristic = target.characteristic
    }

    /// `at`, drawn in `window`, brought in proportion into the part of the window before an
    /// operation made at `made`. An injected error is taken as the operation is asked for: a
    /// connection's instant is that (`asked`), the part ends a millisecond before it; the other
    /// operations' instants are their answers', a few connection events after the request, and
    /// the part ends 100 ms before.
    private static func before(_ made: Duration, asked: Bool, _ at: Duration, in window: ClosedRange<Duration>)
        -> Duration
    {
        let end = made - .milliseconds(asked ? 1 : 100)
        guard end < window.upperBound else { return at }
        guard end > window.lowerBound, window.upperBound > window.lowerBound else { return window.lowerBound }
        let fraction = (at - window.lowerBound) / (window.upperBound - window.lowerBound)
        return wholeMilliseconds(window.lowerBound + (end - window.lowerBound) * fraction)
    }

    private static func wholeMilliseconds(_ duration: Duration) -> Duration {
        .milliseconds(Int64((duration / .milliseconds(1)).rounded(.down)))
    }
}

extension ExplorationPlan: CustomStringConvertible {
    /// The plan in words: the seed, the conditions and each fault.
    public var description: String {
        let faultText =
            faults.isEmpty ? "no faults" : faults.map { "- \($0)" }.joined(separator: "\n")
        return "seed \(seed); \(conditions)\n\(faultText)"
    }
}
