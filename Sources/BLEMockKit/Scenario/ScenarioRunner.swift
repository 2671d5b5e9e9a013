import BLECore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Runs a ``Scenario`` on a new bridge and records what each step did.
///
/// The runner sets up a bridge in the scenario's mode and seed, the profile's peripheral
/// (powered on, services added, advertising) and one central (powered on), then runs the
/// steps in order. A step that fails records its error and the run goes on; expectations
/// are checked after each step. Everything is seeded and on virtual time, so the same
/// scenario and seed give the same trace, byte for byte.
///
/// ```swift
/// let scenario = try Scenario.load(contentsOf: url)
/// let trace = await ScenarioRunner(scenario).run()
/// print(trace.json)
/// ```
public struct ScenarioRunner: Sendable {
    /// The scenario to run.
    public var scenario: Scenario

    /// Creates a runner.
    public init(_ scenario: Scenario) {
        self.scenario = scenario
    }

    /// The seed the run uses: the scenario's, or 0.
    public var seed: UInt64 { scenario.seed ?? 0 }

    /// Runs every step and returns the trace.
    ///
    /// If the peripheral cannot be set up (an injected failure, say), the trace has no
    /// records and one failure at step -1 saying why. A scenario built in code whose steps
    /// name a characteristic its profile does not have (a ``ScenarioStep/CharacteristicReference``
    /// out of range; a file's loader never makes one) runs nothing either: the trace has a
    /// failure for each such step.
    public func run() async -> ScenarioTrace {
        await runOnBridge().trace
    }

    /// Runs every step; returns the trace and the bridge it ran on.
    func runOnBridge() async -> (trace: ScenarioTrace, bridge: MockBLEBridge) {
        let bridge = MockBLEBridge(configuration: bridgeConfiguration)
        // A scenario built in code may name a characteristic its profile does not have (a file's
        // loader resolves every name): the trace says which steps, and nothing runs.
        let unresolved = unresolvedReferences
        guard unresolved.isEmpty else {
            let trace = ScenarioTrace(
                name: scenario.name, mode: scenario.mode, seed: seed, records: [], failures: unresolved,
                log: await bridge.log)
            return (trace, bridge)
        }
        if let plan = scenario.plan { await bridge.plan(plan.faults) }
        let session: ScenarioSession
        do {
            session = try await ScenarioSession.start(
                scenario, on: bridge, central: centralConfiguration,
                peripheral: peripheralConfiguration)
        } catch {
            let failure = ScenarioTrace.Failure(
                step: -1, op: "setup", line: 0, mismatches: ["the peripheral could not be set up: \(error)"])
            let trace = ScenarioTrace(
                name: scenario.name, mode: scenario.mode, seed: seed, records: [], failures: [failure],
                log: await bridge.log)
            return (trace, bridge)
        }
        var records: [ScenarioTrace.Record] = []
        var failures: [ScenarioTrace.Failure] = []
        for step in scenario.steps {
            let record = await session.perform(step)
            records.append(record)
            if let expectation = step.expectation {
                let mismatches = expectation.mismatches(in: record)
                if !mismatches.isEmpty {
                    failures.append(
                        ScenarioTrace.Failure(
                            step: step.index, op: step.operation.name, line: step.line, mismatches: mismatches))
                }
            }
        }
        await session.end()
        let participants = [
            TimelinePage.Participant(session.central.identifier, role: .central, name: "central"),
            TimelinePage.Participant(
                session.peripheral.identifier, role: .peripheral, name: scenario.peripheral.name ?? "peripheral"),
        ]
        let trace = ScenarioTrace(
            name: scenario.name, mode: scenario.mode, seed: seed, records: records, failures: failures,
            log: await bridge.log, participants: participants)
        return (trace, bridge)
    }

    /// A failure for each step naming a characteristic (by service and characteristic index)
    /// that the scenario's peripheral profile does not have.
    var unresolvedReferences: [ScenarioTrace.Failure] {
        let services = scenario.peripheral.services
        return scenario.steps.compactMap { step in
            guard let reference = step.operation.characteristicReference else { return nil }
            if services.indices.contains(reference.serviceIndex),
                services[reference.serviceIndex].characteristics.indices.contains(reference.characteristicIndex)
            {
                return nil
            }
            return ScenarioTrace.Failure(
                step: step.index, op: step.operation.name, line: step.line,
                mismatches: [
                    "it names characteristic \"\(reference.name)\" as characteristic "
                        + "\(reference.characteristicIndex) of service \(reference.serviceIndex), which the peripheral's "
                        + "profile does not have (it has \(services.count) service\(services.count == 1 ? "" : "s"))"
                ])
        }
    }

    /// The bridge's configuration: the mode's timing, the seed, the scenario's interval, and a
    /// plan's conditions (with a supervision timeout the Core specification allows with the
    /// interval: see ``LinkTiming/supervisionTimeout``).
    public var bridgeConfiguration: MockBLEBridge.Configuration {
        var configuration: MockBLEBridge.Configuration =
            scenario.mode == .realistic ? .realistic(seed: seed) : MockBLEBridge.Configuration(seed: seed)
        guard scenario.mode == .realistic else { return configuration }
        if let interval = scenario.connectionInterval { configuration.timing.connectionInterval = interval }
        // A plan's conditions rule the link (its interval over `link.connectionInterval`, its
        // phone over `link.centralProfile`).
        if let plan = scenario.plan {
            configuration.timing = plan.conditions.timing
            configuration.limits = plan.conditions.limits
        }
        if configuration.timing.centralProfile == nil { configuration.timing.centralProfile = scenario.centralProfile }
        configuration.timing.peripheralProfile = scenario.peripheralProfile
        // (A slow interval keeps its links valid: see `LinkTiming.supervisionTimeout`.)
        configuration.timing = configuration.timing.withSupervisionTimeoutFittingTheInterval
        return configuration
    }

    /// The central's configuration: the mode's preset, draws derived from the bridge's seed,
    /// `central.preferredMTU` fixing its side of the MTU negotiation, and `central.pairing`.
    public var centralConfiguration: MockCentralManager.Configuration {
        var configuration: MockCentralManager.Configuration =
            scenario.mode == .realistic ? .realistic(seed: seed) : .fast
        configuration.seed = nil
        if let mtu = scenario.centralPreferredMTU { configuration.mtu = .fixed(mtu) }
        if let pairing = scenario.centralPairing { configuration.pairing = pairing }
        return configuration
    }

    /// The peripheral's configuration before the profile's own fields apply.
    public var peripheralConfiguration: MockPeripheralManager.Configuration {
        var configuration: MockPeripheralManager.Configuration =
            scenario.mode == .realistic ? .realistic(seed: seed) : .fast
        configuration.seed = nil
        return configuration
    }
}
