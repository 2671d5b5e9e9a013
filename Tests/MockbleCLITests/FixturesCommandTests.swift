import BLEMockKit
import Foundation
import Testing

@testable import MockbleCLI

@Suite("mockble fixtures", .timeLimit(.minutes(10)))
struct FixturesCommandTests {
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
        let (console, captured) = Console.capturing()
        let status = await Mockble.main(arguments: ["fixtures", "--dir", "/nonexistent/fixtures"], console: console)
        #expect(status == .badInput)
        #expect(captured.error.contains("/nonexistent/fixtures"))
    }

    @Test func anInvalidProfileIsReportedWithItsPositionAndBadInput() async throws {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("mockble-fixtures-\(#line)-\(ProcessInfo.processInfo.processIdentifier)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        try Data(#"{"name": "X", "colour": 1}"#.utf8).write(to: directory.appendingPathComponent("bad.json"))
        let (console, captured) = Console.capturing()
        let status = await Mockble.main(arguments: ["fixtures", "--dir", directory.path], console: console)
        #expect(status == .badInput)
        #expect(captured.error.contains("bad.json:1:"))
        #expect(captured.error.contains("colour"))
    }

    @Test func positionalArgumentsAreRejected() async {
        let (console, captured) = Console.capturing()
        let status = await Mockble.main(arguments: ["fixtures", "extra"], console: console)
        #expect(status == .badInput)
        #expect(captured.error.contains("\"extra\""))
    }
}
