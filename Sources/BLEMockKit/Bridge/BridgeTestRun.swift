import BLECore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// How a test runs on mock bridges: over which seeds, in which configuration, with how much
/// virtual time — the part of the Swift Testing trait (`BLEMockKitTesting`) and the XCTest
/// helper (`BLEMockKitXCTest`) that does not depend on the test framework.
///
/// Each seed gets a fresh bridge (the configuration with that seed). The body runs in the
/// bridge's ``MockBLEBridge/run(timeLimit:stallPatience:_:)`` scope, so virtual time drives
/// itself and managers created without a bridge join it (``MockBLEBridge/current``). After
/// the body, ``MockBLEBridge/finish()`` checks for leftovers.
public struct BridgeTestPlan: Sendable, Hashable {
    /// The environment variable that narrows a plan to one seed, to rerun a failing one:
    /// `BLEMOCKKIT_SEED=17 swift test --filter testName`.
    public static let seedVariable = "BLEMOCKKIT_SEED"

    /// The bridge configuration; its seed is replaced by each of ``seeds``.
    public var configuration: MockBLEBridge.Configuration
    /// The seeds to run, in order.
    public var seeds: [UInt64]
    /// The most virtual time one run may take.
    public var timeLimit: Duration
    /// How long, in wall-clock time, a run waits for work from outside it (app code on its own
    /// queues) before it reports a ``MockBLEBridge/Stall`` (see
    /// ``MockBLEBridge/run(timeLimit:stallPatience:_:)``). Each stalled seed costs this much
    /// wall time: a plan of many seeds expected to stall (a test of a hang) runs faster with
    /// less, such as `.milliseconds(100)`; app code that works long on its own queues before
    /// calling the kit needs more. A negative patience fails each run before its body runs
    /// (`APIMisuseError.invalidArgument(_:)`).
    public var stallPatience: Duration

    /// Creates a plan. With no `seeds`, it runs once with the configuration's own seed.
    public init(
        configuration: MockBLEBridge.Configuration = .fast, seeds: [UInt64]? = nil,
        timeLimit: Duration = .seconds(3_600), stallPatience: Duration = .seconds(1)
    ) {
        self.configuration = configuration
        self.seeds = seeds ?? [configuration.seed]
        self.timeLimit = timeLimit
        self.stallPatience = stallPatience
    }

    /// The seeds to run given an environment: the one `BLEMOCKKIT_SEED` names, if set (it
    /// need not be among ``seeds``), else ``seeds``.
    ///
    /// - Throws: ``EmptyPlan`` when ``seeds`` is empty (whatever the variable says: a plan
    ///   that runs nothing would pass without testing anything), ``BadSeedVariable`` when the
    ///   variable is set but is not a seed.
    public func seedsToRun(environment: [String: String]) throws -> [UInt64] {
        guard !seeds.isEmpty else { throw EmptyPlan() }
        guard let text = environment[Self.seedVariable] else { return seeds }
        guard let seed = UInt64(text.trimmingCharacters(in: .whitespaces)) else { throw BadSeedVariable(text: text) }
        return [seed]
    }

    /// `BLEMOCKKIT_SEED` was set to something that is not a seed.
    public struct BadSeedVariable: Error, Hashable, Sendable, CustomStringConvertible {
        /// What it was set to.
        public var text: String

        /// Creates the error for a value of the variable.
        public init(text: String) {
            self.text = text
        }

        public var description: String {
            "\(BridgeTestPlan.seedVariable)=\(text) is not a seed: give a whole number from 0 to 2^64-1"
        }
    }

    /// The plan has no seed to run (`seeds: []`, or `seedCount:` of 0 or less): the test body
    /// would never run, and the test would pass without testing anything.
    public struct EmptyPlan: Error, Hashable, Sendable, CustomStringConvertible {
        /// Creates the error.
        public init() {}

        public var description: String {
            "the bridge test plan has no seed, so the test body would never run: give at least one seed "
                + "(seeds: [0], or seedCount: 1 or more)"
        }
    }

    /// What one seed's run ended with.
    public struct Outcome: Sendable {
        /// The seed.
        public var seed: UInt64
        /// What the body threw (a ``MockBLEBridge/Stall`` when it could not end), if it did.
        public var error: (any Error)?
        /// What ``MockBLEBridge/finish()`` reported.
        public var finish: FinishReport
        /// The run's bridge, finished: its log and timeline are what the run did
        /// (``MockBLEBridge/runArtifacts(title:failures:)`` makes the files a failed test carries).
        public var bridge: MockBLEBridge

        /// Whether the body never started: the run refused to start it (its error says why: the
        /// caller was cancelled, or an argument such as the time limit was invalid), so nothing
        /// holds it.
        package var bodyNeverStarted = false

        /// Whether the run threw nothing and left nothing over.
        public var isClean: Bool { error == nil && finish.isClean }

        /// For a run that failed: the calls app code made through the CoreBluetooth-shaped API
        /// (BLECBM) that got no callback, as with CoreBluetooth (ignored, or ended by a link
        /// that went down), in words; `nil` when there were none, or when the run ended with a
        /// ``MockBLEBridge/Stall``, which names them itself.
        package var unansweredCallsNote: String? {
            guard !(error is MockBLEBridge.Stall) else { return nil }
            return bridge.outside.unansweredCallsNote(madeOn: "bridge seed \(seed)")
        }

        /// How to run this seed alone, e.g. `BLEMOCKKIT_SEED=17 swift test --filter uploads`.
        public func rerun(testName: String) -> String {
            "\(BridgeTestPlan.seedVariable)=\(seed) swift test --filter \(testName)"
        }
    }

    /// Runs `body` once on a fresh bridge with `seed` and reports how it ended.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    public func run(seed: UInt64, _ body: @escaping @Sendable () async throws -> Void) async -> Outcome {
        var configuration = configuration
        configuration.seed = seed
        let bridge = MockBLEBridge(configuration: configuration)
        var thrown: (any Error)?
        let started = LockedValue(false)
        do {
            try await bridge.run(timeLimit: timeLimit, stallPatience: stallPatience) {
                started.value = true
                try await body()
            }
        } catch {
            thrown = error
        }
        var outcome = Outcome(seed: seed, error: thrown, finish: await bridge.finish(), bridge: bridge)
        outcome.bodyNeverStarted = !started.value
        return outcome
    }
}
