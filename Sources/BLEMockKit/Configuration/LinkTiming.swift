/// How long things take on the simulated air, in virtual time. A bridge in fast mode uses
/// ``instant``: nothing takes time. Realistic timing derives each operation's latency from
/// the ATT round trips it needs (see ``MockBLEBridge``) times the connection interval, with
/// seeded jitter. A bridge whose timing breaks one of the ranges below makes every manager on
/// it refuse every call with `APIMisuseError.invalidConfiguration(_:)`, naming the field.
public struct LinkTiming: Sendable, Hashable {
    /// The time between connection events; one ATT request and its response take one
    /// interval. Defaults to 30 ms (what iOS uses by default); 7.5 ms…4 s, or zero (no time).
    /// With a link profile, a link's events fall at the negotiated interval instead, and a link
    /// to a CoreBluetoothMock-style spec (BLECBM) at the one its `connectionInterval` asks for;
    /// this one still times the connection's establishment.
    public var connectionInterval: Duration
    /// The largest random deviation added to or taken from each latency, drawn with the seeded
    /// generator: not negative, and at most the connection interval when that is not zero
    /// (with link profiles, at most the negotiated interval too, which is what it varies; on a
    /// link whose peripheral asks for a shorter interval of its own, a CoreBluetoothMock-style
    /// spec's, that link's events vary by at most their interval). Defaults to 2 ms.
    public var jitter: Duration
    /// How long establishing a connection takes before its ATT MTU exchange (not negative),
    /// drawn per attempt. The exchange then takes one ``connectionInterval`` (with jitter) before
    /// `connect` returns, so a connect takes this plus one interval: 78–182 ms with the defaults.
    /// Defaults to 50 ms…150 ms.
    public var connectionLatency: ClosedRange<Duration>
    /// How many link-layer packets of queued data (writes without response, notifications) one
    /// connection event carries, at least 1. Defaults to 4. A PDU is cut into packets of at most
    /// 251 bytes (an ATT PDU of up to 247 bytes is one), so a 512-byte notification at ATT_MTU
    /// 517 takes three. With a link profile (``centralProfile``, ``peripheralProfile``) the
    /// negotiated link's packet budget and data length replace it.
    public var packetsPerConnectionEvent: Int
    /// How long a link survives after the peripheral goes out of range before it is dropped
    /// with `connectionTimeout`: 100 ms…32 s, or zero; when neither it nor the connection
    /// interval is zero, more than twice the interval the links run at (``connectionInterval``,
    /// or the one the link profiles negotiate), as the Core specification requires of a link
    /// without peripheral latency. Defaults to 720 ms (iOS's minimum supervision timeout).
    public var supervisionTimeout: Duration
    /// How long a request on a link's ATT bearer may wait for its response before the
    /// transaction times out: 30 s by default, as the Core specification fixes it (Vol 3,
    /// Part F, 3.3.3), in fast mode as in realistic mode (virtual time: it costs no wall time).
    /// A timed-out transaction ends the bearer: the central's stack drops the link, the
    /// operation and every other one on the link fail with
    /// `CoreBluetoothError.Code.connectionTimeout`, and the central's disconnect event carries
    /// no error, as iOS reports it (see the Fidelity article). 1 ms…1 hour.
    public var attTransactionTimeout: Duration
    /// The phone (or other central) whose link-layer limits every link obeys, or `nil`. When
    /// this or ``peripheralProfile`` is set (with a nonzero ``connectionInterval``), each link
    /// is timed from first principles: the two profiles are negotiated when it comes up
    /// (``NegotiatedLink``; an unset side is ``LinkProfile/unconstrained``), its connection
    /// events fall at the negotiated interval (jittered by ``jitter``), its ATT_MTU is at most
    /// the smaller ATT_MTU offer, an ATT PDU costs as many link-layer packets as the data length
    /// cuts it into, and an event carries as many packets as fit in the interval at the
    /// negotiated PHY and as the profiles allow, in place of ``connectionInterval`` and
    /// ``packetsPerConnectionEvent`` (which still time the connection's establishment). Defaults
    /// to `nil`: links behave exactly as without profiles.
    public var centralProfile: LinkProfile?
    /// The peripheral whose link-layer limits and interval preference every link obeys, or
    /// `nil` (see ``centralProfile``). Defaults to `nil`.
    public var peripheralProfile: LinkProfile?

    /// Creates link timing.
    public init(
        connectionInterval: Duration = .milliseconds(30), jitter: Duration = .milliseconds(2),
        connectionLatency: ClosedRange<Duration> = .milliseconds(50) ... .milliseconds(150),
        packetsPerConnectionEvent: Int = 4, supervisionTimeout: Duration = .milliseconds(720),
        attTransactionTimeout: Duration = .seconds(30), centralProfile: LinkProfile? = nil,
        peripheralProfile: LinkProfile? = nil
    ) {
        self.centralProfile = centralProfile
        self.peripheralProfile = peripheralProfile
        self.connectionInterval = connectionInterval
        self.jitter = jitter
        self.connectionLatency = connectionLatency
        self.packetsPerConnectionEvent = packetsPerConnectionEvent
        self.supervisionTimeout = supervisionTimeout
        self.attTransactionTimeout = attTransactionTimeout
    }

    /// Nothing takes time: fast mode. (A request nobody answers still times out after
    /// ``attTransactionTimeout`` of virtual time, once time moves that far: a run moves it, and
    /// outside one ``MockBLEBridge/advance(by:)`` does.)
    public static let instant = LinkTiming(
        connectionInterval: .zero, jitter: .zero, connectionLatency: .zero ... .zero, packetsPerConnectionEvent: .max,
        supervisionTimeout: .zero)

    /// Typical timing of a phone talking to a peripheral.
    public static let realistic = LinkTiming()

    /// ``realistic`` timing with the link-layer limits of `central` and `peripheral`, e.g.
    /// `.realistic(central: .iPhoneiOS18, peripheral: .watch)`. When the profiles negotiate an
    /// interval of 360 ms or more, the supervision timeout is the shortest the Core
    /// specification allows with it (see ``supervisionTimeout``) rather than 720 ms.
    public static func realistic(central: LinkProfile, peripheral: LinkProfile = .unconstrained) -> LinkTiming {
        var timing = LinkTiming.realistic
        timing.centralProfile = central
        timing.peripheralProfile = peripheral
        return timing.withSupervisionTimeoutFittingTheInterval
    }

    /// The interval the links run at: the one the profiles negotiate, else
    /// ``connectionInterval``; `nil` when the timing is instant (a zero interval).
    var linkInterval: Duration? {
        guard connectionInterval > .zero else { return nil }
        return negotiated?.connectionInterval ?? connectionInterval
    }

    /// This timing with a supervision timeout the Core specification allows with the interval
    /// its links run at: one not more than twice that interval (and not zero) becomes the next
    /// 10 ms (the specification's unit) above twice it. For timing that takes its interval from
    /// elsewhere (link profiles, a recording, an exploration's conditions, a scenario) and keeps
    /// ``realistic``'s timeout.
    var withSupervisionTimeoutFittingTheInterval: LinkTiming {
        // An interval no link can have is left for the bridge to refuse, naming the field that
        // set it: a timeout fitted to it would be refused first, naming the timeout instead.
        guard supervisionTimeout > .zero, let interval = linkInterval, supervisionTimeout <= interval * 2,
            ConfigurationProblems.connectionIntervals.contains(interval)
        else {
            return self
        }
        var fitted = self
        fitted.supervisionTimeout = Self.shortestSupervisionTimeout(above: interval)
        return fitted
    }

    /// The shortest supervision timeout the Core specification allows with `interval` and no
    /// peripheral latency: the next 10 ms (the specification's unit) above twice the interval,
    /// and not less than 100 ms.
    static func shortestSupervisionTimeout(above interval: Duration) -> Duration {
        let unit = Duration.milliseconds(10)
        return max(
            unit * (Int((interval * 2 / unit).rounded(.down)) + 1), ConfigurationProblems.supervisionTimeouts.lowerBound
        )
    }

    /// What the profiles negotiate, or `nil` when neither is set or the timing is instant.
    public var negotiated: NegotiatedLink? {
        guard centralProfile != nil || peripheralProfile != nil, connectionInterval > .zero else { return nil }
        return NegotiatedLink(
            central: centralProfile ?? .unconstrained, peripheral: peripheralProfile ?? .unconstrained)
    }

    /// Whether operations take no time at all.
    public var isInstant: Bool { connectionInterval == .zero && connectionLatency.upperBound == .zero }
}
