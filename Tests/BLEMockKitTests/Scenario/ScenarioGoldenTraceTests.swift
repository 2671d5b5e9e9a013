import BLEMockKit
import Foundation
import Testing

/// The bundled scenarios against their golden traces in `Fixtures/expected` — byte for byte.
/// After a deliberate change to the engine's output, regenerate them with
/// `scripts/regenerate-expected-traces.sh` and review the diff.
@Suite("Golden scenario traces", .timeLimit(.minutes(10)))
struct ScenarioGoldenTraceTests {
    @Test func theBundledScenariosCoverEveryOpInBothModes() throws {
        var ops = Set<String>()
        var modes = Set<Scenario.Mode>()
        for name in ScenarioTestSupport.bundledScenarios {
            let scenario = try Scenario.load(
                contentsOf: ScenarioTestSupport.scenariosFolder.appendingPathComponent("\(name).json"))
            ops.formUnion(scenario.steps.map(\.operation.name))
            modes.insert(scenario.mode)
        }
        #expect(ops == Set(ScenarioStep.Operation.names))
        #expect(modes == Set(Scenario.Mode.allCases))
    }

    @Test(arguments: ScenarioTestSupport.bundledScenarios)
    func eachBundledScenarioMatchesItsGoldenTraceByteForByte(_ name: String) async throws {
        let url = ScenarioTestSupport.scenariosFolder.appendingPathComponent("\(name).json")
        let scenario = try Scenario.load(contentsOf: url)
        let trace = await ScenarioRunner(scenario).run()
        #expect(trace.passed, "\(trace.failures)")
        let golden = ScenarioTestSupport.fixturesFolder.appendingPathComponent("expected/\(name).jsonl")
        let expected = try String(contentsOf: golden, encoding: .utf8)
        let actual = trace.json
        if actual != expected {
            let actualLines = actual.split(separator: "\n", omittingEmptySubsequences: false)
            let expectedLines = expected.split(separator: "\n", omittingEmptySubsequences: false)
            let first =
                (0..<min(actualLines.count, expectedLines.count)).first { actualLines[$0] != expectedLines[$0] }
                ?? min(actualLines.count, expectedLines.count)
            Issue.record(
                """
                \(name): the trace differs from Fixtures/expected/\(name).jsonl at line \(first + 1):
                  got:      \(first < actualLines.count ? actualLines[first] : "(end)")
                  expected: \(first < expectedLines.count ? expectedLines[first] : "(end)")
                If the change is deliberate, run scripts/regenerate-expected-traces.sh.
                """)
        }
    }

    @Test(arguments: ScenarioTestSupport.bundledScenarios)
    func runningAScenarioTwiceGivesTheSameBytes(_ name: String) async throws {
        let url = ScenarioTestSupport.scenariosFolder.appendingPathComponent("\(name).json")
        let scenario = try Scenario.load(contentsOf: url)
        let first = await ScenarioRunner(scenario).run()
        let second = await ScenarioRunner(scenario).run()
        #expect(first.json == second.json)
        #expect(first.text(for: scenario) == second.text(for: scenario))
        #expect(first.mermaid(for: scenario) == second.mermaid(for: scenario))
    }

    @Test func anotherSeedChangesARealisticTrace() async throws {
        let url = ScenarioTestSupport.scenariosFolder.appendingPathComponent("heart-rate-basic.json")
        let original = await ScenarioRunner(try Scenario.load(contentsOf: url)).run()
        let reseeded = await ScenarioRunner(
            try Scenario.load(contentsOf: url, overrides: Scenario.Overrides(seed: 43))
        ).run()
        #expect(reseeded.seed == 43)
        #expect(original.json != reseeded.json)
        #expect(original.records.map(\.op) == reseeded.records.map(\.op))
    }
}

/// A name or id with a line break in it cannot start a line of its own in a Mermaid diagram.
@Suite struct MermaidEscapingTests {
    @Test(arguments: ["A\r\nC->>P: injected", "A\nC->>P: injected", "A\rC->>P: injected", "A\u{2028}C->>P: injected"])
    func aLineBreakInANameStaysOnItsLine(_ name: String) async throws {
        let json = """
            {"peripheral": {"name": \(String(decoding: try JSONEncoder().encode(name), as: UTF8.self)),
             "advertisement": {"localName": "A"}, "services": []},
             "steps": [{"op": "scan"}]}
            """
        let scenario = try Scenario(json: Data(json.utf8))
        let diagram = await ScenarioRunner(scenario).run().mermaid(for: scenario)
        #expect(diagram.contains("participant P as A C->>P: injected"), "\(diagram)")
        #expect(!diagram.split(whereSeparator: \.isNewline).contains { $0.hasPrefix("C->>P: injected") })
    }

    @Test(arguments: ["loc\r\nX", "loc\nX", "loc\u{2028}X"])
    func aLineBreakInAnIdKeepsTheTextTimelineOneLineAStep(_ id: String) async throws {
        let encoded = String(decoding: try JSONEncoder().encode(id), as: UTF8.self)
        let json = """
            {"name": "two\\nlines", "peripheral": {"name": "S", "services": [{"uuid": "180D", "characteristics": [
              {"id": \(encoded), "uuid": "2A38", "properties": ["read"], "permissions": ["readable"], "value": {"hex": "01"}}]}]},
             "steps": [{"op": "scan"}, {"op": "connect"}, {"op": "discover"}, {"op": "read", "char": \(encoded)}]}
            """
        let scenario = try Scenario(json: Data(json.utf8))
        let lines = await ScenarioRunner(scenario).run().text(for: scenario).split(whereSeparator: \.isNewline)
        #expect(lines.count == 1 + 4 + 1, "\(lines)")
        #expect(lines[0].hasPrefix("two lines (fast mode"))
        #expect(lines[4].contains("read loc X  ok"))
    }
}
