import Testing

@testable import BLEMockKit

/// Synchronous tests of the clock's bookkeeping, with plain strings as waiters.
@Suite("SleeperSchedule", .timeLimit(.minutes(10)))
struct SleeperScheduleTests {
    typealias Instant = VirtualClock.Instant

    private func at(_ milliseconds: Int64) -> Instant {
        Instant(offset: .milliseconds(milliseconds))
    }

    /// Pops every sleeper due by `target`, recording (waiter, now) as each leaves.
    private func drain(_ schedule: inout SleeperSchedule<String>, through target: Instant) -> [(String, Instant)] {
        var woken: [(String, Instant)] = []
        while let waiter = schedule.popNext(through: target) {
            woken.append((waiter, schedule.now))
        }
        return woken
    }

    @Test("Sleepers leave in (deadline, sequence) order whatever the registration order")
    func ordersByDeadlineThenSequence() {
        var schedule = SleeperSchedule<String>(now: .zero)
        let sequences = (0..<5).map { _ in schedule.makeSequence() }
        #expect(schedule.register("c", deadline: at(20), sequence: sequences[2]) == .suspended)
        #expect(schedule.register("a", deadline: at(10), sequence: sequences[0]) == .suspended)
        #expect(schedule.register("e", deadline: at(30), sequence: sequences[4]) == .suspended)
        #expect(schedule.register("d", deadline: at(20), sequence: sequences[3]) == .suspended)
        #expect(schedule.register("b", deadline: at(10), sequence: sequences[1]) == .suspended)
        #expect(schedule.count == 5)
        #expect(schedule.nextDeadline == at(10))
        #expect(schedule.lastDeadline == at(30))
        let woken = drain(&schedule, through: at(100))
        #expect(woken.map(\.0) == ["a", "b", "c", "d", "e"])
        #expect(woken.map(\.1) == [at(10), at(10), at(20), at(20), at(30)])
        #expect(schedule.now == at(100))
        #expect(schedule.count == 0)
    }

    @Test("A deadline at or before now is due at once and is not stored")
    func pastDeadlinesAreNotStored() {
        var schedule = SleeperSchedule<String>(now: at(50))
        #expect(schedule.register("now", deadline: at(50), sequence: schedule.makeSequence()) == .deadlineReached)
        #expect(schedule.register("past", deadline: at(10), sequence: schedule.makeSequence()) == .deadlineReached)
        #expect(schedule.count == 0)
        #expect(schedule.nextDeadline == nil)
    }

    @Test("Popping stops at the target and lands now exactly on it")
    func popStopsAtTarget() {
        var schedule = SleeperSchedule<String>(now: .zero)
        _ = schedule.register("early", deadline: at(10), sequence: schedule.makeSequence())
        _ = schedule.register("late", deadline: at(30), sequence: schedule.makeSequence())
        #expect(drain(&schedule, through: at(25)).map(\.0) == ["early"])
        #expect(schedule.now == at(25))
        #expect(schedule.pendingKeys.map(\.deadline) == [at(30)])
        #expect(drain(&schedule, through: at(30)).map(\.1) == [at(30)])
    }

    @Test("We can't time travel: a target in the past leaves now unchanged")
    func nowNeverDecreases() {
        var schedule = SleeperSchedule<String>(now: at(40))
        _ = schedule.register("later", deadline: at(60), sequence: schedule.makeSequence())
        #expect(schedule.popNext(through: at(5)) == nil)
        #expect(schedule.now == at(40))
        #expect(schedule.count == 1)
    }

    @Test("Removing a sleeper frees it once and leaves the others in order")
    func removeFreesOnce() {
        var schedule = SleeperSchedule<String>(now: .zero)
        let first = schedule.makeSequence()
        let second = schedule.makeSequence()
        let third = schedule.makeSequence()
        _ = schedule.register("a", deadline: at(10), sequence: first)
        _ = schedule.register("b", deadline: at(10), sequence: second)
        _ = schedule.register("c", deadline: at(5), sequence: third)
        #expect(schedule.remove(deadline: at(10), sequence: second) == "b")
        #expect(schedule.remove(deadline: at(10), sequence: second) == nil)
        #expect(schedule.remove(deadline: at(11), sequence: first) == nil)
        #expect(schedule.count == 2)
        #expect(drain(&schedule, through: at(10)).map(\.0) == ["c", "a"])
        #expect(schedule.remove(deadline: at(10), sequence: first) == nil)
    }

    @Test("Sequence numbers increase and are never reused")
    func sequences() {
        var schedule = SleeperSchedule<String>(now: .zero)
        #expect((0..<4).map { _ in schedule.makeSequence() } == [0, 1, 2, 3])
        _ = schedule.register("a", deadline: at(1), sequence: 4)
        #expect(schedule.popNext(through: at(1)) == "a")
        #expect(schedule.makeSequence() == 4)
    }
}
