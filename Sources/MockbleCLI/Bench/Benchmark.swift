/// The suites `mockble bench` runs, and how many times it repeats each.
///
/// Every figure is a median over repetitions measured in the same process, so figures that are
/// compared (the Transport and memory-copy rates) share the machine's conditions.
public struct Benchmark: Sendable {
    /// How many repetitions and how much work each suite does.
    public struct Sizes: Sendable, Equatable {
        /// Workflows timed one by one for the fast-mode workflow median.
        public var workflows: Int
        /// Batches timed for each single-operation rate.
        public var operationBatches: Int
        /// Operations in one batch.
        public var operationsPerBatch: Int
        /// Repetitions of the realistic 60-second session.
        public var realisticSessions: Int
        /// Repetitions of each Transport size (and of the memory copy).
        public var transportRepetitions: Int
        /// Repetitions of the scan-scale and connection-scale runs.
        public var scaleRepetitions: Int
        /// Repetitions of the memory measurement.
        public var memoryRepetitions: Int
        /// Seeds one exploration of the explore suite runs.
        public var exploreSeeds: Int = 200
        /// Explorations timed for the explore suite's median.
        public var exploreRepetitions: Int = 1
        /// Values each stream of the throughput suite sends.
        public var throughputValues: Int = 600

        /// The full run: about a minute on a 2-core machine.
        public static let full = Sizes(
            workflows: 2_000, operationBatches: 7, operationsPerBatch: 20_000, realisticSessions: 5,
            transportRepetitions: 15, scaleRepetitions: 5, memoryRepetitions: 3, exploreSeeds: 1_000,
            exploreRepetitions: 3)

        /// `--quick`, a smoke run: fewer repetitions, and smaller batches, explorations and
        /// throughput streams.
        public static let quick = Sizes(
            workflows: 300, operationBatches: 3, operationsPerBatch: 5_000, realisticSessions: 3,
            transportRepetitions: 5, scaleRepetitions: 3, memoryRepetitions: 1, exploreSeeds: 200,
            exploreRepetitions: 1, throughputValues: 300)
    }

    /// The sizes this benchmark runs with.
    public let sizes: Sizes
    /// Measures resident bytes per idle peripheral in a fresh process and returns them (`nil`
    /// where the resident set cannot be read); `nil` measures once in this process instead.
    public let memoryProbe: (@Sendable () async throws -> Double?)?

    /// Creates a benchmark.
    public init(sizes: Sizes = .full, memoryProbe: (@Sendable () async throws -> Double?)? = nil) {
        self.sizes = sizes
        self.memoryProbe = memoryProbe
    }

    /// A suite of figures, named as `--suite` takes it; `allCases` is the order a full run
    /// takes.
    public enum Suite: String, CaseIterable, Sendable {
        case workflow, operations, realistic, transport, scan, connections, memory, explore, throughput
    }

    /// Runs `suites` (all by default), handing each figure to `report` as it is measured, and
    /// returns every figure.
    public func run(
        suites: [Suite] = Suite.allCases, report: (BenchFigure) -> Void = { _ in }
    ) async throws -> [BenchFigure] {
        var figures: [BenchFigure] = []
        for suite in suites {
            let measured: [BenchFigure] =
                switch suite {
                case .workflow: try await workflowFigures()
                case .operations: try await operationFigures()
                case .realistic: try await realisticFigures()
                case .transport: try transportFigures()
                case .scan: try await scanFigures()
                case .connections: try await connectionFigures()
                case .memory: try await memoryFigures()
                case .explore: try await exploreFigures()
                case .throughput: try await throughputFigures()
                }
            measured.forEach(report)
            figures += measured
        }
        return figures
    }

    /// What `mockble bench` says first in a debug build, whose figures are not comparable
    /// with a release build's; `nil` in a release build.
    static var debugBuildNote: String? {
        #if DEBUG
            return "note: this is a debug build; its figures are not comparable with a release build's "
                + "(swift run -c release mockble bench)"
        #else
            return nil
        #endif
    }
}
