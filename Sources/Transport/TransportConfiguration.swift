/// Limits shared by ``Fragmenter`` and ``Reassembler``.
///
/// The reassembler's memory is bounded by
/// `maximumPartialMessages × (maximumMessageLength + 8)` bytes of message buffers plus
/// `maximumRememberedMessages` small entries for recently finished message ids.
///
/// ```swift
/// var configuration = TransportConfiguration()
/// configuration.maximumMessageLength = 64 * 1024
/// var reassembler = Reassembler<UUID, ContinuousClock.Instant>(configuration: configuration)
/// ```
public struct TransportConfiguration: Sendable, Hashable {
    /// The default of ``maximumMessageLength``: 1 MiB.
    public static let defaultMaximumMessageLength = 1_048_576

    /// The largest ``maximumRememberedMessages`` the reassembler honours, half the 16-bit
    /// message id space.
    public static let rememberedMessagesCeiling = 32_768

    /// The longest message, in bytes, that the sender may fragment and the receiver
    /// accepts. A first packet declaring more is rejected with
    /// ``TransportError/declaredLengthTooLarge(messageID:declaredLength:limit:)``.
    /// Values below 0 are treated as 0, and values above 4,294,967,295 (what the 32-bit
    /// length field can declare) as 4,294,967,295. Defaults to 1,048,576 (1 MiB).
    public var maximumMessageLength: Int

    /// The most partial (incomplete) messages the reassembler holds at once, across all
    /// links. A packet that would start one more is rejected with
    /// ``TransportError/tooManyPartialMessages(limit:)`` after expired messages have been
    /// dropped. Values below 1 are treated as 1. Defaults to 16.
    public var maximumPartialMessages: Int

    /// How long a partial message may go without receiving a packet before it is
    /// dropped, measured with the instants passed to `Reassembler.receive(_:from:at:)`
    /// and ``Reassembler/expire(now:)``. Also how long the id of a completed, failed or
    /// expired message is remembered so that its late duplicates are ignored. Clamped to
    /// 1 ms…100 years (see ``partialMessageTimeoutRange``): zero or less would drop every
    /// message of more than one packet before its second packet arrived, and a deadline past
    /// what a clock's `Duration` holds would trap (write "never" as the ceiling). Defaults to
    /// 30 seconds.
    public var partialMessageTimeout: Duration

    /// The most recently finished message ids (per link and id) that the reassembler
    /// remembers to ignore their late or duplicated packets; the oldest are forgotten
    /// first. Clamped to `0...32768` so that a sender's 16-bit ids, allocated
    /// sequentially, never wrap onto a remembered id. Defaults to 1,024.
    public var maximumRememberedMessages: Int

    /// Creates a configuration.
    ///
    /// - Parameters:
    ///   - maximumMessageLength: Defaults to 1,048,576 bytes.
    ///   - maximumPartialMessages: Defaults to 16.
    ///   - partialMessageTimeout: Defaults to 30 seconds.
    ///   - maximumRememberedMessages: Defaults to 1,024.
    public init(
        maximumMessageLength: Int = TransportConfiguration.defaultMaximumMessageLength,
        maximumPartialMessages: Int = 16,
        partialMessageTimeout: Duration = .seconds(30),
        maximumRememberedMessages: Int = 1_024
    ) {
        self.maximumMessageLength = maximumMessageLength
        self.maximumPartialMessages = maximumPartialMessages
        self.partialMessageTimeout = partialMessageTimeout
        self.maximumRememberedMessages = maximumRememberedMessages
    }

    /// The longest message the 32-bit length field can declare.
    static let lengthFieldLimit = Int(UInt32.max)

    /// ``maximumMessageLength``, clamped to `0...lengthFieldLimit` (so adding the frame
    /// overhead cannot overflow).
    @usableFromInline
    var effectiveMaximumMessageLength: Int { min(max(0, maximumMessageLength), Self.lengthFieldLimit) }

    /// ``maximumPartialMessages``, clamped to at least 1.
    @usableFromInline
    var effectiveMaximumPartialMessages: Int { max(1, maximumPartialMessages) }

    /// What ``partialMessageTimeout`` is clamped to: 1 ms…100 years (365.25-day years).
    public static let partialMessageTimeoutRange: ClosedRange<Duration> =
        .milliseconds(1) ... .seconds(100 * 31_557_600)

    /// ``partialMessageTimeout``, clamped to ``partialMessageTimeoutRange``.
    @usableFromInline
    var effectivePartialMessageTimeout: Duration {
        min(
            max(partialMessageTimeout, Self.partialMessageTimeoutRange.lowerBound),
            Self.partialMessageTimeoutRange.upperBound)
    }

    /// ``maximumRememberedMessages``, clamped to `0...32768`.
    var effectiveMaximumRememberedMessages: Int {
        min(max(0, maximumRememberedMessages), Self.rememberedMessagesCeiling)
    }
}
