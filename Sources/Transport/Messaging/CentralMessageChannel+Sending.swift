import BLECore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

extension CentralMessageChannel {
    /// Sends one message to the peripheral and returns once its last packet was written
    /// (queued, for writes without response; confirmed, for writes with response).
    ///
    /// The message is fragmented at the link's current
    /// `maximumWriteValueLength(for:type: .withoutResponse)` (ATT_MTU − 3), capped at the
    /// 512 bytes an attribute value can hold (ATT_MTU 517 would allow 514), under a
    /// message id from the channel's ``MessageIDAllocator`` that stays reserved until the
    /// last packet is written.
    /// Writes without response wait while `canSendWriteWithoutResponse(to:)` is `false`
    /// until the manager reports `readyToSendWriteWithoutResponse` for this peripheral.
    ///
    /// - Parameter message: The message; up to
    ///   ``TransportConfiguration/maximumMessageLength`` bytes. May be empty.
    /// - Throws: ``TransportError`` if the message cannot be fragmented;
    ///   ``MessageChannelError`` if the channel closes or the link goes down while waiting;
    ///   `CancellationError` if the task is cancelled (checked before each packet, and while
    ///   waiting); and whatever the
    ///   manager's `writeValue` or `maximumWriteValueLength` throws. Packets written
    ///   before the error stay written (the peripheral reports the incomplete message when
    ///   it expires).
    public func send(_ message: [UInt8]) async throws {
        guard !isClosed else { throw MessageChannelError.closed }
        // At most `maximumPartialMessages` messages in flight (the peer would refuse one more).
        try await takeTurn(.message)
        defer { messageSlots.release() }
        guard !isClosed else { throw MessageChannelError.closed }
        let linkLimit = try await central.maximumWriteValueLength(for: peripheral, type: .withoutResponse)
        let maxPacketLength = min(linkLimit, MessageInbox<C.Instant>.maximumAttributeValueLength)
        guard !isClosed else { throw MessageChannelError.closed }
        let id = try ids.allocate()
        defer { ids.release(id) }
        let packets = try Fragmenter.packets(
            for: message, maxPacketLength: maxPacketLength, id: id,
            maximumMessageLength: configuration.maximumMessageLength)
        for packet in packets {
            // (Cancelled between packets: the packets written stay written; the peripheral
            // reports the incomplete message when it expires.)
            try Task.checkCancellation()
            guard !isClosed else { throw MessageChannelError.closed }
            // The check for room and the write, one send at a time (see `WriteTurn`).
            try await takeTurn(.write)
            defer { writeTurn.release() }
            guard !isClosed else { throw MessageChannelError.closed }
            if writeType == .withoutResponse {
                try await waitUntilCanSendWriteWithoutResponse()
            }
            try await central.writeValue(Data(packet), for: characteristic, type: writeType)
        }
    }

    /// The channel's two turns: writing a packet, and a message in flight.
    enum Turn: Sendable {
        case write, message
    }

    /// Runs `body` on the turn `turn`.
    private func withTurn<R>(_ turn: Turn, _ body: (inout WriteTurn) -> R) -> R {
        switch turn {
        case .write: body(&writeTurn)
        case .message: body(&messageSlots)
        }
    }

    /// Returns holding `turn` (the write turn, or a message slot), in the order senders asked
    /// for it.
    private func takeTurn(_ turn: Turn) async throws {
        if withTurn(turn, { $0.take() }) { return }
        let id = withTurn(turn) { $0.makeID() }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (waiter: WriteTurn.Waiter) in
                withTurn(turn) { $0.wait(waiter, id: id) }
            }
        } onCancel: {
            HelperTask.start { await self.cancelTurnWaiter(id, of: turn) }
        }
    }

    private func cancelTurnWaiter(_ id: UInt64, of turn: Turn) {
        withTurn(turn) { $0.cancel(id) }
    }

    /// Sends one message to the peripheral; see ``send(_:)-([UInt8])``.
    public func send(_ message: Data) async throws {
        try await send([UInt8](message))
    }

    /// Returns once the transmit queue for writes without response has room.
    private func waitUntilCanSendWriteWithoutResponse() async throws {
        while true {
            let generation = ready.generation
            if await central.canSendWriteWithoutResponse(to: peripheral) { return }
            guard !isClosed else { throw MessageChannelError.closed }
            guard await central.isConnected(peripheral) else {
                throw MessageChannelError.disconnected(peer: peripheral)
            }
            try await waitForReady(since: generation)
        }
    }

    /// Suspends until the next ready signal after `generation` (or returns at once if it
    /// already came), the channel closes, the link goes down, or the task is cancelled.
    private func waitForReady(since generation: UInt64) async throws {
        let id = ready.makeID()
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (waiter: ReadinessGate.Waiter) in
                ready.register(waiter, id: id, since: generation)
            }
        } onCancel: {
            HelperTask.start { await self.cancelWaiter(id) }
        }
    }

    private func cancelWaiter(_ id: UInt64) {
        ready.cancel(id)
    }
}
