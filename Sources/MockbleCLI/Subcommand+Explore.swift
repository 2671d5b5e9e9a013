import BLECore
import BLEMockKit
import Foundation

extension Subcommand {
    /// `mockble explore`: runs a scenario under many seeds, conditions and faults.
    public static let explore = Subcommand(
        name: "explore", summary: "Run a scenario under many seeds, link conditions and faults; shrink a failure.",
        help: """
            Usage: mockble explore FILE [--seeds N] [--from SEED] [--faults KINDS] [--max-faults N]
                                   [--mtu LOW...HIGH] [--keep-going] [--no-shrink] [--jobs N]
                                   [--format text|json]

            Runs the scenario in FILE once per seed, in realistic mode, each seed with its own
            link conditions (ATT_MTU, connection interval, jitter, packets per connection
            event, queue capacities) and fault schedule (faults at virtual times within the
            length of a fault-free run). A run fails when a step's "expect" does not match.
            At the first failing seed it stops and shrinks the failure (removes faults, moves
            them later, roomier conditions, the largest failing ATT_MTU) and prints it in
            words and as the "mode", "seed" and "plan" fields that replay it with mockble run.
            It also prints which fault kinds took effect and which never did. On a terminal
            it shows live progress on standard error: seeds done, seeds per second, failures,
            the shrinking step.

            Options:
              --seeds N        How many seeds (default 1000).
              --from SEED      The first seed (default 0).
              --faults KINDS   Comma-separated fault kinds, "all" (the default) or "none":
                               disconnect, outOfRange, fade, reset, powerCycle, attError,
                               coreBluetoothError, neverAnswered, pairingRefused,
                               bluetoothReset.
              --max-faults N   The most faults a run gets (default 3).
              --mtu LOW...HIGH The ATT_MTU range (default 23...517).
              --keep-going     Run every seed and report every failure.
              --no-shrink      Report failures as found.
              --jobs N         Runs at once (default: the number of processors).
              --format F       text (default) or json (one object, seeds as decimal
                               strings; no progress).
              -h, --help       Show this help.

            Exit status: 0 every seed passed, 1 a seed failed, 2 bad input.
            """,
        perform: { arguments, console in
            guard #available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *) else {
                console.printError("mockble explore: needs macOS 15 or later")
                return .badInput
            }
            let options: ExploreOptions
            do throws(ArgumentList.Problem) {
                options = try ExploreOptions(arguments)
            } catch {
                console.printError("mockble explore: \(error.message)")
                return .badInput
            }
            if let mismatch = ScenarioArgument.mismatch(options.file, command: "explore") {
                console.printError(mismatch)
                return .badInput
            }
            let scenario: Scenario
            do throws(FixtureError) {
                scenario = try Scenario.load(contentsOf: URL(fileURLWithPath: options.file))
            } catch {
                console.printError(ScenarioArgument.loadFailure(options.file, error, command: "explore"))
                return .badInput
            }
            let display = ProgressDisplay(console: console, enabled: console.isTerminal && options.format == "text")
            let report = await options.exploration.run(scenario: scenario) { display.show($0) }
            if let problem = report.problem {
                console.printError("mockble explore: \(problem)")
                return .badInput
            }
            console.write(options.format == "json" ? ExploreOutput.json(report) : ExploreOutput.text(report))
            return report.passed ? .success : .failure
        })
}

/// The arguments of `mockble explore`.
@available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
struct ExploreOptions {
    var file: String
    var format: String
    var exploration: Exploration

    init(_ arguments: [String]) throws(ArgumentList.Problem) {
        let list = try ArgumentList(
            arguments, options: ["seeds", "from", "faults", "max-faults", "mtu", "jobs", "format"],
            flags: ["keep-going", "no-shrink"])
        file = try list.onlyPositional(
            of: "explore", naming: "scenario file", example: "Fixtures/scenarios/heart-rate-basic.json")
        format = try list.choice("format", of: ["text", "json"], default: "text")
        var budget = ExplorationBudget()
        if let text = list.option("faults") {
            budget.faultKinds = try Self.kinds(text)
            if budget.faultKinds.isEmpty { budget.faultCount = 0...0 }
        }
        if let most = try list.number("max-faults", in: 0...100) { budget.faultCount = 0...most }
        if let text = list.option("mtu") {
            let parts = text.components(separatedBy: "...")
            guard parts.count == 2, let low = Int(parts[0]), let high = Int(parts[1]), low <= high,
                MTUMode.validRange.contains(low), MTUMode.validRange.contains(high)
            else {
                throw ArgumentList.Problem(
                    message: "--mtu takes LOW...HIGH within 23...517, e.g. 23...185, not \"\(text)\"")
            }
            budget.mtu = low...high
        }
        let seeds = try list.number("seeds", in: 1...Exploration.maximumSeedCount) ?? 1_000
        let first = try list.seed("from") ?? 0
        let jobs = try list.number("jobs", in: 1...1_024)
        exploration = Exploration(
            budget: budget, seeds: seeds, from: first, stopsAtFirstFailure: !list.flag("keep-going"),
            shrinks: !list.flag("no-shrink"), parallelism: jobs, stallPatience: .milliseconds(200))
    }

    static func kinds(_ text: String) throws(ArgumentList.Problem) -> Set<PlannedFault.Kind> {
        switch text {
        case "all": return Set(PlannedFault.Kind.allCases)
        case "none": return []
        default: break
        }
        var kinds: Set<PlannedFault.Kind> = []
        for name in text.split(separator: ",").map({ $0.trimmingCharacters(in: .whitespaces) }) where !name.isEmpty {
            guard let kind = PlannedFault.Kind(rawValue: name) else {
                let names = PlannedFault.Kind.allCases.map(\.rawValue)
                let hint = Suggestion.nearest(to: name, among: names).map { " (did you mean \($0)?)" } ?? ""
                throw ArgumentList.Problem(
                    message:
                        "unknown fault kind \"\(name)\"\(hint); kinds: \(names.joined(separator: ", ")), or all, none")
            }
            kinds.insert(kind)
        }
        guard !kinds.isEmpty else {
            // Nothing named at all (an empty value, commas): "none" is how to ask for no faults.
            throw ArgumentList.Problem(
                message: "--faults names no fault kind in \"\(text)\"; give comma-separated kinds, e.g. "
                    + "disconnect,reset, or all, none")
        }
        return kinds
    }
}

/// Live progress on standard error, a line rewritten in place, at most ten times a second.
final class ProgressDisplay: @unchecked Sendable {
    // @unchecked Sendable: `lastShown`, `started` and `shownAny` are only touched with `lock` held.
    private let lock = NSLock()
    private let console: Console
    private let enabled: Bool
    private let clock = ContinuousClock()
    private var started: ContinuousClock.Instant?
    private var lastShown: ContinuousClock.Instant?

    init(console: Console, enabled: Bool) {
        self.console = console
        self.enabled = enabled
    }

    func show(_ progress: ExplorationProgress) {
        guard enabled else { return }
        lock.withLock {
            let now = clock.now
            let start = started ?? now
            started = start
            if progress.isFinished {
                if lastShown != nil { console.writeToError("\r\u{1B}[K") }
                return
            }
            if let lastShown, now - lastShown < .milliseconds(100) { return }
            lastShown = now
            console.writeToError(
                "\r\u{1B}[K" + Self.fitted(Self.line(progress, elapsed: now - start), to: console.width))
        }
    }

    /// `line` cut to fit a terminal `width` columns wide, ending in "…" when cut. It stays
    /// short of the last column: a line that fills it makes the terminal wrap, and the next
    /// rewrite in place then lands on a new line.
    static func fitted(_ line: String, to width: Int?) -> String {
        guard let width, line.count > width - 1 else { return line }
        return String(line.prefix(max(0, width - 2))) + "…"
    }

    /// The progress line, e.g. `explore: 420/1000 seeds, 1800 seeds/s, 0 failures`.
    static func line(_ progress: ExplorationProgress, elapsed: Duration) -> String {
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        let rate = seconds > 0 ? Int((Double(progress.seedsDone) / seconds).rounded()) : 0
        var line =
            "explore: \(progress.seedsDone)/\(progress.seedsPlanned) seeds, \(rate) seeds/s, "
            + Plural.count(progress.failures, "failure")
        if let shrinking = progress.shrinking {
            line +=
                "; shrinking seed \(shrinking.seed): \(Plural.count(shrinking.runs, "run")), "
                + "\(Plural.count(shrinking.faults, "fault")) left"
            if let step = shrinking.lastStep { line += " (\(step))" }
        }
        return line
    }
}

/// What `mockble explore` prints.
enum ExploreOutput {
    /// The report in words, each failure with the scenario fields that replay it.
    static func text(_ report: ExplorationReport) -> String {
        report.text(replay: .scenarioFields) + "\n"
    }

    /// The report as one JSON object.
    static func json(_ report: ExplorationReport) -> String {
        let failures = report.failures.map { failure -> TraceValue in
            .object([
                ("seed", .string(String(failure.seed))),
                ("error", .string(failure.found.error.map { "\($0)" } ?? "")),
                ("found", failure.found.plan.scenarioPlan), ("minimal", failure.minimal.plan.scenarioPlan),
                ("steps", .array(failure.steps.map(TraceValue.string))), ("shrinkRuns", .int(failure.shrinkRuns)),
            ])
        }
        let coverage = report.coverage
        let kinds = PlannedFault.Kind.allCases.map { kind -> (key: String, value: TraceValue) in
            let count = coverage.faults[kind] ?? ExplorationCoverage.Count()
            return (kind.rawValue, .object([("drawn", .int(count.drawn)), ("fired", .int(count.fired))]))
        }
        let bands = ExplorationCoverage.bands.map { ($0.name, TraceValue.int(coverage.mtuBands[$0.name] ?? 0)) }
        // What each injected error aimed at: its kind, operation and characteristic (absent for
        // the next operation of that kind on any).
        let injections = coverage.injections.sorted(by: { $0.key < $1.key }).map { key, count -> TraceValue in
            var fields: [(key: String, value: TraceValue)] = [
                ("kind", .string(key.kind.rawValue)), ("operation", .string(key.target.operation.rawValue)),
            ]
            if let characteristic = key.target.characteristic {
                fields.append(("characteristic", .string(characteristic.description)))
            }
            fields += [("drawn", .int(count.drawn)), ("fired", .int(count.fired))]
            return .object(fields)
        }
        let object = TraceValue.object([
            ("seedsPlanned", .int(report.seedsPlanned)), ("seedsRun", .int(report.seedsRun)),
            ("failures", .array(failures)),
            (
                "coverage",
                .object([
                    ("runs", .int(coverage.runs)), ("faults", .object(kinds)),
                    ("neverFired", .array(coverage.neverFired(budget: report.budget).map { .string($0.rawValue) })),
                    ("mtuBands", .object(bands)), ("injections", .array(injections)),
                ])
            ),
        ])
        return object.json + "\n"
    }
}
