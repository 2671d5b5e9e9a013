/// How a mock central's connection attempts behave.
public struct ConnectionBehavior: Sendable, Hashable {
    /// Each attempt fails with `connectionFailed` with this probability (0…1), drawn from
    /// the seeded generator. Defaults to 0.
    public var failureProbability: Double
    /// The most links the central holds at once; an attempt beyond it fails with
    /// `connectionLimitReached`. At least 1, or `nil` for no limit. Defaults to `nil`.
    public var limit: Int?
    /// How long establishing a link takes before its ATT MTU exchange, overriding the bridge's
    /// ``LinkTiming/connectionLatency`` (not negative); `nil` uses the bridge's. The exchange
    /// adds one connection interval (with jitter; nothing with instant timing), so a connect
    /// takes this plus one ``LinkTiming/connectionInterval``. Defaults to `nil`.
    public var latency: ClosedRange<Duration>?

    /// Creates connection behaviour.
    public init(failureProbability: Double = 0, limit: Int? = nil, latency: ClosedRange<Duration>? = nil) {
        self.failureProbability = failureProbability
        self.limit = limit
        self.latency = latency
    }
}
