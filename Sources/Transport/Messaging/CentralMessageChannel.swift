import BLECore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Whole messages between a central and one characteristic of a connected peripheral,
/// framed by ``Fragmenter`` and ``Reassembler``.
///
/// Works with any `CentralManaging` implementation: CoreBluetooth in an app, BLEMockKit's
/// `MockCentralManager` in tests. Outgoing messages are written to the characteristic;
/// incoming messages arrive as its notifications or indications (subscribe first with
/// `setNotifyValue(true, for:)`).
///
/// ```swift
/// let channel = await CentralMessageChannel(
///     central: central, characteristic: characteristic, clock: ContinuousClock())
/// try await channel.send(Array("hello".utf8))
/// for await message in channel.messages() { handle(message) }
/// ```
///
/// ## Sending
///
/// ``send(_:)-([UInt8])`` fragments at the link's current
/// `maximumWriteValueLength(for:type: .withoutResponse)` (ATT_MTU − 3, capped at the
/// 512 bytes an attribute value holds), so every packet fits one ATT PDU even when
/// ``writeType`` is `.withResponse` (no long writes). Writes
/// without response respect the transmit queue: when `canSendWriteWithoutResponse(to:)` is
/// `false`, the channel waits for `readyToSendWriteWithoutResponse` before the next packet.
/// Sequential sends arrive in order; concurrent sends interleave their packets on the air
/// under distinct message ids and each arrives intact. At most the configuration's
/// ``TransportConfiguration/maximumPartialMessages`` messages are in flight at once (the
/// peripheral holds each as a partial message and refuses one more); further sends wait
/// their turn, in the order they were made. A peripheral that several centrals send to at
/// once needs room for all of theirs.
///
/// ## Receiving and failures
///
/// Complete, checksum-verified messages are yielded on ``messages()``; everything that
/// could not be delivered is yielded on ``failures()`` as a ``MessageChannelFailure`` —
/// rejected packets with their exact ``TransportError``, partial messages that expired on
/// ``clock`` (a timer on the clock reports them even when no further packet arrives), and
/// partial messages dropped on disconnect or ``close()``. Both streams buffer without
/// limit from the channel's creation, and each is meant for one consumer.
///
/// ## Lifetime
///
/// The channel reads the manager's `events()` in a task it owns. ``close()`` cancels that
/// task and the expiry timer, fails waiting sends with ``MessageChannelError/closed``, and
/// finishes both streams. Releasing the last reference to the channel does the same
/// (without the final reports), so an unclosed channel does not leak its tasks.
///
/// A new channel numbers its messages from the first id again. After a reconnect that is
/// what the peer's channel expects (it forgets the old session's ids when the link goes
/// down, or when the central subscribes again). A channel that replaces another on a link
/// that stays up, with no new subscription, is not heard until the old messages' ids are
/// forgotten (``TransportConfiguration/partialMessageTimeout``): keep one channel per link.
public actor CentralMessageChannel<C: Clock> where C.Duration == Swift.Duration {
    /// The central manager the channel writes with.
    public nonisolated let central: any CentralManaging
    /// The peripheral's characteristic carrying the messages.
    public nonisolated let characteristic: RemoteCharacteristic
    /// How packets are written. Defaults to `.withoutResponse`.
    public nonisolated let writeType: WriteType
    /// The framing limits, which the peer must share.
    public nonisolated let configuration: TransportConfiguration
    /// The clock whose instants time partial-message expiry.
    public nonisolated let clock: C

    var inbox: MessageInbox<C.Instant>
    var ids = MessageIDAllocator()
    var ready = ReadinessGate()
    var writeTurn = WriteTurn()
    /// The messages in flight: at most the peer's `maximumPartialMessages`.
    var messageSlots: WriteTurn
    var isClosed = false
    var eventTask: Task<Void, Never>?
    var expiry = ExpiryTimer<C>()
    /// The channel's own tasks that close() stopped, until they have ended.
    var stoppingTasks: [Task<Void, Never>] = []
    private nonisolated let messageStream: AsyncStream<[UInt8]>
    private nonisolated let messageSink: AsyncStream<[UInt8]>.Continuation
    private nonisolated let failureStream: AsyncStream<MessageChannelFailure>
    private nonisolated let failureSink: AsyncStream<MessageChannelFailure>.Continuation

    /// Creates a channel and starts reading the manager's events.
    ///
    /// Events are read from the moment this initializer returns; notifications that
    /// arrived earlier are not seen.
    ///
    /// - Parameters:
    ///   - central: The central manager connected to the characteristic's peripheral.
    ///   - characteristic: The characteristic to write and to receive updates from.
    ///   - writeType: How to write packets. Defaults to `.withoutResponse`.
    ///   - configuration: Framing limits, shared with the peripheral. Defaults to the
    ///     ``TransportConfiguration`` defaults.
    ///   - clock: Times the expiry of partial messages (e.g. `ContinuousClock()`, or a
    ///     virtual clock in tests).
    public init(
        central: any CentralManaging, characteristic: RemoteCharacteristic, writeType: WriteType = .withoutResponse,
        configuration: TransportConfiguration = TransportConfiguration(), clock: C
    ) async {
        let events = await central.events()
        self.central = central
        self.characteristic = characteristic
        self.writeType = writeType
        self.configuration = configuration
        self.clock = clock
        inbox = MessageInbox(configuration: configuration)
        messageSlots = WriteTurn(capacity: configuration.maximumPartialMessages)
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

    /// The peripheral's identifier.
    public nonisolated var peripheral: UUID { characteristic.peripheral }

    /// Complete messages from the peripheral, in the order they completed. Every call
    /// returns the same stream; it finishes when the channel closes.
    public nonisolated func messages() -> AsyncStream<[UInt8]> { messageStream }

    /// Everything from the peripheral that could not be delivered. Every call returns the
    /// same stream; it finishes when the channel closes.
    public nonisolated func failures() -> AsyncStream<MessageChannelFailure> { failureStream }

    /// The number of partially received messages the channel holds.
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
        writeTurn.fail(with: MessageChannelError.closed)
        messageSlots.fail(with: MessageChannelError.closed)
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
    func handle(_ event: CentralEvent) {
        guard !isClosed else { return }
        switch event {
        case .valueUpdated(let source, let value)
        where source.peripheral == peripheral && source.handle == characteristic.handle:
            perform(inbox.receive(value, from: peripheral, at: clock.now))
            scheduleExpiry()
        case .readyToSendWriteWithoutResponse(let source) where source.identifier == peripheral:
            ready.signal()
        case .disconnected(let source, _) where source.identifier == peripheral:
            linkWentDown()
        case .stateChanged(let state) where state != .poweredOn:
            linkWentDown()
        default:
            break
        }
    }

    private func linkWentDown() {
        perform(inbox.discard(from: peripheral))
        scheduleExpiry()
        ready.fail(with: MessageChannelError.disconnected(peer: peripheral))
    }

    /// Yields each outcome to its stream.
    func perform(_ outcomes: [MessageInbox<C.Instant>.Outcome]) {
        for outcome in outcomes {
            switch outcome {
            case .message(let message, _): messageSink.yield(message)
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
