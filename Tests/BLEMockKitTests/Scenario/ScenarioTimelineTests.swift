import Foundation
import Testing

@testable import BLEMockKit

@Suite("Scenario timeline: the time column and the outcome markers", .timeLimit(.minutes(10)))
struct ScenarioTimelineTests {
    @Test(
        "Times are rounded to the nearest millisecond, halves up, carrying into the seconds",
        arguments: [
            (Duration.zero, "0.000s"),
            (.milliseconds(12), "0.012s"),
            (.microseconds(1_294_400), "1.294s"),
            (.microseconds(1_294_600), "1.295s"),
            (.microseconds(500), "0.001s"),
            (.microseconds(499), "0.000s"),
            (.microseconds(999_600), "1.000s"),
            (.milliseconds(61_500), "61.500s"),
            (.seconds(3_600), "3600.000s"),
        ])
    func rounding(time: Duration, printed: String) {
        #expect(ScenarioTrace.milliseconds(time) == printed)
    }

    @Test("Each timeline line shows its record's time, right-aligned in twelve columns")
    func column() async throws {
        let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Fixtures/scenarios")
        var scenario = try Scenario.load(contentsOf: folder.appendingPathComponent("heart-rate-basic.json"))
        scenario.mode = .realistic
        let trace = await ScenarioRunner(scenario).run()
        let lines = trace.text(for: scenario).split(separator: "\n").dropFirst().prefix(trace.records.count)
        #expect(lines.count == trace.records.count)
        #expect(trace.records.contains { $0.time > .zero })  // realistic: times that need rounding
        for (line, record) in zip(lines, trace.records) {
            let column = String(line.prefix(12))
            #expect(column.trimmingCharacters(in: .whitespaces) == ScenarioTrace.milliseconds(record.time))
            #expect(column.hasSuffix("s") && line.dropFirst(12).hasPrefix("  #\(record.step)"))
        }
    }

    @Test("A step that failed as its expect said is marked xfail, one that failed unexpectedly FAILED, with a legend")
    func failureMarkers() async throws {
        let steps = #"""
            [{"op": "scan"}, {"op": "read", "char": "loc", "expect": {"ok": false, "error": "notConnected"}},
             {"op": "read", "char": "loc"}, {"op": "connect", "expect": {"ok": true}}]
            """#
        let scenario = try ScenarioTestSupport.scenario(ScenarioTestSupport.inline(steps: steps))
        let trace = await ScenarioRunner(scenario).run()
        let lines = trace.text(for: scenario).split(separator: "\n", omittingEmptySubsequences: false)
        #expect(lines[1].hasSuffix("#0   scan      ok      found 1"))
        #expect(lines[2].hasSuffix("#1   read loc  xfail   cb 3 notConnected, 0 ATT PDUs"))
        #expect(lines[3].hasSuffix("#2   read loc  FAILED  cb 3 notConnected, 0 ATT PDUs"))
        #expect(lines[4].hasSuffix("#3   connect   ok      mtu 517, 2 ATT PDUs"))
        #expect(lines[5] == "all 2 expectations held")
        #expect(
            lines[6]
                == #"xfail: the step failed, as its "expect" said ("ok": false, or an error); FAILED: unexpectedly"#)
        #expect(lines[7].isEmpty && lines.count == 8)
    }

    @Test("A timeline without expected failures has no legend")
    func noLegendWithoutExpectedFailures() async throws {
        let scenario = try ScenarioTestSupport.scenario(ScenarioTestSupport.inline(steps: #"[{"op": "readRSSI"}]"#))
        let text = await ScenarioRunner(scenario).run().text(for: scenario)
        #expect(text.hasSuffix("FAILED  cb 12 unknownDevice\nno expectations\n"))
    }

    @Test("A trace's records find their steps by index, where the steps are in order and where they are not")
    func stepsAreFoundByIndex() throws {
        var scenario = try Scenario(
            json: Data(
                ScenarioTestSupport.inline(steps: #"[{"op": "scan"}, {"op": "connect"}, {"op": "disconnect"}]"#).utf8))
        #expect(scenario.step(indexed: 1)?.operation.name == "connect")
        #expect(scenario.step(indexed: 3) == nil)
        #expect(scenario.step(indexed: -1) == nil)
        // Steps out of their positions (a list edited in code) are still found by their index.
        scenario.steps.reverse()
        #expect(scenario.step(indexed: 0)?.operation.name == "scan")
        #expect(scenario.step(indexed: 2)?.operation.name == "disconnect")
    }
}
