import BLECapture
import BLEMockKit
import Foundation
import Testing

@testable import MockbleCLI

@Suite("mockble import of a recording", .timeLimit(.minutes(10)))
struct ImportRecordingCommandTests {
    static var recording: String {
        FixtureDirectory.root.appendingPathComponent("recordings/hybrid-watch.recording.json").path
    }

    func run(_ arguments: [String]) async -> (CommandStatus, CapturedOutput) {
        let (console, captured) = Console.capturing()
        return (await Mockble.main(arguments: arguments, console: console), captured)
    }

    /// The test's own files, removed when it ends.
    let scratch = ScratchFolder("mockble-import-recording")

    /// A path for one test's outputs, where nothing is yet.
    func outputDirectory(_ test: String) -> URL { scratch.url.appendingPathComponent(test) }

    /// The link figures' line says the writes' figure is the rate the app queued them at (which
    /// the stack's queue lets run ahead of the link), not a throughput of the link, as it read.
    @Test func theLinkFiguresLineNamesTheWritesFigureAsTheAppsQueueingRate() {
        let figures = LinkFigures(
            mtu: 185, connections: 2, notifications: 361, notificationEvents: 91,
            connectionInterval: .microseconds(29_700), packetsPerConnectionEvent: 4, notificationThroughput: 24_167,
            writeWithoutResponseThroughput: 34_425)
        #expect(
            Subcommand.describe(figures)
                == "ATT_MTU 185, 2 connections, 361 notifications in 91 connection events, interval 29.7ms, 4 packets "
                + "per event, notifications 24167 B/s, writes without response queued at 34425 B/s")
        #expect(
            Subcommand.describe(LinkFigures(connections: 1))
                == "1 connection, 0 notifications in 0 connection events, interval unknown")
    }

    @Test func aRecordingImportsWithItsPlaceholderAndTheScenarioRuns() async throws {
        let out = outputDirectory("ok")
        let (status, output) = await run([
            "import", Self.recording, "--placeholder", "settings=0a0b0c", "--out", out.path,
        ])
        #expect(status == .success, "\(output.error)")
        #expect(output.error.isEmpty)
        let lines = output.output.split(separator: "\n").map(String.init)
        #expect(lines.first == "imported the session with peripheral E4546FDA-DA9E-4A73-96DA-AEC92CD44D42")
        #expect(lines.contains("wrote \(out.path)/hybrid-watch.peripheral.json: 3 services, 8 characteristics"))
        #expect(lines.last?.hasPrefix("link: ATT_MTU 185, 1 connection, 1 notification in 1 connection event") == true)
        let (runStatus, runOutput) = await run(["run", out.appendingPathComponent("hybrid-watch.scenario.json").path])
        #expect(runStatus == .success, "\(runOutput.output)")
    }

    /// An empty value is a value (`settings=`): the placeholder's bytes are empty.
    @Test func aPlaceholderMayBeGivenAnEmptyValue() async throws {
        let out = outputDirectory("empty")
        let (status, output) = await run(["import", Self.recording, "--placeholder", "settings=", "--out", out.path])
        #expect(status == .success, "\(output.error)")
        let scenario = try String(
            contentsOf: out.appendingPathComponent("hybrid-watch.scenario.json"), encoding: .utf8)
        #expect(scenario.contains(#""value": {"hex": ""}"#))
    }

    @Test(arguments: [
        (
            ["--placeholder", "settings"],
            "mockble import: --placeholder takes NAME=HEX pairs separated by commas, e.g. token=0011aabb; "
                + "not \"settings\"\n"
        ),
        (
            ["--placeholder", "settings=0a0"],
            "mockble import: --placeholder takes NAME=HEX pairs separated by commas, e.g. token=0011aabb; "
                + "not \"settings=0a0\"\n"
        ),
        (
            ["--placeholder", "settings=zz"],
            "mockble import: --placeholder takes NAME=HEX pairs separated by commas, e.g. token=0011aabb; "
                + "not \"settings=zz\"\n"
        ),
        (
            ["--placeholder", "settings=+f+f"],
            "mockble import: --placeholder takes NAME=HEX pairs separated by commas, e.g. token=0011aabb; "
                + "not \"settings=+f+f\"\n"
        ),
        (
            ["--placeholder", "settings=0a,settings=0b"],
            "mockble import: --placeholder gives settings twice; give each placeholder one value\n"
        ),
        (
            ["--placeholder", "=0a"],
            "mockble import: --placeholder takes NAME=HEX pairs separated by commas, e.g. token=0011aabb; "
                + "not \"=0a\"\n"
        ),
        (
            ["--peer", "F1:E2:D3:C4:B5:A6"],
            "mockble import: \"F1:E2:D3:C4:B5:A6\" is not a peripheral identifier; a recording names peripherals "
                + "by UUID, e.g. E621E1F8-C36C-495A-93FC-0C247A3E6E5F\n"
        ),
    ])
    func badOptionsForARecordingExitTwoSayingWhy(options: [String], message: String) async {
        let (status, output) = await run(["import", Self.recording] + options)
        #expect(status == .badInput)
        #expect(output.error == message)
        #expect(output.output.isEmpty)
    }

    @Test func aRecordingWithoutItsPlaceholderExitsTwoNamingIt() async {
        let (status, output) = await run(["import", Self.recording, "--out", outputDirectory("missing").path])
        #expect(status == .badInput)
        #expect(
            output.error
                == "mockble import: \(Self.recording): the recording keeps the private value \"settings\" out; "
                + "supply a value for it (e.g. mockble import --placeholder settings=HEX)\n")
    }

    @Test func anotherPeripheralThanTheRecordedOneExitsTwoNamingTheRecordedOne() async {
        let (status, output) = await run([
            "import", Self.recording, "--peer", "E621E1F8-C36C-495A-93FC-0C247A3E6E5F", "--placeholder", "settings=00",
        ])
        #expect(status == .badInput)
        #expect(
            output.error
                == "mockble import: \(Self.recording): the recording has no connection to "
                + "E621E1F8-C36C-495A-93FC-0C247A3E6E5F; it connected to E4546FDA-DA9E-4A73-96DA-AEC92CD44D42\n")
    }

    @Test("An empty or blank recording file is named as an empty recording, not as a capture", arguments: ["", " \n"])
    func anEmptyRecordingIsNamedAsOne(content: String) async throws {
        let file = outputDirectory("empty-\(content.count)").appendingPathExtension("recording.json")
        try Data(content.utf8).write(to: file)
        let (status, output) = await run(["import", file.path])
        #expect(status == .badInput)
        let position = content.isEmpty ? "1:1" : "2:1"
        #expect(
            output.error
                == "mockble import: \(file.path): not a valid recording: \(file.lastPathComponent):\(position): the "
                + "document is empty; write the JSON object the file is for\n")
    }

    @Test func aDamagedRecordingExitsTwoNamingTheLineAndField() async throws {
        let file = outputDirectory("damaged").appendingPathExtension("json")
        try Data(
            """
            {"format": "mockble-recording", "version": 1, "events": [
              {"time": "0s", "event": "conected", "peripheral": "E4546FDA-DA9E-4A73-96DA-AEC92CD44D42"}
            ]}
            """.utf8
        ).write(to: file)
        let (status, output) = await run(["import", file.path])
        #expect(status == .badInput)
        #expect(
            output.error
                == "mockble import: \(file.path): not a valid recording: \(file.lastPathComponent):2:27: "
                + "events[0].event: unknown event \"conected\"; did you mean \"connected\"? use one of scanStarted, "
                + "scanStopped, discovered, connected, connectionFailed, disconnected, services, characteristics, "
                + "descriptors, read, write, notificationState, update\n")
    }

    @Test(arguments: ["run", "validate"])
    func runAndValidateSendARecordingToImport(command: String) async {
        let (status, output) = await run([command, Self.recording])
        #expect(status == .badInput)
        #expect(output.error.contains("is a recording;"))
        #expect(output.error.contains("`mockble import \(Self.recording)` makes"))
    }
}
