import BLECore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Range checks of the numeric configuration fields. Each problem names the field, the value
/// and the range allowed, e.g. `"MockBLEBridge.Configuration.timing.packetsPerConnectionEvent:
/// -1 is outside 1…"`. A manager with a problem (or on a bridge with one) refuses every call
/// with `APIMisuseError.invalidConfiguration(_:)`: a bad value is reported where it was given,
/// rather than hanging the simulation or trapping later.
///
/// Every check takes the field's name as an autoclosure: bridges and managers are checked as
/// they are created, and a valid configuration (nearly always) builds none of the names.
enum ConfigurationProblems {
    /// Bluetooth's legacy advertising intervals (Core, Vol 6, Part B, 4.4.2.2.1).
    static let advertisingIntervals = Duration.milliseconds(20)...Duration.milliseconds(10_240)
    /// Connection intervals (Core, Vol 6, Part B, 4.5.1).
    static let connectionIntervals = Duration.microseconds(7_500)...Duration.seconds(4)
    /// Supervision timeouts (Core, Vol 6, Part B, 4.5.2).
    static let supervisionTimeouts = Duration.milliseconds(100)...Duration.seconds(32)
    /// ATT transaction timeouts: the specification's is 30 s (Vol 3, Part F, 3.3.3); shorter
    /// or longer ones, for tests, within bounds that keep a run finite.
    static let attTransactionTimeouts = Duration.milliseconds(1)...Duration.seconds(3_600)
    /// RSSI values a controller reports, in dBm (Core, Vol 4, Part E, 7.7.65.2).
    static let rssiValues = -127...20

    /// `value` outside `range`, named.
    static func outside(_ field: String, _ value: String, _ range: String) -> String {
        "\(field): \(value) is outside \(range)"
    }

    static func check(_ field: @autoclosure () -> String, _ value: Int, in range: ClosedRange<Int>) -> String? {
        range.contains(value) ? nil : outside(field(), "\(value)", "\(range.lowerBound)…\(range.upperBound)")
    }

    static func check(_ field: @autoclosure () -> String, atLeast minimum: Int, _ value: Int) -> String? {
        value >= minimum ? nil : outside(field(), "\(value)", "\(minimum)…")
    }

    static func check(
        _ field: @autoclosure () -> String, _ value: Duration, in range: ClosedRange<Duration>, orZero: Bool = false
    ) -> String? {
        if range.contains(value) || (orZero && value == .zero) { return nil }
        let allowed = "\(FixtureDuration.string(range.lowerBound))…\(FixtureDuration.string(range.upperBound))"
        return outside(field(), FixtureDuration.string(value), orZero ? "0s or \(allowed)" : allowed)
    }

    static func check(_ field: @autoclosure () -> String, nonNegative value: Duration) -> String? {
        value >= .zero ? nil : outside(field(), FixtureDuration.string(value), "0s…")
    }

    /// A duration that must be above zero (a time limit, a timeout).
    static func check(_ field: @autoclosure () -> String, positive value: Duration) -> String? {
        value > .zero ? nil : outside(field(), FixtureDuration.string(value), "0s… (exclusive)")
    }

    static func check(_ field: @autoclosure () -> String, probability value: Double) -> String? {
        (0...1).contains(value) ? nil : outside(field(), "\(value)", "0…1")
    }

    /// The first problem in `checks`, or `nil` (for checks that are not made on every bridge
    /// or manager: the array costs an allocation, and every check is made).
    static func first(_ checks: [String?]) -> String? {
        checks.lazy.compactMap { $0 }.first
    }

    static func queue(_ field: @autoclosure () -> String, _ queue: QueueBehavior) -> String? {
        guard case .realistic(let capacity) = queue else { return nil }
        return check("\(field()).realistic(capacity:)", atLeast: 1, capacity)
    }

    /// A manager configured to settle in `unknown` or `resetting` (which are not settled
    /// states) would never settle: its `waitForPoweredOn()` would wait for ever. One that never
    /// settles on purpose says so with `.stuck(_:)`.
    static func initialState(
        _ owner: @autoclosure () -> String, _ initial: ManagerState, _ transition: StateTransition
    ) -> String? {
        guard !initial.isSettled else { return nil }
        if case .stuck = transition { return nil }
        return "\(owner()).initialState: .\(initial) is not a state a manager settles in, so it would never "
            + "settle and waitForPoweredOn() would wait for ever; give a settled state (.poweredOn, .poweredOff, "
            + ".unauthorized, .unsupported), or stateTransition .stuck(.\(initial)) for a manager that never settles"
    }

    static func stateTransition(_ field: @autoclosure () -> String, _ transition: StateTransition) -> String? {
        switch transition {
        case .realistic(let duration): check("\(field()).realistic(duration:)", nonNegative: duration)
        case .delayed(let duration): check("\(field()).delayed(_:)", nonNegative: duration)
        case .instant, .stuck: nil
        }
    }
}

extension LinkTiming {
    /// What is wrong with this timing (named by field under `owner`), or `nil`.
    func problem(in owner: @autoclosure () -> String) -> String? {
        // One check after another (a list of them would be an allocation on every bridge).
        if let problem = ConfigurationProblems.check(
            "\(owner()).connectionInterval", connectionInterval, in: ConfigurationProblems.connectionIntervals,
            orZero: true)
        {
            return problem
        }
        if connectionInterval == .zero, centralProfile != nil || peripheralProfile != nil {
            return "\(owner()).\(centralProfile != nil ? "centralProfile" : "peripheralProfile"): a link profile "
                + "needs realistic timing (a connectionInterval above zero); use LinkTiming.realistic(central:peripheral:)"
        }
        if connectionInterval > .zero && jitter > connectionInterval {
            return ConfigurationProblems.outside(
                "\(owner()).jitter", FixtureDuration.string(jitter),
                "0s…\(FixtureDuration.string(connectionInterval)) (the connection interval)")
        }
        return ConfigurationProblems.check("\(owner()).jitter", nonNegative: jitter)
            ?? ConfigurationProblems.check("\(owner()).connectionLatency", nonNegative: connectionLatency.lowerBound)
            ?? ConfigurationProblems.check(
                "\(owner()).packetsPerConnectionEvent", atLeast: 1, packetsPerConnectionEvent)
            ?? ConfigurationProblems.check(
                "\(owner()).supervisionTimeout", supervisionTimeout, in: ConfigurationProblems.supervisionTimeouts,
                orZero: true)
            ?? ConfigurationProblems.check(
                "\(owner()).attTransactionTimeout", attTransactionTimeout,
                in: ConfigurationProblems.attTransactionTimeouts)
            ?? centralProfile.flatMap { $0.problem(in: "\(owner()).centralProfile") }
            ?? peripheralProfile.flatMap { $0.problem(in: "\(owner()).peripheralProfile") }
            ?? negotiatedJitterProblem(in: owner())
            ?? supervisionTimeoutProblem(in: owner())
    }

    /// The Core specification requires a link's supervision timeout to be more than
    /// (1 + peripheral latency) × connection interval × 2 (Vol 6, Part B, 4.5.2), so that a
    /// link survives a missed connection event. The kit's links have no peripheral latency
    /// (``connectionLatency`` is how long establishing a connection takes, not the number of
    /// events a peripheral may skip): the timeout must be more than twice the interval the links
    /// run at, the one the link profiles negotiate when there are profiles.
    private func supervisionTimeoutProblem(in owner: @autoclosure () -> String) -> String? {
        guard supervisionTimeout > .zero, let interval = linkInterval, supervisionTimeout <= interval * 2 else {
            return nil
        }
        let which =
            negotiated == nil ? "the connection interval" : "the connection interval the link profiles negotiate"
        let minimum = FixtureDuration.string(interval * 2)
        return ConfigurationProblems.outside(
            "\(owner()).supervisionTimeout", FixtureDuration.string(supervisionTimeout),
            "0s or \(minimum)…\(FixtureDuration.string(ConfigurationProblems.supervisionTimeouts.upperBound)) "
                + "(above \(minimum): more than twice \(which), \(FixtureDuration.string(interval)), as the Core "
                + "specification requires of a link without peripheral latency)")
    }

    /// With link profiles, a link's connection events fall at the negotiated interval, and
    /// that is what the jitter varies: a jitter above it would bring events closer than the
    /// shortest interval the Core specification allows (each is kept 1 ms at least).
    private func negotiatedJitterProblem(in owner: @autoclosure () -> String) -> String? {
        guard jitter > .zero, let negotiated, jitter > negotiated.connectionInterval else { return nil }
        return ConfigurationProblems.outside(
            "\(owner()).jitter", FixtureDuration.string(jitter),
            "0s…\(FixtureDuration.string(negotiated.connectionInterval)) (the connection interval the link "
                + "profiles negotiate)")
    }
}

extension MockBLEBridge.Configuration {
    /// What is wrong with this configuration (named by field), or `nil`: every manager on the
    /// bridge then refuses every call with `invalidConfiguration`.
    var problem: String? {
        let owner = "MockBLEBridge.Configuration"
        if let problem = timing.problem(in: "\(owner).timing") { return problem }
        if let problem = limits.problem(in: "\(owner).limits") { return problem }
        if let pacing = realTimePacing, !(pacing >= 0 && pacing.isFinite) {
            return ConfigurationProblems.outside("\(owner).realTimePacing", "\(pacing)", "0… (finite), or nil")
        }
        return nil
    }
}

extension MockCentralManager.Configuration {
    /// What is wrong with the numeric fields (named by field), or `nil`.
    var numericProblem: String? {
        let owner = "MockCentralManager.Configuration"
        return
            (ConfigurationProblems.initialState(owner, initialState, stateTransition)
            ?? ConfigurationProblems.stateTransition("\(owner).stateTransition", stateTransition)
            ?? ConfigurationProblems.queue("\(owner).writeWithoutResponseQueue", writeWithoutResponseQueue)
            ?? ConfigurationProblems.check(
                "\(owner).connection.failureProbability", probability: connection.failureProbability)
            ?? connection.limit.flatMap { ConfigurationProblems.check("\(owner).connection.limit", atLeast: 1, $0) }
            ?? connection.latency.flatMap {
                ConfigurationProblems.check("\(owner).connection.latency", nonNegative: $0.lowerBound)
            }
            ?? {
                guard case .automatic(let duration, _) = pairing else { return nil }
                return ConfigurationProblems.check("\(owner).pairing.automatic(duration:)", nonNegative: duration)
            }())
    }
}

extension MockPeripheralManager.Configuration {
    /// What is wrong with the numeric fields (named by field), or `nil`.
    var numericProblem: String? {
        let owner = "MockPeripheralManager.Configuration"
        return
            (ConfigurationProblems.initialState(owner, initialState, stateTransition)
            ?? ConfigurationProblems.stateTransition("\(owner).stateTransition", stateTransition)
            ?? ConfigurationProblems.queue("\(owner).updateQueue", updateQueue)
            ?? ConfigurationProblems.check(
                "\(owner).advertisingInterval", advertisingInterval, in: ConfigurationProblems.advertisingIntervals)
            ?? ConfigurationProblems.check("\(owner).rssi", rssi, in: ConfigurationProblems.rssiValues)
            ?? ConfigurationProblems.check("\(owner).rssiVariation", rssiVariation, in: 0...147)
            ?? ConfigurationProblems.check("\(owner).advertisingDelay", nonNegative: advertisingDelay)
            ?? preparedWriteCapacity.flatMap {
                ConfigurationProblems.check("\(owner).preparedWriteCapacity", atLeast: 1, $0)
            })
    }
}
