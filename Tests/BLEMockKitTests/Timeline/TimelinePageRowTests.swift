import BLECore
import Foundation
import Testing

@testable import BLEMockKit

private typealias S = ScenarioTestSupport

@Suite("Timeline page: rows, ATT PDUs, queues and time", .timeLimit(.minutes(10)))
struct TimelinePageRowTests {
    static func rows(_ page: TimelinePage) -> [TimelinePage.Row] {
        TimelinePage.Row.rows(
            log: page.log, steps: page.steps, lanes: TimelinePage.Lanes(participants: page.participants, log: page.log),
            names: page.attributeNames)
    }

    @Test(
        "The ATT PDUs the rows of each step are labelled with add up to the step's attPDUs, in every bundled scenario")
    func pdusAddUp() async throws {
        for name in S.bundledScenarios {
            let scenario = try Scenario.load(contentsOf: S.scenariosFolder.appendingPathComponent("\(name).json"))
            let trace = await ScenarioRunner(scenario).run()
            let page = trace.timelinePage(for: scenario)
            let rows = Self.rows(page)
            for (position, record) in trace.records.enumerated() {
                let labelled = rows.filter { $0.step == position }.compactMap(\.pdus).reduce(0, +)
                #expect(labelled == record.attPDUs ?? 0, "\(name) step \(record.step) (\(record.op))")
            }
        }
    }

    @Test("Each record knows when its step began and which log entries are its own")
    func recordsLocateTheirEntries() async throws {
        let scenario = try Scenario.load(contentsOf: S.scenariosFolder.appendingPathComponent("faults-realistic.json"))
        let trace = await ScenarioRunner(scenario).run()
        var previousEnd = trace.records.first?.logRange?.lowerBound ?? 0
        #expect(previousEnd > 0)  // set-up logged first
        for record in trace.records {
            let range = try #require(record.logRange)
            #expect(range.lowerBound == previousEnd)
            previousEnd = range.upperBound
            #expect(try #require(record.started) <= record.time)
            for entry in trace.log[range] { #expect(entry.time - VirtualClock.Instant.zero <= record.time) }
        }
        #expect(previousEnd <= trace.log.count)
        let connect = try #require(trace.records.first { $0.op == "connect" }?.logRange)
        #expect(trace.log[connect].map(\.kind) == [.connecting, .connected])
    }

    @Test("A bridge's page shows the write queue full from the dropped write until the central may send again")
    func writeQueueFull() async throws {
        let bridge = Realistic.steadyBridge()
        let (peripheral, central, value) = try await QueueTests.writeLink(
            bridge: bridge, queue: .realistic(capacity: 3))
        for byte in UInt8(1)...4 { try await central.writeValue(Data([byte]), for: value, type: .withoutResponse) }
        await bridge.advance(by: .milliseconds(40))
        let log = await bridge.log
        let ready = try #require(log.last { $0.kind == .readyToSendWriteWithoutResponse })
        #expect(ready.central == central.identifier && ready.peripheral == peripheral.identifier)
        let page = await bridge.timelinePage(title: "write queue")
        #expect(page.mode == "custom timing" && page.seed == 1)
        #expect(page.participants.map(\.role) == [.central, .peripheral])
        #expect(page.participants[1].name == "Sensor")
        let rows = Self.rows(page)
        let marks = rows.compactMap(\.queue)
        #expect(marks == [.queued(lane: 0), .queued(lane: 0), .queued(lane: 0), .full(lane: 0), .ready(lane: 0)])
        let html = page.html
        #expect(html.contains("class=\"queue-full\""))
        #expect(html.contains("write command FFF1 04 dropped: queue full"))
        #expect(html.contains("ready to send writes without response"))
        #expect(html.components(separatedBy: "class=\"queue-tick\"").count - 1 == 3)
    }

    @Test("updateValue returning false and the ready event are logged, and the update queue is drawn full between them")
    func updateQueueFull() async throws {
        let bridge = Realistic.steadyBridge()
        let (peripheral, characteristic, _) = try await QueueTests.updateLink(
            bridge: bridge, queue: .realistic(capacity: 2))
        for byte in UInt8(1)...3 {
            _ = try await peripheral.updateValue(Data([byte]), for: characteristic, onSubscribedCentrals: nil)
        }
        await bridge.advance(by: .milliseconds(40))
        let log = await bridge.log
        let ready = try #require(log.last { $0.kind == .readyToUpdateSubscribers })
        #expect(ready.peripheral == peripheral.identifier && ready.central == nil)
        let refused = try #require(log.last { $0.kind == .notification && $0.central == nil })
        #expect(refused.time < ready.time)
        let page = await bridge.timelinePage(title: "update queue")
        #expect(Self.rows(page).compactMap(\.queue) == [.full(lane: 1), .ready(lane: 1)])
        let html = page.html
        #expect(html.contains("updateValue FFF1 returned false: transmit queue full"))
        #expect(html.contains("ready to update subscribers"))
        #expect(html.contains("class=\"queue-full\""))
    }

    @Test("A page without participants gives every manager the log names a lane, centrals first")
    func lanesFromTheLog() {
        let central = UUID(uuidString: "00000000-0000-0000-0000-00000000000C")!
        let peripheral = UUID(uuidString: "00000000-0000-0000-0000-00000000000B")!
        let log = [
            BridgeLogEntry(index: 0, time: .zero, kind: .stateChanged, peripheral: peripheral, detail: "poweredOn"),
            BridgeLogEntry(index: 1, time: .zero, kind: .stateChanged, central: central, detail: "poweredOn"),
        ]
        let lanes = TimelinePage.Lanes(participants: [], log: log)
        #expect(lanes.all.map(\.identifier) == [central, peripheral])
        #expect(lanes.all.map(\.role) == [.central, .peripheral])
        #expect(TimelinePage(title: "t", log: log).html.contains("central · 00000000"))
    }

    @Test("A long idle stretch is cut to a fixed height and labelled with its length; short gaps are to scale")
    func gapsAreCompressed() {
        func row(_ milliseconds: Int, step: Int) -> TimelinePage.Row {
            TimelinePage.Row(time: .milliseconds(milliseconds), step: step, shape: .empty, label: "")
        }
        let rows = [row(0, step: 0), row(0, step: 0), row(30, step: 0), row(10_030, step: 0)]
        let layout = TimelinePage.Layout(rows: rows, laneCount: 2)
        #expect(layout.y[1] == layout.y[0] + rows[0].height)  // the same instant: no space
        #expect(layout.y[2] == layout.y[1] + rows[1].height + 12)  // 30 ms at 0.4 px per ms
        #expect(layout.y[3] == layout.y[2] + rows[2].height + TimelinePage.Layout.longestGap)
        #expect(layout.cuts == [.init(y: layout.y[2] + rows[2].height, height: 34, duration: .seconds(10))])
        #expect(TimelinePage.Layout.pixels(.seconds(3_000_000)) > TimelinePage.Layout.longestGap)
    }

    @Test("Text is cut to fit with an ellipsis and wrapped at spaces")
    func fitting() {
        #expect(TimelinePage.fit("short", width: 100) == "short")
        #expect(TimelinePage.fit("a long label that does not fit", width: 73) == "a long la…")
        #expect(TimelinePage.wrap("one two three four", width: 73, lines: 3) == ["one two", "three four"])
        #expect(TimelinePage.wrap("one two three four five six", width: 73, lines: 2) == ["one two", "three fou…"])
    }
}
