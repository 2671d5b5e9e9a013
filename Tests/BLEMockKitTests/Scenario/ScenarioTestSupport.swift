import BLECore
import BLEMockKit
import Foundation
import Testing

/// Helpers for the scenario tests: the bundled scenarios, inline scenarios, and loading that
/// expects an error.
enum ScenarioTestSupport {
    /// The repository's `Fixtures` folder, found from this file's path.
    static var fixturesFolder: URL {
        URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent()  // Scenario
            .deletingLastPathComponent()  // BLEMockKitTests
            .deletingLastPathComponent()  // Tests
            .deletingLastPathComponent()  // repository root
            .appendingPathComponent("Fixtures")
    }

    static var scenariosFolder: URL { fixturesFolder.appendingPathComponent("scenarios") }

    /// The bundled scenario names (without `.json`), sorted.
    static var bundledScenarios: [String] {
        let files = (try? FileManager.default.contentsOfDirectory(atPath: scenariosFolder.path)) ?? []
        return files.filter { $0.hasSuffix(".json") }.map { String($0.dropLast(5)) }.sorted()
    }

    /// A scenario with the given steps on a small inline peripheral (`hrm` notifies, `loc`
    /// reads 01, `ctl` writes, `both` can notify and indicate, `dyn` reads and writes).
    static func inline(
        steps: String, mode: String = "fast", seed: String = "1", extra: String = ""
    ) -> String {
        """
        {"name": "inline", "mode": "\(mode)", "seed": \(seed),\(extra)
         "peripheral": {"name": "Sensor", "services": [{"uuid": "180D", "characteristics": [
           {"id": "hrm", "uuid": "2A37", "properties": ["notify"], "permissions": []},
           {"id": "loc", "uuid": "2A38", "properties": ["read"], "permissions": ["readable"], "value": {"hex": "01"}},
           {"id": "ctl", "uuid": "2A39", "properties": ["write"], "permissions": ["writeable"]},
           {"id": "both", "uuid": "FFF1", "properties": ["notify", "indicate"], "permissions": []},
           {"id": "ind", "uuid": "FFF2", "properties": ["indicate"], "permissions": []},
           {"id": "dyn", "uuid": "FFF3", "properties": ["read", "write"], "permissions": ["readable", "writeable"]}
         ]}]},
         "steps": \(steps)}
        """
    }

    /// Loads an inline scenario.
    static func scenario(_ json: String) throws -> Scenario {
        try Scenario(json: Data(json.utf8), file: "inline.json")
    }

    /// Runs an inline scenario and returns its trace.
    static func run(_ json: String) async throws -> ScenarioTrace {
        await ScenarioRunner(try scenario(json)).run()
    }

    /// Loads `json` as a scenario and returns the error it must fail with.
    static func loadError(_ json: String, sourceLocation: SourceLocation = #_sourceLocation) -> FixtureError? {
        do {
            let scenario = try Scenario(json: Data(json.utf8), file: "bad.json")
            Issue.record("expected an error, got \(scenario.name)", sourceLocation: sourceLocation)
            return nil
        } catch {
            return error
        }
    }

    /// The record's JSON field `key`, if present.
    static func field(_ record: ScenarioTrace.Record, _ key: String) -> TraceValue? {
        record.fields.first { $0.key == key }?.value
    }

    /// The fixed prefix every inline test scenario starts with: scan, connect, discover.
    static let connected = #"{"op": "scan"}, {"op": "connect"}, {"op": "discover"}"#
}
