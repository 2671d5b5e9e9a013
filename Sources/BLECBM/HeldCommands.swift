import Foundation

/// The app's calls a run holds back, and the order they are applied in (see ``CommandQueue``):
/// by where each was made, then in the order they were made; a stretch of releases (managers
/// shutting down as the app lets go of them) by their managers' identifiers.
///
/// A run's driver marks what is held as it begins each pass through the app queues, and applies
/// only what was held by its last mark: a call held after that was made by code that ran as the
/// pass went on, whose siblings of the same instant may still be queued on a queue the pass had
/// already gone through; they are all held by the end of the next pass, and applied together in
/// their order. (Pure: the order is tested synchronously.)
struct HeldCommands<Command> {
    /// A call held: where it was made, when, and what it does.
    private struct Entry {
        let origin: CommandQueue.Origin
        let sequence: UInt64
        let command: Command
        /// The manager a release shuts down (`nil`: not a release).
        let released: UUID?

        /// Whether `self` goes before `other`: by origin, then in the order they were made.
        func precedes(_ other: Entry) -> Bool { (origin, sequence) < (other.origin, other.sequence) }
    }

    /// The calls held, in the order they were made (sequence order) until taken.
    private var entries: [Entry] = []
    /// The sequence number of the next call held (one count for all origins: within an origin
    /// it still follows the order calls were made in).
    private var nextSequence: UInt64 = 0
    /// `nextSequence` at the last ``mark()``.
    private var markedSequence: UInt64 = 0

    /// Whether nothing is held.
    var isEmpty: Bool { entries.isEmpty }

    /// How many calls are held.
    var count: Int { entries.count }

    /// Holds `command`, made at `origin`; `releasing` names the manager it shuts down when it
    /// is a release.
    mutating func hold(_ command: Command, from origin: CommandQueue.Origin, releasing: UUID? = nil) {
        entries.append(Entry(origin: origin, sequence: nextSequence, command: command, released: releasing))
        nextSequence += 1
    }

    /// Notes what is held now: a later ``take(upToMark:into:)`` with `upToMark` takes only that.
    mutating func mark() {
        markedSequence = nextSequence
    }

    /// Appends the calls to apply now to `batch`, in their order, and lets go of them: all of
    /// them, or (`upToMark`) those held by the last ``mark()``; the others stay held, for the
    /// next take.
    mutating func take(upToMark: Bool, into batch: inout [Command]) {
        guard !entries.isEmpty else { return }
        // Held calls are in sequence order until taken: those after the mark are a suffix.
        let end =
            upToMark ? (entries.firstIndex { $0.sequence >= markedSequence } ?? entries.endIndex) : entries.endIndex
        guard end > entries.startIndex else { return }
        entries[..<end].sort { $0.precedes($1) }
        Self.orderReleases(&entries[..<end])
        batch.append(contentsOf: entries[..<end].lazy.map(\.command))
        entries.removeSubrange(..<end)
    }

    /// Puts each stretch of releases next to each other in sorted `taken` in the order of their
    /// managers' identifiers (which thread dropped the last reference, and when, is a race; the
    /// order they shut down in is not).
    private static func orderReleases(_ taken: inout ArraySlice<Entry>) {
        var start = taken.startIndex
        while start < taken.endIndex {
            guard taken[start].released != nil else {
                start += 1
                continue
            }
            var end = start + 1
            while end < taken.endIndex, taken[end].released != nil { end += 1 }
            if end - start > 1 {
                taken[start..<end].sort { $0.released!.uuidString < $1.released!.uuidString }
            }
            start = end
        }
    }
}
