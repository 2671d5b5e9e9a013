#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Why a message channel could not deliver an incoming message.
///
/// ``CentralMessageChannel`` and ``PeripheralMessageChannel`` never drop an incoming
/// message silently and never deliver a corrupt one: every packet the ``Reassembler``
/// rejects, every partial message that expires, and every partial message thrown away
/// because its link went down is reported once on the channel's `failures()` stream, with
/// the identifier of the peer it came from. The message itself is not delivered; ask the
/// sender to send it again.
///
/// ```swift
/// for await failure in channel.failures() {
///     switch failure {
///     case .rejected(let error, let peer): log("bad packet from \(peer): \(error)")
///     case .expired(let messageID, let peer, _, _): log("message \(messageID) from \(peer) timed out")
///     case .discarded(let peer, let count): log("\(count) partial messages from \(peer) lost")
///     }
/// }
/// ```
public enum MessageChannelFailure: Error, Sendable, Hashable, CustomStringConvertible {
    /// The reassembler rejected a packet from `peer` with `error`.
    ///
    /// When `error` names a message id, that whole message was dropped and its later
    /// packets are ignored (see ``TransportError``); otherwise only the packet was dropped.
    case rejected(TransportError, from: UUID)

    /// A partial message from `peer` received no packet for
    /// ``TransportConfiguration/partialMessageTimeout`` of the channel's clock and was
    /// dropped: some of its packets were lost.
    ///
    /// - `receivedPackets`: how many distinct packets had arrived.
    /// - `packetCount`: how many the message has, or `nil` if packet 0 never arrived.
    case expired(messageID: UInt16, from: UUID, receivedPackets: Int, packetCount: Int?)

    /// `count` partial messages from `peer` were dropped before they could complete or
    /// expire: the link went down (a central channel's peripheral disconnected, a peripheral
    /// channel's central unsubscribed, or the manager left `poweredOn`), or the channel was
    /// closed.
    case discarded(from: UUID, partialMessages: Int)

    /// The peer the failed packet or message came from.
    public var peer: UUID {
        switch self {
        case .rejected(_, let peer): peer
        case .expired(_, let peer, _, _): peer
        case .discarded(let peer, _): peer
        }
    }

    /// What went wrong and what to do about it.
    public var description: String {
        switch self {
        case .rejected(let error, let peer):
            return "A packet from \(peer) was rejected: \(error.description)"
        case .expired(let id, let peer, let received, let count):
            let of = count.map { " of \($0)" } ?? " (packet 0 never arrived)"
            return "Message \(id) from \(peer) expired after \(received) packet(s)\(of): the rest were "
                + "lost. Ask the sender to resend it, or raise partialMessageTimeout if the link is slow."
        case .discarded(let peer, let count):
            return "\(count) partial message(s) from \(peer) were dropped because the link went down or "
                + "the channel closed. Reconnect and ask the sender to resend them."
        }
    }
}
