/// Limits every link on a bridge obeys, whatever its managers prefer: the conditions of a
/// particular phone and peripheral imposed on code whose managers were created with their
/// defaults (an exploration draws them per seed).
///
/// ```swift
/// var configuration = MockBLEBridge.Configuration.realistic(seed: 3)
/// configuration.limits = LinkLimits(maximumMTU: 23, writeWithoutResponseQueueCapacity: 2)
/// ```
///
/// `nil` fields impose nothing. A limit never raises what a manager configured: a link's
/// ATT_MTU is the smallest of the central's preference, the peripheral's and
/// ``maximumMTU``; a queue holds the smaller of the manager's capacity and the limit's. (An
/// exploration's ``LinkConditions/limits`` describe the devices: a manager that prefers what its
/// device does, ``MTUMode/device``, prefers their ATT_MTU.)
public struct LinkLimits: Sendable, Hashable {
    /// The largest ATT_MTU a link negotiates (23…517), or `nil`.
    public var maximumMTU: Int?
    /// The most writes without response a central's queue holds (at least 1), or `nil`.
    public var writeWithoutResponseQueueCapacity: Int?
    /// The most notifications and indications a peripheral's queue holds (at least 1), or `nil`.
    public var updateQueueCapacity: Int?
    /// Whether ``maximumMTU`` is what the run's devices negotiate (an exploration's
    /// ``LinkConditions``): a side whose preference is its device's (``MTUMode/device``) then
    /// prefers it; explicit preferences are still capped by it.
    var imposesMTU = false

    /// Creates limits; every field defaults to `nil` (no limit).
    public init(maximumMTU: Int? = nil, writeWithoutResponseQueueCapacity: Int? = nil, updateQueueCapacity: Int? = nil)
    {
        self.maximumMTU = maximumMTU
        self.writeWithoutResponseQueueCapacity = writeWithoutResponseQueueCapacity
        self.updateQueueCapacity = updateQueueCapacity
    }

    /// No limits.
    public static var none: LinkLimits { LinkLimits() }

    /// `queue` with this limit's capacity imposed on it.
    static func limit(_ queue: QueueBehavior, to capacity: Int?) -> QueueBehavior {
        guard let capacity else { return queue }
        return .realistic(capacity: min(queue.capacity ?? .max, max(1, capacity)))
    }

    /// What is wrong with these limits (named by field under `owner`), or `nil`.
    func problem(in owner: @autoclosure () -> String) -> String? {
        (maximumMTU.flatMap {
            ConfigurationProblems.check("\(owner()).maximumMTU", $0, in: MTUMode.validRange)
        }
            ?? writeWithoutResponseQueueCapacity.flatMap {
                ConfigurationProblems.check("\(owner()).writeWithoutResponseQueueCapacity", atLeast: 1, $0)
            }
            ?? updateQueueCapacity.flatMap {
                ConfigurationProblems.check("\(owner()).updateQueueCapacity", atLeast: 1, $0)
            })
    }
}

extension World {
    /// A central's configuration with the bridge's queue limit imposed.
    func limited(_ configuration: MockCentralManager.Configuration) -> MockCentralManager.Configuration {
        guard limits.writeWithoutResponseQueueCapacity != nil else { return configuration }
        var limited = configuration
        limited.writeWithoutResponseQueue = LinkLimits.limit(
            configuration.writeWithoutResponseQueue, to: limits.writeWithoutResponseQueueCapacity)
        return limited
    }

    /// A peripheral's configuration with the bridge's queue limit imposed.
    func limited(_ configuration: MockPeripheralManager.Configuration) -> MockPeripheralManager.Configuration {
        guard limits.updateQueueCapacity != nil else { return configuration }
        var limited = configuration
        limited.updateQueue = LinkLimits.limit(configuration.updateQueue, to: limits.updateQueueCapacity)
        return limited
    }
}
