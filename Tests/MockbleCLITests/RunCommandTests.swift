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

    /// The test's own files, removed when it ends.
    let scratch = ScratchFolder("mockble-run")

    /// A file of `contents` named `name`, alone in a new folder of the test's own.
    func temporaryFile(_ name: String, _ contents: String) throws -> URL {
        let url = try scratch.newFolder().appendingPathComponent(name)
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
        #expect(text.output.contains("\nall 3 expectations held\n"))
        #expect(text.output.contains("  xfail  "))  // its last step fails as its expect says
        let (_, mermaid) = await run("run", "--format=mermaid", file)
        #expect(mermaid.output.hasPrefix("sequenceDiagram\n"))
    }

    @Test func seedAndModeOverrideTheFile() async {
        let file = Self.scenarios.appendingPathComponent("nordic-uart.json").path
        let (status, output) = await run("run", file, "--seed", "5", "--mode", "realistic")
        #expect(status == .success)
        #expect(output.output.hasPrefix("nordic-uart (realistic mode, seed 5)\n"))
    }

    /// A folder or a device where a file belongs is named as such (it was called a permissions
    /// problem), and so is an output path that is a folder or whose folder is missing (the
    /// system's words were "NSCocoaErrorDomain error 512").
    @Test func pathsThatAreNotFilesAreNamedForWhatTheyAre() async throws {
        let scenario = Self.scenarios.appendingPathComponent("nordic-uart.json").path
        // A scenario whose peripheral file is a folder.
        let file = try temporaryFile("folder-peripheral.json", #"{"peripheral": "device.json", "steps": []}"#)
        let folder = file.deletingLastPathComponent()
        try FileManager.default.createDirectory(
            at: folder.appendingPathComponent("device.json"), withIntermediateDirectories: true)
        let (folderStatus, fromFolder) = await run("run", file.path)
        #expect(folderStatus == .badInput)
        #expect(
            fromFolder.error.contains(
                "cannot read \(folder.path)/device.json: it is a folder; give the path of a JSON file"),
            "\(fromFolder.error)")
        let (outStatus, toFolder) = await run("run", scenario, "--out", folder.path)
        #expect(outStatus == .badInput)
        #expect(
            toFolder.error
                == "mockble run: cannot write \(folder.path): it is a folder; give a file path, e.g. \(folder.path)/trace.txt\n"
        )
        let missing = folder.appendingPathComponent("no/such/trace.txt").path
        let (missingStatus, toMissing) = await run("run", scenario, "--out", missing)
        #expect(missingStatus == .badInput)
        #expect(
            toMissing.error.contains("there is no folder \(folder.path)/no/such; create it first"), "\(toMissing.error)"
        )
        if FileManager.default.fileExists(atPath: "/dev/null") {
            let (deviceStatus, fromDevice) = await run("run", "/dev/null")
            #expect(deviceStatus == .badInput)
            #expect(fromDevice.error.contains("cannot read /dev/null: it is not a regular file"), "\(fromDevice.error)")
        }
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
            (["run", ""], "mockble run: an empty argument names no file (a variable left unset?)"),
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
        #expect(output.error.contains("invalid: \(bad.path):1:10: name: expected a string"))
        #expect(output.error.contains("invalid: /nonexistent/none.json: no such file: /nonexistent/none.json"))
        let (none, noneOutput) = await run("validate")
        #expect(none == .badInput)
        #expect(noneOutput.error.contains("name at least one file"))
    }

    @Test func runGivenAFolderSaysItIsAFolderAndThatRunExpectsAScenarioFile() async {
        let folder = FixtureDirectory.peripherals.path
        let (status, output) = await run("run", folder)
        #expect(status == .badInput)
        #expect(output.error == "mockble run: `\(folder)` is a folder; `run` expects a scenario file (.json)\n")
        #expect(output.output.isEmpty)
    }

    @Test func runGivenAPeripheralProfileSaysSoAndPointsToValidate() async {
        let profile = FixtureDirectory.peripherals.appendingPathComponent("heart-rate.json").path
        let (status, output) = await run("run", profile, "--format", "json")
        #expect(status == .badInput)
        #expect(
            output.error
                == "mockble run: `\(profile)` is a peripheral profile; `run` expects a scenario — `validate` checks "
                + "profiles\n")
        #expect(output.output.isEmpty)
    }

    @Test func runGivenAnInvalidFileWithoutStepsReportsTheScenarioError() async throws {
        let url = try temporaryFile("neither.json", #"{"name": "x", "colour": 1}"#)
        let (status, output) = await run("run", url.path)
        #expect(status == .badInput)
        #expect(output.error.hasPrefix("mockble run: \(url.path):1:"))
        #expect(!output.error.contains("peripheral profile;"))
    }

    @Test func runGivenACaptureSaysToImportItFirst() async {
        let capture = FixtureDirectory.root.appendingPathComponent("captures/notifications.btsnoop").path
        let (status, output) = await run("run", capture)
        #expect(status == .badInput)
        #expect(
            output.error
                == "mockble run: `\(capture)` is a Bluetooth capture; `run` expects a scenario — `mockble import "
                + "\(capture)` makes one from it\n")
    }

    @Test func validateGivenAFolderSaysItIsAFolderAndChecksTheOtherFiles() async {
        let folder = FixtureDirectory.peripherals.path
        let battery = FixtureDirectory.peripherals.appendingPathComponent("battery.json").path
        let (status, output) = await run("validate", folder + "/", battery)
        #expect(status == .badInput)
        #expect(
            output.error
                == "mockble validate: `\(folder)/` is a folder; `validate` expects files (.json), e.g. mockble "
                + "validate \(folder)/*.json\n")
        #expect(output.output == "ok: \(battery): peripheral profile \"Battery Tag\", 1 service, 1 characteristic\n")
    }

    @Test func validateGivenACaptureSaysToImportItFirst() async {
        let capture = FixtureDirectory.root.appendingPathComponent("captures/notifications.btsnoop").path
        let (status, output) = await run("validate", capture)
        #expect(status == .badInput)
        #expect(
            output.error
                == "mockble validate: `\(capture)` is a Bluetooth capture; `validate` expects profiles and scenarios "
                + "(.json) — `mockble import \(capture)` makes them from it\n")
    }

    @Test func validateCountsOneStepAndOneExpectationInTheSingular() async throws {
        let url = try temporaryFile(
            "single.json", #"{"peripheral": {"services": []}, "steps": [{"op": "scan", "expect": {"ok": true}}]}"#)
        let (status, output) = await run("validate", url.path)
        #expect(status == .success)
        #expect(output.output == "ok: \(url.path): scenario \"single\", fast mode, 1 step, 1 expectation\n")
        let empty = try temporaryFile("empty.json", #"{"name": "Empty", "services": []}"#)
        let (_, emptyOutput) = await run("validate", empty.path)
        #expect(
            emptyOutput.output == "ok: \(empty.path): peripheral profile \"Empty\", 0 services, 0 characteristics\n")
    }
}
