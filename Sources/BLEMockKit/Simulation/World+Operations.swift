import BLECore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

extension World {
    /// An operation a manager starts that takes time (in fast mode, possibly none).
    enum Request: Sendable {
        /// A connection attempt; one the peripheral refuses (`refusal`: a CoreBluetoothMock spec's
        /// delegate said no) fails with that error where its link would have come up.
        case connect(central: UUID, peripheral: UUID, timeout: Duration?, refusal: CoreBluetoothError? = nil)
        case waitForPoweredOn(Manager)
        case gatt(central: UUID, peripheral: UUID, GATTProcedure.Kind)
        case readRSSI(central: UUID, peripheral: UUID)
        case openL2CAP(central: UUID, peripheral: UUID, psm: UInt16)
        case sendL2CAP(channel: UInt64, from: L2CAPChannelRecord.End, Data)
    }

    /// A new operation id.
    mutating func makeOperationID() -> OperationID {
        defer { nextOperationID += 1 }
        return OperationID(rawValue: nextOperationID)
    }

    /// Starts an operation. It ends with a ``Effect/complete(_:_:)`` effect: at once when it
    /// fails before touching the air (or takes no time), else when the schedule reaches its
    /// end (``runNextEvent(dueBy:)``) or a peripheral answers it.
    mutating func start(_ request: Request, id: OperationID) {
        switch request {
        case .connect(let central, let peripheral, let timeout, let refusal):
            startConnecting(central: central, peripheral: peripheral, timeout: timeout, id: id, refusal: refusal)
        case .waitForPoweredOn(let manager):
            startSettling(manager, id: id)
        case .gatt(let central, let peripheral, let kind):
            startProcedure(kind, central: central, peripheral: peripheral, id: id)
        case .readRSSI(let central, let peripheral):
            startReadingRSSI(central: central, peripheral: peripheral, id: id)
        case .openL2CAP(let central, let peripheral, let psm):
            startOpeningChannel(central: central, peripheral: peripheral, psm: psm, id: id)
        case .sendL2CAP(let channel, let end, let data):
            startSending(data, channel: channel, from: end, id: id)
        }
    }

    /// Ends an operation: removes it, frees the ATT bearer it held, and emits its completion
    /// (unless its caller cancelled it).
    mutating func complete(_ id: OperationID, _ result: Result<Reply, any Error>) {
        guard let position = pending.position(of: id) else {
            effects.append(.complete(id, result))
            return
        }
        complete(id, result, at: position)
    }

    /// Ends the operation at `position` in `pending` (a caller that has just looked it up).
    mutating func complete(_ id: OperationID, _ result: Result<Reply, any Error>, at position: Int) {
        assert(pending[at: position].id == id, "operation \(id) is not at \(position)")
        // Read the fields needed in place: a copy of the whole operation retains all it holds.
        let (gattLink, hasDeadline, isCancelled, opensChannel) = pending.inPlace(at: position) { operation in
            let gattLink: LinkKey?
            if case .gatt(let key) = operation.kind { gattLink = key } else { gattLink = nil }
            let opensChannel: Bool
            if case .openL2CAP = operation.kind { opensChannel = true } else { opensChannel = false }
            return (gattLink, operation.deadline != nil, operation.isCancelled, opensChannel)
        }
        pending.remove(id)
        if let key = gattLink { releaseBearer(of: id, on: key) }
        if hasDeadline { schedule.removeAll { $0 == .connectionTimeout(id) } }
        if !isCancelled {
            effects.append(.complete(id, result))
        } else if opensChannel {
            effects.append(.openingAbandoned(id))
        }
    }

    /// Fails every pending operation `matching`, in the order they started.
    mutating func failOperations(_ error: some Error, matching: (PendingOperation) -> Bool) {
        let failing = pending.keys(where: matching)
        guard !failing.isEmpty else { return }
        // Boxed once, and only when something fails (a link's tear-down usually fails nothing).
        let error: any Error = error
        for id in failing {
            guard let operation = pending[id] else { continue }
            if case .connect(let key) = operation.kind { dropAttempt(key) }
            complete(id, .failure(error))
        }
    }

    /// Whether an operation can only go on when something outside the simulation acts: a
    /// peripheral's app answering a request (or a request behind one), an answer an injection
    /// swallowed, a connection to a peripheral that is not connectable and has no timeout.
    /// Running the schedule cannot end such an operation.
    func isParked(_ id: OperationID) -> Bool {
        guard let position = pending.position(of: id) else { return false }
        switch pending[at: position].stage {
        case .awaitingAnswer, .neverAnswered: return true
        case .sent, .pairing: return false
        case .queued:
            guard case .gatt(let key) = pending[at: position].kind, let slot = links.position(of: key),
                let holder = links[at: slot].bearer, holder != id
            else { return false }
            return isParked(holder)
        case .waiting:
            guard case .connect(let key) = pending[at: position].kind, let attempt = attempts[key] else {
                return false
            }
            return (attempt.establishesAt == nil || attempt.neverCompletes)
                && pending[at: position].deadline == nil
        }
    }

    /// The pending operations that are parked, oldest first.
    var parkedOperations: [OperationID] {
        pending.keys.filter { isParked($0) }.sorted()
    }

    // The bridge calls the world only through mutating methods: calling a non-mutating one on
    // an actor's stored value copies the whole world first.

    /// The parked operations, for a caller that will serve those its change unblocks.
    mutating func takeParkedOperations() -> [OperationID] {
        pending.isEmpty ? [] : parkedOperations
    }

    /// Whether operation `id` is pending and running the schedule would move it on.
    mutating func isServable(_ id: OperationID) -> Bool {
        guard let position = pending.position(of: id) else { return false }
        switch pending[at: position].stage {
        case .sent, .pairing: return true
        case .awaitingAnswer, .neverAnswered: return false
        case .queued, .waiting: return !isParked(id)
        }
    }

    /// Runs the next scheduled event on behalf of operation `id`, if it is pending, not
    /// parked, and something is scheduled; returns whether an event ran.
    mutating func serveStep(_ id: OperationID) -> Bool {
        isServable(id) && runNextEvent()
    }

    /// Runs the next scheduled event on behalf of operation `id`, as ``serveStep(_:)`` does,
    /// if it is due by `limit`; returns whether an event ran.
    mutating func serveStep(_ id: OperationID, dueBy limit: VirtualClock.Instant) -> Bool {
        isServable(id) && runNextEvent(dueBy: limit)
    }

    /// The caller of an operation gave up (its task was cancelled): it gets no completion, and
    /// what it left on the air is withdrawn where the air allows. A request still in the pipe
    /// is taken back; one that crossed stays outstanding until its answer arrives (which is
    /// then dropped), as ATT has no way to take a request back; a connection attempt nobody
    /// else waits for is cancelled. An operation withdrawn before its request crossed gives back
    /// the injection it drew: it never took effect (``giveBackInjection(of:)``).
    mutating func cancel(_ id: OperationID) {
        guard var operation = pending[id], !operation.isCancelled else { return }
        switch operation.kind {
        case .settle:
            pending[id] = nil
        case .connect(let key):
            pending[id] = nil
            schedule.removeAll { $0 == .connectionTimeout(id) }
            let others = pending.containsValue {
                if case .connect(key) = $0.kind { return true }
                return false
            }
            if !others, attempts[key] != nil {
                dropAttempt(key)
                record(.disconnected, central: key.central, peripheral: key.peripheral, detail: "attempt cancelled")
            }
        case .gatt(let key):
            if operation.stage == .queued {
                pending[id] = nil
                links[key]?.waitingForBearer.removeAll { $0 == id }
                return giveBackInjection(of: operation)
            }
            operation.isCancelled = true
            pending[id] = operation
            if let link = links[key], link.toPeripheral.waiting.contains(where: { $0.isRequest(of: id) }) {
                links[key]!.toPeripheral.removeAll { $0.isRequest(of: id) }
                giveBackInjection(of: operation)
                complete(id, .failure(CancellationError()))
            }
        case .readRSSI(let key), .openL2CAP(let key, _):
            if let link = links[key], link.toPeripheral.waiting.contains(where: { $0.isRequest(of: id) }) {
                links[key]!.toPeripheral.removeAll { $0.isRequest(of: id) }
                pending[id] = nil
                return giveBackInjection(of: operation)
            }
            operation.isCancelled = true
            pending[id] = operation
        case .sendL2CAP:
            // The bytes were handed to the stack: they still cross; nobody waits for them.
            pending[id] = nil
        }
    }
}

extension World {
    /// Takes back the firing of the injection `operation` drew, if it has not taken effect:
    /// its request was withdrawn before it crossed, so no failure reached the air, and the
    /// injection is still owed to the next matching operation (``MockBLEBridge/finish()``
    /// reports it if none comes). One a procedure's first request already met (a long write
    /// whose later Prepare Write is withdrawn) stays fired.
    fileprivate mutating func giveBackInjection(of operation: PendingOperation) {
        guard let entry = operation.injectedEntry, operation.injected != nil || operation.procedure?.injected != nil
        else { return }
        injections.retract(entry)
    }
}

extension PDU {
    /// Whether this is operation `id`'s request (an ATT request, an L2CAP connection request
    /// or an RSSI reading).
    func isRequest(of id: OperationID) -> Bool {
        switch self {
        case .request(let owner), .signal(let owner), .rssi(let owner): owner == id
        default: false
        }
    }
}
