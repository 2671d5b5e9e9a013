import BLEMockKit
import Foundation
import Testing

@testable import MockbleCLI

@Suite("mockble run and validate", .timeLimit(.minutes(10)))
struct RunCommandTests {
    static var scenarios: URL { FixtureDirectory.root.appendingPathComponent("scenarios") }

    func run(_ arguments: String...) async -> (CommandStatus, CapturedOutput) {
        let (console, captured) = Console.capturing()
        return (await Mockble.main(arguments: arguments, console: console), captured)
    }

    func temporaryFile(_ name: String, _ contents: String) throws -> URL {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "mockble-run-\(ProcessInfo.processInfo.processIdentifier)-\(UInt32.random(in: 0...UInt32.max))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let url = directory.appendingPathComponent(name)
        try Data(contents.utf8).write(to: url)
        return url
    }

    @Test func runPrintsTheGoldenJSONTraceAndExitsZero() async throws {
        let file = Self.scenarios.appendingPathComponent("heart-rate-basic.json").path
        let (status, output) = await run("run", file, "--format", "json")
        #expect(status == .success)
        let golden = try String(
            contentsOf: FixtureDirectory.root.appendingPathComponent("expected/heart-rate-basic.jsonl"), encoding: .utf8
        )
        #expect(output.output == golden)
        #expect(output.error.isEmpty)
    }

    @Test func runPrintsATimelineByDefaultAndAMermaidDiagramOnRequest() async {
        let file = Self.scenarios.appendingPathComponent("nordic-uart.json").path
        let (status, text) = await run("run", file)
        #expect(status == .success)
        #expect(text.output.hasPrefix("nordic-uart (fast mode, seed 0)\n"))
        #expect(text.output.hasSuffix("all 3 expectations held\n"))
        let (_, mermaid) = await run("run", "--format=mermaid", file)
        #expect(mermaid.output.hasPrefix("sequenceDiagram\n"))
    }

    @Test func seedAndModeOverrideTheFile() async {
        let file = Self.scenarios.appendingPathComponent("nordic-uart.json").path
        let (status, output) = await run("run", file, "--seed", "5", "--mode", "realistic")
        #expect(status == .success)
        #expect(output.output.hasPrefix("nordic-uart (realistic mode, seed 5)\n"))
    }

    @Test func aFailedExpectationExitsOneNamingTheStep() async throws {
        let url = try temporaryFile(
            "failing.json",
            #"{"peripheral": {"services": []}, "steps": [{"op": "scan"}, {"op": "readRSSI", "expect": {"ok": true}}]}"#)
        let (status, output) = await run("run", url.path, "--format", "json")
        #expect(status == .failure)
        #expect(output.output.split(separator: "\n").count == 2)
        #expect(
            output.error == "mockble run: \(url.path): step 1 (readRSSI, line 1): expected ok true, got false\n")
    }

    @Test func badInputExitsTwo() async throws {
        let invalid = try temporaryFile("invalid.json", #"{"peripheral": {}, "steps": [{"op": "jump"}]}"#)
        let cases: [([String], String)] = [
            (["run"], "name a scenario file"),
            (["run", "a.json", "b.json"], "run takes one scenario file, not 2"),
            (["run", "x.json", "--format", "xml"], "--format must be one of text, json, mermaid"),
            (["run", "x.json", "--seed", "-1"], "--seed must be a whole number"),
            (["run", "x.json", "--mode", "slow"], "--mode must be one of fast, realistic"),
            (["run", "x.json", "--speed", "1"], "unknown option \"--speed\""),
            (["run", "/nonexistent/x.json"], "no such file: /nonexistent/x.json"),
            (["run", invalid.path], "invalid.json:1:37: steps[0].op: unknown op \"jump\""),
        ]
        for (arguments, message) in cases {
            let (console, captured) = Console.capturing()
            let status = await Mockble.main(arguments: arguments, console: console)
            #expect(status == .badInput, "\(arguments)")
            #expect(captured.error.contains(message), "\(arguments): \(captured.error)")
            #expect(captured.output.isEmpty)
        }
    }

    @Test func aRealisticScenarioWithoutASeedNeedsOneFromTheCommandLine() async throws {
        let url = try temporaryFile("noseed.json", #"{"mode": "realistic", "peripheral": {}, "steps": []}"#)
        let (status, output) = await run("run", url.path)
        #expect(status == .badInput)
        #expect(output.error.contains("realistic mode needs a seed"))
        let (seeded, _) = await run("run", url.path, "--seed", "3")
        #expect(seeded == .success)
    }

    @Test func validateAcceptsEveryBundledFixtureAndScenario() async throws {
        let files =
            try FixtureDirectory.jsonFiles(in: Self.scenarios)
            + FixtureDirectory.jsonFiles(in: FixtureDirectory.peripherals)
        let (console, captured) = Console.capturing()
        let status = await Mockble.main(arguments: ["validate"] + files.map(\.path), console: console)
        #expect(status == .success)
        #expect(captured.error.isEmpty)
        let lines = captured.output.split(separator: "\n")
        #expect(lines.count == files.count)
        #expect(lines.allSatisfy { $0.hasPrefix("ok: ") })
        #expect(
            captured.output.contains("heart-rate-basic.json: scenario \"heart-rate-basic\", realistic mode, 10 steps"))
        #expect(captured.output.contains("heart-rate.json: peripheral profile \"Heart Rate Sensor\", 2 services"))
    }

    @Test func validateReportsEachBadFileAndExitsTwo() async throws {
        let good = Self.scenarios.appendingPathComponent("nordic-uart.json").path
        let bad = try temporaryFile("bad.json", #"{"name": 1}"#)
        let (status, output) = await run("validate", good, bad.path, "/nonexistent/none.json")
        #expect(status == .badInput)
        #expect(output.output == "ok: \(good): scenario \"nordic-uart\", fast mode, 8 steps, 3 expectations\n")
        #expect(output.error.contains("invalid: bad.json:1:10: name: expected a string"))
        #expect(output.error.contains("invalid: none.json: no such file: /nonexistent/none.json"))
        let (none, noneOutput) = await run("validate")
        #expect(none == .badInput)
        #expect(noneOutput.error.contains("name at least one file"))
    }
}
