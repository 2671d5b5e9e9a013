import Foundation

/// The state of an L2CAP channel's output stream: how many bytes it has accepted that have not
/// yet crossed the link, against its capacity, and the events due (see ``L2CAPStreamMachine``).
///
/// `accept` never waits: it takes as many bytes as fit (0 when full) and the stream reports
/// `.hasSpaceAvailable` again once sends have crossed and freed room, as CoreBluetooth's output
/// stream does when the channel's credits come back.
struct L2CAPOutputMachine: L2CAPStreamMachine {
    enum Item: Sendable, Equatable {
        /// Bytes accepted earlier left the stream's buffer (they crossed, or the channel closed
        /// under them).
        case sent(Int)
        /// The channel closed: nothing more can be sent.
        case ended
    }

    /// How many bytes the stream holds at most (accepted and not yet crossed).
    let capacity: Int
    private(set) var status: Stream.Status = .notOpen
    /// The bytes accepted that have not yet crossed.
    private(set) var outstanding = 0
    private var ended = false
    /// The one-time events delivered (`.openCompleted`, `.endEncountered`).
    private var reported: Stream.Event = []
    /// Whether `.hasSpaceAvailable` may be delivered (again): until it is, then after each write
    /// (of one byte or more).
    private var spaceArmed = true

    init(capacity: Int) {
        self.capacity = max(1, capacity)
    }

    /// Whether `accept` would take bytes now.
    var hasSpaceAvailable: Bool { status == .open && outstanding < capacity }

    mutating func apply(_ item: Item) {
        switch item {
        case .sent(let count):
            outstanding = max(0, outstanding - count)
        case .ended:
            ended = true
            outstanding = 0
            if status == .open { status = .atEnd }
        }
    }

    mutating func open() {
        guard status == .notOpen else { return }
        status = ended ? .atEnd : .open
    }

    mutating func close() {
        status = .closed
    }

    /// Takes up to `length` bytes: returns how many fit (0 when the stream is full), or -1 when
    /// the stream is not open (not yet opened, closed, at its end) or `length` is negative.
    mutating func accept(_ length: Int) -> Int {
        guard length >= 0, status == .open else { return -1 }
        // (A zero-length write offers nothing: space is not announced again for it.)
        if length > 0 { spaceArmed = true }
        let count = min(length, capacity - outstanding)
        outstanding += count
        return count
    }

    func dueEvent(excluding: Stream.Event) -> Stream.Event? {
        guard status.isOpened else { return nil }
        if !reported.contains(.openCompleted) { return .openCompleted }
        if status == .atEnd { return reported.contains(.endEncountered) ? nil : .endEncountered }
        if spaceArmed, outstanding < capacity, !excluding.contains(.hasSpaceAvailable) { return .hasSpaceAvailable }
        return nil
    }

    mutating func delivered(_ event: Stream.Event) {
        if event == .hasSpaceAvailable {
            spaceArmed = false
        } else {
            reported.insert(event)
        }
    }
}
