import BLECore

@available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
extension Exploration {
    /// Explores a scenario: runs it in realistic mode for each seed with the seed's plan
    /// (conditions and timed faults, `plan` in the scenario format); a run fails when a
    /// step's `expect` does not match. A failure's minimal plan replays with `mockble run`
    /// once ``ExplorationPlan/scenarioFragment`` is put in the scenario.
    ///
    /// Scenarios have no retry logic, so most faults that fire fail a step that expects
    /// `"ok": true`; explore conditions alone (``ExplorationBudget/conditionsOnly``) to ask
    /// whether the scenario holds on every link.
    public func run(scenario: Scenario, progress: (@Sendable (ExplorationProgress) -> Void)? = nil) async
        -> ExplorationReport
    {
        await explore(progress: progress) { plan, keeping in
            await Self.replay(plan, scenario: scenario, keeping: keeping)
        }
    }

    /// Runs a scenario once under `plan` (realistic mode, the plan's seed).
    public static func replay(_ plan: ExplorationPlan, scenario: Scenario) async -> ExplorationOutcome {
        await replay(plan, scenario: scenario, keeping: Keeping(targets: true, artifacts: true))
    }

    /// ``replay(_:scenario:)``, collecting the run's ``ExplorationOutcome/targets`` and
    /// ``ExplorationOutcome/artifacts`` only when asked.
    static func replay(_ plan: ExplorationPlan, scenario: Scenario, keeping: Keeping) async -> ExplorationOutcome {
        var planned = scenario
        planned.mode = .realistic
        planned.seed = plan.seed
        planned.plan = plan
        let (trace, bridge) = await ScenarioRunner(planned).runOnBridge()
        let summary = await bridge.explorationSummary(collectingTargets: keeping.targets)
        let failed = !trace.failures.isEmpty
        var artifacts: RunArtifacts?
        if keeping.artifacts, failed {
            artifacts = RunArtifacts(
                title: "\(scenario.name) (exploration)", seed: plan.seed, timelineHTML: trace.html(for: planned),
                logText: RunArtifacts.text(of: await bridge.log))
        }
        return ExplorationOutcome(
            plan: plan, error: failed ? ScenarioRunFailure(failures: trace.failures) : nil,
            faultsFired: summary.fired, duration: summary.duration, targets: summary.targets,
            targetTimes: summary.targetTimes, artifacts: artifacts, linkMTU: summary.linkMTU)
    }
}

/// The steps of an explored scenario whose expectations did not match.
public struct ScenarioRunFailure: Error, Hashable, Sendable, CustomStringConvertible {
    /// The mismatching steps, in order.
    public var failures: [ScenarioTrace.Failure]

    public var description: String {
        failures.map(\.description).joined(separator: "\n")
    }
}
