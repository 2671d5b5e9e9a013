import BLECore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The link as an ordered pipe.
///
/// Each direction of a link is a first-in, first-out queue of packets (``LinkPipe``).
/// Everything a side sends goes through it: ATT requests and responses, write commands,
/// notifications and indications with their confirmations, L2CAP signalling and K-frames.
/// At each connection event up to ``LinkTiming/packetsPerConnectionEvent`` packets cross
/// each way, central to peripheral first (with link profiles, as many link-layer packets as
/// the negotiated link fits in an event, an ATT PDU costing as many as the data length cuts it
/// into, and a long one finishing in a later event); the peripheral's answer to a request that crossed
/// in an event goes back in the same event when the peripheral gives it in that instant
/// (the stack answers at once; a handler or an app that answers without letting virtual
/// time pass does too), else at the next one. So nothing overtakes what the same side sent
/// before it, an exchange costs one connection event whoever answers it, and the
/// write-without-response queue and the update queue are the pipes' fill levels.
///
/// Connection events are scheduled while a pipe holds packets, one connection interval
/// (jittered from the link's own stream) after the previous one; with instant timing they
/// fall at `now`. While the peripheral is out of range the events go on but nothing crosses,
/// until it is heard again or the supervision timeout ends the link.
extension World {
    /// Sends a packet from the central.
    mutating func sendToPeripheral(_ pdu: PDU, on key: LinkKey) {
        guard let slot = links.position(of: key) else { return }
        links.entries[slot]!.toPeripheral.append(pdu)
        scheduleConnectionEvent(slot: slot)
    }

    /// Sends a packet from the peripheral. An answer given in the instant of the connection
    /// event its request crossed in, with nothing queued ahead of it, crosses in that event.
    mutating func sendToCentral(_ pdu: PDU, on key: LinkKey) {
        guard let slot = links.position(of: key) else { return }
        links.entries[slot]!.toCentral.append(pdu)
        // An answer given in the instant of the event its request crossed in joins that event:
        // when nothing waits before it, or only updates held behind an indication that waits
        // for its confirmation (an answer goes on past those).
        if case .response = pdu, links[at: slot].lastEvent == now {
            if links[at: slot].toCentral.count == 1 {
                crossToCentral(slot: slot)
            } else if links[at: slot].indicationOutstanding, links[at: slot].toCentral.first?.isIndication == true,
                links[at: slot].sentToCentralInLastEvent < links[at: slot].toCentralRoomInLastEvent,
                Self.passingPacket(in: links[at: slot])?.offset == links[at: slot].toCentral.count - 1,
                let passing = packetPassingIndication(slot: slot)
            {
                centralReceives(passing, on: key)
            }
        }
        if links.contains(slot: slot) { scheduleConnectionEvent(slot: slot) }
    }

    /// Schedules the link's next connection event if a pipe holds packets and none is scheduled.
    mutating func scheduleConnectionEvent(_ key: LinkKey) {
        guard let slot = links.position(of: key) else { return }
        scheduleConnectionEvent(slot: slot)
    }

    /// Schedules the next connection event of the link in `slot`, if one is needed.
    mutating func scheduleConnectionEvent(slot: Int) {
        guard !links[at: slot].eventScheduled,
            !links[at: slot].toPeripheral.isEmpty || !links[at: slot].toCentral.isEmpty
        else { return }
        links.entries[slot]!.eventScheduled = true
        let interval =
            timing.connectionInterval > .zero
            ? Self.connectionInterval(
                timing, negotiated: links[at: slot].connectionInterval,
                using: &links.entries[slot]!.random) : .zero
        schedule.schedule(
            .connectionEvent(slot: slot, generation: links[at: slot].generation), at: now.advanced(by: interval))
    }

    /// Runs a connection event at once (fast mode's unbounded queues send without waiting).
    mutating func connectionEventNow(_ key: LinkKey) {
        guard let slot = links.position(of: key) else { return }
        connectionEvent(slot: slot, generation: links[at: slot].generation)
    }

    /// A connection event: packets cross both ways; the central hears that its write queue has
    /// room again, the peripheral that its update queue has.
    mutating func connectionEvent(slot: Int, generation: Int) {
        guard links.contains(slot: slot, generation: generation) else { return }
        let key = links[at: slot].key
        links.entries[slot]!.eventScheduled = false
        guard isHeard(key.peripheral), !links[at: slot].peerLost else {
            // The central keeps its connection events; nothing is heard, so nothing crosses.
            // (With a zero interval they would all fall at this instant: they resume when the
            // peripheral is heard again.)
            if timing.connectionInterval > .zero { scheduleConnectionEvent(slot: slot) }
            return
        }
        links.entries[slot]!.lastEvent = now
        links.entries[slot]!.sentToCentralInLastEvent = 0
        links.entries[slot]!.toCentralRoomInLastEvent = links[at: slot].packetsPerEvent
        // What the central sent before the event crosses; what it sends in reaction to what
        // arrives in this event waits for the next one.
        let negotiated = links[at: slot].negotiated
        // With profiles the event's air time is shared: while both sides stream data (writes
        // without response one way, notifications or indications the other), each exchange
        // carries a full packet both ways, and fewer fit. (Requests, responses and other
        // packets are costed as short: they leave the other side's room as it is.)
        var budget = links[at: slot].packetsPerEvent
        if let negotiated, links[at: slot].toCentral.first?.isUpdate == true,
            links[at: slot].toPeripheral.first?.isCommand == true
        {
            budget = min(budget, negotiated.packetsPerEventBothWays(mtu: links[at: slot].mtu))
        }
        var dataPackets = 0
        var queuedBefore = links[at: slot].toPeripheral.count
        let commandsBefore = commandQueueReporters.isEmpty ? 0 : links[at: slot].queuedCommands
        while budget > 0, queuedBefore > 0, links.contains(slot: slot, generation: generation),
            !links[at: slot].toPeripheral.isEmpty
        {
            // A PDU longer than the event's room (in packets of at most the data length: the
            // negotiated one with profiles, 251 bytes without) sends what fits and finishes in
            // a later event.
            var left = 1
            if let head = links[at: slot].toPeripheral.first {
                left = Link.packets(of: head, on: negotiated) - links[at: slot].toPeripheralPacketsSent
                guard left <= budget else {
                    links.entries[slot]!.toPeripheralPacketsSent += budget
                    if head.isCommand { dataPackets += budget }
                    break
                }
                links.entries[slot]!.toPeripheralPacketsSent = 0
            }
            budget -= left
            queuedBefore -= 1
            guard let pdu = links.entries[slot]!.toPeripheral.popFirst() else { break }
            if pdu.isCommand { dataPackets += left }
            peripheralReceives(pdu, on: key)
        }
        guard links.contains(slot: slot, generation: generation) else { return }
        if let negotiated, dataPackets > 0 {
            // What the central's writes without response left of the event for the peripheral.
            links.entries[slot]!.toCentralRoomInLastEvent = negotiated.peripheralPackets(
                afterCentral: dataPackets, mtu: links[at: slot].mtu)
        }
        if !commandQueueReporters.isEmpty, commandQueueReporters.contains(key.central),
            links[at: slot].queuedCommands != commandsBefore
        {
            effects.append(
                .commandQueue(
                    central: key.central, peripheral: key.peripheral, queued: links[at: slot].queuedCommands))
        }
        crossToCentral(slot: slot)
        guard links.contains(slot: slot, generation: generation) else { return }
        if links[at: slot].commandQueueWasFull, canQueueCommand(on: key) {
            links.entries[slot]!.commandQueueWasFull = false
            record(.readyToSendWriteWithoutResponse, central: key.central, peripheral: key.peripheral)
            deliver(.readyToSendWriteWithoutResponse(remotePeripheral(key.peripheral)), to: key.central)
        }
        scheduleConnectionEvent(slot: slot)
    }

    /// Lets the peripheral's packets cross while the current event has room. An indication
    /// waits until the previous one is confirmed, and the notifications and indications queued
    /// after it wait too (updates keep their order); responses and L2CAP packets go on past it,
    /// as ATT's indications and its requests are separate transactions (Bluetooth Core, Vol 3,
    /// Part F, 3.3.2): a read is not answered late because indications wait for confirmations.
    mutating func crossToCentral(slot: Int) {
        let generation = links[at: slot].generation
        let key = links[at: slot].key
        var updates = 0
        let negotiated = links[at: slot].negotiated
        while links.contains(slot: slot, generation: generation),
            links[at: slot].sentToCentralInLastEvent < links[at: slot].toCentralRoomInLastEvent,
            !links[at: slot].toCentral.isEmpty
        {
            if links[at: slot].indicationOutstanding, links[at: slot].toCentral.first?.isIndication == true {
                guard let passing = packetPassingIndication(slot: slot) else { break }
                centralReceives(passing, on: key)
                continue
            }
            // A PDU longer than the event's room (in packets of at most the data length: the
            // negotiated one with profiles, 251 bytes without) sends what fits and finishes in
            // a later event.
            var left = 1
            if let head = links[at: slot].toCentral.first {
                let room = links[at: slot].toCentralRoomInLastEvent - links[at: slot].sentToCentralInLastEvent
                left = Link.packets(of: head, on: negotiated) - links[at: slot].toCentralPacketsSent
                guard left <= room else {
                    links.entries[slot]!.toCentralPacketsSent += room
                    links.entries[slot]!.sentToCentralInLastEvent += room
                    break
                }
                links.entries[slot]!.toCentralPacketsSent = 0
            }
            // Taken out of the pipe, not copied: the packet crosses once.
            guard let next = links.entries[slot]!.toCentral.popFirst() else { break }
            links.entries[slot]!.sentToCentralInLastEvent += left
            if case .update = next { updates += 1 }
            centralReceives(next, on: key)
        }
        if updates > 0 { updatesLeftQueue(updates, of: key.peripheral) }
    }

    /// Takes the first packet behind a waiting indication that is not an update (a response,
    /// an L2CAP packet), if the current event has room for all of it, and counts it as sent;
    /// `nil` when there is none (or it does not fit: it then goes in a later event, past the
    /// indication if that still waits).
    mutating func packetPassingIndication(slot: Int) -> PDU? {
        // (Found through the link's value, and taken out once that is let go of: a slice of the
        // pipe kept across the removal would copy its storage.)
        guard let (offset, packets) = Self.passingPacket(in: links[at: slot]),
            packets <= links[at: slot].toCentralRoomInLastEvent - links[at: slot].sentToCentralInLastEvent
        else { return nil }
        links.entries[slot]!.sentToCentralInLastEvent += packets
        return links.entries[slot]!.toCentral.remove(atOffset: offset)
    }

    /// Where the first packet behind a waiting indication that is not an update is, counted from
    /// the pipe's oldest, and how many link-layer packets it takes.
    private static func passingPacket(in link: borrowing Link) -> (offset: Int, packets: Int)? {
        let waiting = link.toCentral.waiting
        guard let index = waiting.firstIndex(where: { !$0.keepsUpdateOrder }) else { return nil }
        return (index - waiting.startIndex, Link.packets(of: waiting[index], on: link.negotiated))
    }

    /// A packet from the central arrives at the peripheral.
    private mutating func peripheralReceives(_ pdu: PDU, on key: LinkKey) {
        switch pdu {
        case .request(let id):
            attPDUCount += 1
            serveRequest(id, on: key)
        case .command(let command):
            links[key]!.queuedCommands -= 1
            attPDUCount += 1
            serveCommand(command, on: key)
        case .confirmation:
            links[key]!.indicationOutstanding = false
        case .signal(let id):
            serveChannelRequest(id, on: key)
        case .rssi(let id):
            rssiMeasured(id, on: key)
        case .frame(let frame):
            frameArrived(frame, at: .peripheral)
        case .response, .update, .serviceChanged:
            break
        }
    }

    /// A packet from the peripheral arrives at the central.
    mutating func centralReceives(_ pdu: PDU, on key: LinkKey) {
        switch pdu {
        case .response(let id, let answer):
            if case .channel = answer {
                channelAnswered(id, answer, on: key)
            } else if case .channelRefused = answer {
                channelAnswered(id, answer, on: key)
            } else {
                attPDUCount += 1
                procedureAnswered(id, answer, on: key)
            }
        case .update(let update):
            // A notification is one PDU; an indication is counted with its confirmation.
            attPDUCount += update.kind == .notify ? 1 : 2
            record(
                update.kind == .notify ? .notification : .indication, central: key.central, peripheral: key.peripheral,
                attribute: update.characteristic.uuid, handle: update.characteristic.handle, value: update.value)
            deliver(.valueUpdated(update.characteristic, update.value), to: key.central)
            if update.kind == .indicate {
                links[key]!.indicationOutstanding = true
                sendToPeripheral(.confirmation, on: key)
            }
        case .serviceChanged(let removed):
            // (Not counted among the ATT PDUs, as when it crossed at once.)
            serviceChangeArrived(removed, on: key)
            links[key]!.indicationOutstanding = true
            sendToPeripheral(.confirmation, on: key)
        case .frame(let frame):
            frameArrived(frame, at: .central)
        case .request, .command, .confirmation, .signal, .rssi:
            break
        }
    }

    // MARK: The central's write-without-response queue

    /// Whether the central's write-without-response queue on a link has room.
    func canQueueCommand(on key: LinkKey) -> Bool {
        guard let slot = links.position(of: key), let c = centrals.position(of: key.central) else { return false }
        guard let capacity = centrals[at: c].configuration.writeWithoutResponseQueue.capacity else { return true }
        return links[at: slot].queuedCommands < capacity
    }

    /// Whether packets a side queues are sent at once: with instant timing and no bounded
    /// queue. A bounded queue holds its packets until the simulation next runs, so fast tests
    /// can see it fill.
    func sendsAtOnce(capacity: Int?) -> Bool {
        timing.isInstant && capacity == nil
    }

    // MARK: The peripheral's update queue

    /// Updates left a peripheral's queue (sent, or lost with their link): one that said it was
    /// full hears it is ready again once there is room.
    mutating func updatesLeftQueue(_ count: Int, of peripheral: UUID) {
        guard let p = peripherals.position(of: peripheral) else { return }
        peripherals.entries[p]!.queuedUpdates -= count
        if !updateQueueReporters.isEmpty, updateQueueReporters.contains(peripheral) {
            effects.append(.updateQueue(peripheral: peripheral, queued: peripherals[at: p].queuedUpdates))
        }
        if peripherals[at: p].updateQueueWasFull,
            peripherals[at: p].queuedUpdates < (peripherals.entries[p]!.configuration.updateQueue.capacity ?? .max)
        {
            peripherals.entries[p]!.updateQueueWasFull = false
            record(.readyToUpdateSubscribers, peripheral: peripheral)
            if let index = refusedUpdates.firstIndex(where: { $0.peripheral == peripheral }) {
                refusedUpdates[index].readyAt = now
            }
            deliver(.readyToUpdateSubscribers, to: peripheral)
        }
    }
}
