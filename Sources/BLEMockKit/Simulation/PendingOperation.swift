import BLECore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// An operation a manager started and the world has not finished: what it is, who started
/// it, since when, and how far it got.
struct PendingOperation: Sendable {
    /// The operations that take time.
    enum Kind: Sendable {
        case connect(LinkKey)
        /// `waitForPoweredOn`: ends when the manager's automatic state steps are done.
        case settle(Manager)
        /// A GATT procedure on a link (discovery, read, write, CCCD write): see ``procedure``.
        case gatt(LinkKey)
        case readRSSI(LinkKey)
        case openL2CAP(LinkKey, psm: UInt16)
        /// Bytes sent on a channel: ends when the last K-frame has crossed, or fails when the
        /// channel closes or its link drops first.
        case sendL2CAP(LinkKey, channel: UInt64, frames: Int)
    }

    /// How far an operation got.
    enum Stage: Hashable, Sendable {
        /// Waiting for the link's ATT bearer (another request is outstanding).
        case queued
        /// Its packet is in the pipe or crossed, and its answer is on its way.
        case sent
        /// The peripheral's app was handed request `id` and has not answered.
        case awaitingAnswer(UInt64)
        /// An injection swallowed its request: no answer will come.
        case neverAnswered
        /// The link is pairing before the request is sent again.
        case pairing
        /// A connection attempt, or a state settling.
        case waiting
    }

    init(id: OperationID, owner: Manager, kind: Kind, since: VirtualClock.Instant, stage: Stage) {
        self.id = id
        self.owner = owner
        self.kind = kind
        self.since = since
        self.stage = stage
    }

    let id: OperationID
    /// The manager that started it.
    let owner: Manager
    let kind: Kind
    /// The virtual time it started.
    let since: VirtualClock.Instant
    var stage: Stage
    /// The GATT procedure and how far it got, for GATT operations.
    var procedure: GATTProcedure?
    /// Whether its caller gave up: it still holds what it holds on the air until that is
    /// answered, and then ends without a completion.
    var isCancelled = false
    /// An injected failure for an operation that is not a GATT procedure (whose own
    /// ``GATTProcedure/injected`` holds it).
    var injected: ErrorInjection.Failure?
    /// The entry of the world's injection book that ``injected`` (or the procedure's) came
    /// from: its firing is taken back if the operation is withdrawn before its request crossed
    /// (an injection counts as fired only when it took effect).
    var injectedEntry: Int?
    /// Whether the link already paired on behalf of this operation (it pairs at most once).
    var pairingTried = false
    /// When the operation gives up by itself (a connect call's timeout).
    var deadline: VirtualClock.Instant?

    /// The link it runs on, if any.
    var link: LinkKey? {
        switch kind {
        case .connect(let key), .gatt(let key), .readRSSI(let key), .openL2CAP(let key, _),
            .sendL2CAP(let key, _, _):
            key
        case .settle: nil
        }
    }

    /// Whether it sends bytes on `channel`.
    func isSend(on channel: UInt64) -> Bool {
        if case .sendL2CAP(_, channel, _) = kind { return true }
        return false
    }

    /// What the operation is, in a few words (for reports).
    var summary: String {
        switch kind {
        case .connect: "connect"
        case .settle: "waitForPoweredOn"
        case .gatt: procedure?.summary ?? "GATT procedure"
        case .readRSSI: "readRSSI"
        case .openL2CAP(_, let psm): "openL2CAPChannel(\(L2CAPChannelRecord.hex(psm)))"
        case .sendL2CAP(_, let channel, _): "L2CAP send on #\(channel)"
        }
    }
}
