import BLECore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Something the world decided that must happen outside it. The bridge performs effects in
/// the order the world appended them.
enum Effect: Sendable {
    /// An operation ended: resume its caller with this reply or error.
    case complete(OperationID, Result<Reply, any Error>)
    /// A central's streams receive an event.
    case central(UUID, CentralEvent)
    /// A peripheral's streams receive an event.
    case peripheral(UUID, PeripheralEvent)
    /// A peripheral's request handler must answer (the bridge calls it and hands the answer
    /// back with ``World/answer(_:with:)``; a write command's answer is ignored).
    case ask(UUID, HandlerQuestion)
    /// An L2CAP channel opened: the bridge makes both ends and hands the peripheral its end;
    /// the central's goes to the caller of `opener` when that operation completes.
    case channelOpened(L2CAPChannelRecord, opener: OperationID)
    /// An L2CAP open whose caller gave up ended: the central end of the channel it opened, if
    /// it opened one, goes to nobody.
    case openingAbandoned(OperationID)
    /// An SDU reached one end of a channel.
    case channelData(UInt64, to: L2CAPChannelRecord.End, Data)
    /// A channel closed: both ends' incoming streams finish (after the bytes they hold).
    case channelClosed(UInt64)
    /// A manager is off the air: its event streams finish.
    case finishEvents(Manager)
    /// Write commands of a central's left its queue for a peripheral at a connection event:
    /// `queued` remain (only for centrals in ``World/commandQueueReporters``).
    case commandQueue(central: UUID, peripheral: UUID, queued: Int)
    /// A task sleeping on the bridge's clock is due: resume it (`now` is its deadline).
    case wake(SleeperID)
    /// Updates of a peripheral's left its update queue: `queued` remain (only for peripherals
    /// in ``World/updateQueueReporters``).
    case updateQueue(peripheral: UUID, queued: Int)
}

/// A question for a peripheral's request handler.
enum HandlerQuestion: Sendable {
    /// A Read or Read Blob request of operation `id`.
    case read(ATTRequest, OperationID)
    /// A write's requests (one, or a long write's parts at Execute Write) of operation `id`.
    case write([ATTRequest], OperationID)
    /// A write command: the handler sees it; nobody waits for the answer.
    case command(ATTRequest)
}

/// What a completed operation returns.
enum Reply: Sendable, Equatable {
    case done
    case value(Data)
    case services([RemoteService])
    case characteristics([RemoteCharacteristic])
    case descriptors([RemoteDescriptor])
    case rssi(Int)
    case state(ManagerState)
    case channel(UInt64)
}

/// Identifies an operation in progress; ids grow in the order operations start.
struct OperationID: Hashable, Comparable, Sendable, CustomStringConvertible {
    let rawValue: UInt64

    static func < (lhs: OperationID, rhs: OperationID) -> Bool { lhs.rawValue < rhs.rawValue }

    func _rawHashValue(seed: Int) -> Int {
        Int(truncatingIfNeeded: (rawValue ^ UInt64(UInt(bitPattern: seed))) &* 0x9E37_79B9_7F4A_7C15)
    }

    var description: String { "#\(rawValue)" }
}
