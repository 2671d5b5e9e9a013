import BLECore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// What the link to one peripheral did in a recorded session, as far as an app can see it:
/// its ATT_MTU, the connection events that carried notifications (and queued writes without
/// response), the connection interval and packets per event those suggest, and the
/// throughput of notifications and of writes without response. ``linkTiming`` turns them into
/// a realistic ``LinkTiming`` for a bridge that replays the session.
///
/// The figures are estimates from when events reached the app: arrivals less than
/// ``connectionEventWindow`` (3 ms) after the one before share a connection event (at one
/// instant on a bridge's virtual clock; a few microseconds to a packet's air time apart on a
/// device's `ContinuousClock`). The connection interval is read only from evidence of two
/// connection events back to back, never from the app's own pauses between operations:
///
/// - notifications: an event that carried the most notifications any event carried (at least
///   two: a full connection event, so more were waiting), and the next event that carried
///   any — the next connection event;
/// - writes without response (recorded when the stack queued them): two consecutive groups
///   in which the app queued at least two, the later no more than the earlier — an app
///   refilling its queue each time a connection event emptied part of it.
///
/// The interval is the median of those gaps, each from an event's first arrival to the next
/// event's (notifications' when there are any, else writes'); a session with no such
/// evidence — single notifications and writes, each when the app acted — has no interval
/// (`nil`), rather than a guess, and then no jitter, packets per event or throughput either. A
/// burst is a run of events less than one and a half intervals
/// apart, and a burst's throughput counts its bytes over its span plus one interval (its last
/// event's share). Writes without response count when the app queued them, so their figure is
/// the app's rate, which the stack's queue lets run ahead of the link.
public struct LinkFigures: Hashable, Sendable {
    /// The ATT_MTU of the first connection, if there was one: 515
    /// (``SessionRecording/lowerBoundMTU``) means at least 515.
    public var mtu: Int?
    /// How many connections the session made.
    public var connections: Int
    /// How many notifications and indications arrived.
    public var notifications: Int
    /// How many connection events carried them (arrivals grouped as ``connectionEventWindow``
    /// says).
    public var notificationEvents: Int
    /// The connection interval the arrivals show, if the session has evidence of two
    /// connection events back to back (see the rules above); `nil`, unknown, otherwise.
    public var connectionInterval: Duration?
    /// The largest deviation from ``connectionInterval`` of a gap it was read from.
    public var jitter: Duration
    /// The most notifications and indications that arrived in one connection event: how many packets
    /// a connection event carried, if any arrived and the interval is known.
    public var packetsPerConnectionEvent: Int?
    /// Notification payload bytes per second over the bursts, if any arrived.
    public var notificationThroughput: Int?
    /// Bytes of writes without response per second over their bursts, as the app queued them,
    /// if any were made: the rate at which the app handed them to the stack, which a recording
    /// sees, not the rate at which the link carried them, which it does not. The stack's queue
    /// takes a burst at once, so this can exceed what the link carries (its packets per event of
    /// ATT_MTU − 3 bytes each interval); ``notificationThroughput``, timed as notifications
    /// arrived, is the link's.
    public var writeWithoutResponseThroughput: Int?

    /// Creates figures.
    public init(
        mtu: Int? = nil, connections: Int = 0, notifications: Int = 0, notificationEvents: Int = 0,
        connectionInterval: Duration? = nil, jitter: Duration = .zero, packetsPerConnectionEvent: Int? = nil,
        notificationThroughput: Int? = nil, writeWithoutResponseThroughput: Int? = nil
    ) {
        self.mtu = mtu
        self.connections = connections
        self.notifications = notifications
        self.notificationEvents = notificationEvents
        self.connectionInterval = connectionInterval
        self.jitter = jitter
        self.packetsPerConnectionEvent = packetsPerConnectionEvent
        self.notificationThroughput = notificationThroughput
        self.writeWithoutResponseThroughput = writeWithoutResponseThroughput
    }

    /// How soon after the arrival before it an arrival counts as part of the same connection
    /// event: 3 ms. On a bridge's virtual clock the arrivals of one connection event share an
    /// instant; on a device's clock each reads its own time, a few microseconds apart, or a
    /// packet's air time apart as the radio receives them (about 1.4 ms for a 251-byte packet
    /// and its empty reply on LE 2M, 2.5 ms on LE 1M). Less than half the shortest connection
    /// interval (7.5 ms), so two events apart by an interval are told apart, unless the first
    /// fills its interval to within 3 ms of the next (then the two read as one).
    public static let connectionEventWindow: Duration = .milliseconds(3)

    /// Realistic timing seeded with these figures: ``LinkTiming/realistic`` with the observed
    /// connection interval (clamped to 7.5 ms…4 s), jitter (at most the interval) and packets
    /// per connection event, where the session showed them (and, for an interval of 360 ms or
    /// more, the shortest supervision timeout the Core specification allows with it, rather
    /// than 720 ms: see ``LinkTiming/supervisionTimeout``).
    public var linkTiming: LinkTiming {
        var timing = LinkTiming.realistic
        if let interval = connectionInterval {
            timing.connectionInterval = min(max(interval, .microseconds(7_500)), .seconds(4))
            timing.jitter = min(jitter, timing.connectionInterval)
        }
        if let packets = packetsPerConnectionEvent { timing.packetsPerConnectionEvent = max(1, packets) }
        return timing.withSupervisionTimeoutFittingTheInterval
    }
}

extension SessionRecording {
    /// The link figures of the session with `peripheral`.
    public func linkFigures(of peripheral: UUID) -> LinkFigures {
        var figures = LinkFigures()
        var updates: [(time: Duration, bytes: Int)] = []
        var writes: [(time: Duration, bytes: Int)] = []
        for entry in entries where entry.event.peripheral == peripheral {
            switch entry.event {
            case .connected(_, let mtu):
                figures.connections += 1
                if figures.mtu == nil { figures.mtu = mtu }
            case .valueUpdated(_, _, let value, _):
                updates.append((entry.time, value.count))
            case .write(_, _, let value, false, nil):
                writes.append((entry.time, value.count))
            default:
                break
            }
        }
        let updateInstants = Self.instants(updates)
        let writeInstants = Self.instants(writes)
        figures.notifications = updates.count
        figures.notificationEvents = updateInstants.count
        let fullEvent = updateInstants.map(\.count).max() ?? 0
        let updateGaps = Self.gaps(updateInstants) { earlier, _ in fullEvent >= 2 && earlier.count == fullEvent }
        let writeGaps = Self.gaps(writeInstants) { earlier, later in later.count >= 2 && later.count <= earlier.count }
        let evidence = updateGaps.isEmpty ? writeGaps : updateGaps
        guard !evidence.isEmpty else { return figures }
        let interval = evidence.sorted()[evidence.count / 2]
        figures.connectionInterval = interval
        // A gap of one and a half intervals or more skipped an event (latency, a lost packet):
        // it says nothing of the jitter.
        figures.jitter =
            evidence.filter { $0 <= interval * 3 / 2 }.map { $0 > interval ? $0 - interval : interval - $0 }.max()
            ?? .zero
        // Writes without response count when the app queued them, not when a connection event
        // carried them: only arrivals say how many packets one event carries.
        figures.packetsPerConnectionEvent = updateInstants.isEmpty ? nil : fullEvent
        figures.notificationThroughput = Self.throughput(updateInstants, interval: interval)
        figures.writeWithoutResponseThroughput = Self.throughput(writeInstants, interval: interval)
        return figures
    }

    /// Arrivals grouped by connection event (each less than ``LinkFigures/connectionEventWindow``
    /// after the one before): each event's first arrival's time, count and bytes, in order.
    private static func instants(_ arrivals: [(time: Duration, bytes: Int)]) -> [(
        time: Duration, count: Int, bytes: Int
    )] {
        var result: [(time: Duration, count: Int, bytes: Int)] = []
        var previous: Duration?
        for arrival in arrivals {
            defer { previous = arrival.time }
            if let previous, arrival.time - previous < LinkFigures.connectionEventWindow {
                result[result.count - 1].count += 1
                result[result.count - 1].bytes += arrival.bytes
            } else {
                result.append((arrival.time, 1, arrival.bytes))
            }
        }
        return result
    }

    /// The gaps between consecutive instants that show two connection events back to back.
    private static func gaps(
        _ instants: [(time: Duration, count: Int, bytes: Int)],
        backToBack: ((time: Duration, count: Int, bytes: Int), (time: Duration, count: Int, bytes: Int)) -> Bool
    ) -> [Duration] {
        zip(instants, instants.dropFirst()).filter { backToBack($0, $1) }.map { $1.time - $0.time }
    }

    /// Bytes per second over the bursts (runs of instants less than 1.5 intervals apart),
    /// each burst spanning its first to its last instant plus one interval.
    private static func throughput(
        _ instants: [(time: Duration, count: Int, bytes: Int)], interval: Duration
    ) -> Int? {
        guard let first = instants.first, interval > .zero else { return nil }
        let limit = interval * 3 / 2
        var bytes = 0
        var active = Duration.zero
        var burstStart = first.time
        var previous = first.time
        for instant in instants {
            if instant.time - previous > limit {
                active += previous - burstStart + interval
                burstStart = instant.time
            }
            bytes += instant.bytes
            previous = instant.time
        }
        active += previous - burstStart + interval
        let seconds = Double(active.components.seconds) + Double(active.components.attoseconds) / 1e18
        return Int((Double(bytes) / seconds).rounded())
    }
}

extension RecordedValue {
    /// The number of bytes the value holds (a placeholder's value is not known: 0).
    var count: Int {
        switch self {
        case .bytes(let bytes): bytes.count
        case .placeholder: 0
        }
    }
}
