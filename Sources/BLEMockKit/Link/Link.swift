import BLECore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A connection between a central and a peripheral: its negotiated ATT_MTU, security,
/// subscriptions, and one ordered pipe per direction drained at connection events.
struct Link: Sendable {
    /// The central and peripheral it joins.
    let key: LinkKey
    /// Which link of this pair it is (1 for the first): stale scheduled events name an older one.
    let generation: Int
    /// The negotiated ATT_MTU.
    var mtu: Int
    /// This link's own random stream (the jitter of its connection events). Only drawn from
    /// when connection events are spaced (a nonzero connection interval): with instant timing
    /// ``World/establishLink(_:)`` does not derive it, and it holds the world's root stream.
    var random: SeededGenerator
    var security = LinkSecurity()
    /// This central's subscriptions on the peripheral, by characteristic value handle.
    var subscriptions: [UInt16: SubscriptionKind] = [:]
    /// Packets from the central, in the order it sent them.
    var toPeripheral = LinkPipe()
    /// Packets from the peripheral, in the order it sent them.
    var toCentral = LinkPipe()
    /// Whether a connection event is scheduled.
    var eventScheduled = false
    /// Whether the peripheral's end is gone (it reset) while the central has not noticed yet:
    /// nothing crosses until the supervision timeout drops the link.
    var peerLost = false
    /// When the last connection event happened, and how many packets the peripheral sent in
    /// it: an answer the peripheral gives in the same instant still goes in that event.
    var lastEvent: VirtualClock.Instant?
    var sentToCentralInLastEvent = 0
    /// How many link-layer packets the peripheral may send in the last connection event: with
    /// profiles, what the air time the central's packets left allows (see
    /// ``NegotiatedLink/peripheralPackets(afterCentral:mtu:)``); else ``packetsPerEvent``.
    var toCentralRoomInLastEvent: Int
    /// What the bridge's link profiles negotiated for this link, or `nil` without profiles:
    /// then every packet is one link-layer packet and the interval is the timing's.
    var negotiated: NegotiatedLink?
    /// The interval its connection events fall at (with jitter): what the profiles negotiated,
    /// or what the central granted the peripheral's own preference; `nil` for the timing's
    /// ``LinkTiming/connectionInterval``. (See ``World/linkTiming(toPeripheral:)``.)
    var connectionInterval: Duration?
    /// Link-layer packets crossing one way in one connection event while nothing crosses the
    /// other way (worked out once, when the link comes up; see ``toCentralRoomInLastEvent``).
    var packetsPerEvent: Int
    /// Link-layer packets of the packet at the head of each pipe already sent in earlier
    /// connection events (a long ATT PDU cut at the data length can span events).
    var toPeripheralPacketsSent = 0
    var toCentralPacketsSent = 0
    /// The GATT procedure holding the ATT bearer (one request outstanding at a time).
    var bearer: OperationID?
    /// GATT procedures waiting for the bearer, in the order they started.
    var waitingForBearer: [OperationID] = []
    /// When the request outstanding on the bearer was sent (`nil` when none is): its ATT
    /// transaction times out ``LinkTiming/attTransactionTimeout`` later.
    var requestSentAt: VirtualClock.Instant?
    /// Whether the link's one transaction timer is on the schedule (it is re-armed for the
    /// request outstanding when it fires, rather than scheduled per request).
    var transactionTimerArmed = false
    /// Whether an indication waits for its confirmation (the server sends no other until then).
    var indicationOutstanding = false
    /// Write commands waiting in ``toPeripheral``: the central's write-without-response queue.
    var queuedCommands = 0
    /// Whether the write-without-response queue was full since it last had room.
    var commandQueueWasFull = false
    /// The value handles of the characteristics this central discovered on this link: only
    /// those may be used on it (a characteristic found on an earlier link, or by another
    /// central, must be rediscovered first, as CoreBluetooth's objects are).
    var discoveredHandles: Set<UInt16> = []

    /// The most of an attribute value one PDU carries here: ATT_MTU − 3, but never more than
    /// an attribute value can be (512 bytes). What `maximumWriteValueLength(.withoutResponse)`
    /// and `maximumUpdateValueLength` report, and where writes without response and updates
    /// are cut.
    var maximumValueLength: Int { Self.maximumValueLength(mtu: mtu) }

    /// ``maximumValueLength`` at an ATT_MTU.
    static func maximumValueLength(mtu: Int) -> Int { min(mtu - 3, GATTDatabase.maximumValueLength) }

    init(
        key: LinkKey, generation: Int, mtu: Int, random: SeededGenerator, negotiated: NegotiatedLink? = nil,
        connectionInterval: Duration?, packetsPerEvent: Int
    ) {
        self.key = key
        self.generation = generation
        self.mtu = mtu
        self.random = random
        self.negotiated = negotiated
        self.connectionInterval = connectionInterval
        self.packetsPerEvent = packetsPerEvent
        toCentralRoomInLastEvent = packetsPerEvent
    }

    /// The link-layer packets `pdu` costs: its ATT bytes (or K-frame) and 4-byte L2CAP header
    /// cut at the data length, with profiles the negotiated one, without them the longest a
    /// packet carries, 251 bytes (Core, Vol 6, Part B, 4.5.10: a PDU up to 247 bytes of ATT is
    /// one packet). Writes without response, notifications, indications, read responses and
    /// K-frames are costed by their size; requests, other responses, confirmations and
    /// signalling as one packet each.
    /// (Static, taking the one field it needs: read through ``SlotTable/subscript(at:)``, a
    /// field is reached without copying the whole link.)
    static func packets(of pdu: PDU, on negotiated: NegotiatedLink?) -> Int {
        let bytes: Int
        switch pdu {
        case .command(let command): bytes = 3 + command.value.count + 4
        case .update(let update): bytes = 3 + update.value.count + 4
        // (Service Changed: the opcode, the characteristic's handle and the range's two handles.)
        case .serviceChanged: bytes = 3 + 4 + 4
        case .response(_, .value(let value)): bytes = 1 + value.count + 4
        case .frame(let frame): bytes = frame.l2capBytes
        default: return 1
        }
        guard let negotiated else {
            let longest = LinkProfile.dataLengths.upperBound
            return max(1, (bytes + longest - 1) / longest)
        }
        return negotiated.packets(l2capBytes: bytes)
    }
}
