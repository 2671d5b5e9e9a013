import BLECore
import BLEMockKit
import Foundation
import Testing

@testable import BLECapture

/// `Fixtures/recordings/hybrid-watch.recording.json`: the companion app's short session with
/// the bundled watch on a realistic bridge, its configuration value marked private.
@Suite("The bundled recording", .timeLimit(.minutes(10)))
struct BundledRecordingTests {
    static var url: URL {
        URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent()  // Recording
            .deletingLastPathComponent()  // BLECaptureTests
            .deletingLastPathComponent()  // Tests
            .deletingLastPathComponent()  // repository root
            .appendingPathComponent("Fixtures/recordings/hybrid-watch.recording.json")
    }

    /// The session the file holds, recorded again.
    static func record() async throws -> SessionRecording {
        let bridge = MockBLEBridge(configuration: .realistic(seed: 7))
        return try await bridge.run {
            let watch = try await PeripheralProfile.bundled(.fitnessWatch).makePeripheral(
                on: bridge, configuration: .realistic(seed: 7))
            let recorder = SessionRecorder(clock: bridge.clock)
            recorder.markPrivate(WatchCompanionApp.configuration, as: "settings")
            let central = await RecordingCentralManager(
                MockCentralManager(configuration: .realistic(seed: 7), bridge: bridge), recorder: recorder)
            var app = await WatchCompanionApp(central: central)
            _ = try await app.shortSession(watch: watch)
            return recorder.recording
        }
    }

    @Test func theFileIsWhatTheAppRecordsToday() async throws {
        let recording = try await Self.record()
        let text = try String(contentsOf: Self.url, encoding: .utf8)
        #expect(
            recording.jsonText == text,
            "the session records differently now; if that is intended, write recording.jsonText to \(Self.url.path)")
        #expect(try SessionRecording(json: Data(text.utf8)) == recording)
        #expect(recording.placeholders == ["settings"])
    }

    @Test func theFileImportsWithItsPlaceholderSuppliedAndReplaysWithEveryExpectationHeld() async throws {
        let settings = Data([0x0A, 0x0B, 0x0C])
        let imported = try RecordingImporter(placeholders: ["settings": settings]).importRecording(
            contentsOf: Self.url)
        #expect(imported.name == "hybrid-watch")
        #expect(imported.profileFileName == "hybrid-watch.peripheral.json")
        let configuration = try #require(imported.profile.characteristic(id: "h000B"))
        #expect(configuration.uuid == WatchCompanionApp.configuration)
        #expect(imported.scenarioJSON().contains(#""value": {"hex": "0a0b0c"}"#))
        let trace = await ScenarioRunner(imported.scenario).run()
        #expect(trace.passed, "\(trace.failures)")
        let reads = trace.records.filter { $0.op == "read" }.compactMap(\.value)
        #expect(reads.last == settings)
    }

    @Test func withoutItsPlaceholderTheFileDoesNotImport() throws {
        #expect(throws: RecordingImportError.missingPlaceholder("settings", supplied: ["other"])) {
            try RecordingImporter(placeholders: ["other": Data([1])]).importRecording(contentsOf: Self.url)
        }
    }
}
