import BLECore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

extension MockBLEBridge {
    /// Performs what the world decided, in order, until it decides nothing more.
    ///
    /// Not re-entrant: called while effects are being performed (a manager's state read from a
    /// front end's event handler goes through here), it returns at once, and the loop already
    /// running performs what was decided meanwhile after the effects before it. (Entered again,
    /// it used to take the batch being performed back into the world's effects and perform it a
    /// second time: a peripheral app heard a write request or an L2CAP channel twice.)
    func applyEffects() {
        guard !applyingEffects else { return }
        applyingEffects = true
        defer { applyingEffects = false }
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

    /// `opened` if `result` hands it over (the operation opened its channel), else `nil`.
    private func handedOver(_ opened: L2CAPChannel?, _ result: Result<Reply, any Error>) -> L2CAPChannel? {
        guard let opened, case .success(.channel) = result else { return nil }
        return opened
    }

    private func perform(_ effect: Effect) {
        switch effect {
        case .complete(let id, let result):
            // The central end of a channel the operation opened goes to its caller with the reply.
            let opened = openedCentralEnds.isEmpty ? nil : handedOver(openedCentralEnds.removeValue(forKey: id), result)
            // (The caller, isolated to the bridge, takes it from `handedCentralEnds` only once this
            // effect is done: a caller that gave up leaves nothing behind.)
            if id == starting {
                settled = result
                if let opened { handedCentralEnds[opened.id] = opened }
            } else if !completions.isEmpty, let completion = completions.removeValue(forKey: id) {
                completion.run(frontEndResult(result, opened: opened))
            } else if waiters.resume(id, with: result), let opened {
                handedCentralEnds[opened.id] = opened
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
        case .channelOpened(let record, let opener):
            openChannel(record, for: opener)
        case .openingAbandoned(let opener):
            openedCentralEnds[opener] = nil
        case .channelData(let channel, let end, let data):
            channelEnds[channel]?.deliver(data, to: end)
        case .channelClosed(let channel):
            // (The central's end still goes to its opener: see `openedCentralEnds`.)
            channelEnds.removeValue(forKey: channel)?.finish()
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

    /// Both ends of an open channel: the bytes each end's `incoming` reads, and the front ends'
    /// streams that take its bytes too (see ``tapL2CAPChannel(_:atCentral:_:)``).
    struct ChannelEnds {
        /// The bytes that arrived at the central's end (also for stall reports).
        let central: ChannelInbox
        /// The bytes that arrived at the peripheral's end.
        let peripheral: ChannelInbox
        var taps = ChannelTaps()

        func deliver(_ data: Data, to end: L2CAPChannelRecord.End) {
            switch end {
            case .central: central.deliver(data)
            case .peripheral: peripheral.deliver(data)
            }
            taps[end]?(.data(data))
        }

        func finish() {
            central.finish()
            peripheral.finish()
            taps.central?(.closed)
            taps.peripheral?(.closed)
        }
    }

    /// Makes both ends of a channel; the peripheral's end goes to its manager as an event, the
    /// central's waits for the operation that opened it (`opener`) to complete.
    private func openChannel(_ record: L2CAPChannelRecord, for opener: OperationID) {
        let mtu = L2CAPChannelRecord.mtu
        let central = ChannelInbox(channel: record.id, link: record.link, end: .central, clock: sleepClock)
        let peripheral = ChannelInbox(channel: record.id, link: record.link, end: .peripheral, clock: sleepClock)
        let centralEnd = L2CAPChannel(
            psm: record.psm, peer: record.link.peripheral, id: record.id, mtu: mtu,
            endpoint: MockL2CAPEndpoint(bridge: self, channel: record.id, end: .central, inbox: central))
        let peripheralEnd = L2CAPChannel(
            psm: record.psm, peer: record.link.central, id: record.id, mtu: mtu,
            endpoint: MockL2CAPEndpoint(bridge: self, channel: record.id, end: .peripheral, inbox: peripheral))
        channelEnds[record.id] = ChannelEnds(central: central, peripheral: peripheral)
        // Held until the opening operation completes (the end refers to the bridge), even if the
        // channel closes first: on the air the peripheral's response reaches the central before
        // a disconnection request it sends after it, so the open succeeds, then the channel ends.
        openedCentralEnds[opener] = centralEnd
        peripheralStreams[record.link.peripheral]?.yield(.l2capChannelOpened(peripheralEnd))
        peripheralFrontEnds[record.link.peripheral]?.event(.l2capChannelOpened(peripheralEnd))
    }

    /// Opens a channel for a central; returns its end.
    func openL2CAPChannel(central: UUID, peripheral: UUID, psm: UInt16) async throws -> L2CAPChannel {
        let reply = try await perform(.openL2CAP(central: central, peripheral: peripheral, psm: psm))
        guard case .channel(let id) = reply, let end = handedCentralEnds.removeValue(forKey: id) else {
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

/// A channel end of a mock manager: sends and closes through the bridge.
final class MockL2CAPEndpoint: L2CAPEndpoint {
    let bridge: MockBLEBridge
    let channel: UInt64
    let end: L2CAPChannelRecord.End
    /// The bytes that arrived at this end.
    let inbox: ChannelInbox

    init(bridge: MockBLEBridge, channel: UInt64, end: L2CAPChannelRecord.End, inbox: ChannelInbox) {
        self.bridge = bridge
        self.channel = channel
        self.end = end
        self.inbox = inbox
    }

    /// A new stream of the bytes not yet read: a read cancelled ends its own stream only.
    var incoming: AsyncStream<Data> { inbox.stream() }

    func send(_ data: Data) async throws {
        try await bridge.sendL2CAP(data, channel: channel, from: end)
    }

    func close() async {
        await bridge.closeL2CAPChannel(channel)
    }
}
