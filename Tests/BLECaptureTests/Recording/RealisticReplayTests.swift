import BLECore
import BLEMockKit
import Foundation
import Testing

@testable import BLECapture

/// The whole loop for a smartwatch companion app: a realistic session recorded through the
/// recorder, imported, and replayed in realistic mode, where the replay must take the time the
/// recording took and carry the same values.
@Suite("A recorded session replayed on a realistic link", .timeLimit(.minutes(10)))
struct RealisticReplayTests {
    static let seed: UInt64 = 41
    static let file = Data((0..<2_048).map { UInt8(truncatingIfNeeded: $0 * 13 + 5) })
    static let upload = Data((0..<4_096).map { UInt8(truncatingIfNeeded: $0 * 3 + 1) })

    /// The companion app's session on a realistic bridge: a 2 KiB file from the watch in
    /// notifications, a 4 KiB upload in writes without response (waiting for room in the
    /// queue), a commit, a disconnection.
    static func record() async throws -> (recording: SessionRecording, received: Data) {
        let bridge = MockBLEBridge(configuration: .realistic(seed: seed))
        return try await bridge.run {
            let watch = try await PeripheralProfile.bundled(.fitnessWatch).makePeripheral(
                on: bridge, configuration: .realistic(seed: seed))
            let firmware = bridge.task {
                try await WatchFirmware(watch: watch, file: file, dropAfter: .max).serve()
            }
            let recorder = SessionRecorder(clock: bridge.clock)
            let central = await RecordingCentralManager(
                MockCentralManager(configuration: .realistic(seed: seed), bridge: bridge), recorder: recorder)
            var app = await WatchCompanionApp(central: central)
            let received = try await app.transferSession(fileLength: file.count, upload: upload)
            try await firmware.value
            return (recorder.recording, received)
        }
    }

    /// The imported scenario, to run in realistic mode on the recorded interval.
    static func realisticReplay(of recording: SessionRecording) throws -> Scenario {
        var scenario = try RecordingImporter().importRecording(recording, name: "companion").scenario
        scenario.mode = .realistic
        scenario.seed = seed
        scenario.connectionInterval = recording.linkFigures(of: recording.connectedPeripherals[0]).connectionInterval
        return scenario
    }

    static func milliseconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) * 1_000 + Double(duration.components.attoseconds) / 1e15
    }

    @Test func aCompanionAppsUploadAndNotificationsReplayAtTheirRecordedTimesWithTheirValues() async throws {
        let (recording, received) = try await Self.record()
        #expect(received == Self.file)
        let watch = try #require(recording.connectedPeripherals.first)
        let figures = recording.linkFigures(of: watch)
        let interval = try #require(figures.connectionInterval)
        #expect(abs(Self.milliseconds(interval) - 30) <= 2)

        let scenario = try Self.realisticReplay(of: recording)
        let trace = await ScenarioRunner(scenario).run()
        #expect(trace.passed, "\(trace.failures.prefix(3))")

        // The values: every notification the app received, in order, and the upload as the
        // watch stored it, write after write.
        let recordedUpdates = recording.entries.compactMap { entry -> Data? in
            guard case .valueUpdated(_, _, .bytes(let value), _) = entry.event else { return nil }
            return value
        }
        let replayedUpdates = trace.records.filter { $0.op == "notify" }.flatMap { $0.received ?? [] }
        #expect(replayedUpdates == recordedUpdates)
        #expect(replayedUpdates.reduce(Data(), +) == Self.file)
        let recordedWrites = recording.entries.compactMap { entry -> Data? in
            guard case .write(_, _, .bytes(let value), false, nil) = entry.event else { return nil }
            return value
        }
        let replayedWrites = scenario.steps.flatMap { step -> [Data] in
            switch step.operation {
            case .write(_, let value, false): [value]
            case .writeWithoutResponseBurst(_, let values): values
            default: []
            }
        }
        #expect(replayedWrites == recordedWrites)
        #expect(recordedWrites.reduce(Data(), +) == Self.upload)
        let lastWrite = try #require(
            trace.records.last { record in
                if case .writeWithoutResponseBurst = scenario.steps[record.step].operation { true } else { false }
            })
        #expect(lastWrite.stored == recordedWrites.last)

        // The timing. A scenario's discover also asks each service for the services it
        // includes, which the app's discovery did not: the replay's discovery may end later,
        // by up to two connection intervals (and jitter) for each of the watch's 3 services.
        let recordedStart = try #require(
            recording.entries.first { if case .connected = $0.event { true } else { false } }?.time)
        let replayedStart = try #require(trace.records.first { $0.op == "connect" }?.time)
        let round = Self.milliseconds(interval * 2 + figures.jitter * 2)
        let recordedDiscovered = try #require(
            recording.entries.last { entry in
                switch entry.event {
                case .servicesDiscovered, .characteristicsDiscovered, .descriptorsDiscovered: true
                default: false
                }
            }?.time)
        let replayedDiscovered = try #require(trace.records.first { $0.op == "discover" }?.time)
        let overshoot =
            Self.milliseconds(replayedDiscovered - replayedStart)
            - Self.milliseconds(recordedDiscovered - recordedStart)
        #expect(overshoot >= 0 && overshoot <= 3 * round, "discovery \(overshoot) ms longer")

        // From the end of discovery on both sides, each connection event of notifications and
        // the commit (the upload paced by the link before it) end within two connection
        // intervals of their recorded times, and the rest of the session takes its recorded
        // time within 5%. The whole session takes its recorded time within 15%.
        var recordedInstants: [Duration] = []
        for entry in recording.entries {
            guard case .valueUpdated = entry.event, recordedInstants.last != entry.time else { continue }
            recordedInstants.append(entry.time)
        }
        let replayedInstants = trace.records.filter { $0.op == "notify" }.map(\.time)
        #expect(replayedInstants.count == recordedInstants.count)
        let offset = { (replayed: Duration, recorded: Duration) in
            Self.milliseconds(replayed - replayedDiscovered) - Self.milliseconds(recorded - recordedDiscovered)
        }
        for (replayed, recorded) in zip(replayedInstants, recordedInstants) {
            #expect(abs(offset(replayed, recorded)) <= round, "a notification \(offset(replayed, recorded)) ms off")
        }
        let recordedCommit = try #require(
            recording.entries.last {
                if case .write(_, _, _, true, nil) = $0.event { true } else { false }
            }?.time)
        let replayedCommit = try #require(
            trace.records.last { record in
                record.op == "write" && scenario.steps[record.step].operation.isWriteWithResponse
            }?.time)
        #expect(
            abs(offset(replayedCommit, recordedCommit)) <= round,
            "the commit \(offset(replayedCommit, recordedCommit)) ms off")
        let recordedEnd = try #require(recording.entries.last?.time)
        let replayedEnd = try #require(trace.records.last?.time)
        let recordedRest = Self.milliseconds(recordedEnd - recordedDiscovered)
        let replayedRest = Self.milliseconds(replayedEnd - replayedDiscovered)
        #expect(
            abs(replayedRest - recordedRest) <= recordedRest / 20,
            "after discovery: recorded \(recordedRest) ms, replayed \(replayedRest) ms")
        let recordedLength = Self.milliseconds(recordedEnd - recordedStart)
        let replayedLength = Self.milliseconds(replayedEnd - replayedStart)
        #expect(
            abs(replayedLength - recordedLength) <= recordedLength * 0.15,
            "recorded \(recordedLength) ms, replayed \(replayedLength) ms")
    }

    @Test func aReplayedUploadTakesLongerOnALinkThatCarriesFewerPacketsPerEvent() async throws {
        let (recording, _) = try await Self.record()
        let scenario = try Self.realisticReplay(of: recording)
        var narrow = scenario
        narrow.peripheralProfile = LinkProfile(name: "one packet per event", packetsPerConnectionEvent: 1)
        let wide = await ScenarioRunner(scenario).run()
        let slow = await ScenarioRunner(narrow).run()
        #expect(wide.passed && slow.passed, "\(wide.failures.prefix(2)) \(slow.failures.prefix(2))")
        // The upload's 23 writes cross 4 per connection event on the recorded link, 1 per event
        // on the narrow one: the narrow replay's session ends about 17 intervals later.
        let end = { (trace: ScenarioTrace) in Self.milliseconds(trace.records.last!.time) }
        #expect(end(slow) - end(wide) >= 10 * 30, "wide \(end(wide)) ms, narrow \(end(slow)) ms")
    }
}

extension ScenarioStep.Operation {
    fileprivate var isWriteWithResponse: Bool {
        if case .write(_, _, true) = self { return true }
        return false
    }
}
