import BLECore

/// What one device brings to a link's timing: the connection intervals it grants (as a
/// central) or asks for (as a peripheral), the largest link-layer payload it sends (data
/// length), the PHYs it supports, how many packets it sends or accepts per connection event,
/// and the ATT_MTU it offers.
///
/// A bridge whose ``LinkTiming/centralProfile`` or ``LinkTiming/peripheralProfile`` is set
/// times every link from first principles: the two profiles are negotiated as the link
/// layer does (``NegotiatedLink``: the smaller data length, ATT_MTU and packet limit, the
/// fastest PHY both support, the interval the central grants for what the peripheral asks),
/// each packet costs its air time on that PHY
/// (``LinkPHY/airTime(payload:encrypted:)``), an ATT PDU is cut into link-layer packets of at
/// most the data length, and a connection event carries as many packets as fit in the
/// interval and as the profiles allow.
///
/// ```swift
/// var configuration = MockBLEBridge.Configuration.realistic(seed: 7)
/// configuration.timing.centralProfile = .iPhoneiOS18
/// configuration.timing.peripheralProfile = .watch
/// ```
///
/// The named profiles cite their sources; where a figure is this kit's derivation or fit
/// rather than a published value, the comment says so. The Link profiles article lists the
/// throughput each gives.
public struct LinkProfile: Sendable, Hashable {
    /// A name for reports, e.g. `"iPhone 16 Pro, iOS 18"`.
    public var name: String
    /// As a central: the connection intervals it grants (within 7.5 ms…4 s).
    public var connectionIntervals: ClosedRange<Duration>
    /// As a central: the intervals it grants are whole multiples of this (1.25 ms in the Core
    /// specification; 15 ms on iOS).
    public var connectionIntervalStep: Duration
    /// As a central: the interval it uses when the peripheral asks for none, or for none it
    /// grants: one of its ``connectionIntervals`` (7.5 ms…4 s).
    public var defaultConnectionInterval: Duration
    /// As a central: how it answers a peripheral's request for intervals (``IntervalRequestRule``).
    public var intervalRequestRule: IntervalRequestRule
    /// As a peripheral: the connection intervals it asks for (its connection parameter update
    /// request), or `nil` to take the central's default.
    public var preferredConnectionIntervals: ClosedRange<Duration>?
    /// The largest link-layer payload it sends and accepts: 27 bytes without LE data length
    /// extension, up to 251 with it (Core, Vol 6, Part B, 4.5.10).
    public var maximumDataLength: Int
    /// The PHYs it uses for connections, at least one. A link uses the fastest both sides list
    /// (LE 2M, LE 1M, coded S=2, coded S=8): a long-range device lists only the coded PHY;
    /// sides with nothing in common stay on LE 1M, which every controller supports.
    public var phys: Set<LinkPHY>
    /// The most packets it sends or accepts in one connection event, or `nil` for as many as
    /// fit in the connection interval.
    public var packetsPerConnectionEvent: Int?
    /// The ATT_MTU it offers in the MTU exchange (23…517); a link's ATT_MTU is never more.
    public var attMTU: Int

    /// Creates a profile.
    public init(
        name: String, connectionIntervals: ClosedRange<Duration> = .microseconds(7_500) ... .seconds(4),
        connectionIntervalStep: Duration = .microseconds(1_250),
        defaultConnectionInterval: Duration = .milliseconds(30), intervalRequestRule: IntervalRequestRule = .firstFit,
        preferredConnectionIntervals: ClosedRange<Duration>? = nil, maximumDataLength: Int = 251,
        phys: Set<LinkPHY> = Set(LinkPHY.allCases), packetsPerConnectionEvent: Int? = nil, attMTU: Int = 517
    ) {
        self.name = name
        self.connectionIntervals = connectionIntervals
        self.connectionIntervalStep = connectionIntervalStep
        self.defaultConnectionInterval = defaultConnectionInterval
        self.intervalRequestRule = intervalRequestRule
        self.preferredConnectionIntervals = preferredConnectionIntervals
        self.maximumDataLength = maximumDataLength
        self.phys = phys
        self.packetsPerConnectionEvent = packetsPerConnectionEvent
        self.attMTU = attMTU
    }

    /// The largest link-layer payload of the Core specification.
    public static let dataLengths = 27...251

    /// Whether `interval` is a whole number of 1.25 ms units, the unit connection intervals are
    /// counted in.
    static func isWholeUnits(_ interval: Duration) -> Bool {
        isWholeMultiple(interval, of: .microseconds(1_250))
    }

    /// Whether `value` is a whole number of `step`s (`false` for a step that is not positive, and
    /// for durations past what 64-bit attoseconds hold, about 9 s: no connection interval is).
    static func isWholeMultiple(_ value: Duration, of step: Duration) -> Bool {
        func attoseconds(_ duration: Duration) -> Int64? {
            let (seconds, attoseconds) = duration.saturatingComponents
            let (scaled, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000_000_000_000)
            let (total, carry) = scaled.addingReportingOverflow(attoseconds)
            return overflow || carry ? nil : total
        }
        guard let value = attoseconds(value), let step = attoseconds(step), step > 0 else { return false }
        return value % step == 0
    }

    /// What is wrong with this profile (named by field under `owner`), or `nil`.
    func problem(in owner: @autoclosure () -> String) -> String? {
        let intervals = ConfigurationProblems.connectionIntervals
        if let problem =
            ConfigurationProblems.check(
                "\(owner()).connectionIntervals.lowerBound", connectionIntervals.lowerBound, in: intervals)
            ?? ConfigurationProblems.check(
                "\(owner()).connectionIntervals.upperBound", connectionIntervals.upperBound, in: intervals)
            ?? ConfigurationProblems.check(
                "\(owner()).connectionIntervalStep", connectionIntervalStep,
                in: .microseconds(1_250) ... .seconds(4))
            ?? ConfigurationProblems.check(
                "\(owner()).defaultConnectionInterval", defaultConnectionInterval, in: intervals)
        {
            return problem
        }
        if !connectionIntervals.contains(defaultConnectionInterval) {
            return ConfigurationProblems.outside(
                "\(owner()).defaultConnectionInterval", FixtureDuration.string(defaultConnectionInterval),
                "\(FixtureDuration.string(connectionIntervals.lowerBound))…"
                    + "\(FixtureDuration.string(connectionIntervals.upperBound)) (the profile's connectionIntervals)")
        }
        if let preferred = preferredConnectionIntervals,
            let problem = ConfigurationProblems.check(
                "\(owner()).preferredConnectionIntervals.lowerBound", preferred.lowerBound, in: intervals)
                ?? ConfigurationProblems.check(
                    "\(owner()).preferredConnectionIntervals.upperBound", preferred.upperBound, in: intervals)
        {
            return problem
        }
        // Connection intervals are counted in units of 1.25 ms (Core specification, Vol 6, Part B,
        // 4.5.1): a profile's bounds, steps and requests are whole units.
        var onTheGrid: [(String, Duration)] = [
            ("connectionIntervals.lowerBound", connectionIntervals.lowerBound),
            ("connectionIntervals.upperBound", connectionIntervals.upperBound),
            ("connectionIntervalStep", connectionIntervalStep),
            ("defaultConnectionInterval", defaultConnectionInterval),
        ]
        if let preferred = preferredConnectionIntervals {
            onTheGrid += [
                ("preferredConnectionIntervals.lowerBound", preferred.lowerBound),
                ("preferredConnectionIntervals.upperBound", preferred.upperBound),
            ]
        }
        for (field, value) in onTheGrid where !Self.isWholeUnits(value) {
            return "\(owner()).\(field): \(FixtureDuration.string(value)) is not a multiple of 0.00125s (connection "
                + "intervals are counted in units of 1.25 ms)"
        }
        if phys.isEmpty {
            return ConfigurationProblems.outside("\(owner()).phys", "[]", "sets of at least one PHY")
        }
        return ConfigurationProblems.check("\(owner()).maximumDataLength", maximumDataLength, in: Self.dataLengths)
            ?? packetsPerConnectionEvent.flatMap {
                ConfigurationProblems.check("\(owner()).packetsPerConnectionEvent", atLeast: 1, $0)
            }
            ?? ConfigurationProblems.check("\(owner()).attMTU", attMTU, in: MTUMode.validRange)
    }
}

/// How a central answers a peripheral's request for connection intervals (its connection
/// parameter update request, Core Vol 3, Part A, 4.20, or the link layer's, Vol 6, Part B,
/// 5.1.7).
public enum IntervalRequestRule: Sendable, Hashable {
    /// The first interval of the central's grid (whole multiples of its
    /// ``LinkProfile/connectionIntervalStep``) inside both the range asked for and the
    /// intervals it grants; its default when there is none. The Core specification leaves the
    /// choice within the range to the central.
    case firstFit
    /// The request's Interval Min when that is itself an interval the central grants (within
    /// its ``LinkProfile/connectionIntervals`` and a whole number of its steps); else the
    /// central keeps its default. So iPhones answer: Apple's Accessory Design Guidelines reject
    /// a request whose Interval Min is under 15 ms or not a multiple of 15 ms (20 ms in the 2013
    /// edition), and iOS then keeps 30 ms ("you cannot make a request of 7.5 ms and it will be
    /// rejected", Apple's engineer in Apple Developer Forums thread 773555). The guidelines'
    /// condition on Interval Max (15 ms above Interval Min) is not checked: a device "may"
    /// reject a request that breaks it.
    case intervalMinOrDefault
}
