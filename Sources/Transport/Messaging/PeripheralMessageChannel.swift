import BLECore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Whole messages between a peripheral manager's characteristic and its centrals, framed
/// by ``Fragmenter`` and ``Reassembler``.
///
/// Works with any `PeripheralManaging` implementation: CoreBluetooth in an app,
/// BLEMockKit's `MockPeripheralManager` in tests. Centrals write packets to the
/// characteristic (publish it without a value, so the manager receives write requests);
/// the peripheral sends messages as notifications or indications to one subscribed
/// central at a time.
///
/// ```swift
/// let channel = await PeripheralMessageChannel(
///     peripheral: manager, characteristic: characteristic, clock: ContinuousClock())
/// for await received in channel.messages() {
///     try await channel.send(reply(to: received.bytes), to: received.central)
/// }
/// ```
///
/// ## Answering writes
///
/// A peripheral cannot tell a write request from a write command: both arrive as
/// `writeRequests`. The channel handles every batch whose requests target its
/// characteristic (other batches are left to whoever else reads the events): it joins the
/// batch's values in offset order into one packet (so a long write still counts as one
/// packet), feeds it to the reassembler under the central's identifier, and then
///
/// - if the characteristic has the `.write` property, answers the batch's first request
///   with `.success`; a write command has no pending request, so the manager's
///   `APIMisuseError.unknownRequest(id:)` is expected and ignored (CoreBluetooth
///   itself ignores such answers);
/// - if it has only `.writeWithoutResponse`, answers nothing.
///
/// Transport-level problems never turn into ATT errors: the write itself succeeded, and
/// the problem is reported on ``failures()``. Other errors from answering (the central
/// disconnected meanwhile) are ignored, because the central's own write fails with them.
///
/// ## Receiving, failures and lifetime
///
/// As for ``CentralMessageChannel``: messages are reassembled per central and yielded on
/// ``messages()``; rejected packets, expired partial messages (timed on ``clock``) and
/// partial messages dropped at ``close()`` or power-off are yielded on ``failures()``.
/// A central's partial messages are dropped when its session ends (it unsubscribes, which is
/// how a peripheral manager learns that its link went down) and reported as
/// ``MessageChannelFailure/discarded(from:partialMessages:)``: its next channel numbers its
/// messages from the first id again. A central that never subscribed leaves its partial
/// messages to expire, and they are reported then. ``close()`` (or releasing the channel)
/// stops the event task and the timer and finishes both streams.
public actor PeripheralMessageChannel<C: Clock> where C.Duration == Swift.Duration {
    /// The peripheral manager the channel sends with.
    public nonisolated let peripheral: any PeripheralManaging
    /// The published characteristic carrying the messages.
    public nonisolated let characteristic: LocalCharacteristic
    /// The framing limits, which the centrals must share.
    public nonisolated let configuration: TransportConfiguration
    /// The clock whose instants time partial-message expiry.
    public nonisolated let clock: C

    var inbox: MessageInbox<C.Instant>
    /// One allocator per central: message ids are unique per link direction.
    var ids: [UUID: MessageIDAllocator] = [:]
    var ready = ReadinessGate()
    /// The messages in flight to each central: at most its `maximumPartialMessages`.
    var messageSlots: [UUID: WriteTurn] = [:]
    /// How many times each central unsubscribed, so a send notices an unsubscription.
    var unsubscriptions: [UUID: UInt64] = [:]
    var isClosed = false
    var eventTask: Task<Void, Never>?
    var expiry = ExpiryTimer<C>()
    /// The channel's own tasks that close() stopped, until they have ended.
    var stoppingTasks: [Task<Void, Never>] = []
    private nonisolated let messageStream: AsyncStream<ReceivedMessage>
    private nonisolated let messageSink: AsyncStream<ReceivedMessage>.Continuation
    private nonisolated let failureStream: AsyncStream<MessageChannelFailure>
    private nonisolated let failureSink: AsyncStream<MessageChannelFailure>.Continuation

    /// Creates a channel and starts reading the manager's events.
    ///
    /// Events are read from the moment this initializer returns.
    ///
    /// - Parameters:
    ///   - peripheral: The peripheral manager that published the characteristic.
    ///   - characteristic: A characteristic with `.notify` or `.indicate`, and `.write`
    ///     or `.writeWithoutResponse`, published without a value.
    ///   - configuration: Framing limits. Defaults to the ``TransportConfiguration`` defaults.
    ///   - clock: Times the expiry of partial messages.
    public init(
        peripheral: any PeripheralManaging, characteristic: LocalCharacteristic,
        configuration: TransportConfiguration = TransportConfiguration(), clock: C
    ) async {
        let events = await peripheral.events()
        self.peripheral = peripheral
        self.characteristic = characteristic
        self.configuration = configuration
        self.clock = clock
        inbox = MessageInbox(configuration: configuration)
        (messageStream, messageSink) = AsyncStream.makeStream()
        (failureStream, failureSink) = AsyncStream.makeStream()
        // The task owns the stream and lets go of it (and so of the manager) before it ends.
        eventTask = HelperTask.start(holding: events) { [weak self] events in
            for await event in events {
                guard let self else { return }
                await self.handle(event)
            }
        }
    }

    deinit {
        eventTask?.cancel()
        expiry.cancel()
        messageSink.finish()
        failureSink.finish()
    }

    /// Complete messages from centrals, in the order they completed. Every call returns
    /// the same stream; it finishes when the channel closes.
    public nonisolated func messages() -> AsyncStream<ReceivedMessage> { messageStream }

    /// Everything from centrals that could not be delivered. Every call returns the same
    /// stream; it finishes when the channel closes.
    public nonisolated func failures() -> AsyncStream<MessageChannelFailure> { failureStream }

    /// The number of partially received messages the channel holds, across centrals.
    public var partialMessageCount: Int { inbox.partialMessageCount }

    /// Stops the channel: reports partial messages as
    /// ``MessageChannelFailure/discarded(from:partialMessages:)``, fails waiting sends
    /// with ``MessageChannelError/closed``, stops reading events and finishes both
    /// streams. Closing again does nothing.
    public func close() {
        guard !isClosed else { return }
        isClosed = true
        eventTask?.cancel()
        stoppingTasks += [eventTask, expiry.task].compactMap { $0 }
        eventTask = nil
        expiry.cancel()
        perform(inbox.discardAll())
        ready.fail(with: MessageChannelError.closed)
        for central in messageSlots.keys { messageSlots[central]!.fail(with: MessageChannelError.closed) }
        messageSink.finish()
        failureSink.finish()
    }

    /// Returns once the tasks the channel runs for itself (its event reader and expiry timer)
    /// have ended after ``close()``, so everything the channel held is released.
    public func untilStopped() async {
        let tasks = stoppingTasks
        stoppingTasks.removeAll()
        for task in tasks { await task.value }
    }

    /// Handles one manager event.
    func handle(_ event: PeripheralEvent) async {
        guard !isClosed else { return }
        switch event {
        case .writeRequests(let batch):
            await receive(batch)
        case .readyToUpdateSubscribers:
            ready.signal()
        case .unsubscribed(let central, let source) where source.handle == characteristic.handle:
            unsubscriptions[central.identifier, default: 0] += 1
            // The central's session ended (it stopped listening, or its link went down): a
            // channel it makes next numbers its messages from the first id again, so a message
            // of the old session still partial would take the new session's first id (and
            // refuse its first message as a conflicting duplicate) until it expired.
            perform(inbox.discard(from: central.identifier))
            scheduleExpiry()
        case .subscribed(let central, let source) where source.handle == characteristic.handle:
            inbox.startSession(of: central.identifier)
        case .stateChanged(let state) where state != .poweredOn:
            perform(inbox.discardAll())
            scheduleExpiry()
            ready.signal()  // waiting sends retry, and updateValue reports the state
        default:
            break
        }
    }

    /// Feeds one write batch for the characteristic to the reassembler and answers it.
    private func receive(_ batch: [ATTRequest]) async {
        guard let first = batch.first, first.characteristic.handle == characteristic.handle else { return }
        var packet = Data()
        for request in batch.sorted(by: { $0.offset < $1.offset }) {
            packet.append(request.value ?? Data())
        }
        perform(inbox.receive(packet, from: first.central.identifier, at: clock.now))
        scheduleExpiry()
        guard characteristic.properties.contains(.write) else { return }
        do {
            try await peripheral.respond(to: first, withResult: .success, value: nil)
        } catch {
            // A write command has no pending request (unknownRequest); any other error
            // means the link went down, and the central's write already failed with it.
        }
    }

    /// Yields each outcome to its stream.
    func perform(_ outcomes: [MessageInbox<C.Instant>.Outcome]) {
        for outcome in outcomes {
            switch outcome {
            case .message(let bytes, let central): messageSink.yield(ReceivedMessage(central: central, bytes: bytes))
            case .failure(let failure): failureSink.yield(failure)
            }
        }
    }

    /// Sets the expiry timer for the inbox's next deadline (or stops it).
    private func scheduleExpiry() {
        expiry.schedule(for: inbox.nextDeadline, on: clock) { [weak self] token in
            await self?.expiryTimerFired(token)
        }
    }

    private func expiryTimerFired(_ token: UInt64) {
        guard !isClosed, expiry.fired(token) else { return }
        perform(inbox.expire(now: clock.now))
        scheduleExpiry()
    }
}
