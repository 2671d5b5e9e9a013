import BLECore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// What a front end's streams over an L2CAP channel end hear of it, on the bridge's executor,
/// in the simulation's order (see ``MockBLEBridge/tapL2CAPChannel(_:atCentral:_:)``).
package enum ChannelTapEvent: Sendable, Equatable {
    /// An SDU the other end sent arrived at this end.
    case data(Data)
    /// The channel closed (at either end, or as its link went down): nothing more arrives.
    case closed
}

/// The ends of channels whose bytes a front end's streams take too, besides the end's
/// `incoming` stream.
struct ChannelTaps {
    var central: (@Sendable (ChannelTapEvent) -> Void)?
    var peripheral: (@Sendable (ChannelTapEvent) -> Void)?

    subscript(end: L2CAPChannelRecord.End) -> (@Sendable (ChannelTapEvent) -> Void)? {
        switch end {
        case .central: central
        case .peripheral: peripheral
        }
    }
}

/// The door a callback-style front end's L2CAP streams use (the CoreBluetooth-shaped API's
/// `inputStream` and `outputStream`): everything is called on the bridge's executor, and
/// reports back there, in the simulation's order, so the front end hands it on to the app's
/// thread in that order (no task of its own reads ``L2CAPChannel/incoming`` or waits on
/// ``L2CAPChannel/send(_:)``).
extension MockBLEBridge {
    /// Calls `tap` with every SDU that arrives at one end of `channel` from now on (the central's
    /// with `atCentral`, else the peripheral's), then once with ``ChannelTapEvent/closed`` when
    /// the channel closes. The end's `incoming` stream still gets the same bytes. A channel that
    /// is already closed reports ``ChannelTapEvent/closed`` at once.
    ///
    /// Call it as the front end gets the end (the peripheral's as its opening event is handed
    /// over, the central's as its opening operation completes), so that no byte arrives before.
    package func tapL2CAPChannel(
        _ channel: L2CAPChannel, atCentral: Bool, _ tap: @escaping @Sendable (ChannelTapEvent) -> Void
    ) {
        guard channelEnds[channel.id] != nil else { return tap(.closed) }
        if atCentral {
            channelEnds[channel.id]!.taps.central = tap
        } else {
            channelEnds[channel.id]!.taps.peripheral = tap
        }
    }

    /// Sends `data` from one end of `channel` (the central's with `fromCentral`) without waiting:
    /// `completion` runs on the bridge's executor once its last K-frame has crossed, or with the
    /// error that ended it (`notConnected` when the channel is closed, the link's error when the
    /// link drops first). Sends cross in the order they are begun.
    package func beginL2CAPSend(
        _ data: Data, on channel: L2CAPChannel, fromCentral: Bool,
        _ completion: @escaping @Sendable (Result<Void, any Error>) -> Void
    ) {
        admitArrivals()
        begin(.sendL2CAP(channel: channel.id, from: fromCentral ? .central : .peripheral, data)) { result in
            completion(result.map { _ in () })
        }
    }

    /// Closes `channel` at both ends, now (from a front end's command).
    package func closeL2CAPChannelNow(_ channel: L2CAPChannel) {
        closeL2CAPChannel(channel.id)
    }
}
