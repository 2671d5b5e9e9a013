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

extension RecordingImportTests {
    /// The long session on a realistic bridge with `timing`, against `profile`: returns the
    /// recording and the file the app received.
    static func recordTransfer(
        profile: PeripheralProfile, timing: LinkTiming, file: Data, upload: Data
    ) async throws -> (SessionRecording, Data) {
        let bridge = MockBLEBridge(configuration: MockBLEBridge.Configuration(seed: 37, timing: timing))
        return try await bridge.run {
            let watch = try await profile.makePeripheral(on: bridge, configuration: .realistic(seed: 37))
            let firmware = bridge.task { try await WatchFirmware(watch: watch, file: file, dropAfter: 32_768).serve() }
            let recorder = SessionRecorder(clock: bridge.clock)
            let central = await RecordingCentralManager(
                MockCentralManager(configuration: .realistic(seed: 37), bridge: bridge), recorder: recorder)
            var app = await WatchCompanionApp(central: central)
            let received = try await app.transferSession(fileLength: file.count, upload: upload)
            try await firmware.value
            return (recorder.recording, received)
        }
    }

    /// An entry's event, with an advertisement's signal strength (drawn at random) left out.
    static func withoutRSSI(_ entry: SessionRecording.Entry) -> RecordedEvent {
        guard case .discovered(let peripheral, let name, let advertisement, _) = entry.event else { return entry.event }
        return .discovered(peripheral: peripheral, name: name, advertisement: advertisement, rssi: 0)
    }

    @Test func aLongTransferWithAReconnectReplaysIdenticallyWithLinkFiguresWithinTenPercent() async throws {
        let file = Data((0..<65_536).map { UInt8(truncatingIfNeeded: $0 * 7) })
        let upload = Data((0..<8_192).map { UInt8(truncatingIfNeeded: $0) })
        let (recording, received) = try await Self.recordTransfer(
            profile: .bundled(.fitnessWatch), timing: .realistic, file: file, upload: upload)
        #expect(received == file)
        let watch = try #require(recording.connectedPeripherals.first)
        let figures = recording.linkFigures(of: watch)
        #expect(figures.connections == 2 && figures.notifications > 65_536 / 182)

        // The scenario replays the session at its recorded times, every expectation held, and
        // the same way every time.
        let imported = try RecordingImporter().importRecording(recording, name: "transfer")
        #expect(imported.warnings.isEmpty)
        let first = await ScenarioRunner(imported.scenario).run()
        #expect(first.passed, "\(first.failures.prefix(3))")
        let second = await ScenarioRunner(imported.scenario).run()
        #expect(first.json == second.json)
        let start = try #require(
            recording.entries.first { if case .connected = $0.event { true } else { false } }?.time)
        // (A scenario keeps times to the microsecond; the notifications that arrived at one
        // instant replay as one step.)
        var recordedUpdates: [Duration] = []
        for entry in recording.entries {
            guard case .valueUpdated = entry.event else { continue }
            let time = Duration.microseconds(
                RecordedConversation.microseconds(entry.time) - RecordedConversation.microseconds(start))
            if recordedUpdates.last != time { recordedUpdates.append(time) }
        }
        #expect(first.records.filter { $0.op == "notify" }.map(\.time) == recordedUpdates)
        let payloads = recording.entries.compactMap { entry -> Data? in
            guard case .valueUpdated(_, _, .bytes(let value), _) = entry.event else { return nil }
            return value
        }
        #expect(first.records.filter { $0.op == "notify" }.flatMap { $0.received ?? [] } == payloads)
        #expect(first.records.filter { $0.op == "connect" }.count == 2)

        // The same session on a link seeded with the recorded figures shows the same figures,
        // within 10%, and the app sees the same events.
        let (replayed, again) = try await Self.recordTransfer(
            profile: imported.profile, timing: figures.linkTiming, file: file, upload: upload)
        #expect(again == file)
        #expect(replayed.entries.map(Self.withoutRSSI) == recording.entries.map(Self.withoutRSSI))
        let replayedFigures = replayed.linkFigures(of: watch)
        #expect(replayedFigures.mtu == figures.mtu && replayedFigures.notifications == figures.notifications)
        #expect(replayedFigures.packetsPerConnectionEvent == figures.packetsPerConnectionEvent)
        func withinTenPercent(_ replayed: Double?, _ recorded: Double?) -> Bool {
            guard let replayed, let recorded, recorded > 0 else { return false }
            return abs(replayed - recorded) <= recorded / 10
        }
        let seconds = { (duration: Duration?) in duration.map { Double($0.components.attoseconds) / 1e18 } }
        #expect(withinTenPercent(seconds(replayedFigures.connectionInterval), seconds(figures.connectionInterval)))
        #expect(withinTenPercent(Double(replayedFigures.notificationEvents), Double(figures.notificationEvents)))
        #expect(
            withinTenPercent(
                replayedFigures.notificationThroughput.map(Double.init), figures.notificationThroughput.map(Double.init)
            ))
        #expect(
            withinTenPercent(
                replayedFigures.writeWithoutResponseThroughput.map(Double.init),
                figures.writeWithoutResponseThroughput.map(Double.init)))
    }
}
