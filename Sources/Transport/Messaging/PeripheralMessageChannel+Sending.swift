import BLECore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

extension PeripheralMessageChannel {
    /// Sends one message to one subscribed central as notifications (or indications) and
    /// returns once its last packet was accepted by `updateValue`.
    ///
    /// The message is fragmented at that central's `maximumUpdateValueLength` (its
    /// ATT_MTU − 3, from `subscribedCentrals(for:)`), capped at the 512 bytes an attribute
    /// value can hold, under a message id from the
    /// central's own ``MessageIDAllocator``. Each packet goes to that central only; when
    /// `updateValue` returns `false` (transmit queue full), the channel waits for
    /// `readyToUpdateSubscribers` and sends the same packet again. At most the configuration's
    /// ``TransportConfiguration/maximumPartialMessages`` messages are in flight to one central
    /// at once (it holds each as a partial message and refuses one more); further sends to it
    /// wait their turn, in the order they were made.
    ///
    /// - Parameters:
    ///   - message: The message; up to ``TransportConfiguration/maximumMessageLength``
    ///     bytes. May be empty.
    ///   - central: The identifier of a central subscribed to ``characteristic``.
    /// - Throws: ``MessageChannelError/notSubscribed(central:)`` if the central is not
    ///   subscribed, or unsubscribes during the send; ``MessageChannelError/closed`` if
    ///   the channel closes; ``TransportError`` if the message cannot be fragmented;
    ///   `CancellationError` if the task is cancelled (checked before each packet, and while
    ///   waiting); and whatever
    ///   `updateValue` throws.
    public func send(_ message: [UInt8], to central: UUID) async throws {
        guard !isClosed else { throw MessageChannelError.closed }
        let subscribed = await peripheral.subscribedCentrals(for: characteristic)
        guard let remote = subscribed.first(where: { $0.identifier == central }) else {
            throw MessageChannelError.notSubscribed(central: central)
        }
        guard !isClosed else { throw MessageChannelError.closed }
        let subscription = unsubscriptions[central, default: 0]
        // At most `maximumPartialMessages` messages in flight to the central (it would refuse
        // one more).
        // (The loop below checks the channel and the subscription before each packet.)
        try await takeMessageSlot(for: central)
        defer { messageSlots[central]?.release() }
        let id = try ids[central, default: MessageIDAllocator()].allocate()
        defer { ids[central]?.release(id) }
        let maxPacketLength = min(
            remote.maximumUpdateValueLength, MessageInbox<C.Instant>.maximumAttributeValueLength)
        let packets = try Fragmenter.packets(
            for: message, maxPacketLength: maxPacketLength, id: id,
            maximumMessageLength: configuration.maximumMessageLength)
        for packet in packets {
            // (Cancelled between packets: the packets sent stay sent; the central reports the
            // incomplete message when it expires.)
            try Task.checkCancellation()
            let value = Data(packet)
            while true {
                guard !isClosed else { throw MessageChannelError.closed }
                guard unsubscriptions[central, default: 0] == subscription else {
                    throw MessageChannelError.notSubscribed(central: central)
                }
                let generation = ready.generation
                if try await peripheral.updateValue(value, for: characteristic, onSubscribedCentrals: [central]) {
                    break
                }
                try await waitForReady(since: generation)
            }
        }
    }

    /// Sends one message to one subscribed central; see ``send(_:to:)-([UInt8],_)``.
    public func send(_ message: Data, to central: UUID) async throws {
        try await send([UInt8](message), to: central)
    }

    /// Returns holding one of the message slots for `central`, in the order sends asked.
    private func takeMessageSlot(for central: UUID) async throws {
        if messageSlots[central, default: WriteTurn(capacity: configuration.maximumPartialMessages)].take() { return }
        let id = messageSlots[central]!.makeID()
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (waiter: WriteTurn.Waiter) in
                messageSlots[central]!.wait(waiter, id: id)
            }
        } onCancel: {
            HelperTask.start { await self.cancelSlotWaiter(id, for: central) }
        }
    }

    private func cancelSlotWaiter(_ id: UInt64, for central: UUID) {
        messageSlots[central]?.cancel(id)
    }

    /// Suspends until the next ready signal after `generation` (or returns at once if it
    /// already came), the channel closes, or the task is cancelled.
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
