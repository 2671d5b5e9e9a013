import BLECore
import Foundation
import Testing

@testable import BLEMockKit

@Suite("World: sleepers on the bridge's clock", .timeLimit(.minutes(10)))
struct WorldSleeperTests {
    /// Schedules a sleeper that must be stored (its deadline is after `now`).
    static func sleeper(_ harness: inout WorldHarness, until deadline: VirtualClock.Instant) throws -> SleeperID {
        let id = harness.sleep(until: deadline)
        return try #require(id)
    }

    @Test("Sleepers wake in time order among a link's events, with now at each one's deadline")
    func sleepersInterleaveWithLinkEvents() throws {
        var (harness, link) = try WorldLink.make()
        let start = harness.world.now
        func at(_ milliseconds: Int) -> VirtualClock.Instant { start.advanced(by: ms(milliseconds)) }
        let late = try Self.sleeper(&harness, until: at(300))
        let early = try Self.sleeper(&harness, until: at(50))
        harness.schedule(.centralState(link.central, .poweredOff), at: at(100))
        let middle = try Self.sleeper(&harness, until: at(200))
        harness.schedule(.centralState(link.central, .poweredOn), at: at(250))
        #expect(harness.world.sleeperCount == 3)
        #expect(harness.world.sleepers.map(\.id) == [early, middle, late])
        #expect(harness.world.sleepers.map(\.deadline) == [at(50), at(200), at(300)])
        let before = harness.timeline.count
        harness.runUntilIdle()
        #expect(harness.woken.map(\.sleeper) == [early, middle, late])
        #expect(harness.woken.map(\.time) == [at(50), at(200), at(300)])
        let order = harness.timeline[before...].compactMap { happening -> String? in
            switch happening.effect {
            case .wake(let sleeper): "\(sleeper)"
            case .central(_, .stateChanged(let state)): "\(state)"
            case .central(_, .disconnected): "disconnected"
            default: nil
            }
        }
        #expect(order == ["\(early)", "poweredOff", "disconnected", "\(middle)", "poweredOn", "\(late)"])
        #expect(harness.world.now == at(300))
        #expect(harness.world.sleeperCount == 0)
        #expect(harness.world.sleepers.isEmpty)
    }

    @Test("A sleeper wakes after every event due at its deadline, even one scheduled after it began to sleep")
    func sleeperWakesAfterTheEventsDueThen() throws {
        var (harness, link) = try WorldLink.make()
        let instant = harness.world.now.advanced(by: ms(100))
        let first = try Self.sleeper(&harness, until: instant)
        harness.schedule(.centralState(link.central, .poweredOff), at: instant)
        let second = try Self.sleeper(&harness, until: instant)
        harness.schedule(.centralState(link.central, .poweredOn), at: instant)
        let before = harness.timeline.count
        harness.runUntilIdle()
        let order = harness.timeline[before...].compactMap { happening -> String? in
            switch happening.effect {
            case .wake(let sleeper): "\(sleeper)"
            case .central(_, .stateChanged(let state)): "\(state)"
            default: nil
            }
        }
        // Both faults first (the sleepers wake to a world that has done what was due then), then
        // the sleepers in the order their sleeps began.
        #expect(order == ["poweredOff", "poweredOn", "\(first)", "\(second)"])
        #expect(harness.woken.map(\.time) == [instant, instant])
    }

    @Test("A sleep whose deadline has come schedules nothing")
    func dueSleepSchedulesNothing() {
        var harness = WorldHarness()
        harness.advance(to: .zero.advanced(by: .seconds(1)))
        #expect(harness.sleep(until: .zero.advanced(by: .seconds(1))) == nil)
        #expect(harness.sleep(until: .zero) == nil)
        #expect(harness.world.sleeperCount == 0)
        #expect(harness.world.schedule.isEmpty)
    }

    @Test("A cancelled sleeper leaves the schedule at once and never wakes; cancelling it again does nothing")
    func cancelledSleeperLeaves() throws {
        var harness = WorldHarness()
        let kept = try Self.sleeper(&harness, until: .zero.advanced(by: .seconds(2)))
        let cancelled = try Self.sleeper(&harness, until: .zero.advanced(by: .seconds(1)))
        harness.cancelSleep(cancelled)
        #expect(harness.world.sleeperCount == 1)
        #expect(harness.world.schedule.count == 1)
        #expect(harness.world.sleepers.map(\.id) == [kept])
        harness.cancelSleep(cancelled)
        #expect(harness.world.sleeperCount == 1)
        harness.runUntilIdle()
        #expect(harness.woken.map(\.sleeper) == [kept])
        #expect(harness.world.now == .zero.advanced(by: .seconds(2)))
        harness.cancelSleep(kept)
        #expect(harness.world.sleeperCount == 0)
        #expect(!harness.world.hasEventsBesidesSleepers)
    }

    @Test("Only events besides sleepers count as work left on the schedule")
    func eventsBesidesSleepers() throws {
        var (harness, link) = try WorldLink.make()
        harness.runUntilIdle()
        #expect(!harness.world.hasEventsBesidesSleepers)
        _ = harness.sleep(until: harness.world.now.advanced(by: .seconds(5)))
        #expect(!harness.world.hasEventsBesidesSleepers)
        harness.schedule(.centralState(link.central, .poweredOff), at: harness.world.now.advanced(by: .seconds(1)))
        #expect(harness.world.hasEventsBesidesSleepers)
    }
}
