import BLECore
import BLEMockKit
import Foundation
import Testing

/// Every scenario the loader accepts runs in bounded time: each wait is at most an hour of
/// virtual time (``FixtureDuration/maximumScenarioWait``), and a longer one is refused with an
/// error naming the field.
@Suite("Scenario bounds", .timeLimit(.minutes(10)))
struct ScenarioBoundsTests {
    typealias S = ScenarioTestSupport

    struct Case: Sendable, CustomTestStringConvertible {
        let field: String
        let path: String
        /// The scenario with `DURATION` where the field's value goes.
        let json: String
        var testDescription: String { field }

        func with(_ duration: String) -> String { json.replacingOccurrences(of: "DURATION", with: duration) }
    }

    static let cases: [Case] = [
        Case(field: "for", path: "steps[0].for", json: S.inline(steps: #"[{"op": "scan", "for": "DURATION"}]"#)),
        Case(
            field: "timeout", path: "steps[1].timeout",
            json: S.inline(steps: #"[{"op": "scan"}, {"op": "connect", "timeout": "DURATION"}]"#)),
        Case(field: "by", path: "steps[0].by", json: S.inline(steps: #"[{"op": "advance", "by": "DURATION"}]"#)),
        Case(
            field: "after", path: "central.pairing.after",
            json: S.inline(
                steps: "[]", extra: #" "central": {"pairing": {"after": "DURATION", "outcome": "succeeds"}},"#)),
        Case(
            field: "at", path: "plan.faults[0].at",
            json: S.inline(
                steps: "[]", mode: "realistic",
                extra: #" "plan": {"faults": [{"at": "DURATION", "kind": "disconnect"}]},"#)),
        Case(
            field: "for", path: "plan.faults[0].for",
            json: S.inline(
                steps: "[]", mode: "realistic",
                extra: #" "plan": {"faults": [{"at": "1s", "kind": "outOfRange", "for": "DURATION"}]},"#)),
    ]

    @Test("A wait longer than an hour is refused, naming the field, its value and the range", arguments: cases)
    func aWaitOverAnHourIsRefused(_ testCase: Case) throws {
        for duration in ["3600.000000001s", "3601s", "999999999999999s"] {
            let error = try #require(S.loadError(testCase.with(duration)))
            #expect(error.kind == .valueOutOfRange)
            #expect(error.path == testCase.path)
            #expect(error.message.hasPrefix("\(testCase.field) "), "\(error.message)")
            #expect(error.message.hasSuffix("is out of range"))
            #expect(error.fix.contains("0s…3600s"))
            #expect(error.fix.contains("split a longer wait into several steps"))
        }
    }

    @Test("A wait of exactly an hour is accepted", arguments: cases)
    func aWaitOfAnHourIsAccepted(_ testCase: Case) throws {
        _ = try S.scenario(testCase.with("3600s"))
        _ = try S.scenario(testCase.with("3600000ms"))
    }

    @Test("The largest accepted waits and counts end, within the virtual time they add up to")
    func theLargestAcceptedScenarioEnds() async throws {
        // Every wait at its maximum, a never-answered injection for a million operations, the
        // largest value a file can spell: the run ends, and its virtual time is what the steps
        // add up to (three hours of waits, one ATT transaction timeout, and the air time of a
        // 64 KiB long write), not more.
        let trace = try await S.run(
            S.inline(
                steps: """
                    [{"op": "scan", "for": "3600s"}, {"op": "connect", "timeout": "3600s"}, {"op": "discover"},
                     {"op": "inject", "target": "read", "neverAnswers": true, "times": 1000000},
                     {"op": "write", "char": "ctl", "value": {"zeros": 65536}},
                     {"op": "advance", "by": "3600s"}, {"op": "read", "char": "loc"},
                     {"op": "connect", "timeout": "3600s"}, {"op": "advance", "by": "3600s"}]
                    """, mode: "realistic", seed: "2"))
        #expect(trace.records.count == 9)
        let end = try #require(trace.records.last?.time)
        #expect(end >= .seconds(3 * 3_600 + 30))
        #expect(end <= .seconds(3 * 3_600 + 30 + 60), "\(end)")
        // The read was never answered: the ATT transaction timeout ended it.
        #expect(trace.records[6].error?.name == "connectionTimeout")
        #expect(trace.records[7].ok)
    }
}
