/// The link conditions of one exploration run: what the phone and the peripheral negotiate
/// and how the air behaves, imposed on every link of the run's bridge whatever the managers
/// prefer.
public struct LinkConditions: Sendable, Hashable {
    /// The largest ATT_MTU a link negotiates (23…517): what the run's phone and peripheral
    /// negotiate. A manager that prefers what its device does (``MTUMode/device``, the realistic
    /// default of CoreBluetooth-shaped managers) prefers it; an explicit preference below it, or a
    /// ``centralProfile`` that allows less, keeps the link below it
    /// (``ExplorationOutcome/linkMTU`` says what the links had).
    public var mtu: Int
    /// The connection interval.
    public var connectionInterval: Duration
    /// How far each connection event may fall from its interval.
    public var jitter: Duration
    /// The most packets each side sends per connection event.
    public var packetsPerConnectionEvent: Int
    /// The capacity of each central's write-without-response queue, or `nil` for the
    /// manager's own.
    public var writeWithoutResponseQueueCapacity: Int?
    /// The capacity of each peripheral's notification queue, or `nil` for the manager's own.
    public var updateQueueCapacity: Int?
    /// The phone whose link-layer limits every link obeys (``LinkTiming/centralProfile``), or
    /// `nil`. With one, a link's interval and packets per event come from negotiating it with
    /// an unconstrained peripheral, not from ``connectionInterval`` and
    /// ``packetsPerConnectionEvent``.
    public var centralProfile: LinkProfile?

    /// Creates conditions.
    public init(
        mtu: Int, connectionInterval: Duration = .milliseconds(30), jitter: Duration = .zero,
        packetsPerConnectionEvent: Int = 4, writeWithoutResponseQueueCapacity: Int? = nil,
        updateQueueCapacity: Int? = nil, centralProfile: LinkProfile? = nil
    ) {
        self.centralProfile = centralProfile
        self.mtu = mtu
        self.connectionInterval = connectionInterval
        self.jitter = jitter
        self.packetsPerConnectionEvent = packetsPerConnectionEvent
        self.writeWithoutResponseQueueCapacity = writeWithoutResponseQueueCapacity
        self.updateQueueCapacity = updateQueueCapacity
    }

    /// The easiest conditions, which shrinking moves towards: ATT_MTU 517, realistic timing
    /// without jitter, and the managers' own queues.
    public static var roomy: LinkConditions { LinkConditions(mtu: 517) }

    /// The timing of a bridge with these conditions: ``LinkTiming/realistic`` with this
    /// interval, jitter, packets per event and phone profile (and, for links at an interval of
    /// 360 ms or more, the shortest supervision timeout the Core specification allows with it,
    /// rather than 720 ms: see ``LinkTiming/supervisionTimeout``).
    public var timing: LinkTiming {
        var timing = LinkTiming.realistic
        timing.connectionInterval = connectionInterval
        timing.jitter = min(jitter, connectionInterval)
        timing.packetsPerConnectionEvent = packetsPerConnectionEvent
        timing.centralProfile = centralProfile
        return timing.withSupervisionTimeoutFittingTheInterval
    }

    /// The connection interval the run's links have: the one a ``centralProfile`` negotiates
    /// when there is one (``connectionInterval`` is then not used), else ``connectionInterval``.
    public var linkConnectionInterval: Duration {
        timing.negotiated?.connectionInterval ?? connectionInterval
    }

    /// The most packets each side sends in a connection event of the run's links: a
    /// ``centralProfile``'s negotiated limit when there is one (`nil` when it has none: as many
    /// as fit in the interval), else ``packetsPerConnectionEvent``.
    public var linkPacketsPerConnectionEvent: Int? {
        guard let negotiated = timing.negotiated else { return packetsPerConnectionEvent }
        return negotiated.packetLimit
    }

    /// The limits a bridge with these conditions imposes on its links (their ATT_MTU is also
    /// what a manager that prefers its device's prefers: see ``mtu``).
    public var limits: LinkLimits {
        var limits = LinkLimits(
            maximumMTU: mtu, writeWithoutResponseQueueCapacity: writeWithoutResponseQueueCapacity,
            updateQueueCapacity: updateQueueCapacity)
        limits.imposesMTU = true
        return limits
    }
}

extension LinkConditions: CustomStringConvertible {
    /// The conditions in words, e.g. `"ATT_MTU 23, interval 30ms ± 2ms, 4 packets per event,
    /// write-without-response queue 3, update queue as configured"`, and the phone's name
    /// when there is a profile (`"…, phone iPhone 6s, iOS 10"`), with the interval and packet
    /// limit its links have (``linkConnectionInterval``, ``linkPacketsPerConnectionEvent``).
    public var description: String {
        let jitterText = jitter == .zero ? "" : " ± \(FixtureDuration.string(jitter))"
        let commands = writeWithoutResponseQueueCapacity.map { "write-without-response queue \($0)" }
        let updates = updateQueueCapacity.map { "update queue \($0)" }
        let phone = centralProfile.map { "phone \($0.name)" }
        let packets =
            linkPacketsPerConnectionEvent.map { "\($0) packet\($0 == 1 ? "" : "s") per event" }
            ?? "packets per event as fit"
        return
            ([
                "ATT_MTU \(mtu)", "interval \(FixtureDuration.string(linkConnectionInterval))\(jitterText)", packets,
            ]
            + [commands, updates, phone].compactMap { $0 }).joined(separator: ", ")
    }
}
