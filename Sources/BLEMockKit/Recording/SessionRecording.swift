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
    /// The ATT_MTU a `connected` event records for every link of 515 or more: recorders read
    /// the ATT_MTU as `maximumWriteValueLength(for: .withoutResponse)` + 3, and CoreBluetooth
    /// (like the kit) answers at most 512, the longest attribute value. So 515 means "at least
    /// 515" (515, 516 or 517); every smaller value is exact.
    public static let lowerBoundMTU = 515

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
