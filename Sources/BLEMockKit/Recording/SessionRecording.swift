import BLECore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// What a ``SessionRecorder`` kept of a session: each ``RecordedEvent`` with the time it
/// happened, counted from when the recorder was made, in order.
///
/// A recording is written and read as a small versioned JSON file (``jsonText`` and
/// ``init(json:file:)``; the *Recording a device session* article documents it); `mockble
/// import` and BLECapture's `RecordingImporter` turn it into a peripheral profile and a
/// scenario that replays the session, and ``linkFigures(of:)`` says what the link did.
public struct SessionRecording: Hashable, Sendable {
    /// The `format` member every recording file starts with.
    public static let formatName = "mockble-recording"
    /// The version of the file format this kit writes, and the only one it reads.
    public static let version = 1

    /// One event and when it happened.
    public struct Entry: Hashable, Sendable {
        /// The time since the recorder was made, on the clock it was given.
        public var time: Duration
        /// What happened.
        public var event: RecordedEvent

        /// Creates an entry.
        public init(time: Duration, event: RecordedEvent) {
            self.time = time
            self.event = event
        }
    }

    /// The events, in the order they were recorded (times never decrease).
    public var entries: [Entry]

    /// Creates a recording from its entries.
    public init(entries: [Entry] = []) {
        self.entries = entries
    }

    /// The names of the placeholders the recording holds instead of private values, sorted.
    public var placeholders: [String] {
        var names: Set<String> = []
        for entry in entries {
            switch entry.event {
            case .read(_, _, .success(.placeholder(let name))), .write(_, _, .placeholder(let name), _, _),
                .valueUpdated(_, _, .placeholder(let name), _):
                names.insert(name)
            default:
                break
            }
        }
        return names.sorted()
    }

    /// The peripherals the app connected to, in the order of their first connection.
    public var connectedPeripherals: [UUID] {
        var seen: [UUID] = []
        for entry in entries {
            if case .connected(let peripheral, _) = entry.event, !seen.contains(peripheral) { seen.append(peripheral) }
        }
        return seen
    }
}
