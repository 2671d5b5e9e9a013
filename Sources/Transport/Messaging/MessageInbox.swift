#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The receiving half shared by both message channels: a ``Reassembler`` keyed by peer
/// identifier, plus the bookkeeping that turns everything it drops into a
/// ``MessageChannelFailure`` instead of losing it.
///
/// A pure value type with no concurrency: the channel actor owns it, feeds it packets and
/// instants, and performs the returned ``Outcome``s (yields to its streams, schedules its
/// expiry timer at ``nextDeadline``).
struct MessageInbox<Instant: InstantProtocol>: Sendable where Instant.Duration == Swift.Duration {
    /// What one step produced, in order.
    enum Outcome: Sendable, Hashable {
        /// A complete, checksum-verified message from `peer`.
        case message([UInt8], from: UUID)
        /// Something that could not be delivered.
        case failure(MessageChannelFailure)
    }

    /// The longest attribute value ATT allows, and so the longest packet a channel sends
    /// even when ATT_MTU − 3 is more (514 at ATT_MTU 517).
    static var maximumAttributeValueLength: Int { 512 }

    private(set) var reassembler: Reassembler<UUID, Instant>

    /// Creates an inbox with the channel's configuration.
    init(configuration: TransportConfiguration) {
        reassembler = Reassembler(configuration: configuration)
    }

    /// Partial messages currently held, across all peers.
    var partialMessageCount: Int { reassembler.partialMessageCount }

    /// No partial message expires before this instant; `nil` when none is held.
    ///
    /// A lower bound: a timer set for it may find nothing to expire yet, and then sets
    /// itself again for the new value.
    var nextDeadline: Instant? {
        reassembler.partialMessageCount == 0 ? nil : reassembler.earliestDeadline
    }

    /// Feeds one packet from `peer`, received at `now`.
    ///
    /// Expired partial messages are collected (and reported) first, so that the
    /// reassembler's own expiry during `receive` never drops one unreported.
    mutating func receive(_ packet: Data, from peer: UUID, at now: Instant) -> [Outcome] {
        var outcomes = expire(now: now)
        do {
            if let message = try reassembler.receive(packet, from: peer, at: now) {
                outcomes.append(.message(message, from: peer))
            }
        } catch {
            outcomes.append(.failure(.rejected(error, from: peer)))
        }
        return outcomes
    }

    /// Drops the partial messages that have expired by `now` and reports them, ordered by
    /// peer and message id so that reports are deterministic.
    mutating func expire(now: Instant) -> [Outcome] {
        guard let deadline = reassembler.earliestDeadline, deadline <= now else { return [] }
        return reassembler.expire(now: now)
            .sorted { ($0.link.uuidString, $0.messageID) < ($1.link.uuidString, $1.messageID) }
            .map { expired in
                .failure(
                    .expired(
                        messageID: expired.messageID, from: expired.link,
                        receivedPackets: expired.receivedPackets, packetCount: expired.packetCount))
            }
    }

    /// Drops every partial message from `peer` (its link went down) and reports how many,
    /// or nothing if there were none.
    mutating func discard(from peer: UUID) -> [Outcome] {
        let count = reassembler.discardPartialMessages(for: peer)
        // The link's next session (a reconnect, a new channel) starts its ids afresh.
        reassembler.forgetRemembered(for: peer)
        return count == 0 ? [] : [.failure(.discarded(from: peer, partialMessages: count))]
    }

    /// Forgets the ids of `peer`'s finished messages: it starts a new session (its sender's
    /// ids start again from the first), and none of its old messages' packets can come.
    mutating func startSession(of peer: UUID) {
        reassembler.forgetRemembered(for: peer)
    }

    /// Drops every partial message from every peer (the channel is closing) and reports
    /// them, one failure per peer, ordered by peer.
    mutating func discardAll() -> [Outcome] {
        let peers = Set(reassembler.slots.map(\.key.link)).sorted { $0.uuidString < $1.uuidString }
        return peers.flatMap { discard(from: $0) }
    }
}
