import BLECapture
import BLEMockKit
import Foundation
import Testing

@testable import MockbleCLI

@Suite("mockble import", .timeLimit(.minutes(10)))
struct ImportCommandTests {
    static var captures: URL { FixtureDirectory.root.appendingPathComponent("captures") }

    func run(_ arguments: String...) async -> (CommandStatus, CapturedOutput) {
        let (console, captured) = Console.capturing()
        return (await Mockble.main(arguments: arguments, console: console), captured)
    }

    /// The test's own files, removed when it ends.
    let scratch = ScratchFolder("mockble-import")

    /// A path for one test's outputs, where nothing is yet.
    func outputDirectory(_ test: String) -> URL { scratch.url.appendingPathComponent(test) }

    @Test func aFolderGivenAsTheCaptureIsNamedAsOne() async throws {
        let folder = outputDirectory("folder-capture")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let (status, output) = await run("import", folder.path)
        #expect(status == .badInput)
        #expect(output.error.contains("cannot read \(folder.path) (it is a folder; give the capture file in it)"))
    }

    @Test func helpDescribesTheCommandAndExitsZero() async {
        let (status, output) = await run("import", "--help")
        #expect(status == .success)
        #expect(
            output.output.hasPrefix(
                """
                Usage: mockble import CAPTURE [--peer ADDRESS] [--out DIR]
                       mockble import RECORDING [--peer UUID] [--placeholder NAME=HEX,...] [--out DIR]

                """))
        #expect(output.output.contains("NAME.scenario.json"))
        let (_, overview) = await run("--help")
        #expect(
            overview.output.contains(
                "  import    Turn a btsnoop/PacketLogger capture or a recording into a profile and a scenario."))
    }

    @Test(arguments: [
        ([], "mockble import: name a capture, e.g. mockble import Fixtures/captures/discovery-reads.btsnoop\n"),
        (["a.btsnoop", "b.btsnoop"], "mockble import: import takes one capture, not 2\n"),
        (
            ["a.btsnoop", "--speed", "2"],
            "mockble import: unknown option \"--speed\" (known: --out, --peer, --placeholder)\n"
        ),
        (["a.btsnoop", "--peer"], "mockble import: --peer needs a value\n"),
        // A capture has no placeholders: the option would be ignored.
        (
            ["a.btsnoop", "--placeholder", "token=00"],
            "mockble import: --placeholder is for a recording's private values; a.btsnoop is a capture, which keeps "
                + "every value as it crossed: leave out --placeholder\n"
        ),
        (
            ["a.btsnoop", "--peer", "F1:E2"],
            "mockble import: \"F1:E2\" is not a Bluetooth address; write it as six hex bytes, e.g. F1:E2:D3:C4:B5:A6\n"
        ),
    ])
    func badArgumentsExitTwoSayingWhy(arguments: [String], message: String) async {
        let (console, captured) = Console.capturing()
        let status = await Mockble.main(arguments: ["import"] + arguments, console: console)
        #expect(status == .badInput)
        #expect(captured.error == message)
        #expect(captured.output.isEmpty)
    }

    @Test func aMissingCaptureExitsTwo() async {
        let (status, output) = await run("import", "/no/such/capture.btsnoop")
        #expect(status == .badInput)
        #expect(output.error == "mockble import: /no/such/capture.btsnoop: no such file: /no/such/capture.btsnoop\n")
    }

    @Test func aFileThatIsNoCaptureExitsTwo() async {
        let file = FixtureDirectory.root.appendingPathComponent("README.md").path
        let (status, output) = await run("import", file)
        #expect(status == .badInput)
        #expect(output.error.contains("not a btsnoop file"))
    }

    @Test func importingWritesAProfileAndAScenarioThatValidateAndRun() async throws {
        let directory = outputDirectory("success")
        let capture = Self.captures.appendingPathComponent("notifications.btsnoop").path
        let (status, output) = await run("import", capture, "--out", directory.path)
        #expect(status == .success)
        let profile = directory.appendingPathComponent("notifications.peripheral.json").path
        let scenario = directory.appendingPathComponent("notifications.scenario.json").path
        #expect(
            output.output == """
                imported the connection to C1:C1:C1:C1:C1:C1 (handle 0x0001)
                wrote \(profile): 2 services, 3 characteristics
                wrote \(scenario): 22 steps
                1 warning (see above): 1 about the profile

                """)
        #expect(
            output.error
                == "warning: \(capture): the GAP (1800) and GATT (1801) services are left out: the simulated stack "
                + "provides them\n")
        let (valid, validation) = await run("validate", profile, scenario)
        #expect(valid == .success, "\(validation.error)")
        let (ran, trace) = await run("run", scenario, "--format", "json")
        #expect(ran == .success, "\(trace.error)")
        #expect(trace.output.split(separator: "\n").count == 22)
    }

    @Test func peerSelectsTheConnectionToImport() async throws {
        let directory = outputDirectory("peer")
        let capture = Self.captures.appendingPathComponent("two-peripherals.btsnoop").path
        let (status, output) = await run("import", capture, "--peer", "C2:C2:C2:C2:C2:C2", "--out", directory.path)
        #expect(status == .success)
        #expect(output.output.hasPrefix("imported the connection to C2:C2:C2:C2:C2:C2 (handle 0x0002)\n"))
        #expect(output.error.contains("skipped the connection to C1:C1:C1:C1:C1:C1 (handle 0x0001)"))
        let profile = try PeripheralProfile.load(
            contentsOf: directory.appendingPathComponent("two-peripherals.peripheral.json"))
        #expect(profile.name == "Battery-2")
        let (ran, _) = await run("run", directory.appendingPathComponent("two-peripherals.scenario.json").path)
        #expect(ran == .success)
    }

    @Test func aPeerTheCaptureDoesNotHaveExitsTwoListingTheOthers() async {
        let capture = Self.captures.appendingPathComponent("two-peripherals.btsnoop").path
        let (status, output) = await run("import", capture, "--peer", "01:02:03:04:05:06")
        #expect(status == .badInput)
        #expect(
            output.error
                == "mockble import: \(capture): the capture has no connection to 01:02:03:04:05:06; it has connections "
                + "to C1:C1:C1:C1:C1:C1, C2:C2:C2:C2:C2:C2\n")
    }

    @Test func anUnwritableOutputDirectoryExitsTwo() async throws {
        let file = outputDirectory("blocked")
        try Data().write(to: file)
        let capture = Self.captures.appendingPathComponent("att-errors.btsnoop").path
        let (status, output) = await run("import", capture, "--out", file.path)
        #expect(status == .badInput)
        #expect(
            output.error.hasSuffix(
                "mockble import: cannot write \(file.path) (check the directory and its permissions)\n"))
    }

    @Test func theWarningSummaryCountsWarningsByWhatTheyAreAbout() {
        let warnings = [
            CaptureWarning(.skippedRecords(.note, count: 2)), CaptureWarning(.skippedRecords(.power, count: 1)),
            CaptureWarning(.profileAdjusted("GAP and GATT left out")), CaptureWarning(.packetsDropped(count: 3)),
        ]
        #expect(
            Subcommand.warningSummary(warnings)
                == "4 warnings (see above): 2 about skipped PacketLogger records, 1 about the profile, "
                + "1 about packets that could not be read")
        #expect(Subcommand.warningSummary([]) == nil)
        #expect(
            Subcommand.warningSummary([CaptureWarning(.encryptedTraffic(hiddenPackets: 4))])
                == "1 warning (see above): 1 about encrypted traffic")
    }

    @Test func aPacketLoggerImportSummarisesItsSkippedRecords() async throws {
        let directory = outputDirectory("pklg")
        let capture = Self.captures.appendingPathComponent("notifications.pklg").path
        let (status, output) = await run("import", capture, "--out", directory.path)
        #expect(status == .success)
        #expect(
            output.output.hasSuffix(
                "3 warnings (see above): 2 about skipped PacketLogger records, 1 about the profile\n"))
    }

    /// A little-endian PacketLogger file whose first record is 123 bytes long: its first byte is
    /// that of `{`, so the file starts as a JSON recording does.
    static func packetLoggerStartingWithABrace() throws -> Data {
        var bytes = Array(try Data(contentsOf: captures.appendingPathComponent("notifications.pklg")))
        #expect(bytes.prefix(4) != [0x7B, 0, 0, 0])
        // A note (0xFC) of 114 bytes, at the first record's time: 9 + 114 = 123 = 0x7B.
        let note = [0x7B, 0, 0, 0] + bytes[4..<12] + [0xFC] + Array(repeating: UInt8(ascii: "A"), count: 113) + [0]
        bytes.insert(contentsOf: note, at: 0)
        return Data(bytes)
    }

    @Test(arguments: ["pklg", "bin"])
    func aPacketLoggerFileStartingLikeJSONIsImportedAsACapture(fileExtension: String) async throws {
        let directory = outputDirectory("brace-\(fileExtension)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let capture = directory.appendingPathComponent("brace.\(fileExtension)")
        try Self.packetLoggerStartingWithABrace().write(to: capture)
        let (status, output) = await run("import", capture.path, "--out", directory.path)
        #expect(status == .success, "\(output.error)")
        #expect(output.output.hasPrefix("imported the connection to "))
        #expect(FileManager.default.fileExists(atPath: directory.appendingPathComponent("brace.scenario.json").path))
    }

    @Test func runAndValidateKnowAPacketLoggerFileByItsContent() async throws {
        let directory = outputDirectory("content")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let capture = directory.appendingPathComponent("session.bin")
        try Data(contentsOf: Self.captures.appendingPathComponent("discovery-reads.pklg")).write(to: capture)
        #expect(FileKind(path: capture.path) == .capture)
        #expect(FileKind(contents: try Self.packetLoggerStartingWithABrace()) == .capture)
        #expect(FileKind(contents: Data("{\"steps\": []".utf8)) == .other)
        let (runStatus, run) = await run("run", capture.path)
        #expect(runStatus == .badInput)
        #expect(
            run.error
                == "mockble run: `\(capture.path)` is a Bluetooth capture; `run` expects a scenario — "
                + "`mockble import \(capture.path)` makes one from it\n")
        let (validateStatus, validate) = await self.run("validate", capture.path)
        #expect(validateStatus == .badInput)
        #expect(validate.error.contains("`\(capture.path)` is a Bluetooth capture; `validate` expects profiles"))
    }
}
