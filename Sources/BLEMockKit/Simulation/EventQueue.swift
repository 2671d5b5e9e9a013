/// The simulation's schedule: events ordered by (deadline, insertion sequence), so events
/// due at the same instant run in the order they were scheduled.
///
/// One tie-break refines that order: an event scheduled with
/// ``scheduleAfterEventsDue(_:at:)`` (a sleeper's wake) runs after every event scheduled with
/// ``schedule(_:at:)`` at the same deadline, even one scheduled later; among themselves such
/// events keep the order they were scheduled in.
///
/// A binary min-heap; scheduling and popping are O(log n).
struct EventQueue<Event: Sendable>: Sendable {
    struct Entry: Sendable {
        var deadline: VirtualClock.Instant
        /// The order scheduled; the top bit (``EventQueue/lateBit``) is set for an event that
        /// runs after the others due at its deadline, so one comparison orders both.
        var sequence: UInt64
        var event: Event

        func precedes(_ other: Entry) -> Bool {
            deadline != other.deadline ? deadline < other.deadline : sequence < other.sequence
        }
    }

    /// Marks the sequence of an event that runs after the others due at its deadline (sequence
    /// numbers count up from zero and never reach it).
    static var lateBit: UInt64 { 1 << 63 }

    private var heap: [Entry] = []
    private var nextSequence: UInt64 = 0

    /// The number of scheduled events.
    var count: Int { heap.count }
    /// Whether nothing is scheduled.
    var isEmpty: Bool { heap.isEmpty }
    /// The deadline of the next event.
    var nextDeadline: VirtualClock.Instant? { heap.first?.deadline }

    /// Schedules an event; returns its sequence number.
    @discardableResult
    mutating func schedule(_ event: Event, at deadline: VirtualClock.Instant) -> UInt64 {
        insert(Entry(deadline: deadline, sequence: takeSequence(), event: event))
    }

    /// Schedules an event that runs after every event scheduled with ``schedule(_:at:)`` at the
    /// same deadline (whenever that one is scheduled), and after the events scheduled this way
    /// before it; returns its sequence number (with ``lateBit`` set).
    @discardableResult
    mutating func scheduleAfterEventsDue(_ event: Event, at deadline: VirtualClock.Instant) -> UInt64 {
        insert(Entry(deadline: deadline, sequence: takeSequence() | Self.lateBit, event: event))
    }

    private mutating func takeSequence() -> UInt64 {
        defer { nextSequence += 1 }
        return nextSequence
    }

    private mutating func insert(_ entry: Entry) -> UInt64 {
        heap.append(entry)
        siftUp(from: heap.count - 1)
        return entry.sequence
    }

    /// Removes and returns the next event if it is due at or before `limit`.
    mutating func popFirst(dueBy limit: VirtualClock.Instant) -> Entry? {
        guard let first = heap.first, first.deadline <= limit else { return nil }
        let last = heap.removeLast()
        if !heap.isEmpty {
            heap[0] = last
            siftDown(from: 0)
        }
        return first
    }

    /// Removes the first event (in heap order) for which `matches` is true; returns whether
    /// there was one. O(n) to find it, O(log n) to restore the heap.
    @discardableResult
    mutating func removeFirst(where matches: (Event) -> Bool) -> Bool {
        guard let index = heap.firstIndex(where: { matches($0.event) }) else { return false }
        let last = heap.removeLast()
        guard index < heap.count else { return true }
        heap[index] = last
        siftDown(from: siftUp(from: index))
        return true
    }

    /// Removes every event for which `shouldRemove` is true. O(n), in place, and without
    /// touching the heap when nothing matches.
    mutating func removeAll(where shouldRemove: (Event) -> Bool) {
        guard heap.contains(where: { shouldRemove($0.event) }) else { return }
        heap.removeAll { shouldRemove($0.event) }
        // Restore the heap order bottom-up (the order events run in is their (deadline,
        // sequence) order whatever the heap's layout).
        for index in stride(from: heap.count / 2 - 1, through: 0, by: -1) { siftDown(from: index) }
    }

    /// The scheduled events in the order they will run.
    var ordered: [Entry] { heap.sorted { $0.precedes($1) } }

    /// The scheduled events for which `include` is true, in the order they will run.
    func ordered(where include: (Event) -> Bool) -> [Entry] {
        heap.filter { include($0.event) }.sorted { $0.precedes($1) }
    }

    /// Moves the entry at `index` up while it precedes its parent; returns where it ends.
    @discardableResult
    private mutating func siftUp(from index: Int) -> Int {
        var child = index
        while child > 0 {
            let parent = (child - 1) / 2
            guard heap[child].precedes(heap[parent]) else { break }
            heap.swapAt(child, parent)
            child = parent
        }
        return child
    }

    /// Moves the entry at `index` down while a child precedes it.
    private mutating func siftDown(from index: Int) {
        var parent = index
        while true {
            let left = 2 * parent + 1
            let right = left + 1
            var smallest = parent
            if left < heap.count, heap[left].precedes(heap[smallest]) { smallest = left }
            if right < heap.count, heap[right].precedes(heap[smallest]) { smallest = right }
            if smallest == parent { break }
            heap.swapAt(parent, smallest)
            parent = smallest
        }
    }
}
