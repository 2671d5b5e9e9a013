import BLECore
import BLEMockKit
import Foundation
import Testing

@testable import BLECapture

/// Records an app's session through `RecordingCentralManager` against a mock of a bundled
/// profile, and checks that the recording imports to that profile and to a scenario that
/// replays with every expectation held.
@Suite("Recording a session and replaying it", .timeLimit(.minutes(10)))
struct RecordingImportTests {
    /// The database a central discovers on a peripheral: each service with its handles, each
    /// characteristic with its properties and handle, each descriptor with its handle.
    static func database(of profile: PeripheralProfile) async throws -> [String] {
        let bridge = MockBLEBridge()
        let peripheral = try await profile.makePeripheral(on: bridge)
        let central = MockCentralManager(bridge: bridge)
        _ = await central.waitForPoweredOn()
        try await central.scanForPeripherals(withServices: nil)
        await central.stopScan()
        try await central.connect(peripheral.identifier)
        var lines: [String] = []
        for service in try await central.discoverServices(nil, for: peripheral.identifier) {
            lines.append("service \(service.uuid) \(service.handle)…\(service.endHandle) primary=\(service.isPrimary)")
            for characteristic in try await central.discoverCharacteristics(nil, for: service) {
                var line =
                    "  characteristic \(characteristic.uuid) \(characteristic.handle) \(characteristic.properties)"
                if characteristic.properties.contains(.read) {
                    line += " value=" + FixtureBytes.hexString(try await central.readValue(for: characteristic))
                }
                lines.append(line)
                for descriptor in try await central.discoverDescriptors(for: characteristic) {
                    lines.append("    descriptor \(descriptor.uuid) \(descriptor.handle)")
                }
            }
        }
        return lines
    }

    @Test func aRecordedSessionImportsToTheProfileItDiscoveredAndReplaysWithEveryExpectationHeld() async throws {
        let bridge = MockBLEBridge()
        let original = PeripheralProfile.bundled(.fitnessWatch)
        let watch = try await original.makePeripheral(on: bridge)
        let recorder = SessionRecorder(clock: bridge.clock)
        let central = await RecordingCentralManager(MockCentralManager(bridge: bridge), recorder: recorder)
        var app = await WatchCompanionApp(central: central)
        _ = try await app.shortSession(watch: watch)

        let imported = try RecordingImporter().importRecording(recorder.recording, name: "watch")
        #expect(try await Self.database(of: imported.profile) == Self.database(of: original))
        let trace = await ScenarioRunner(imported.scenario).run()
        #expect(trace.passed, "\(trace.failures)")
    }
}
