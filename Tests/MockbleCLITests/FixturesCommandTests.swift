import BLEMockKit
import Foundation
import Testing

@testable import MockbleCLI

@Suite("mockble fixtures", .timeLimit(.minutes(10)))
struct FixturesCommandTests {
    @Test func outsideACheckoutTheProfilesBuiltIntoTheKitAreListedAsTheFolderWouldBe() async throws {
        #expect(
            FixtureDirectory.existingPeripherals(
                source: "/nowhere/Sources/MockbleCLI/F.swift", currentDirectory: "/nowhere") == nil)
        #expect(
            FixtureDirectory.existingPeripherals(
                source: "/nowhere/Sources/MockbleCLI/F.swift",
                currentDirectory: FixtureDirectory.root.deletingLastPathComponent().path)
                == FixtureDirectory.peripherals)
        #expect(FixtureDirectory.existingPeripherals(currentDirectory: "/nowhere") == FixtureDirectory.peripherals)
        let (builtIn, fromBuiltIn) = Console.capturing()
        #expect(FixtureListing.listBuiltIn(console: builtIn) == .success)
        let (folder, fromFolder) = Console.capturing()
        #expect(await Mockble.main(arguments: ["fixtures"], console: folder) == .success)
        #expect(fromBuiltIn.output == fromFolder.output)
        #expect(
            fromBuiltIn.error
                == "mockble fixtures: no Fixtures/peripherals folder here, so these are the "
                + "\(BundledProfile.allCases.count) profiles built into the kit; a scenario names one as "
                + "{\"peripheral\": {\"bundled\": \"NAME\"}} (NAME: the file name without .json)\n")
    }

    @Test func itListsEveryBundledProfileWithItsServices() async throws {
        let (console, captured) = Console.capturing()
        let status = await Mockble.main(arguments: ["fixtures"], console: console)
        #expect(status == .success)
        #expect(captured.error.isEmpty)
        let files = try FixtureDirectory.jsonFiles(in: FixtureDirectory.peripherals)
        #expect(files.count >= 8)
        for file in files {
            let profile = try PeripheralProfile.load(contentsOf: file)
            #expect(captured.output.contains("\(file.lastPathComponent): \(profile.name ?? "(unnamed)")"))
            for service in profile.services {
                #expect(captured.output.contains("service \(service.uuid)"))
            }
        }
        #expect(captured.output.contains("hrm 2A37 [notify] dynamic"))
    }

    @Test func aMissingDirectoryIsBadInput() async {
        let (status, captured) = await run("fixtures", "--dir", "/nonexistent/fixtures")
        #expect(status == .badInput)
        #expect(
            captured.error
                == "mockble fixtures: no such folder: `/nonexistent/fixtures`; `--dir` expects a folder of peripheral "
                + "profiles (.json)\n")
    }

    @Test func anEmptyDirSaysTheFolderIsEmptyAndWhatDirExpects() async throws {
        let directory = try temporaryDirectory()
        let (status, captured) = await run("fixtures", "--dir", directory.path)
        #expect(status == .badInput)
        #expect(
            captured.error
                == "mockble fixtures: `\(directory.path)` is an empty folder; `--dir` expects a folder of peripheral "
                + "profiles (.json)\n")
        #expect(captured.output.isEmpty)
        try Data("notes".utf8).write(to: directory.appendingPathComponent("README.txt"))
        let (withText, withTextOutput) = await run("fixtures", "--dir", directory.path)
        #expect(withText == .badInput)
        #expect(
            withTextOutput.error
                == "mockble fixtures: `\(directory.path)` has no .json files; `--dir` expects a folder of peripheral "
                + "profiles (.json)\n")
    }

    @Test func anEmptyDirValueSaysWhatDirExpects() async {
        let (status, captured) = await run("fixtures", "--dir=")
        #expect(status == .badInput)
        #expect(
            captured.error == "mockble fixtures: --dir is empty; it expects a folder of peripheral profiles (.json)\n")
    }

    @Test func aFileGivenAsDirSaysWhatItIsAndWhatDirExpects() async {
        let profile = FixtureDirectory.peripherals.appendingPathComponent("battery.json").path
        let (status, captured) = await run("fixtures", "--dir", profile)
        #expect(status == .badInput)
        #expect(
            captured.error
                == "mockble fixtures: `\(profile)` is a peripheral profile; `--dir` expects a folder of peripheral "
                + "profiles (.json) — `validate` checks one profile\n")
        let scenario = FixtureDirectory.root.appendingPathComponent("scenarios/nordic-uart.json").path
        let (_, scenarioOutput) = await run("fixtures", "--dir", scenario)
        #expect(
            scenarioOutput.error
                == "mockble fixtures: `\(scenario)` is a scenario; `--dir` expects a folder of peripheral profiles "
                + "(.json) — `run` runs scenarios\n")
    }

    @Test func aFolderOfScenariosSaysItHoldsNoProfiles() async {
        let folder = FixtureDirectory.root.appendingPathComponent("scenarios").path
        let count = (try? FileManager.default.contentsOfDirectory(atPath: folder))?.filter { $0.hasSuffix(".json") }
            .count
        #expect((count ?? 0) > 1)
        let (status, captured) = await run("fixtures", "--dir", folder)
        #expect(status == .badInput)
        #expect(
            captured.error
                == "mockble fixtures: `\(folder)` holds \(count ?? 0) scenarios and no peripheral profiles; `--dir` expects a "
                + "folder of peripheral profiles (.json) — `run` runs scenarios\n")
        #expect(captured.output.isEmpty)
    }

    @Test func aScenarioBesideProfilesIsSkippedAndCounted() async throws {
        let directory = try temporaryDirectory()
        try Data(#"{"name": "Tag", "services": [{"uuid": "180F", "characteristics": []}]}"#.utf8)
            .write(to: directory.appendingPathComponent("tag.peripheral.json"))
        try Data(#"{"peripheral": "tag.peripheral.json", "steps": []}"#.utf8)
            .write(to: directory.appendingPathComponent("tag.scenario.json"))
        let (status, captured) = await run("fixtures", "--dir", directory.path)
        #expect(status == .success)
        #expect(
            captured.output
                == "tag.peripheral.json: Tag\n  advertises name \"Tag\"; service 180F\n"
                + "  service 180F (primary, 0 characteristics)\n")
        #expect(
            captured.error
                == "mockble fixtures: skipped 1 scenario (tag.scenario.json): `fixtures` lists peripheral profiles; "
                + "`run` runs scenarios\n")
    }

    @Test func countsInTheListingAgreeWithTheirNouns() async {
        let (status, captured) = await run("fixtures")
        #expect(status == .success)
        #expect(captured.output.contains("battery.json: Battery Tag\n"))
        #expect(captured.output.contains("  service 180F (primary, 1 characteristic)\n"))
        #expect(!captured.output.contains(" 1 characteristics"))
        #expect(captured.output.contains("  advertises name \"BatteryTag\"; service 180F\n"))
    }

    @Test func anInvalidProfileIsReportedWithItsPositionAndBadInput() async throws {
        let directory = try temporaryDirectory()
        try Data(#"{"name": "X", "colour": 1}"#.utf8).write(to: directory.appendingPathComponent("bad.json"))
        let (console, captured) = Console.capturing()
        let status = await Mockble.main(arguments: ["fixtures", "--dir", directory.path], console: console)
        #expect(status == .badInput)
        #expect(captured.error.contains("bad.json:1:"))
        #expect(captured.error.contains("colour"))
    }

    @Test func positionalArgumentsAreRejected() async {
        let (status, captured) = await run("fixtures", "extra")
        #expect(status == .badInput)
        #expect(captured.error == "mockble fixtures: unexpected argument \"extra\"\n")
    }

    @Test func aFolderGivenWithoutDirSuggestsDir() async {
        let folder = FixtureDirectory.peripherals.path
        let (status, captured) = await run("fixtures", folder)
        #expect(status == .badInput)
        #expect(
            captured.error
                == "mockble fixtures: unexpected argument \"\(folder)\"; to list the profiles in a folder, write "
                + "--dir \(folder)\n")
    }

    func run(_ arguments: String...) async -> (CommandStatus, CapturedOutput) {
        let (console, captured) = Console.capturing()
        return (await Mockble.main(arguments: arguments, console: console), captured)
    }

    /// The test's own files, removed when it ends.
    let scratch = ScratchFolder("mockble-fixtures")

    /// A new empty folder of the test's own.
    func temporaryDirectory() throws -> URL { try scratch.newFolder() }
}
