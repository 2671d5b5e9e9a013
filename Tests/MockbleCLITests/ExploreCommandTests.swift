import BLEMockKit
import Foundation
import Testing

@testable import MockbleCLI

@Suite("mockble explore", .timeLimit(.minutes(10)))
struct ExploreCommandTests {
    static var basic: String {
        FixtureDirectory.root.appendingPathComponent("scenarios/heart-rate-basic.json").path
    }

    func run(_ arguments: [String], terminal: Bool = false, width: Int? = nil) async -> (CommandStatus, CapturedOutput)
    {
        let (console, captured) = Console.capturing(terminal: terminal, width: width)
        return (await Mockble.main(arguments: arguments, console: console), captured)
    }

    /// `heart-rate-basic.json` with its top-level `mode`, `seed`, `link` and `central` replaced
    /// by `fragment`, written to a temporary file (the profile path made absolute).
    func scenario(with fragment: String) throws -> URL {
        let profile = FixtureDirectory.root.appendingPathComponent("peripherals/heart-rate.json").path
        var text = try String(contentsOfFile: Self.basic, encoding: .utf8)
        for line in [
            #"  "seed": 42,"#, #"  "mode": "realistic","#, #"  "central": {"preferredMTU": 185},"#,
            #"  "link": {"connectionInterval": "30ms"},"#,
        ] {
            #expect(text.contains(line + "\n"))
            text = text.replacingOccurrences(of: line + "\n", with: "")
        }
        text = text.replacingOccurrences(of: "\"../peripherals/heart-rate.json\"", with: "\"\(profile)\"")
        text = text.replacingOccurrences(
            of: "{\n", with: "{\n" + fragment + ",\n", options: [], range: text.range(of: "{\n"))
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "mockble-explore-\(ProcessInfo.processInfo.processIdentifier)-\(fragment.hashValue)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let url = directory.appendingPathComponent("replay.json")
        try Data(text.utf8).write(to: url)
        return url
    }

    @Test("A scenario that holds on every link it was explored on passes, and says what it covered")
    func passingExploration() async {
        let (status, output) = await run([
            "explore", Self.basic, "--seeds", "20", "--faults", "none", "--mtu", "185...517",
        ])
        #expect(status == .success)
        #expect(output.output.hasPrefix("Explored 20 of 20 seeds: no failure.\nCoverage over 20 runs:\n"))
        #expect(output.output.contains("  faults: none in the budget\n"))
        #expect(output.error.isEmpty)
    }

    @Test("A failure is shrunk and printed with the fields that replay it; mockble run replays it")
    func failureReplaysWithRun() async throws {
        let (status, output) = await run(["explore", Self.basic, "--seeds", "50"])
        #expect(status == .failure)
        let text = output.output
        #expect(text.contains("step 1 (connect, line 11): expected mtu 185, got "))
        #expect(text.contains("  - ATT_MTU raised to 184\n"))
        let start = try #require(text.range(of: "mockble run:\n"))
        let end = try #require(text.range(of: "\nCoverage over"))
        let fragment = String(text[start.upperBound..<end.lowerBound])
            .split(separator: "\n").map { String($0.dropFirst(4)) }.joined(separator: "\n")
        #expect(fragment.hasPrefix("\"mode\": \"realistic\",\n\"seed\": "))
        #expect(
            fragment.contains(
                #""conditions": {"mtu":184,"connectionInterval":"0.03s","packetsPerConnectionEvent":4}"#))
        let replay = try scenario(with: fragment)
        defer { try? FileManager.default.removeItem(at: replay.deletingLastPathComponent()) }
        let (runStatus, runOutput) = await run(["run", replay.path])
        #expect(runStatus == .failure)
        #expect(runOutput.error.contains("step 1 (connect, line "))
        #expect(runOutput.error.contains("): expected mtu 185, got 184"))
    }

    @Test("JSON output is one object with the failures' plans and the coverage, and never shows progress")
    func jsonOutput() async throws {
        let (status, output) = await run(
            ["explore", Self.basic, "--seeds", "30", "--format", "json", "--keep-going", "--no-shrink"], terminal: true)
        #expect(status == .failure)
        #expect(output.error.isEmpty)
        let object = try #require(
            try JSONSerialization.jsonObject(with: Data(output.output.utf8)) as? [String: Any])
        #expect(object["seedsPlanned"] as? Int == 30)
        #expect(failuresSeeds(object).allSatisfy { UInt64($0) != nil })
        #expect(object["seedsRun"] as? Int == 30)
        let failures = try #require(object["failures"] as? [[String: Any]])
        #expect(!failures.isEmpty)
        for failure in failures {
            #expect(failure["shrinkRuns"] as? Int == 0)
            let found = try #require(failure["found"] as? [String: Any])
            #expect(found["conditions"] is [String: Any] && found["faults"] is [Any])
        }
        let coverage = try #require(object["coverage"] as? [String: Any])
        #expect(coverage["runs"] as? Int == 30)
        #expect((coverage["faults"] as? [String: Any])?.count == PlannedFault.Kind.allCases.count)
        // What the injected errors aimed at, drawn and fired, each with its kind and operation.
        let injections = try #require(coverage["injections"] as? [[String: Any]])
        #expect(!injections.isEmpty)
        for injection in injections {
            #expect(["attError", "coreBluetoothError", "neverAnswered"].contains(injection["kind"] as? String ?? ""))
            #expect(injection["operation"] is String)
            #expect((injection["drawn"] as? Int ?? 0) >= (injection["fired"] as? Int ?? -1))
        }
        #expect(injections.contains { $0["characteristic"] is String })
    }

    /// The failing seeds of a JSON report, as written (decimal strings: seeds go up to 2^64 − 1).
    func failuresSeeds(_ object: [String: Any]) -> [String] {
        (object["failures"] as? [[String: Any]] ?? []).compactMap { $0["seed"] as? String }
    }

    @Test("On a terminal, progress is shown on standard error and cleared at the end; elsewhere nothing is")
    func progressOnATerminal() async {
        let (_, watched) = await run(
            ["explore", Self.basic, "--seeds", "10", "--faults", "none", "--mtu", "185...517"], terminal: true)
        #expect(watched.error.hasPrefix("\r\u{1B}[Kexplore: "))
        #expect(watched.error.hasSuffix("\r\u{1B}[K"))
        #expect(watched.error.contains(" seeds/s, "))
        let (_, piped) = await run(["explore", Self.basic, "--seeds", "10", "--faults", "none", "--mtu", "185...517"])
        #expect(piped.error.isEmpty)
    }

    @Test("On a narrow terminal each progress line fits in it, so it is rewritten in place rather than wrapped")
    func progressFitsANarrowTerminal() async {
        let (_, watched) = await run(
            ["explore", Self.basic, "--seeds", "10", "--faults", "none", "--mtu", "185...517"], terminal: true,
            width: 24)
        let lines = watched.error.components(separatedBy: "\r\u{1B}[K").filter { !$0.isEmpty }
        #expect(!lines.isEmpty)
        for line in lines {
            #expect(line.count <= 23, "\(line)")
            #expect(!line.contains("\n"))
        }
        #expect(lines.contains { $0.hasSuffix("…") })
    }

    @Test("A progress line is cut to one column less than the terminal, ending in an ellipsis; a short one is kept")
    func fittingALine() {
        let line = "explore: 420/1000 seeds, 1680 seeds/s, 1 failure"
        #expect(ProgressDisplay.fitted(line, to: nil) == line)
        #expect(ProgressDisplay.fitted(line, to: line.count + 1) == line)
        #expect(ProgressDisplay.fitted(line, to: line.count) == String(line.prefix(line.count - 2)) + "…")
        #expect(ProgressDisplay.fitted(line, to: 20) == "explore: 420/1000 …")
        #expect(ProgressDisplay.fitted(line, to: 20).count == 19)
        #expect(ProgressDisplay.fitted(line, to: 1) == "…")
    }

    @Test("The progress line counts seeds, rate, failures and the shrinking step")
    func progressLine() {
        var progress = ExplorationProgress(seedsPlanned: 1_000)
        progress.seedsDone = 420
        progress.failures = 1
        #expect(
            ProgressDisplay.line(progress, elapsed: .milliseconds(250))
                == "explore: 420/1000 seeds, 1680 seeds/s, 1 failure")
        progress.shrinking = .init(seed: 17, runs: 12, faults: 1, lastStep: "ATT_MTU raised to 517")
        #expect(
            ProgressDisplay.line(progress, elapsed: .seconds(1))
                == "explore: 420/1000 seeds, 420 seeds/s, 1 failure; shrinking seed 17: 12 runs, 1 fault left (ATT_MTU raised to 517)"
        )
    }

    @Test(
        "Bad arguments are refused with a message and exit status 2",
        arguments: [
            (
                ["explore"],
                "mockble explore: name a scenario file, e.g. mockble explore Fixtures/scenarios/heart-rate-basic.json"
            ),
            (["explore", "a.json", "b.json"], "mockble explore: explore takes one scenario file, not 2"),
            (
                ["explore", "x.json", "--faults", "disconect"],
                "mockble explore: unknown fault kind \"disconect\" (did you mean disconnect?); kinds: disconnect, outOfRange, fade, reset, powerCycle, attError, coreBluetoothError, neverAnswered, pairingRefused, bluetoothReset, or all, none"
            ),
            // An empty list (or only commas) used to be taken silently as "none".
            (
                ["explore", "x.json", "--faults", ""],
                "mockble explore: --faults names no fault kind in \"\"; give comma-separated kinds, e.g. disconnect,reset, or all, none"
            ),
            (
                ["explore", "x.json", "--faults", " , "],
                "mockble explore: --faults names no fault kind in \" , \"; give comma-separated kinds, e.g. disconnect,reset, or all, none"
            ),
            (
                ["explore", "x.json", "--mtu", "10...600"],
                "mockble explore: --mtu takes LOW...HIGH within 23...517, e.g. 23...185, not \"10...600\""
            ),
            (
                ["explore", "x.json", "--seeds", "0"],
                "mockble explore: --seeds must be a whole number from 1 to 10000000, not \"0\""
            ),
            (
                ["explore", "x.json", "--jobs", "many"],
                "mockble explore: --jobs must be a whole number from 1 to 1024, not \"many\""
            ),
            (
                ["explore", "x.json", "--from", "-1"],
                "mockble explore: --from must be a whole number from 0 to 2^64-1, not \"-1\""
            ),
            (
                ["explore", "x.json", "--max-faults", "101"],
                "mockble explore: --max-faults must be a whole number from 0 to 100, not \"101\""
            ),
        ])
    func badArguments(arguments: [String], message: String) async {
        let (status, output) = await run(arguments)
        #expect(status == .badInput)
        #expect(output.error == message + "\n")
        #expect(output.output.isEmpty)
    }

    @Test("A missing scenario file is bad input")
    func missingFile() async {
        let (status, output) = await run(["explore", "/nonexistent/scenario.json"])
        #expect(status == .badInput)
        #expect(output.error.hasPrefix("mockble explore: "))
        #expect(output.error.contains("no such file: /nonexistent/scenario.json"))
    }

    @Test("A peripheral profile, a folder, a capture or a recording given as the scenario is named for what it is")
    func notAScenario() async throws {
        let root = FixtureDirectory.root
        let profile = root.appendingPathComponent("peripherals/heart-rate.json").path
        let folder = root.appendingPathComponent("scenarios").path
        let capture = root.appendingPathComponent("captures/notifications.btsnoop").path
        let recording = FileManager.default.temporaryDirectory.appendingPathComponent(
            "mockble-explore-recording-\(ProcessInfo.processInfo.processIdentifier).json")
        try Data(#"{"format": "mockble-recording", "version": 1}"#.utf8).write(to: recording)
        defer { try? FileManager.default.removeItem(at: recording) }
        let cases: [(String, String)] = [
            (
                profile,
                "mockble explore: `\(profile)` is a peripheral profile; `explore` expects a scenario — "
                    + "`validate` checks profiles"
            ),
            (folder, "mockble explore: `\(folder)` is a folder; `explore` expects a scenario file (.json)"),
            (
                capture,
                "mockble explore: `\(capture)` is a Bluetooth capture; `explore` expects a scenario — "
                    + "`mockble import \(capture)` makes one from it"
            ),
            (
                recording.path,
                "mockble explore: `\(recording.path)` is a recording; `explore` expects a scenario — "
                    + "`mockble import \(recording.path)` makes one from it"
            ),
        ]
        for (file, message) in cases {
            let (status, output) = await run(["explore", file, "--seeds", "1"])
            #expect(status == .badInput)
            #expect(output.error == message + "\n")
            #expect(output.output.isEmpty)
        }
    }
}
