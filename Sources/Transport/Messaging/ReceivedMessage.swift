#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A message a ``PeripheralMessageChannel`` received, with the central that sent it.
///
/// Messages from one central arrive in the order that central's sends completed; messages
/// from different centrals are reassembled separately (the reassembler's link is the
/// central's identifier) and interleave in arrival order.
public struct ReceivedMessage: Sendable, Hashable {
    /// The identifier of the central that wrote the message.
    public var central: UUID
    /// The message, exactly as the central passed it to `send`.
    public var bytes: [UInt8]

    /// Creates a received message.
    public init(central: UUID, bytes: [UInt8]) {
        self.central = central
        self.bytes = bytes
    }
}
