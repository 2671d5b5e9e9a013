import BLECore

/// What an exploration may draw for each seed: the ranges of the link conditions, and the
/// fault budget (which kinds, how many, when, how long).
///
/// The defaults cover what real phones and peripherals do; narrow them to what a test is
/// about:
///
/// ```swift
/// var budget = ExplorationBudget()
/// budget.faultKinds = [.disconnect, .outOfRange]
/// budget.faultCount = 0...2
/// budget.mtu = 23...185
/// ```
public struct ExplorationBudget: Sendable, Hashable {
    /// The kinds of fault that may be drawn. Defaults to every kind.
    public var faultKinds: Set<PlannedFault.Kind>
    /// How many faults a run gets. Defaults to 0…3.
    public var faultCount: ClosedRange<Int>
    /// When faults fire, in virtual time from the run's start. `nil` (the default) takes the
    /// length of a fault-free run of the body (at least 100 ms), measured once at the start of
    /// the exploration, so faults land while the body is at work.
    public var window: ClosedRange<Duration>?
    /// How long an ``PlannedFault/Kind/outOfRange``, ``PlannedFault/Kind/powerCycle`` or
    /// ``PlannedFault/Kind/bluetoothReset`` lasts.
    /// Defaults to 1…4 s.
    public var faultDuration: ClosedRange<Duration>
    /// The ATT_MTU range: each run's links negotiate the value drawn, whatever the managers
    /// prefer. Defaults to 23…517 (half the draws are values real devices negotiate, half any
    /// value in the range).
    public var mtu: ClosedRange<Int>
    /// The connection interval range. Defaults to 7.5…50 ms.
    public var connectionInterval: ClosedRange<Duration>
    /// The jitter range (never more than the drawn interval). Defaults to 0…2 ms.
    public var jitter: ClosedRange<Duration>
    /// The range of packets per connection event. Defaults to 1…6.
    public var packetsPerConnectionEvent: ClosedRange<Int>
    /// The range of write-without-response queue capacities, or `nil` to keep the managers'
    /// own. Defaults to 1…20.
    public var writeWithoutResponseQueueCapacity: ClosedRange<Int>?
    /// The range of notification queue capacities, or `nil` to keep the managers' own.
    /// Defaults to 1…20.
    public var updateQueueCapacity: ClosedRange<Int>?
    /// The central operations an injected error may hit. Defaults to every central operation
    /// but reading RSSI and opening an L2CAP channel.
    public var operations: Set<ErrorInjection.Operation>
    /// The ATT errors an ``PlannedFault/Kind/attError`` may answer with. Defaults to
    /// unlikely error (0x0E), insufficient resources (0x11) and an application error (0x80).
    /// 0x00 (success) is not an error, and a budget with it is refused.
    public var attErrors: [ATTError.Code]
    /// The phones a run may be on: each plan draws one evenly as its
    /// ``LinkConditions/centralProfile`` (e.g. ``LinkProfile/phones``). Defaults to none: no
    /// profile, and plans are drawn as before profiles existed.
    public var profiles: [LinkProfile] = []

    /// Creates a budget; every argument has the default described on its property.
    public init(
        faultKinds: Set<PlannedFault.Kind> = Set(PlannedFault.Kind.allCases), faultCount: ClosedRange<Int> = 0...3,
        window: ClosedRange<Duration>? = nil,
        faultDuration: ClosedRange<Duration> = .seconds(1) ... .seconds(4), mtu: ClosedRange<Int> = 23...517,
        connectionInterval: ClosedRange<Duration> = .microseconds(7_500) ... .milliseconds(50),
        jitter: ClosedRange<Duration> = .zero ... .milliseconds(2),
        packetsPerConnectionEvent: ClosedRange<Int> = 1...6,
        writeWithoutResponseQueueCapacity: ClosedRange<Int>? = 1...20, updateQueueCapacity: ClosedRange<Int>? = 1...20,
        operations: Set<ErrorInjection.Operation> = [
            .connect, .serviceDiscovery, .characteristicDiscovery, .descriptorDiscovery, .read, .write, .subscribe,
        ],
        attErrors: [ATTError.Code] = [.unlikelyError, .insufficientResources, ATTError.Code(rawValue: 0x80)]
    ) {
        self.faultKinds = faultKinds
        self.faultCount = faultCount
        self.window = window
        self.faultDuration = faultDuration
        self.mtu = mtu
        self.connectionInterval = connectionInterval
        self.jitter = jitter
        self.packetsPerConnectionEvent = packetsPerConnectionEvent
        self.writeWithoutResponseQueueCapacity = writeWithoutResponseQueueCapacity
        self.updateQueueCapacity = updateQueueCapacity
        self.operations = operations
        self.attErrors = attErrors
    }

    /// Link conditions only: no faults.
    public static var conditionsOnly: ExplorationBudget { ExplorationBudget(faultKinds: [], faultCount: 0...0) }

    /// What is wrong with the budget, or `nil`: an exploration with a bad budget runs nothing
    /// and reports the problem.
    public var problem: String? {
        let owner = "ExplorationBudget"
        return ConfigurationProblems.first([
            faultCount.lowerBound >= 0 && faultCount.upperBound <= Self.maximumFaultCount
                ? nil
                : ConfigurationProblems.outside(
                    "\(owner).faultCount", "\(faultCount)", "0…\(Self.maximumFaultCount)"),
            ConfigurationProblems.check("\(owner).mtu.lowerBound", mtu.lowerBound, in: MTUMode.validRange),
            ConfigurationProblems.check("\(owner).mtu.upperBound", mtu.upperBound, in: MTUMode.validRange),
            ConfigurationProblems.check(
                "\(owner).connectionInterval.lowerBound", connectionInterval.lowerBound,
                in: ConfigurationProblems.connectionIntervals),
            ConfigurationProblems.check(
                "\(owner).connectionInterval.upperBound", connectionInterval.upperBound,
                in: ConfigurationProblems.connectionIntervals),
            ConfigurationProblems.check("\(owner).jitter", nonNegative: jitter.lowerBound),
            ConfigurationProblems.check(
                "\(owner).packetsPerConnectionEvent", atLeast: 1, packetsPerConnectionEvent.lowerBound),
            writeWithoutResponseQueueCapacity.flatMap {
                ConfigurationProblems.check("\(owner).writeWithoutResponseQueueCapacity", atLeast: 1, $0.lowerBound)
            },
            updateQueueCapacity.flatMap {
                ConfigurationProblems.check("\(owner).updateQueueCapacity", atLeast: 1, $0.lowerBound)
            },
            window.flatMap { ConfigurationProblems.check("\(owner).window", $0.lowerBound, in: Self.durations) },
            window.flatMap { ConfigurationProblems.check("\(owner).window", $0.upperBound, in: Self.durations) },
            profiles.indices.lazy.compactMap { profiles[$0].problem(in: "\(owner).profiles[\($0)]") }.first,
            ConfigurationProblems.check("\(owner).faultDuration", faultDuration.lowerBound, in: Self.durations),
            ConfigurationProblems.check("\(owner).faultDuration", faultDuration.upperBound, in: Self.durations),
            faultKinds.contains(.attError) && attErrors.isEmpty
                ? "\(owner).attErrors: empty, but .attError faults may be drawn; give an error or leave the kind out"
                : nil,
            attErrors.contains(.success)
                ? "\(owner).attErrors: 0x00 (success) is not an error; give ATT error codes (0x01 or above)" : nil,
            undrawableKind(owner),
        ])
    }

    /// The budget's fault kinds are all injected errors it can never draw, as none of
    /// `operations` is one they fail: an exploration of it would draw no fault at all, and pass
    /// without injecting anything. (One such kind among others that are drawn shows in the
    /// coverage as never drawn.)
    private func undrawableKind(_ owner: String) -> String? {
        guard faultCount.upperBound > 0, !faultKinds.isEmpty else { return nil }
        var undrawable: [String] = []
        for kind in PlannedFault.Kind.allCases where faultKinds.contains(kind) {
            switch kind {
            case .attError where !operations.contains(where: \.isATTRequest):
                undrawable.append(".attError needs an ATT request (.read, .write, .subscribe, a discovery)")
            case .neverAnswered where operations.isDisjoint(with: [.read, .write, .subscribe]):
                undrawable.append(".neverAnswered needs .read, .write or .subscribe")
            case .coreBluetoothError where !operations.contains(.connect):
                undrawable.append(".coreBluetoothError needs .connect")
            default:
                return nil
            }
        }
        return "\(owner).operations: no fault of faultKinds can be drawn with them ("
            + undrawable.joined(separator: "; ") + "), so the exploration would inject nothing; add an operation "
            + "they fail, or other kinds"
    }

    /// The most faults one run may draw: far more than a run can use, far from what would
    /// exhaust memory drawing them.
    public static let maximumFaultCount = 10_000

    /// The range a budget's durations (its window and fault durations) must lie in: up to
    /// about 31 years of virtual time, far beyond any run, and within what a plan's
    /// milliseconds hold.
    public static let durations: ClosedRange<Duration> = .zero ... .seconds(1_000_000_000)

    /// This budget with the ranges ``problem`` checks brought within what it allows (a valid
    /// budget is unchanged), for ``ExplorationPlan/draw(seed:budget:window:targets:)``, which
    /// takes any budget. (The MTU, packet and queue ranges are clamped where they are drawn.)
    var clampedForDrawing: ExplorationBudget {
        var clamped = self
        clamped.faultCount = faultCount.clamped(to: 0...Self.maximumFaultCount)
        clamped.connectionInterval = connectionInterval.clamped(to: ConfigurationProblems.connectionIntervals)
        clamped.jitter = jitter.clamped(to: .zero...ConfigurationProblems.connectionIntervals.upperBound)
        clamped.faultDuration = faultDuration.clamped(to: Self.durations)
        clamped.window = window?.clamped(to: Self.durations)
        return clamped
    }

    /// The kinds in a fixed order, so draws do not depend on a set's iteration order.
    var orderedKinds: [PlannedFault.Kind] { faultKinds.sorted() }
}
