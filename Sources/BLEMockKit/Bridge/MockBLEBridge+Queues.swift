import BLECore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

extension MockBLEBridge {
    // MARK: The central's writes without response

    /// Whether a write without response must wait in the queue (rather than reach the
    /// peripheral at once): when timing is realistic or the queue is bounded.
    func queuesWrites(of central: UUID) -> Bool {
        !world.timing.isInstant || world.centrals[central]!.configuration.writeWithoutResponseQueue.capacity != nil
    }

    func canQueueWrite(_ key: LinkKey) -> Bool {
        guard let link = world.links[key], let central = world.centrals[key.central] else { return false }
        guard let capacity = central.configuration.writeWithoutResponseQueue.capacity else { return true }
        return link.writeQueue.count < capacity
    }

    /// Queues a write without response; returns `false` if it was dropped because the queue
    /// was full (as on a device).
    func enqueueWrite(_ write: SimulationWorld.QueuedWrite, on key: LinkKey) -> Bool {
        guard canQueueWrite(key) else {
            world.links[key]!.writeQueueWasFull = true
            return false
        }
        world.links[key]!.writeQueue.append(write)
        if !canQueueWrite(key) { world.links[key]!.writeQueueWasFull = true }
        scheduleWriteDrain(key)
        return true
    }

    func scheduleWriteDrain(_ key: LinkKey) {
        guard let link = world.links[key], !link.writeDrainScheduled, !link.writeQueue.isEmpty else { return }
        world.links[key]!.writeDrainScheduled = true
        world.schedule.schedule(.drainWrites(key), at: world.now.advanced(by: world.connectionEvent(on: key)))
    }

    /// A connection event: the peripheral receives up to `packetsPerConnectionEvent` queued
    /// writes; a central whose queue was full is told it can send again.
    func drainWrites(_ key: LinkKey) {
        guard world.links[key] != nil else { return }
        world.links[key]!.writeDrainScheduled = false
        let count = min(world.timing.packetsPerConnectionEvent, world.links[key]!.writeQueue.count)
        let batch = world.links[key]!.writeQueue.prefix(count)
        world.links[key]!.writeQueue.removeFirst(count)
        for write in batch { deliverCommand(write.value, to: write.characteristic, on: key) }
        guard world.links[key] != nil else { return }
        scheduleWriteDrain(key)
        if world.links[key]!.writeQueueWasFull, canQueueWrite(key) {
            world.links[key]!.writeQueueWasFull = false
            world.centrals[key.central]?.events.yield(
                .readyToSendWriteWithoutResponse(world.remotePeripheral(key.peripheral)))
        }
    }

    // MARK: The peripheral's notifications and indications

    /// Whether updates must wait in the queue: when timing is realistic or the queue is bounded.
    func queuesUpdates(of peripheral: UUID) -> Bool {
        !world.timing.isInstant || world.peripherals[peripheral]!.configuration.updateQueue.capacity != nil
    }

    /// Queues updates for several centrals at once, or none if they do not all fit.
    func enqueueUpdates(_ updates: [SimulationWorld.QueuedUpdate], of peripheral: UUID) -> Bool {
        let record = world.peripherals[peripheral]!
        if let capacity = record.configuration.updateQueue.capacity, record.updateQueue.count + updates.count > capacity
        {
            world.peripherals[peripheral]!.updateQueueWasFull = true
            return false
        }
        world.peripherals[peripheral]!.updateQueue += updates
        scheduleUpdateDrain(peripheral)
        return true
    }

    func scheduleUpdateDrain(_ peripheral: UUID) {
        guard let record = world.peripherals[peripheral], !record.updateDrainScheduled, !record.updateQueue.isEmpty
        else { return }
        world.peripherals[peripheral]!.updateDrainScheduled = true
        world.schedule.schedule(
            .drainUpdates(peripheral), at: world.now.advanced(by: world.connectionEvent(forPeripheral: peripheral)))
    }

    /// A connection event: up to `packetsPerConnectionEvent` queued updates reach their
    /// centrals, in order per link; an indication waits for its confirmation, so a link carries
    /// at most one indication per event and its later updates wait for the next event.
    /// Updates for links that dropped are discarded. A peripheral whose queue was full is told
    /// it can update subscribers again.
    func drainUpdates(_ peripheral: UUID) {
        guard world.peripherals[peripheral] != nil else { return }
        world.peripherals[peripheral]!.updateDrainScheduled = false
        var delivered = 0
        var waitingLinks = Set<LinkKey>()
        var remaining: [SimulationWorld.QueuedUpdate] = []
        for update in world.peripherals[peripheral]!.updateQueue {
            guard world.links[update.link]?.subscriptions[update.characteristic.handle] != nil else { continue }
            guard delivered < world.timing.packetsPerConnectionEvent, !waitingLinks.contains(update.link) else {
                remaining.append(update)
                waitingLinks.insert(update.link)
                continue
            }
            deliverUpdate(update)
            delivered += 1
            if update.kind == .indicate { waitingLinks.insert(update.link) }
        }
        world.peripherals[peripheral]!.updateQueue = remaining
        scheduleUpdateDrain(peripheral)
        let record = world.peripherals[peripheral]!
        if record.updateQueueWasFull, record.updateQueue.count < (record.configuration.updateQueue.capacity ?? .max) {
            world.peripherals[peripheral]!.updateQueueWasFull = false
            record.events.yield(.readyToUpdateSubscribers)
        }
    }

    /// A notification or indication arriving at a central.
    func deliverUpdate(_ update: SimulationWorld.QueuedUpdate) {
        // A notification is one PDU; an indication is confirmed.
        world.attPDUCount += update.kind == .notify ? 1 : 2
        world.record(
            update.kind == .notify ? .notification : .indication, central: update.link.central,
            peripheral: update.link.peripheral, attribute: update.characteristic.uuid,
            handle: update.characteristic.handle, value: update.value)
        world.centrals[update.link.central]?.events.yield(.valueUpdated(update.characteristic, update.value))
    }
}
