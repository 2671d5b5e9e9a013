import BLEMockKit
import Foundation

extension Benchmark {
    /// `explore.seeds-per-second`: an exploration of the correct file-transfer app (a 4 KiB
    /// upload over writes without response, a commit with a write request, a receipt by
    /// notification) with the default budget, faults on, on every core of the machine.
    func exploreFigures() async throws -> [BenchFigure] {
        guard #available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *) else { return [] }
        let file = FileTransferRig.file(4_096)
        let exploration = Exploration(seeds: sizes.exploreSeeds)
        var samples: [Double] = []
        for _ in 0..<sizes.exploreRepetitions {
            let (report, seconds) = await BenchClock.timed {
                await exploration.run { run in
                    try await FileTransferRig.transfer(file, bugs: [], bridge: run.bridge)
                }
            }
            guard report.passed, report.seedsRun == sizes.exploreSeeds else {
                throw BenchFailure(description: "the exploration of the correct upload failed:\n\(report)")
            }
            samples.append(Double(report.seedsRun) / seconds)
        }
        return [
            BenchFigure(
                // (Not rounded: a slow machine, or a sanitizer, can run fewer than one seed a second.)
                name: "explore.seeds-per-second", median: BenchClock.median(samples), unit: "seeds/s",
                target: .atLeast(500), repetitions: samples.count),
            BenchFigure(
                name: "explore.cores", median: Double(exploration.parallelism), unit: "runs at once",
                target: .reference, repetitions: 1),
        ]
    }
}
