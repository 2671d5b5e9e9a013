import BLECBM
import BLECapture
import BLECore
import BLEMockKit
import Foundation
import Testing

@testable import BlinkyExample

/// The examples run with the suite-wide time limit, like every other suite.
@Suite(.timeLimit(.minutes(10)))
struct CBMRecordingExampleTests {
    // The documentation's recording example for BLECBM, compiled and run here;
    // scripts/sync-doc-examples.py copies it into the documents.

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test func aDelegateAppRecordsItsSession() async throws {
        let bridge = MockBLEBridge(configuration: .realistic(seed: 3))
        let blinky = try await PeripheralProfile.bundled(.nrfBlinky).makePeripheral(on: bridge)
        _ = try await blinky.setValue(Data([0x00]), forCharacteristicID: "button")
        _ = try await blinky.setValue(Data([0x00]), forCharacteristicID: "led")

        let recording = try await bridge.run { @MainActor in
            let app = BlinkyManager()
            // One line, in a debug build of the app: on a phone, with `ContinuousClock()`.
            let recorder = SessionRecorder(clock: bridge.clock)
            app.centralManager.sessionRecorder = recorder

            try await bridge.waitForApp { !app.discovered.isEmpty }
            app.discovered[0].connect()
            try await bridge.waitForApp { app.discovered[0].isLEDOn != nil }
            return recorder.recording
        }
        let imported = try RecordingImporter().importRecording(recording, name: "blinky")
        let trace = await ScenarioRunner(imported.scenario).run()
        #expect(trace.passed)
    }
}
