import Testing

@testable import BLEMockKit

/// Wake order under concurrency, in runs: each woken task runs before time moves on, in
/// the order the clock woke them.
@Suite("VirtualClock ordering", .timeLimit(.minutes(10)))
struct VirtualClockOrderingTests {
    typealias Instant = VirtualClock.Instant

    /// One woken sleeper: its id (= registration order), deadline and the `now` it saw.
    struct Wake: Equatable, Sendable {
        var id: Int
        var deadline: Instant
        var observedNow: Instant
    }

    /// Starts `count` sleepers in a run, with deadlines drawn from `seed` (many of them
    /// equal); returns the wakes in the order they ran. The run's executor starts the
    /// sleepers in the order they were created, so they register in that order.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, *)
    private func runScenario(seed: UInt64, count: Int = 200) async throws -> [Wake] {
        let clock = VirtualClock()
        let recorder = Recorder<Wake>()
        var generator = SeededGenerator(seed: seed).derived("deadlines")
        let deadlines = (0..<count).map { _ in Instant(offset: .milliseconds(generator.int(in: 1...40))) }
        try await clock.run {
            try await withThrowingTaskGroup(of: Void.self) { group in
                for (id, deadline) in deadlines.enumerated() {
                    group.addTask {
                        try await clock.sleep(until: deadline)
                        recorder.append(Wake(id: id, deadline: deadline, observedNow: clock.now))
                    }
                }
                try await group.waitForAll()
            }
        }
        #expect(clock.sleeperCount == 0)
        #expect(clock.now == deadlines.max())
        return recorder.entries
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, *)
    @Test("200 concurrent sleepers wake in (deadline, registration) order, each at its deadline")
    func wakeOrderUnderConcurrency() async throws {
        let wakes = try await runScenario(seed: 42)
        #expect(wakes.count == 200)
        let expected = wakes.sorted { ($0.deadline, $0.id) < ($1.deadline, $1.id) }
        #expect(wakes == expected, "seed 42")
        #expect(wakes.allSatisfy { $0.observedNow == $0.deadline }, "seed 42")
        #expect(Set(wakes.map(\.deadline)).count < 200, "the scenario must include equal deadlines")
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, *)
    @Test("Running the same scenario 20 times gives identical results")
    func repeatedRunsAreIdentical() async throws {
        let first = try await runScenario(seed: 7, count: 50)
        for run in 1..<20 {
            let again = try await runScenario(seed: 7, count: 50)
            #expect(again == first, "run \(run), seed 7")
        }
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, *)
    @Test("Interleaved periodic sleepers run in virtual-time order within one advance")
    func interleavedTimers() async throws {
        let clock = VirtualClock()
        let log = Recorder<String>()
        try await clock.run {
            async let fast: Void = {
                for tick in 1...6 {
                    try await clock.sleep(for: .milliseconds(100))
                    log.append("fast \(tick) at \(clock.now)")
                }
            }()
            async let slow: Void = {
                for tick in 1...2 {
                    try await clock.sleep(for: .milliseconds(250))
                    log.append("slow \(tick) at \(clock.now)")
                }
            }()
            await clock.advance(by: .milliseconds(600))
            try await fast
            try await slow
        }
        // At 0.5 s both are due; slow's sleep began at 0.25 s, before fast's at 0.4 s, so
        // slow wakes first.
        #expect(
            log.entries == [
                "fast 1 at 0.1s", "fast 2 at 0.2s", "slow 1 at 0.25s", "fast 3 at 0.3s",
                "fast 4 at 0.4s", "slow 2 at 0.5s", "fast 5 at 0.5s", "fast 6 at 0.6s",
            ])
    }
}
