import BLECapture
import BLEMockKit
import Foundation
import Testing

// The capture import examples of README.md and the BLECapture catalog, verbatim:
// `everyDocumentedSwiftBlockIsCompiled` checks that each Swift block appears in an example file.

/// The examples run with the suite-wide time limit, like every other suite.
@Suite(.timeLimit(.minutes(10)))
struct CaptureImportExampleTests {
    /// The checkout's `Fixtures/captures` folder.
    private let capturesFolder = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Fixtures/captures")

    @Test func replayingARealDeviceFromACapture() async throws {
        // A btsnoop capture of a real conversation (here one recorded from the bumble stack).
        let capture = capturesFolder.appendingPathComponent("notifications.btsnoop")
        let imported = try CaptureImporter().importCapture(contentsOf: capture)

        // The device as a profile: its GATT database, the values read, its MTU.
        #expect(imported.profile.preferredMTU == 185)
        #expect(imported.profile.characteristic(id: "h0010")?.uuid == "2A37")

        // The conversation as a scenario: notifications with their payloads and times.
        let trace = await ScenarioRunner(imported.scenario).run()
        #expect(trace.passed)
        #expect(trace.records.first { $0.op == "notify" }?.received == [Data([0x06, 0x48])])

        // What the capture did not show for certain is listed, not guessed.
        for warning in imported.warnings { print(warning) }
    }

    @Test func importingAPacketLoggerCapture() throws {
        // A PacketLogger capture (.pklg) imports the same way; the content tells the format.
        let capture = capturesFolder.appendingPathComponent("notifications.pklg")
        let imported = try CaptureImporter().importCapture(contentsOf: capture)
        #expect(imported.format == .packetLogger)
        #expect(imported.profile.characteristic(id: "h0010")?.uuid == "2A37")

        // Apple's own records (notes, power changes, log lines) are skipped: one warning per kind.
        let skipped = imported.warnings.filter {
            if case .skippedRecords = $0.kind { true } else { false }
        }
        #expect(skipped.count == 2)
    }
}
