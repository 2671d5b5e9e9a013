import BLECore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

extension MockBLEBridge {
    /// Performs what the world decided, in order, until it decides nothing more.
    func applyEffects() {
        // With front ends attached, what the bridge does for code outside a run's tasks (an
        // app's main-actor code calling in) counts as outside activity, so the run waits for
        // what it hands back before moving time.
        // (A batch of front-end commands is noted once, by its caller, when applied.)
        if !world.effects.isEmpty, !centralFrontEnds.isEmpty || !peripheralFrontEnds.isEmpty, !frontEndSides.inBatch {
            frontEndSides.outside(of: self).noteActivity()
        }
        while !world.effects.isEmpty {
            // The system view first: an effect may hand a callback to an app queue, where it runs
            // at once, and what the app asks of the view there must already hold (a peripheral
            // whose services were just discovered is retrievable by them in that callback).
            updateSystemView()
            swap(&world.effects, &spareEffects)
            for effect in spareEffects { perform(effect) }
            spareEffects.removeAll(keepingCapacity: true)
        }
        updateSystemView()
        checkConditions()
    }

    private func perform(_ effect: Effect) {
        switch effect {
        case .complete(let id, let result):
            if id == starting {
                settled = result
            } else if !completions.isEmpty, let completion = completions.removeValue(forKey: id) {
                completion.run(frontEndResult(result))
            } else {
                waiters.resume(id, with: result)
            }
        case .central(let central, let event):
            centralStreams[central]?.yield(event)
            if !centralFrontEnds.isEmpty, let frontEnd = centralFrontEnds[central] {
                if case .connected(let peripheral) = event,
                    let link = world.links[LinkKey(central: central, peripheral: peripheral.identifier)]
                {
                    frontEnd.linkOpened(peripheral.identifier, link.maximumValueLength)
                }
                frontEnd.event(event)
            }
        case .commandQueue(let central, let peripheral, let queued):
            centralFrontEnds[central]?.commandQueue(peripheral, queued)
        case .peripheral(let peripheral, let event):
            peripheralStreams[peripheral]?.yield(event)
            if !peripheralFrontEnds.isEmpty, let frontEnd = peripheralFrontEnds[peripheral] { frontEnd.event(event) }
        case .updateQueue(let peripheral, let queued):
            peripheralFrontEnds[peripheral]?.updateQueue(queued)
        case .ask(let peripheral, let question):
            ask(handlers[peripheral], question, of: peripheral)
        case .channelOpened(let record):
            openChannel(record)
        case .channelData(let channel, let end, let data):
            channelEnds[channel]?.deliver(data, to: end)
        case .channelClosed(let channel):
            channelEnds.removeValue(forKey: channel)?.finish()
            openedCentralEnds[channel] = nil
        case .finishEvents(.central(let central)):
            centralStreams[central]?.finish()
        case .finishEvents(.peripheral(let peripheral)):
            peripheralStreams[peripheral]?.finish()
        case .wake(let sleeper):
            sleepClock.wake(sleeper, remaining: world.sleepers)
        }
    }

    /// Calls a peripheral's request handler and hands its answer to the world.
    private func ask(_ handler: RequestHandler?, _ question: HandlerQuestion, of peripheral: UUID) {
        guard let handler else { return }
        switch question {
        case .read(let request, let id):
            // (No answer yet: it comes later, see `MockPeripheralManager.answer(_:with:)`.)
            if let response = handler.answer(request) {
                world.handlerAnswered(request, of: id, with: response, by: peripheral)
            }
        case .write(let requests, let id):
            // Each request in order until one fails, as CoreBluetooth's single answer to a batch;
            // one the handler answers later answers for the batch (those after it are not asked).
            let batch = handler.getsWholeLongWrites ? RequestHandler.joiningParts(requests) : requests
            var failure: RequestResponse?
            for request in batch {
                guard let response = handler.answer(request) else { return }
                if response.result != .success {
                    failure = response
                    break
                }
            }
            world.answer(id, with: failure ?? .success())
        case .command(let request):
            // (A command left for later has no answer the central waits for.)
            if let response = handler.answer(request) {
                world.handlerAnswered(command: request, with: response, by: peripheral)
            }
        }
    }

    // MARK: Joining

    /// Puts the managers created since the last call on the air, in the order they were
    /// created (each joins at the current virtual time, before anything else runs).
    func admitArrivals() {
        for arrival in arrivals.take() {
            switch arrival {
            case .central(let identifier, let events, let configuration):
                join(central: identifier, events: events, configuration: configuration)
            case .peripheral(let identifier, let events, let configuration):
                join(peripheral: identifier, events: events, configuration: configuration)
            }
        }
    }

    /// Puts a central manager on the air (once), lets a relaunched app's manager take over what
    /// its terminated predecessor left, or lets a manager the app made again after letting go of
    /// the last one start afresh.
    func join(
        central identifier: UUID, events: EventBroadcaster<CentralEvent>,
        configuration: MockCentralManager.Configuration
    ) {
        if let current = centralStreams[identifier] {
            guard current !== events else { return }
            // A manager the app made again after letting go of the last one starts afresh.
            if world.centrals[existing: identifier].isShutDown {
                centralStreams[identifier] = events
                mutate { $0.restart(central: identifier, configuration: configuration) }
                return
            }
            guard world.awaitsRestoration(.central(identifier)) else { return }
            centralStreams[identifier] = events
            let atOnce = releasesHeldOnJoining
            mutate { $0.restore(central: identifier, configuration: configuration, releasingAtOnce: atOnce) }
            return
        }
        centralStreams[identifier] = events
        mutate { $0.addCentral(identifier, configuration: configuration) }
    }

    /// Puts a peripheral manager on the air (once), lets a relaunched app's manager take over
    /// what its terminated predecessor left, or lets a manager the app made again after letting
    /// go of the last one start afresh.
    func join(
        peripheral identifier: UUID, events: EventBroadcaster<PeripheralEvent>,
        configuration: MockPeripheralManager.Configuration
    ) {
        if let current = peripheralStreams[identifier] {
            guard current !== events else { return }
            // A manager the app made again after letting go of the last one starts afresh.
            if world.peripherals[existing: identifier].isShutDown {
                peripheralStreams[identifier] = events
                handlers[identifier] = RequestHandler(configuration)
                mutate { $0.restart(peripheral: identifier, configuration: configuration) }
                return
            }
            guard world.awaitsRestoration(.peripheral(identifier)) else { return }
            peripheralStreams[identifier] = events
            handlers[identifier] = RequestHandler(configuration)
            let atOnce = releasesHeldOnJoining
            mutate { $0.restore(peripheral: identifier, configuration: configuration, releasingAtOnce: atOnce) }
            return
        }
        peripheralStreams[identifier] = events
        handlers[identifier] = RequestHandler(configuration)
        mutate { $0.addPeripheral(identifier, configuration: configuration) }
    }

    /// Whether a manager relaunched now gets the events held for it as it joins: one of the
    /// async API outside a run (see ``World/restore(central:configuration:releasingAtOnce:)``).
    private var releasesHeldOnJoining: Bool { !driving && !applyingFrontEndCommands }

    // MARK: L2CAP channels

    /// Both ends of an open channel: the streams each end reads, and the front ends' streams
    /// that take its bytes too (see ``tapL2CAPChannel(_:atCentral:_:)``).
    struct ChannelEnds {
        let toCentral: AsyncStream<Data>.Continuation
        let toPeripheral: AsyncStream<Data>.Continuation
        /// The reads of each end's `incoming` under way (for stall reports).
        let centralReads: ChannelReads
        let peripheralReads: ChannelReads
        var taps = ChannelTaps()

        func deliver(_ data: Data, to end: L2CAPChannelRecord.End) {
            switch end {
            case .central: toCentral.yield(data)
            case .peripheral: toPeripheral.yield(data)
            }
            taps[end]?(.data(data))
        }

        func finish() {
            toCentral.finish()
            toPeripheral.finish()
            taps.central?(.closed)
            taps.peripheral?(.closed)
        }
    }

    /// Makes both ends of a channel; the peripheral's end goes to its manager as an event.
    private func openChannel(_ record: L2CAPChannelRecord) {
        let (toCentralStream, toCentral) = AsyncStream<Data>.makeStream()
        let (toPeripheralStream, toPeripheral) = AsyncStream<Data>.makeStream()
        let mtu = L2CAPChannelRecord.mtu
        let centralReads = ChannelReads(channel: record.id, link: record.link, end: .central)
        let peripheralReads = ChannelReads(channel: record.id, link: record.link, end: .peripheral)
        let centralEnd = L2CAPChannel(
            psm: record.psm, peer: record.link.peripheral, id: record.id, mtu: mtu,
            endpoint: MockL2CAPEndpoint(
                bridge: self, channel: record.id, end: .central,
                incoming: centralReads.watching(toCentralStream, on: self)))
        let peripheralEnd = L2CAPChannel(
            psm: record.psm, peer: record.link.central, id: record.id, mtu: mtu,
            endpoint: MockL2CAPEndpoint(
                bridge: self, channel: record.id, end: .peripheral,
                incoming: peripheralReads.watching(toPeripheralStream, on: self)))
        channelEnds[record.id] = ChannelEnds(
            toCentral: toCentral, toPeripheral: toPeripheral, centralReads: centralReads,
            peripheralReads: peripheralReads)
        // Held only until the opening call takes it (the end refers to the bridge).
        openedCentralEnds[record.id] = centralEnd
        peripheralStreams[record.link.peripheral]?.yield(.l2capChannelOpened(peripheralEnd))
        peripheralFrontEnds[record.link.peripheral]?.event(.l2capChannelOpened(peripheralEnd))
    }

    /// Opens a channel for a central; returns its end.
    func openL2CAPChannel(central: UUID, peripheral: UUID, psm: UInt16) async throws -> L2CAPChannel {
        let reply = try await perform(.openL2CAP(central: central, peripheral: peripheral, psm: psm))
        guard case .channel(let id) = reply, let end = openedCentralEnds.removeValue(forKey: id) else {
            throw CoreBluetoothError(.notConnected)
        }
        return end
    }

    /// Sends bytes from one end of a channel.
    func sendL2CAP(_ data: Data, channel: UInt64, from end: L2CAPChannelRecord.End) async throws {
        _ = try await perform(.sendL2CAP(channel: channel, from: end, data))
    }

    /// Closes a channel from either end.
    func closeL2CAPChannel(_ channel: UInt64) {
        mutate { $0.closeChannel(channel) }
    }
}

/// A peripheral's request handler, as the bridge calls it.
struct RequestHandler: Sendable {
    /// The answer to a request, or `nil` when it comes later (see
    /// `MockPeripheralManager.Configuration.deferringHandler`).
    let answer: @Sendable (ATTRequest) -> RequestResponse?
    /// Whether a long write's parts reach it as one request (see
    /// `MockPeripheralManager.Configuration.handlerGetsWholeLongWrites`).
    let getsWholeLongWrites: Bool

    /// The handler of a configuration, if it answers with one.
    init?(_ configuration: MockPeripheralManager.Configuration) {
        guard case .handler(let answer) = configuration.requestHandling else { return nil }
        self.answer = configuration.deferringHandler ?? { answer($0) }
        getsWholeLongWrites = configuration.handlerGetsWholeLongWrites
    }

    /// A write batch with each run of parts of one characteristic's value (consecutive, each
    /// starting where the one before ended) joined into one request.
    static func joiningParts(_ requests: [ATTRequest]) -> [ATTRequest] {
        var joined: [ATTRequest] = []
        for request in requests {
            if var last = joined.last, last.characteristic == request.characteristic,
                last.central.identifier == request.central.identifier, let value = last.value,
                let part = request.value, last.offset + value.count == request.offset
            {
                last.value = value + part
                joined[joined.count - 1] = last
            } else {
                joined.append(request)
            }
        }
        return joined
    }
}

/// The reads of one channel end's `incoming` stream that are waiting, so that a run's stall and
/// a quiet wait outside runs name them (a task reading a channel's bytes waits on a stream the
/// simulation feeds, as one reading a manager's events does).
final class ChannelReads: @unchecked Sendable {
    // @unchecked Sendable: `since` is only read and written with `lock` held.
    /// The channel's link (for stall reports).
    let link: LinkKey
    private let lock = Lock()
    /// Since when the read under way has been waiting (a stream has one reader at a time).
    private var since: VirtualClock.Instant?
    /// What a read that waits is, as a quiet wait names it (made once: a channel may be read
    /// chunk by chunk many times a second).
    private let wait: QuietWaits.Wait
    /// What waits, as a stall report names it.
    let name: String

    init(channel: UInt64, link: LinkKey, end: L2CAPChannelRecord.End) {
        self.link = link
        let bytes =
            "the incoming bytes of L2CAP channel #\(channel) at the \(end == .central ? "central" : "peripheral")"
        wait = .operation(bytes, needs: "bytes sent from the other end, or the channel closing")
        name = "reading " + bytes
    }

    /// Since when a read has been waiting, if one is.
    var waitingSince: VirtualClock.Instant? { lock.withLock { since } }

    /// `stream`, its reads noted while they wait: each read of the returned stream is one of
    /// `stream`, watched as a quiet wait outside runs (reported should it stand still).
    func watching(_ stream: AsyncStream<Data>, on bridge: MockBLEBridge) -> AsyncStream<Data> {
        let source = IteratorBox(stream.makeAsyncIterator())
        let clock = bridge.sleepClock
        return AsyncStream(unfolding: { [self] in
            lock.withLock { since = clock.now }
            let quietWait = clock.beginQuietWait(wait)
            defer {
                clock.endQuietWait(quietWait)
                lock.withLock { since = nil }
            }
            var iterator = source.iterator
            return await iterator.next()
        })
    }

    /// A stream's iterator, shared by the reads of the stream that wraps it (one at a time, as
    /// a stream has one reader; the iterator's state lives in the stream's storage).
    private final class IteratorBox: @unchecked Sendable {
        let iterator: AsyncStream<Data>.Iterator
        init(_ iterator: AsyncStream<Data>.Iterator) { self.iterator = iterator }
    }
}

/// A channel end of a mock manager: sends and closes through the bridge.
final class MockL2CAPEndpoint: L2CAPEndpoint {
    let bridge: MockBLEBridge
    let channel: UInt64
    let end: L2CAPChannelRecord.End
    let incoming: AsyncStream<Data>

    init(bridge: MockBLEBridge, channel: UInt64, end: L2CAPChannelRecord.End, incoming: AsyncStream<Data>) {
        self.bridge = bridge
        self.channel = channel
        self.end = end
        self.incoming = incoming
    }

    func send(_ data: Data) async throws {
        try await bridge.sendL2CAP(data, channel: channel, from: end)
    }

    func close() async {
        await bridge.closeL2CAPChannel(channel)
    }
}
