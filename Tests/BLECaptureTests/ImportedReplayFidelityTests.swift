import BLECore
import BLEMockKit
import Foundation
import Testing

@testable import BLECapture

/// What an imported capture or recording replays must be what happened: indications as
/// indications, refusals for want of security as refusals, updates only as long as a link can
/// carry them, operations in the order and at the times they were made.
@Suite("Imported sessions replay as they happened", .timeLimit(.minutes(10)))
struct ImportedReplayFidelityTests {
    static func realistic(_ scenario: Scenario, seed: UInt64 = 3) -> Scenario {
        var scenario = scenario
        scenario.mode = .realistic
        scenario.seed = seed
        return scenario
    }

    static func subscriptions(_ scenario: Scenario) -> [String] {
        scenario.steps.compactMap { step in
            switch step.operation {
            case .subscribe: "notifications"
            case .subscribeToIndications: "indications"
            default: nil
            }
        }
    }

    @Test(
        "A subscription the capture shows asking for indications replays as one, on a characteristic that can do both",
        arguments: [
            // (properties: read, notify and/or indicate; the CCCD value written; what is subscribed)
            (UInt8(0x32), UInt8(0x02), "indications"), (0x32, 0x01, "notifications"), (0x22, 0x02, "notifications"),
        ])
    func indicationSubscriptions(properties: UInt8, configuration: UInt8, expected: String) async throws {
        var writer = BadCaptureTests.discovered(properties: properties)
        writer.att([0x12, 0x04, 0x00, configuration, 0x00], sent: true)
        writer.att([0x13], sent: false)
        let indication = configuration == 0x02
        writer.att([indication ? 0x1D : 0x1B, 0x03, 0x00, 0x01], sent: false)
        if indication { writer.att([0x1E], sent: true) }
        let imported = try BadCaptureTests.load(writer)
        // (An indicate-only characteristic's plain subscription enables indications: no field needed.)
        #expect(Self.subscriptions(imported.scenario) == [expected])
        let trace = await ScenarioRunner(Self.realistic(imported.scenario)).run()
        #expect(trace.passed, "\(trace.failures)")
        let update = try #require(trace.records.last)
        #expect(update.op == (indication ? "indicate" : "notify"))
        // An indication costs its confirmation too.
        #expect(update.attPDUs == (indication ? 2 : 1))
    }

    @Test("An indication with no subscription captured subscribes to indications first")
    func indicationWithoutACapturedSubscription() async throws {
        var writer = BadCaptureTests.discovered(properties: 0x32)
        writer.att([0x1D, 0x03, 0x00, 0x07], sent: false)
        writer.att([0x1E], sent: true)
        let imported = try BadCaptureTests.load(writer)
        #expect(Self.subscriptions(imported.scenario) == ["indications"])
        let trace = await ScenarioRunner(Self.realistic(imported.scenario)).run()
        #expect(trace.passed, "\(trace.failures)")
        #expect(trace.records.last?.attPDUs == 2)
    }

    @Test(
        "A refusal for want of security keeps the replay's central from pairing, so a realistic replay fails as the capture did",
        arguments: [(UInt8(0x05), true), (0x0F, true), (0x80, false), (0x02, false)])
    func securityRefusalsReplay(code: UInt8, keepsCentralFromPairing: Bool) async throws {
        var writer = BadCaptureTests.discovered(properties: 0x12)
        writer.att([0x0A, 0x03, 0x00], sent: true)
        writer.att([0x01, 0x0A, 0x03, 0x00, code], sent: false)
        let imported = try BadCaptureTests.load(writer)
        #expect(imported.scenario.centralPairing == (keepsCentralFromPairing ? .never : nil))
        for scenario in [imported.scenario, Self.realistic(imported.scenario)] {
            let trace = await ScenarioRunner(scenario).run()
            #expect(trace.passed, "\(scenario.mode): \(trace.failures)")
            #expect(trace.records.last { $0.op == "read" }?.error?.code == Int(code))
        }
    }

    @Test("A recorded refusal for want of security keeps the replay's central from pairing too")
    func recordedSecurityRefusal() async throws {
        let imported = try RecordingImporter().importRecording(
            try Self.recording([
                #"{"time": "0.3s", "event": "read", "peripheral": "\#(Self.peripheral)", "handle": 3, "error": {"domain": "att", "code": 5}}"#,
                #"{"time": "0.4s", "event": "read", "peripheral": "\#(Self.peripheral)", "handle": 3, "value": {"hex": "01"}}"#,
            ]), name: "refused")
        #expect(imported.scenario.centralPairing == .never)
        let trace = await ScenarioRunner(Self.realistic(imported.scenario)).run()
        #expect(trace.passed, "\(trace.failures)")
        #expect(trace.records.filter { $0.op == "read" }.map(\.ok) == [false, true])
    }

    @Test(
        "At ATT_MTU 517 an update longer than 512 bytes is not replayed: no attribute value is longer",
        arguments: [(512, true), (513, false), (514, false)])
    func updatesPastTheLongestValue(length: Int, replayed: Bool) async throws {
        var writer = BadCaptureTests.discovered(properties: 0x12, mtu: 517)
        writer.att([0x12, 0x04, 0x00, 0x01, 0x00], sent: true)
        writer.att([0x13], sent: false)
        let value = (0..<length).map { UInt8(truncatingIfNeeded: $0) }
        writer.att([0x1B, 0x03, 0x00] + value, sent: false)
        let imported = try BadCaptureTests.load(writer)
        let notified = imported.scenario.steps.filter { $0.operation.name == "notify" }
        #expect(notified.count == (replayed ? 1 : 0))
        let warned = imported.warnings.contains {
            $0.message
                == "an update of \(length) bytes of h0003 (more than the 512 bytes the replayed link carries: "
                + "ATT_MTU − 3, and at most 512, the longest attribute value) is not replayed"
        }
        #expect(warned == !replayed)
        let trace = await ScenarioRunner(Self.realistic(imported.scenario)).run()
        #expect(trace.passed, "\(trace.failures)")
    }

    @Test("A notification that came while a read was answered follows the read, and the clock is not said to go back")
    func notificationDuringARead() async throws {
        var writer = BadCaptureTests.discovered(properties: 0x12)
        writer.att([0x12, 0x04, 0x00, 0x01, 0x00], sent: true)
        writer.att([0x13], sent: false)
        writer.att([0x0A, 0x03, 0x00], sent: true)
        writer.att([0x1B, 0x03, 0x00, 0x05], sent: false)
        writer.att([0x0B, 0x05], sent: false)
        let imported = try BadCaptureTests.load(writer)
        #expect(imported.warnings.isEmpty, "\(imported.warnings)")
        #expect(CaptureImportTests.ops(imported.scenario).suffix(2) == ["read h0003", "notify h0003"])
        let trace = await ScenarioRunner(imported.scenario).run()
        #expect(trace.passed, "\(trace.failures)")
        // (The writer stamps its records 1 ms apart: the request is the tenth after the connection.)
        #expect(CaptureImportTests.times(trace, op: "read") == ["0.009s"])
        #expect(CaptureImportTests.times(trace, op: "notify") == ["0.01s"])
    }

    @Test("A realistic replay makes each operation at its captured time, not later by every round trip before it")
    func realisticReplayKeepsCapturedTimes() async throws {
        var writer = BadCaptureTests.discovered(properties: 0x12)
        let connected = BTSnoopRecord.epoch2000
        var captured: [Duration] = []
        // From 1 s on: a realistic discovery takes longer than the capture's, which took 6 ms.
        for index in 1...10 {
            writer.time = connected + 1_000_000 + Int64(index) * 100_000
            captured.append(.milliseconds(1_000 + 100 * index))
            writer.att([0x0A, 0x03, 0x00], sent: true)
            writer.att([0x0B, UInt8(index)], sent: false)
        }
        let imported = try BadCaptureTests.load(writer)
        let trace = await ScenarioRunner(Self.realistic(imported.scenario)).run()
        #expect(trace.passed, "\(trace.failures)")
        let connect = try #require(trace.records.first { $0.op == "connect" }?.time)
        let reads = trace.records.filter { $0.op == "read" }
        #expect(reads.count == 10)
        for (read, time) in zip(reads, captured) {
            // Made at its time from the connection, answered within its round trip (two
            // intervals of 30 ms at most), however many reads came before it.
            let late = read.time - connect - time
            #expect(late >= .zero && late <= .milliseconds(60), "read at \(time): \(late) late")
        }
    }

    @Test("A capture whose damage hides its connection says so, naming the damaged record")
    func damageThatHidesTheConnection() throws {
        var writer = SnoopWriter()
        writer.event(0x0E, [0x01, 0x03, 0x0C, 0x00])  // a Command Complete before the connection
        writer.connected()
        var bytes = writer.bytes
        // The first record's included length, damaged: it swallows the connection event.
        let field = BTSnoopFile.headerLength + 4
        bytes.replaceSubrange(field..<field + 4, with: [0x7F, 0xFF, 0xFF, 0xF0])
        do {
            _ = try CaptureImporter().importCapture(bytes: bytes, name: "damaged")
            Issue.record("imported a capture with no readable connection")
        } catch {
            guard case .damagedCapture(.noConnection(advertisers: []), let damage) = error else {
                Issue.record("wrong error: \(error)")
                return
            }
            #expect(!damage.isEmpty && damage.allSatisfy(\.isDamage))
            #expect(error.description.hasPrefix("the capture has no LE connection"))
            #expect(error.description.contains("the file is damaged, which may be why: record 1's length field"))
        }
    }

    @Test("A capture with no connection and no damage gets the plain error")
    func noConnectionWithoutDamage() throws {
        var writer = SnoopWriter()
        writer.event(0x0E, [0x01, 0x03, 0x0C, 0x00])
        #expect(throws: CaptureImportError.noConnection(advertisers: [])) {
            try CaptureImporter().importCapture(bytes: writer.bytes, name: "none")
        }
    }

    // MARK: Recordings

    static let peripheral = "11111111-2222-3333-4444-555555555555"

    /// A recording of a connection at ATT_MTU 23 to service FFF0 with FFF1 (read, write, write
    /// without response) at handle 3, then `events`.
    static func recording(_ events: [String]) throws -> SessionRecording {
        let head = [
            #"{"time": "0s", "event": "connected", "peripheral": "\#(peripheral)", "mtu": 23}"#,
            #"{"time": "0.1s", "event": "services", "peripheral": "\#(peripheral)", "services": [{"uuid": "FFF0", "primary": true, "handle": 1, "endHandle": 3}]}"#,
            #"{"time": "0.2s", "event": "characteristics", "peripheral": "\#(peripheral)", "service": 1, "characteristics": [{"uuid": "FFF1", "properties": ["read", "write", "writeWithoutResponse"], "handle": 3}]}"#,
        ]
        let text =
            #"{"format": "mockble-recording", "version": 1, "events": ["#
            + (head + events).joined(separator: ",\n") + "]}"
        return try SessionRecording(json: Data(text.utf8))
    }

    @Test("A recorded write without response said to fail with an ATT error is not replayed, and fails no later write")
    func recordedWriteCommandWithAnError() async throws {
        let imported = try RecordingImporter().importRecording(
            try Self.recording([
                #"{"time": "0.3s", "event": "write", "peripheral": "\#(Self.peripheral)", "handle": 3, "value": {"hex": "01"}, "withResponse": false, "error": {"domain": "att", "code": 3}}"#,
                #"{"time": "0.4s", "event": "write", "peripheral": "\#(Self.peripheral)", "handle": 3, "value": {"hex": "02"}, "withResponse": true}"#,
            ]), name: "command")
        #expect(
            imported.warnings.map(\.description) == [
                "event 4: a write without response to h0003 failing with ATT error 0x03 (a write command gets no "
                    + "response) is not replayed"
            ])
        #expect(!imported.scenario.steps.contains { $0.operation.name == "inject" })
        for scenario in [imported.scenario, Self.realistic(imported.scenario)] {
            let trace = await ScenarioRunner(scenario).run()
            #expect(trace.passed, "\(scenario.mode): \(trace.failures)")
            #expect(trace.records.filter { $0.op == "write" }.map(\.ok) == [true])
        }
    }

    @Test("A recorded connection with no disconnection before it ends the earlier link in the replay")
    func connectedAgainWithoutADisconnection() async throws {
        let imported = try RecordingImporter().importRecording(
            try Self.recording([
                #"{"time": "1s", "event": "connected", "peripheral": "\#(Self.peripheral)", "mtu": 23}"#,
                #"{"time": "1.2s", "event": "read", "peripheral": "\#(Self.peripheral)", "handle": 3, "value": {"hex": "09"}}"#,
            ]), name: "again")
        #expect(
            imported.warnings.map(\.description) == [
                "event 4: a connection with no disconnection recorded since the one before: the replay loses the "
                    + "earlier link just before it"
            ])
        #expect(
            imported.scenario.steps.map(\.operation.name).filter { $0 != "advance" } == [
                "scan", "connect", "discover", "fault", "scan", "connect", "discover", "read",
            ])
        for scenario in [imported.scenario, Self.realistic(imported.scenario)] {
            let trace = await ScenarioRunner(scenario).run()
            #expect(trace.passed, "\(scenario.mode): \(trace.failures)")
        }
    }
}
