import BLECapture
import BLECore
import BLEMockKit
import Foundation
import Testing

// The session recording examples of the BLECapture catalog's "Recording a device session",
// verbatim: `everyDocumentedSwiftBlockIsCompiled` checks that each Swift block appears here.

/// The examples run with the suite-wide time limit, like every other suite.
@Suite(.timeLimit(.minutes(10)))
struct RecordingExampleTests {
    /// The checkout's `Fixtures/recordings` folder.
    private let recordingsFolder = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Fixtures/recordings")

    @Test func recordingASessionThroughTheRecorder() async throws {
        // Here the "device" is a mock of the bundled heart rate sensor; on a phone, the central
        // would be the CoreBluetooth adapter and the clock `ContinuousClock()`.
        let bridge = MockBLEBridge()
        let sensor = try await PeripheralProfile.bundled(.heartRate).makePeripheral(on: bridge)
        let recorder = SessionRecorder(clock: bridge.clock)
        let central = await RecordingCentralManager(MockCentralManager(bridge: bridge), recorder: recorder)

        // The app uses `central` as it would any central.
        _ = await central.waitForPoweredOn()
        try await central.scanForPeripherals(withServices: ["180D"])
        await central.stopScan()
        try await central.connect(sensor.identifier)
        try await central.discoverAll(for: sensor.identifier)
        let location = try await central.characteristic("2A38", of: sensor.identifier)
        #expect(try await central.readValue(for: location) == Data([0x01]))
        try await central.cancelPeripheralConnection(sensor.identifier)

        // The recording is a small JSON file: commit it next to the tests.
        let file = recorder.recording.jsonText
        #expect(file.hasPrefix(#"{"format": "mockble-recording", "version": 1"#))

        // In CI, it becomes the sensor's profile and a scenario that replays the session.
        let recording = try SessionRecording(json: Data(file.utf8))
        let imported = try RecordingImporter().importRecording(recording, name: "heart-rate-session")
        #expect(imported.profile.services.map(\.uuid) == ["180D", "180F"])
        let trace = await ScenarioRunner(imported.scenario).run()
        #expect(trace.passed)
    }

    @Test func replayingACommittedRecording() async throws {
        // The app marked the watch's settings private: the test supplies a value for them.
        let file = recordingsFolder.appendingPathComponent("hybrid-watch.recording.json")
        let importer = RecordingImporter(placeholders: ["settings": Data([0x0A, 0x0B, 0x0C])])
        let imported = try importer.importRecording(contentsOf: file)
        let trace = await ScenarioRunner(imported.scenario).run()
        #expect(trace.passed)

        // The link the session saw seeds realistic timing for tests of the app itself.
        let timing = imported.linkFigures.linkTiming
        #expect(imported.linkFigures.mtu == 185)
        let bridge = MockBLEBridge(configuration: MockBLEBridge.Configuration(seed: 1, timing: timing))
        _ = try await imported.profile.makePeripheral(on: bridge)
    }
}
