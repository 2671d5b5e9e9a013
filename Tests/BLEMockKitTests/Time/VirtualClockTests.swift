import Testing

@testable import BLEMockKit

/// Behaviour of ``VirtualClock``: sleeping, cancellation, advancing, and runs with time that
/// drives itself. Order-sensitive tests live in `VirtualClockOrderingTests.swift`.
@Suite("VirtualClock", .timeLimit(.minutes(10)))
struct VirtualClockTests {
    typealias Instant = VirtualClock.Instant

    private func seconds(_ value: Int64) -> Instant { Instant(offset: .seconds(value)) }

    @Test("Sleeping until a deadline that has passed returns immediately")
    func pastDeadlineReturnsImmediately() async throws {
        let clock = VirtualClock(now: seconds(5))
        try await clock.sleep(until: seconds(5))
        try await clock.sleep(until: seconds(1))
        try await clock.sleep(for: .zero)
        try await clock.sleep(for: .seconds(-3))
        #expect(clock.now == seconds(5))
        #expect(clock.sleeperCount == 0)
    }

    @Test("A cancelled task sleeping until a past deadline still throws CancellationError")
    func pastDeadlineStillChecksCancellation() async {
        let clock = VirtualClock()
        let task = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            try await clock.sleep(until: .zero)
        }
        await #expect(throws: CancellationError.self) { try await task.value }
    }

    @Test("Cancelling a sleeping task throws CancellationError and frees its sleeper")
    func cancellationFreesSleeper() async throws {
        let clock = VirtualClock()
        let task = Task { try await clock.sleep(until: seconds(10)) }
        await clock.untilSleeping(count: 1)
        #expect(clock.nextDeadline == seconds(10))
        task.cancel()
        await #expect(throws: CancellationError.self) { try await task.value }
        #expect(clock.sleeperCount == 0)
        #expect(clock.nextDeadline == nil)
        await clock.advance(by: .seconds(20))
        #expect(clock.now == seconds(20))
    }

    @Test("A task cancelled before it registers its sleep throws and leaves no sleeper")
    func cancellationBeforeRegistration() async throws {
        let clock = VirtualClock()
        let early = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            try await clock.sleep(until: seconds(1))
        }
        await #expect(throws: CancellationError.self) { try await early.value }
        // Cancel 200 tasks at arbitrary points of their sleep, racing registration.
        let tasks = (0..<200).map { index in
            Task { try await clock.sleep(until: seconds(Int64(1 + index % 7))) }
        }
        for task in tasks { task.cancel() }
        for task in tasks {
            await #expect(throws: CancellationError.self) { try await task.value }
        }
        #expect(clock.sleeperCount == 0)
        #expect(clock.now == .zero)
    }

    @Test("We can't time travel by advancing to the past or by a negative duration")
    func timeNeverGoesBackwards() async throws {
        let clock = VirtualClock(now: seconds(5))
        let sleeper = Task { try await clock.sleep(until: seconds(8)) }
        await clock.untilSleeping(count: 1)
        await clock.advance(to: seconds(2))
        #expect(clock.now == seconds(5))
        await clock.advance(by: .seconds(-1))
        #expect(clock.now == seconds(5))
        clock.advanceSynchronously(to: seconds(1))
        #expect(clock.now == seconds(5))
        #expect(clock.sleeperCount == 1)
        await clock.advance(by: .seconds(3))
        try await sleeper.value
        #expect(clock.now == seconds(8))
    }

    @Test("advance(to:) wakes what is due and lands exactly on its target")
    func advanceLandsOnTarget() async throws {
        let clock = VirtualClock()
        let early = Task { try await clock.sleep(until: seconds(1)) }
        await clock.untilSleeping(count: 1)
        let late = Task { try await clock.sleep(until: seconds(3)) }
        await clock.untilSleeping(count: 2)
        let target = Instant(offset: .milliseconds(2500))
        await clock.advance(to: target)
        try await early.value
        #expect(clock.now == target)
        #expect(clock.sleeperCount == 1)
        #expect(clock.nextDeadline == seconds(3))
        late.cancel()
        await #expect(throws: CancellationError.self) { try await late.value }
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test("Inside a run, a loop sleeping one second ten times completes within advance(by: 10 s)")
    func tenSleepsInOneAdvance() async throws {
        let clock = VirtualClock()
        let counter = Recorder<Instant>()
        try await clock.run {
            async let loop: Void = {
                for _ in 0..<10 {
                    try await clock.sleep(for: .seconds(1))
                    counter.append(clock.now)
                }
            }()
            await clock.advance(by: .seconds(10))
            #expect(clock.now == seconds(10))
            try await loop
        }
        #expect(counter.entries == (1...10).map { seconds(Int64($0)) })
        #expect(clock.now == seconds(10))
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test("A run drains nested sleeps by itself and ends at the last deadline")
    func runDrainsNestedSleeps() async throws {
        let clock = VirtualClock()
        let wakes = Recorder<Instant>()
        try await clock.run {
            try await clock.sleep(for: .seconds(1))
            wakes.append(clock.now)
            async let inner: Void = {
                try await clock.sleep(for: .seconds(2))
                wakes.append(clock.now)
            }()
            try await clock.sleep(for: .seconds(5))
            wakes.append(clock.now)
            try await inner
        }
        #expect(wakes.entries == [seconds(1), seconds(3), seconds(6)])
        #expect(clock.now == seconds(6))
        #expect(clock.sleeperCount == 0)
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test("A run whose timer never ends stops at its time limit with a Stall")
    func runStopsAtTimeLimit() async throws {
        let clock = VirtualClock()
        let error = await #expect(throws: VirtualClock.Stall.self) {
            try await clock.run(timeLimit: .seconds(5)) {
                while true { try await clock.sleep(for: .seconds(1)) }
            }
        }
        #expect(error?.reason == .timeLimitReached)
        #expect(clock.now == seconds(5))
        #expect(clock.sleeperCount == 0)  // the cancelled loop's sleep was removed
    }

    /// (It went to 100 s and returned, as a bridge's run does not.)
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test("An explicit advance past a run's time limit stops the run there with a Stall, as a sleep does")
    func anAdvancePastTheTimeLimitStopsTheRun() async throws {
        let clock = VirtualClock()
        let error = await #expect(throws: VirtualClock.Stall.self) {
            try await clock.run(timeLimit: .seconds(10)) {
                try await clock.sleep(for: .seconds(4))
                await clock.advance(by: .seconds(100))
                return clock.now
            }
        }
        #expect(error?.reason == .timeLimitReached)
        #expect(clock.now == seconds(4))
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test("A run whose tasks wait on nothing the clock can wake reports a stall within its patience")
    func runReportsAStall() async throws {
        let clock = VirtualClock()
        let never = AsyncStream<Void>.makeStream()
        let wall = WallInstants()
        let error = await #expect(throws: VirtualClock.Stall.self) {
            try await clock.run(stallPatience: .milliseconds(100)) {
                wall.mark()
                for await _ in never.stream {}  // ends when the stall cancels the run
                wall.mark()
                try Task.checkCancellation()
            }
        }
        #expect(error?.reason == .nothingScheduled)
        // From the hopeless wait to its cancellation by the stall report, on the run's thread.
        #expect(try #require(wall.elapsed) < .seconds(2))
        never.continuation.finish()
    }

    @Test("Outside a run, run() wakes every pending sleeper and ends at the latest deadline")
    func runOutsideARunWakesPendingSleepers() async throws {
        let clock = VirtualClock()
        let first = Task { try await clock.sleep(until: seconds(2)) }
        let second = Task { try await clock.sleep(until: seconds(7)) }
        await clock.untilSleeping(count: 2)
        #expect(await clock.run())
        try await first.value
        try await second.value
        #expect(clock.now == seconds(7))
        #expect(await clock.run(maximumSteps: 0))
    }

    @Test("Task.sleep(for:clock:) and clock.sleep(for:) accept the virtual clock")
    func standardLibraryAcceptsClock() async throws {
        let clock: VirtualClock = .virtual
        let viaTask = Task { try await Task.sleep(for: .seconds(2), tolerance: .seconds(1), clock: clock) }
        await clock.untilSleeping(count: 1)
        let viaClock = Task { try await clock.sleep(for: .seconds(3)) }
        await clock.untilSleeping(count: 2)
        #expect(clock.minimumResolution == .zero)
        await clock.advance(by: .seconds(3))
        try await viaTask.value
        try await viaClock.value
        #expect(clock.now == seconds(3))
        #expect(elapsed(on: clock) == .zero)
    }

    /// Measures with the generic `Clock` API, as clock-taking code would.
    private func elapsed<C: Clock>(on clock: C) -> C.Duration {
        clock.measure {}
    }

    @Test("advanceSynchronously wakes due sleepers in order without yielding")
    func synchronousAdvance() async throws {
        let clock = VirtualClock()
        let wakes = Recorder<Int>()
        var tasks: [Task<Void, any Error>] = []
        for (index, deadline) in [3, 1, 2].enumerated() {
            tasks.append(
                Task {
                    try await clock.sleep(until: seconds(Int64(deadline)))
                    wakes.append(index)
                })
            await clock.untilSleeping(count: index + 1)
        }
        clock.advanceSynchronously(to: seconds(2))
        #expect(clock.now == seconds(2))
        #expect(clock.sleeperCount == 1)
        try await tasks[1].value
        try await tasks[2].value
        clock.advanceSynchronously(to: seconds(4))
        try await tasks[0].value
        #expect(clock.now == seconds(4))
        #expect(Set(wakes.entries) == [0, 1, 2])
    }
}
