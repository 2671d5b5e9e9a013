/// How a transmit queue behaves: the central's queue of writes without response, or the
/// peripheral's queue of notifications and indications.
public enum QueueBehavior: Sendable, Hashable {
    /// The queue never fills: every write is accepted and `updateValue` always returns `true`.
    /// The default.
    case unlimited
    /// The queue holds `capacity` packets (at least 1; a manager configured with less refuses
    /// every call with `invalidConfiguration`) and drains at the link's connection events
    /// (``LinkTiming/packetsPerConnectionEvent`` per event, in virtual time). When it is full,
    /// `canSendWriteWithoutResponse` is `false` and further writes are dropped (as on a
    /// device), or `updateValue` returns `false`; a ready event follows when it has room.
    case realistic(capacity: Int)

    /// The capacity, or `nil` when unlimited.
    var capacity: Int? {
        if case .realistic(let capacity) = self { return max(1, capacity) }
        return nil
    }
}
