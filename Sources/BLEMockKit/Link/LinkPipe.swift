import BLECore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// One packet a side of a link sends. Packets of one direction cross in the order they were
/// sent, whatever channel they belong to (ATT, L2CAP signalling, an L2CAP channel), as they
/// share the link layer's queue.
enum PDU: Sendable {
    // Central to peripheral.
    /// The current ATT request of a GATT procedure.
    case request(OperationID)
    /// A Write Command (write without response).
    case command(WriteCommand)
    /// A Handle Value Confirmation of an indication.
    case confirmation
    /// An L2CAP LE credit-based connection request.
    case signal(OperationID)
    /// Not a packet of the host's: the controller measures RSSI at this connection event.
    case rssi(OperationID)
    // Peripheral to central.
    /// The answer to operation `id`'s request (an ATT response, an error response, or an
    /// L2CAP connection response).
    case response(OperationID, ServerAnswer)
    /// A Handle Value Notification or Indication.
    case update(Update)
    /// The Service Changed indication of services the peripheral's app removed (their service
    /// handles): sent behind what the link already holds, so the central hears of the change
    /// after the updates queued before it (Core Vol 3, Part G, 7.1).
    case serviceChanged(Set<UInt16>)
    // Either way.
    /// A K-frame of an L2CAP channel; the last frame of an SDU carries the SDU.
    case frame(Frame)
}

extension PDU {
    /// Whether this is a notification or an indication.
    var isUpdate: Bool {
        if case .update = self { return true }
        return false
    }

    /// Whether this is a write without response.
    var isCommand: Bool {
        if case .command = self { return true }
        return false
    }

    /// Whether this is an indication (read without copying the packet's payload out).
    var isIndication: Bool {
        if case .serviceChanged = self { return true }
        guard case .update(let update) = self else { return false }
        return update.kind == .indicate
    }

    /// Whether this keeps its place among the updates (a notification, an indication, Service
    /// Changed): it waits behind an indication waiting for its confirmation, where responses and
    /// L2CAP packets go on past it.
    var keepsUpdateOrder: Bool {
        switch self {
        case .update, .serviceChanged: true
        default: false
        }
    }
}

/// A write without response in the central's queue.
struct WriteCommand: Sendable {
    var characteristic: RemoteCharacteristic
    var value: Data
}

/// A notification or indication in a peripheral's queue.
struct Update: Sendable {
    var characteristic: RemoteCharacteristic
    var value: Data
    var kind: SubscriptionKind
}

/// A K-frame of an L2CAP channel.
struct Frame: Sendable {
    var channel: UInt64
    /// Its length as an L2CAP PDU: the 4-byte basic header, the 2-byte SDU length on an SDU's
    /// first frame, and its part of the SDU (what the link layer cuts into packets).
    var l2capBytes: Int
    /// The SDU this frame completes, on the last frame of each SDU.
    var sdu: Data?
    /// The send operation this frame ends, on the last frame of a send.
    var completes: OperationID?
}

/// What a server (or a peripheral's L2CAP layer) answers to a request.
enum ServerAnswer: Sendable {
    /// A discovery page, a Prepare Write echo, or a part of a descriptor read the stack answered.
    case page
    /// A Read or Read Blob response: these bytes.
    case value(Data)
    /// A Write Response (also for an Execute Write and a CCCD write).
    case written
    /// An error response (or an injected failure).
    case failure(any Error)
    /// An L2CAP channel was opened.
    case channel(UInt64)
    /// An L2CAP connection was refused with this result (an `L2CAPError`, or an injected
    /// failure's error), for want of encryption when `encryption` is set.
    case channelRefused(any Error, encryption: ATTError?)
}

/// One direction of a link: a first-in, first-out queue of packets.
typealias LinkPipe = FIFO<PDU>
