import BLECore
import BLEMockKit
import Foundation
import Testing

/// The bundled scenarios as a user of the package sees them: loaded by their typed names,
/// run with `ScenarioRunner`, and compared with the golden traces in `Fixtures/expected`.
@Suite("Bundled scenarios", .timeLimit(.minutes(10)))
struct BundledScenarioTests {
    /// The repository's `Fixtures` folder, found from this file's path (the golden traces are
    /// the repository's, not the library's).
    static var fixtures: URL {
        URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent()  // BundledFixturesTests
            .deletingLastPathComponent()  // Tests
            .deletingLastPathComponent()  // the checkout
            .appendingPathComponent("Fixtures")
    }

    @Test func aScenarioIsNamedAfterItsFile() {
        #expect(BundledScenario.heartRateBasic.rawValue == "heart-rate-basic")
        #expect(BundledScenario.heartRateBasic.fileName == "heart-rate-basic.json")
        #expect(BundledScenario(rawValue: "nordic-uart") == .nordicUART)
    }

    @Test(arguments: BundledScenario.allCases)
    func everyBundledScenarioLoadsByName(_ name: BundledScenario) {
        let scenario = Scenario.bundled(name)
        #expect(scenario.name == name.rawValue)
        #expect(!scenario.steps.isEmpty)
    }

    @Test(arguments: BundledScenario.allCases)
    func everyBundledScenarioIsTheFileItWasMadeFrom(_ name: BundledScenario) throws {
        let file = Self.fixtures.appendingPathComponent("scenarios").appendingPathComponent(name.fileName)
        #expect(Scenario.bundled(name) == (try Scenario.load(contentsOf: file)))
    }

    @Test func aScenarioThatNamesAProfileByPathGetsTheBundledProfile() {
        let scenario = Scenario.bundled(.heartRateBasic)
        #expect(scenario.peripheralPath == "../peripherals/heart-rate.json")
        #expect(scenario.peripheral == PeripheralProfile.bundled(.heartRate))
        #expect(Scenario.bundled(.faultsRealistic).peripheral == PeripheralProfile.bundled(.nrfBlinky))
        #expect(Scenario.bundled(.nordicUART).peripheral == PeripheralProfile.bundled(.nordicUART))
    }

    @Test func aScenarioWithAnInlineProfileHasNoPath() {
        let scenario = Scenario.bundled(.longValues)
        #expect(scenario.peripheralPath == nil)
        #expect(!scenario.peripheral.services.isEmpty)
    }

    @Test(arguments: BundledScenario.allCases)
    func everyBundledScenarioMatchesItsGoldenTraceByteForByte(_ name: BundledScenario) async throws {
        let trace = await ScenarioRunner(Scenario.bundled(name)).run()
        #expect(trace.passed, "\(name.fileName): \(trace.failures)")
        let golden = Self.fixtures.appendingPathComponent("expected/\(name.rawValue).jsonl")
        let expected = try String(contentsOf: golden, encoding: .utf8)
        let actual = trace.json
        guard actual != expected else { return }
        let actualLines = actual.split(separator: "\n", omittingEmptySubsequences: false)
        let expectedLines = expected.split(separator: "\n", omittingEmptySubsequences: false)
        let first =
            (0..<min(actualLines.count, expectedLines.count)).first { actualLines[$0] != expectedLines[$0] }
            ?? min(actualLines.count, expectedLines.count)
        Issue.record(
            """
            \(name.fileName): the trace differs from Fixtures/expected/\(name.rawValue).jsonl at line \(first + 1):
              got:      \(first < actualLines.count ? actualLines[first] : "(end)")
              expected: \(first < expectedLines.count ? expectedLines[first] : "(end)")
            """)
    }

    @Test func anotherSeedOnABundledScenarioChangesItsRealisticTrace() async {
        var reseeded = Scenario.bundled(.heartRateBasic)
        reseeded.seed = 43
        let original = await ScenarioRunner(Scenario.bundled(.heartRateBasic)).run()
        let trace = await ScenarioRunner(reseeded).run()
        #expect(trace.seed == 43)
        #expect(trace.json != original.json)
        #expect(trace.records.map(\.op) == original.records.map(\.op))
    }
}
