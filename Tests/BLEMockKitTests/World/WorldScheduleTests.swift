import BLECore
import Foundation
import Testing

@testable import BLEMockKit

@Suite("World: the schedule", .timeLimit(.minutes(10)))
struct WorldScheduleTests {
    static func at(_ milliseconds: Int) -> VirtualClock.Instant { .zero.advanced(by: ms(milliseconds)) }

    /// Pops every event of a queue, in order.
    static func drain<Event>(_ queue: inout EventQueue<Event>) -> [Event] {
        var popped: [Event] = []
        while let deadline = queue.nextDeadline, let entry = queue.popFirst(dueBy: deadline) {
            popped.append(entry.event)
        }
        return popped
    }

    /// A queue of 300 events numbered in the order scheduled, at random deadlines 0…40 ms, and
    /// the events with their deadlines.
    static func randomQueue(_ random: inout SeededGenerator) -> (EventQueue<Int>, [(deadline: Int, index: Int)]) {
        var queue = EventQueue<Int>()
        var events: [(deadline: Int, index: Int)] = []
        for index in 0..<300 {
            let deadline = random.int(in: 0...40)
            queue.schedule(index, at: Self.at(deadline))
            events.append((deadline, index))
        }
        return (queue, events)
    }

    /// Event numbers in the order they run: by deadline, then in the order scheduled.
    static func runOrder(_ events: [(deadline: Int, index: Int)]) -> [Int] {
        events.sorted { $0.deadline != $1.deadline ? $0.deadline < $1.deadline : $0.index < $1.index }.map(\.index)
    }

    @Test("Events run in deadline order, and events at equal deadlines in the order they were scheduled")
    func deadlineThenInsertionOrder() {
        var queue = EventQueue<String>()
        for (event, deadline) in [("a", 10), ("b", 5), ("c", 10), ("d", 5), ("e", 0), ("f", 10), ("g", 5)] {
            queue.schedule(event, at: Self.at(deadline))
        }
        #expect(queue.ordered.map(\.event) == ["e", "b", "d", "g", "a", "c", "f"])
        #expect(Self.drain(&queue) == ["e", "b", "d", "g", "a", "c", "f"])
        #expect(queue.isEmpty)
    }

    @Test("A thousand events with colliding deadlines pop sorted by deadline, then by insertion")
    func heapOrder() {
        var queue = EventQueue<String>()
        var random = SeededGenerator(seed: 42)
        var expected: [(Int, Int)] = []
        for index in 0..<1_000 {
            let deadline = random.int(in: 0...20)
            queue.schedule("\(index)", at: Self.at(deadline))
            expected.append((deadline, index))
        }
        expected.sort { $0.0 != $1.0 ? $0.0 < $1.0 : $0.1 < $1.1 }
        #expect(Self.drain(&queue) == expected.map { "\($0.1)" })
    }

    @Test("Nothing pops before it is due; removing events keeps the order of the others")
    func dueByAndRemoval() {
        var queue = EventQueue<String>()
        for (event, deadline) in [("a", 30), ("b", 10), ("c", 20), ("d", 10)] {
            queue.schedule(event, at: Self.at(deadline))
        }
        #expect(queue.popFirst(dueBy: Self.at(9)) == nil)
        #expect(queue.popFirst(dueBy: Self.at(10))?.event == "b")
        queue.removeAll { $0 == "c" }
        #expect(queue.count == 2)
        #expect(queue.nextDeadline == Self.at(10))
        #expect(Self.drain(&queue) == ["d", "a"])
    }

    @Test("An event scheduled after the events due runs after every plain event at its deadline, even a later one")
    func lateEventsRunAfterTheEventsDue() {
        var queue = EventQueue<String>()
        queue.scheduleAfterEventsDue("late 1", at: Self.at(10))
        queue.schedule("a", at: Self.at(10))
        queue.scheduleAfterEventsDue("late 2", at: Self.at(10))
        queue.scheduleAfterEventsDue("early late", at: Self.at(5))
        queue.schedule("b", at: Self.at(10))
        queue.schedule("c", at: Self.at(20))
        #expect(queue.ordered.map(\.event) == ["early late", "a", "b", "late 1", "late 2", "c"])
        #expect(queue.ordered(where: { $0.hasPrefix("late") }).map(\.event) == ["late 1", "late 2"])
        #expect(Self.drain(&queue) == ["early late", "a", "b", "late 1", "late 2", "c"])
    }

    @Test("Removing one event anywhere in a large queue keeps every other event in order")
    func removingOneEventKeepsTheHeap() {
        var random = SeededGenerator(seed: 7)
        for removal in stride(from: 0, to: 300, by: 13) {
            var (queue, events) = Self.randomQueue(&random)
            #expect(queue.removeFirst { $0 == removal })
            #expect(!queue.removeFirst { $0 == removal })
            events.removeAll { $0.index == removal }
            #expect(Self.drain(&queue) == Self.runOrder(events))
        }
    }

    @Test("An event removed where the last one must move up, not down, leaves the others in order")
    func removalThatMustSiftUp() {
        // Scheduled in this order, the heap is [9, 14, 10, 19, 16, 28, 12]: removing 19 moves
        // the last event, 12, into its place under 14, where only moving it up restores the
        // order (moved down only, it would run after 14).
        for remove in [true, false] {
            var queue = EventQueue<Int>()
            for deadline in [14, 12, 9, 19, 16, 28, 10] { queue.schedule(deadline, at: Self.at(deadline)) }
            if remove {
                #expect(queue.removeFirst { $0 == 19 })
            } else {
                queue.removeAll { $0 == 19 }
            }
            #expect(queue.nextDeadline == Self.at(9))
            #expect(Self.drain(&queue) == [9, 10, 12, 14, 16, 28])
        }
    }

    @Test("Removing every event that matches, anywhere in a large queue, keeps the others in order")
    func removingManyEventsKeepsTheHeap() {
        var random = SeededGenerator(seed: 11)
        for divisor in [2, 3, 7, 300, 1] {
            var (queue, events) = Self.randomQueue(&random)
            // An event that runs after the others due at its deadline too, so the tie-break is
            // kept through the removal.
            queue.scheduleAfterEventsDue(1_000, at: Self.at(20))
            queue.removeAll { $0 != 1_000 && $0 % divisor == 0 }
            queue.removeAll { $0 == -1 }  // nothing matches: nothing changes
            events.removeAll { $0.index % divisor == 0 }
            var order = Self.runOrder(events)
            // It runs after every event due by 20 ms.
            order.insert(1_000, at: events.filter { $0.deadline <= 20 }.count)
            #expect(queue.count == order.count)
            #expect(Self.drain(&queue) == order)
        }
    }

    @Test("Two faults at the same instant run in the order scheduled: power off then on leaves the central on")
    func sameInstantFaults() throws {
        var (harness, link) = try WorldLink.make()
        let start = harness.world.now
        let instant = start.advanced(by: ms(100))
        harness.schedule(.centralState(link.central, .poweredOff), at: instant)
        harness.schedule(.centralState(link.central, .poweredOn), at: instant)
        harness.runUntilIdle()
        #expect(harness.world.state(of: .central(link.central)) == .poweredOn)
        let changes = harness.log(.stateChanged).suffix(2)
        #expect(changes.map(\.detail) == ["poweredOff", "poweredOn"])
        #expect(changes.map(\.time) == [instant, instant])
        let error = CoreBluetoothError(.peripheralDisconnected)
        #expect(
            harness.centralEvents(link.central).suffix(3) == [
                .stateChanged(.poweredOff), .disconnected(link.remotePeripheral, error), .stateChanged(.poweredOn),
            ])
        #expect(harness.world.links[link.key] == nil)
    }

    @Test("The same two faults scheduled the other way round leave the central off")
    func sameInstantFaultsReversed() throws {
        var (harness, link) = try WorldLink.make()
        let instant = harness.world.now.advanced(by: ms(100))
        harness.schedule(.centralState(link.central, .poweredOn), at: instant)
        harness.schedule(.centralState(link.central, .poweredOff), at: instant)
        harness.runUntilIdle()
        #expect(harness.world.state(of: .central(link.central)) == .poweredOff)
    }

    @Test("Time never goes backwards: an event due in the past runs now, and moving time back does nothing")
    func timeNeverGoesBackwards() throws {
        var (harness, link) = try WorldLink.make()
        let now = harness.world.now
        #expect(now > .zero)
        harness.schedule(.nameChange(peripheral: link.peripheral, "Renamed"), at: .zero)
        let ran = harness.runNextEvent()
        #expect(ran)
        #expect(harness.world.now == now)
        #expect(harness.log(.stateChanged).last?.detail == "name=Renamed")
        #expect(harness.log(.stateChanged).last?.time == now)
        harness.mutate { $0.moveTime(to: .zero) }
        #expect(harness.world.now == now)
        // A busy stretch of work logs in time order.
        try harness.subscribe(WorldUUID.notifying, on: link)
        for byte in UInt8(0)..<20 { try harness.updateValue(Data([byte]), of: WorldUUID.notifying, on: link) }
        harness.perform(link.read(WorldUUID.long))
        let times = harness.world.log.map(\.time)
        #expect(times == times.sorted())
    }

    @Test("Advancing runs everything due by the instant, in order, then stops there")
    func advancingStopsAtTheInstant() throws {
        var (harness, link) = try WorldLink.make()
        let start = harness.world.now
        harness.schedule(.nameChange(peripheral: link.peripheral, "Late"), at: start.advanced(by: ms(61)))
        try harness.writeWithoutResponse(Data([1]), to: WorldUUID.value, on: link)
        harness.advance(to: start.advanced(by: ms(60)))
        #expect(harness.world.now == start.advanced(by: ms(60)))
        #expect(harness.world.nextDeadline == start.advanced(by: ms(61)))
        #expect(!harness.log(.stateChanged).contains { $0.detail == "name=Late" })
        harness.advance(to: start.advanced(by: ms(61)))
        #expect(harness.log(.stateChanged).last?.detail == "name=Late")
    }
}
