/// What an exploration found: how many seeds ran, the failures (each as found and as shrunk),
/// and what the runs covered.
public struct ExplorationReport: Sendable, CustomStringConvertible {
    /// The budget explored.
    public var budget: ExplorationBudget
    /// The seeds the exploration was given.
    public var seedsPlanned: Int
    /// The seeds run (fewer when it stopped at a failure or was cancelled).
    public var seedsRun = 0
    /// The window faults were drawn in (measured by a fault-free run when the budget gave
    /// none), or `nil` when nothing ran.
    public var window: ClosedRange<Duration>?
    /// The fault-free run that measured the window, if one was needed.
    public var calibration: ExplorationOutcome?
    /// The operations injected-error faults aimed at: those the calibration run made (none
    /// when the budget gave the window, so no calibration ran).
    public var targets: [PlannedFault.Target] { calibration?.targets ?? [] }
    /// The failures, in seed order.
    public var failures: [ExplorationFailureReport] = []
    /// What the runs exercised.
    public var coverage = ExplorationCoverage()
    /// Why nothing ran (a bad budget or parameter), if so.
    public var problem: String?
    /// Whether the exploring task was cancelled: the report covers the runs that ended
    /// before (a run the cancellation cut short is left out).
    public var wasCancelled = false

    init(budget: ExplorationBudget, seedsPlanned: Int) {
        self.budget = budget
        self.seedsPlanned = seedsPlanned
    }

    /// Whether the exploration ran and every run passed: `false` when one failed, when it could
    /// not run (``problem``), and when it was cancelled (``wasCancelled``: the seeds it did not
    /// run were not checked, so `#expect(report.passed)` does not pass on a cancelled one).
    public var passed: Bool { failures.isEmpty && problem == nil && !wasCancelled }

    /// The report in words, each failure replayed as Swift code.
    public var description: String { text(replay: .swiftCode) }

    /// The report in words, each failure with how to replay it in `form`.
    public func text(replay form: ExplorationReplayForm) -> String {
        if let problem { return "Exploration could not run: \(problem)" }
        var lines = [
            "Explored \(seedsRun) of \(seedsPlanned) seed\(seedsPlanned == 1 ? "" : "s")"
                + (wasCancelled ? " (cancelled)" : "") + ": "
                + (failures.isEmpty ? "no failure." : "\(failures.count) failure\(failures.count == 1 ? "" : "s").")
        ]
        for failure in failures { lines.append(failure.text(replay: form)) }
        lines.append(coverage.summary(budget: budget))
        return lines.joined(separator: "\n")
    }
}

/// How a report says to replay a failure.
public enum ExplorationReplayForm: Sendable, Hashable {
    /// Swift code that calls ``Exploration/replay(_:timeLimit:stallPatience:failsOnLeftovers:_:)``
    /// (``ExplorationPlan/swiftCode``).
    case swiftCode
    /// The scenario fields that `mockble run` replays (``ExplorationPlan/scenarioFragment``).
    case scenarioFields
}

/// One failure an exploration found, as found and as shrunk.
public struct ExplorationFailureReport: Sendable, CustomStringConvertible {
    /// The failing run as found.
    public var found: ExplorationOutcome
    /// The simplest plan that still fails the same way, and how it failed.
    public var minimal: ExplorationOutcome
    /// The simplifications kept, in words, in order.
    public var steps: [String]
    /// How many candidate plans shrinking ran.
    public var shrinkRuns: Int
    /// The timeline page and bridge log of the minimal plan's run (run once more after
    /// shrinking to keep them); `nil` when the exploration was cancelled first, or when that
    /// run passed (a body that does not fail the same way twice).
    public var artifacts: RunArtifacts?
    /// Whether the found plan failed the same way when run again. `false` for a body that
    /// depends on something besides the bridge (the wall clock, unseeded randomness, threads
    /// racing): such a failure is not shrunk, and its replay may pass.
    public var reproduces = true
    /// Whether the exploration was cancelled while this failure was being checked or shrunk:
    /// ``minimal`` is then the simplest plan found by then, not necessarily a minimal one (and a
    /// check cut short says nothing of whether the failure reproduces).
    public var wasCutShort = false

    /// The failing seed.
    public var seed: UInt64 { found.plan.seed }

    /// The failure in words, replayed as Swift code.
    public var description: String { text(replay: .swiftCode) }

    /// The failure in words: how it failed, the plan found and the plan shrunk, the steps
    /// kept, and how to replay it in `form`.
    public func text(replay form: ExplorationReplayForm) -> String {
        var lines = [
            "Seed \(seed) failed: " + indented(found.error.map { String(describing: $0) } ?? "?"),
            "  found with: " + indented(found.plan.description),
        ]
        if !reproduces {
            lines.append(
                "  not reproducible: run again with the same plan, it did not fail the same way; the body "
                    + "depends on something besides the bridge (the wall clock, unseeded randomness, threads "
                    + "racing), so it was not shrunk, and its replay may pass")
        }
        if wasCutShort {
            lines.append(
                "  cancelled while it was checked or shrunk: the plan below is the simplest found by then, "
                    + "not necessarily a minimal one")
        }
        if shrinkRuns > 0 {
            lines.append(
                "  shrunk in \(shrinkRuns) run\(shrinkRuns == 1 ? "" : "s") to: " + indented(minimal.plan.description))
            if minimal.plan != found.plan {
                lines.append("  minimal failure: " + indented(minimal.error.map { String(describing: $0) } ?? "?"))
            }
            for step in steps { lines.append("  - \(step)") }
        }
        switch form {
        case .swiftCode:
            lines.append("  replay it with:")
            lines += minimal.plan.swiftCode.split(separator: "\n").map { "    \($0)" }
        case .scenarioFields:
            lines.append("  replay: put these fields in the scenario and run it with mockble run:")
            lines += minimal.plan.scenarioFragment.split(separator: "\n").map { "    \($0)" }
            // A scenario names a phone profile among the kit's own: a profile of the caller's
            // cannot be written there, and the replay runs without it.
            if let profile = minimal.plan.conditions.centralProfile, profile.staticName == nil {
                lines.append(
                    "  note: the phone profile \(profile.name.debugDescription) is one of your own, which a scenario "
                        + "cannot name: mockble run replays these fields without it (a different run); replay the "
                        + "plan in Swift to keep it")
            }
        }
        return lines.joined(separator: "\n")
    }

    private func indented(_ text: String) -> String {
        text.split(separator: "\n").joined(separator: "\n    ")
    }
}

/// What the runs of an exploration exercised: each fault kind drawn and fired, and the link
/// conditions drawn. Printed, it is ``summary(budget:)`` without a budget: the fault kinds the
/// runs drew (the report's ``ExplorationReport/description`` names those its budget allowed and
/// none drew, too).
public struct ExplorationCoverage: Sendable, Hashable, CustomStringConvertible {
    /// How often a fault kind was drawn, and how often it took effect.
    public struct Count: Sendable, Hashable {
        /// Times drawn.
        public var drawn = 0
        /// Times it took effect.
        public var fired = 0

        /// Creates a count.
        public init(drawn: Int = 0, fired: Int = 0) {
            self.drawn = drawn
            self.fired = fired
        }
    }

    /// Per fault kind.
    public var faults: [PlannedFault.Kind: Count] = [:]
    /// Per injected-error fault kind and what it aimed at: an operation on a characteristic,
    /// or (characteristic `nil`) the next operation of that kind on any.
    public var injections: [Injection: Count] = [:]

    /// An injected-error fault kind and what it aimed at.
    public struct Injection: Sendable, Hashable, Comparable, CustomStringConvertible {
        /// The fault's kind.
        public var kind: PlannedFault.Kind
        /// The operation it fails, and on which characteristic.
        public var target: PlannedFault.Target

        /// Creates a key.
        public init(_ kind: PlannedFault.Kind, _ target: PlannedFault.Target) {
            self.kind = kind
            self.target = target
        }

        public static func < (lhs: Injection, rhs: Injection) -> Bool {
            lhs.target != rhs.target ? lhs.target < rhs.target : lhs.kind < rhs.kind
        }

        /// E.g. `"attError on write on FE03"`, or `"attError on the next read"` for an error
        /// aimed at an operation on any characteristic.
        public var description: String {
            "\(kind.rawValue) on \(target.characteristic == nil ? "the next " : "")\(target)"
        }
    }
    /// Runs per ATT_MTU band (`23…64`, `65…184`, `185…255`, `256…517`) of the largest ATT_MTU
    /// their links negotiated (``ExplorationOutcome/linkMTU``; runs that made no link are not
    /// counted).
    public var mtuBands: [String: Int] = [:]
    /// The smallest and largest ATT_MTU the runs' links negotiated, or `nil` before any link.
    public var mtu: ClosedRange<Int>?
    /// The shortest and longest connection interval the runs' links had
    /// (``LinkConditions/linkConnectionInterval``: with a phone profile, the one it negotiates,
    /// not the one drawn), or `nil` before any run.
    public var connectionInterval: ClosedRange<Duration>?
    /// The fewest and most packets per connection event the runs' links had
    /// (``LinkConditions/linkPacketsPerConnectionEvent``; a profile without a limit is not
    /// counted), or `nil` before any run.
    public var packetsPerConnectionEvent: ClosedRange<Int>?
    /// The smallest and largest of each drawn queue capacity, or `nil` before any run.
    public var writeWithoutResponseQueueCapacity: ClosedRange<Int>?
    public var updateQueueCapacity: ClosedRange<Int>?
    /// Runs per phone profile, by its name (runs without one are not counted).
    public var phones: [String: Int] = [:]
    /// Runs by how many faults they had.
    public var runsByFaultCount: [Int: Int] = [:]
    /// Runs counted.
    public var runs = 0

    /// The ATT_MTU bands, in order.
    public static let bands: [(name: String, range: ClosedRange<Int>)] = [
        ("23…64", 23...64), ("65…184", 65...184), ("185…255", 185...255), ("256…517", 256...517),
    ]

    /// The fault kinds that never took effect though the budget allowed them.
    public func neverFired(budget: ExplorationBudget) -> [PlannedFault.Kind] {
        budget.orderedKinds.filter { (faults[$0]?.fired ?? 0) == 0 }
    }

    mutating func add(_ outcome: ExplorationOutcome) {
        runs += 1
        let plan = outcome.plan
        for (index, fault) in plan.faults.enumerated() {
            let fired = outcome.faultsFired.indices.contains(index) && outcome.faultsFired[index]
            faults[fault.kind, default: Count()].drawn += 1
            if fired { faults[fault.kind, default: Count()].fired += 1 }
            if let aim = fault.aim {
                let key = Injection(fault.kind, aim)
                injections[key, default: Count()].drawn += 1
                if fired { injections[key, default: Count()].fired += 1 }
            }
        }
        runsByFaultCount[plan.faults.count, default: 0] += 1
        let conditions = plan.conditions
        // The ATT_MTU the links had, not the plan's (a manager's explicit preference or a phone
        // profile may keep them below it); a run that made no link has none.
        if let linkMTU = outcome.linkMTU {
            if let band = Self.bands.first(where: { $0.range.contains(linkMTU) }) {
                mtuBands[band.name, default: 0] += 1
            }
            mtu = Self.widen(mtu, linkMTU)
        }
        if let phone = conditions.centralProfile { phones[phone.name, default: 0] += 1 }
        connectionInterval = Self.widen(connectionInterval, conditions.linkConnectionInterval)
        if let packets = conditions.linkPacketsPerConnectionEvent {
            packetsPerConnectionEvent = Self.widen(packetsPerConnectionEvent, packets)
        }
        if let capacity = conditions.writeWithoutResponseQueueCapacity {
            writeWithoutResponseQueueCapacity = Self.widen(writeWithoutResponseQueueCapacity, capacity)
        }
        if let capacity = conditions.updateQueueCapacity {
            updateQueueCapacity = Self.widen(updateQueueCapacity, capacity)
        }
    }

    private static func widen<T: Comparable>(_ range: ClosedRange<T>?, _ value: T) -> ClosedRange<T> {
        guard let range else { return value...value }
        return min(range.lowerBound, value)...max(range.upperBound, value)
    }

    /// The coverage in words, one line per fault kind and per condition.
    public func summary(budget: ExplorationBudget) -> String {
        summary(
            kinds: Set(budget.orderedKinds).union(faults.keys).sorted(), neverFired: neverFired(budget: budget),
            noKinds: "none in the budget")
    }

    /// The coverage in words, for the fault kinds the runs drew (see ``summary(budget:)``, which
    /// also lists the kinds a budget allowed and no run drew).
    public var description: String {
        let kinds = faults.keys.sorted()
        return summary(kinds: kinds, neverFired: kinds.filter { (faults[$0]?.fired ?? 0) == 0 }, noKinds: "none drawn")
    }

    private func summary(kinds: [PlannedFault.Kind], neverFired never: [PlannedFault.Kind], noKinds: String) -> String {
        var lines = ["Coverage over \(runs) run\(runs == 1 ? "" : "s"):"]
        if kinds.isEmpty {
            lines.append("  faults: \(noKinds)")
        } else {
            lines.append("  fault                drawn  fired")
            for kind in kinds {
                let count = faults[kind] ?? Count()
                let name = kind.rawValue.padding(toLength: 20, withPad: " ", startingAt: 0)
                lines.append("  \(name) \(pad(count.drawn, 5))  \(pad(count.fired, 5))")
            }
            lines.append(
                never.isEmpty
                    ? "  every fault kind took effect at least once"
                    : "  never took effect: " + never.map(\.rawValue).joined(separator: ", "))
        }
        if !injections.isEmpty {
            // By operation and characteristic: what an injected error was aimed at, and hit.
            // (As wide as the longest aim, never cut: a 128-bit UUID is longer than 48 characters.)
            let sorted = injections.sorted(by: { $0.key < $1.key })
            let width = sorted.map(\.key.description.count).reduce(48, max)
            lines.append(
                "  " + "injected error, aimed at".padding(toLength: width, withPad: " ", startingAt: 0)
                    + " drawn  fired")
            for (key, count) in sorted {
                let name = key.description.padding(toLength: width, withPad: " ", startingAt: 0)
                lines.append("  \(name) \(pad(count.drawn, 5))  \(pad(count.fired, 5))")
            }
        }
        let bandText = Self.bands.map { "\($0.name): \(mtuBands[$0.name] ?? 0)" }.joined(separator: ", ")
        lines.append("  ATT_MTU \(mtu.map { "\($0.lowerBound)…\($0.upperBound)" } ?? "-") (runs per band: \(bandText))")
        if let connectionInterval {
            lines.append(
                "  interval \(FixtureDuration.string(connectionInterval.lowerBound))…"
                    + FixtureDuration.string(connectionInterval.upperBound))
        }
        if let packetsPerConnectionEvent {
            lines.append(
                "  packets per event \(packetsPerConnectionEvent.lowerBound)…\(packetsPerConnectionEvent.upperBound)")
        }
        if let writeWithoutResponseQueueCapacity {
            lines.append(
                "  write-without-response queue \(writeWithoutResponseQueueCapacity.lowerBound)…"
                    + "\(writeWithoutResponseQueueCapacity.upperBound)")
        }
        if let updateQueueCapacity {
            lines.append("  update queue \(updateQueueCapacity.lowerBound)…\(updateQueueCapacity.upperBound)")
        }
        if !phones.isEmpty {
            lines.append("  phones: " + phones.keys.sorted().map { "\($0): \(phones[$0]!)" }.joined(separator: ", "))
        }
        let counts = runsByFaultCount.keys.sorted().map { "\($0): \(runsByFaultCount[$0]!)" }.joined(separator: ", ")
        lines.append("  runs by number of faults: \(counts.isEmpty ? "-" : counts)")
        return lines.joined(separator: "\n")
    }

    private func pad(_ value: Int, _ width: Int) -> String {
        let text = String(value)
        return String(repeating: " ", count: max(0, width - text.count)) + text
    }
}
