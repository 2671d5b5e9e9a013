/// The simulation's schedule: events ordered by (deadline, insertion sequence), so events
/// due at the same instant run in the order they were scheduled.
///
/// A binary min-heap; scheduling and popping are O(log n).
struct EventQueue<Event: Sendable>: Sendable {
    struct Entry: Sendable {
        var deadline: VirtualClock.Instant
        var sequence: UInt64
        var event: Event

        func precedes(_ other: Entry) -> Bool {
            deadline != other.deadline ? deadline < other.deadline : sequence < other.sequence
        }
    }

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
        let entry = Entry(deadline: deadline, sequence: nextSequence, event: event)
        nextSequence += 1
        heap.append(entry)
        var child = heap.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard heap[child].precedes(heap[parent]) else { break }
            heap.swapAt(child, parent)
            child = parent
        }
        return entry.sequence
    }

    /// Removes and returns the next event if it is due at or before `limit`.
    mutating func popFirst(dueBy limit: VirtualClock.Instant) -> Entry? {
        guard let first = heap.first, first.deadline <= limit else { return nil }
        let last = heap.removeLast()
        if !heap.isEmpty {
            heap[0] = last
            var parent = 0
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
        return first
    }

    /// Removes every event for which `shouldRemove` is true.
    mutating func removeAll(where shouldRemove: (Event) -> Bool) {
        let kept = heap.filter { !shouldRemove($0.event) }
        guard kept.count != heap.count else { return }
        heap = []
        for entry in kept.sorted(by: { $0.precedes($1) }) { heap.append(entry) }
    }

    /// The scheduled events in the order they will run.
    var ordered: [Entry] { heap.sorted { $0.precedes($1) } }
}
