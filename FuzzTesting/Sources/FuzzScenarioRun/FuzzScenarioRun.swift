import BLEMockKit
import Dispatch

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// libFuzzer entry point: loads the input as a scenario and, when it loads, runs it.
///
/// Beyond "nothing traps, hangs or leaks": every accepted scenario runs within its wall-time
/// budget, ``wallBudget(simulating:)`` (the loader bounds each wait to an hour of virtual time,
/// and a run must stay cheap for every file it accepts), its trace has one record per step, in
/// order, with times that never go back, and the run is deterministic (twice gives the same
/// JSON trace). Scenario paths such as `"../peripherals/heart-rate.json"` resolve from
/// `Fixtures/scenarios` (the script runs from the repository root). A broken property stops
/// the run with `fatalError`, which libFuzzer reports as a crash with the input saved.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzScenarioRun(_ start: UnsafeRawPointer?, _ count: Int) -> CInt {
    let data = start.map { Data(bytes: $0, count: count) } ?? Data()
    guard let scenario = try? Scenario(json: data, file: "fuzz.json", baseDirectory: scenarioDirectory) else {
        return 0
    }
    let clock = ContinuousClock()
    let started = clock.now
    let first = runBlocking(scenario)
    let elapsed = clock.now - started
    let simulated = first.records.last?.time ?? .zero
    let budget = wallBudget(simulating: simulated)
    if elapsed > budget {
        fatalError(
            "an accepted scenario of \(scenario.steps.count) steps, \(simulated) of virtual time, ran for \(elapsed), "
                + "over its budget of \(budget)")
    }
    guard first.records.count == scenario.steps.count else {
        fatalError("\(scenario.steps.count) steps gave \(first.records.count) records")
    }
    var previous = Duration.zero
    for (index, record) in first.records.enumerated() {
        guard record.step == index else { fatalError("record \(index) is of step \(record.step)") }
        guard record.time >= previous else { fatalError("step \(index) ends at \(record.time), before \(previous)") }
        previous = record.time
    }
    let second = runBlocking(scenario)
    guard first.json == second.json else { fatalError("two runs of one scenario gave different traces") }
    return 0
}

/// The most wall time one accepted scenario may take (a release build with AddressSanitizer):
/// two seconds, and three more per simulated hour (a scan hears every advertisement, so an
/// hour of scanning is real work; the loader allows at most an hour per wait).
func wallBudget(simulating simulated: Duration) -> Duration {
    .seconds(2) + simulated / 3_600 * 3
}

/// Where the bundled scenarios live, from the repository root.
let scenarioDirectory = URL(fileURLWithPath: "Fixtures/scenarios", isDirectory: true)

/// Runs the scenario to its end from libFuzzer's synchronous callback.
func runBlocking(_ scenario: Scenario) -> ScenarioTrace {
    let box = TraceBox()
    let done = DispatchSemaphore(value: 0)
    Task.detached {
        box.trace = await ScenarioRunner(scenario).run()
        done.signal()
    }
    done.wait()
    return box.trace!
}

/// Carries the trace out of the task (written before the semaphore is signalled, read after).
final class TraceBox: @unchecked Sendable {
    var trace: ScenarioTrace?
}
