#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Why a message channel's `send` stopped before every packet was handed to the radio.
///
/// `send` also rethrows what the role protocol throws (`CoreBluetoothError`,
/// `ATTError`, `APIMisuseError`) and ``TransportError`` when the message cannot be
/// fragmented (too long for the configuration, or no message id left). Packets already
/// written stay written; the receiver drops the incomplete message when it expires and
/// reports it as ``MessageChannelFailure/expired(messageID:from:receivedPackets:packetCount:)``.
public enum MessageChannelError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The channel was closed (``CentralMessageChannel/close()`` or
    /// ``PeripheralMessageChannel/close()``) before or while sending.
    case closed

    /// The link to `peer` went down while the channel waited to send the next packet.
    case disconnected(peer: UUID)

    /// The central is not subscribed to the channel's characteristic, so the peripheral
    /// cannot send it notifications or indications (or it unsubscribed during the send).
    case notSubscribed(central: UUID)

    /// What went wrong and how to fix it.
    public var description: String {
        switch self {
        case .closed:
            return "The message channel is closed. Create a new channel to send again."
        case .disconnected(let peer):
            return "The link to \(peer) went down while a message was being sent. Reconnect, create a "
                + "channel, and send the message again."
        case .notSubscribed(let central):
            return "Central \(central) is not subscribed to the channel's characteristic. Have the central "
                + "call setNotifyValue(true, for:) before the peripheral sends it messages."
        }
    }
}
