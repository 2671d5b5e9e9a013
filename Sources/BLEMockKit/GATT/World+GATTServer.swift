import BLECore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The peripheral's side of GATT: publishing services, values, and updates to subscribers.
extension World {
    // MARK: Services

    mutating func addService(peripheral: UUID, service: GATTService) throws -> LocalService {
        try requirePoweredOn(peripheral: peripheral, "add")
        do {
            if let error = injection(.serviceAdd, peripheral: peripheral)?.error { throw error }
            let local = try peripherals[peripheral]!.database.add(service)
            systemChanges &+= 1
            record(
                .serviceAdded, peripheral: peripheral, attribute: local.uuid, handle: local.handle,
                detail: "handles \(local.handle)-\(local.endHandle)")
            // Connected centrals learn the database changed (a Service Changed indication, behind
            // what their link holds); nothing they discovered is invalid, so the list is empty.
            for key in links(ofPeripheral: peripheral) { announceServiceChange([], on: key) }
            return local
        } catch {
            record(.serviceAdded, peripheral: peripheral, attribute: service.uuid, error: error)
            throw error
        }
    }

    mutating func removeService(peripheral: UUID, service: LocalService) throws {
        try requireNotShutDown(peripheral: peripheral, "remove")
        let removed = try peripherals[peripheral]!.database.remove(service)
        systemChanges &+= 1
        record(.serviceRemoved, peripheral: peripheral, attribute: service.uuid, handle: service.handle)
        invalidate([removed], of: peripheral)
    }

    mutating func removeAllServices(peripheral: UUID) {
        guard peripherals.contains(peripheral), !peripherals[existing: peripheral].isShutDown else { return }
        let removed = peripherals[peripheral]!.database.removeAll()
        systemChanges &+= 1
        for service in removed {
            record(.serviceRemoved, peripheral: peripheral, attribute: service.local.uuid, handle: service.local.handle)
        }
        invalidate(removed, of: peripheral)
    }

    /// Tells every connected central that these services are gone: their discovered copies
    /// are dropped, subscriptions to their characteristics end, and a services-modified event
    /// lists what was invalidated. Requests the peripheral's app still has to answer for
    /// their characteristics are answered by the server with "invalid handle".
    mutating func invalidate(_ services: [GATTDatabase.Service], of peripheral: UUID) {
        guard !services.isEmpty else { return }
        let handles = Set(services.flatMap { $0.characteristics.map(\.local.handle) })
        let orphaned = pending.values.filter { operation in
            guard case .awaitingAnswer = operation.stage, operation.link?.peripheral == peripheral,
                let handle = operation.procedure?.characteristic?.handle
            else { return false }
            return handles.contains(handle)
        }
        for operation in orphaned.sorted(by: { $0.id < $1.id }) {
            answerRequest(operation.id, .failure(ATTError(.invalidHandle)), on: operation.link!)
        }
        failQueuedProcedures(on: services, of: peripheral)
        // The links keep the removed handles as discovered: the database no longer has them
        // (and never hands them out again), so a use is refused as stale. The server ends the
        // subscriptions at once; a central hears of the change by the Service Changed
        // indication, behind what its link already holds (updates queued before the removal
        // arrive first, as on a device), or at once when the link holds nothing.
        let removed = Set(services.map(\.local.handle))
        for key in links(ofPeripheral: peripheral) {
            for handle in handles { links[key]!.subscriptions[handle] = nil }
            announceServiceChange(removed, on: key)
        }
    }

    /// The server indicates Service Changed on a link (`removed`: the handles of the services
    /// removed, none for services added): it reaches the central behind what the link already
    /// holds, or at once when the link holds nothing.
    private mutating func announceServiceChange(_ removed: Set<UInt16>, on key: LinkKey) {
        if links[key]!.toCentral.isEmpty {
            serviceChangeArrived(removed, on: key)
        } else {
            sendToCentral(.serviceChanged(removed), on: key)
        }
    }

    /// The Service Changed indication of services removed (their handles, `removed`) reaches a
    /// central: their discovered copies are dropped, and its app hears `servicesModified` naming
    /// them.
    mutating func serviceChangeArrived(_ removed: Set<UInt16>, on key: LinkKey) {
        let peripheral = key.peripheral
        guard centrals.contains(key.central) else { return }
        guard !removed.isEmpty else {
            return deliver(.servicesModified(remotePeripheral(peripheral), invalidated: []), to: key.central)
        }
        func isRemoved(_ remote: RemoteService) -> Bool { removed.contains(remote.handle) }
        let known = centrals[key.central]!.services[peripheral] ?? []
        let included = centrals[key.central]!.includedServices[peripheral] ?? []
        // A removed service the central found as an included service is invalidated too.
        var invalidated = known.filter(isRemoved)
        for service in included where isRemoved(service) && !invalidated.contains(service) {
            invalidated.append(service)
        }
        centrals[key.central]!.services[peripheral] = known.filter { !invalidated.contains($0) }
        systemChanges &+= 1
        centrals[key.central]!.includedServices[peripheral] = included.filter { !invalidated.contains($0) }
        for service in invalidated { centrals[key.central]!.characteristics[service] = nil }
        deliver(.servicesModified(remotePeripheral(peripheral), invalidated: invalidated), to: key.central)
    }

    /// Procedures still waiting for the ATT bearer on an attribute of a removed service fail at
    /// once with `invalidHandle`, as CoreBluetooth fails operations on invalidated attributes:
    /// nothing of theirs was sent, and what they name no longer exists.
    private mutating func failQueuedProcedures(on services: [GATTDatabase.Service], of peripheral: UUID) {
        let serviceHandles = Set(services.map(\.local.handle))
        let characteristicHandles = Set(services.flatMap { $0.characteristics.map(\.local.handle) })
        let invalidated = pending.keys(where: { operation in
            guard operation.stage == .queued, case .gatt(let key) = operation.kind, key.peripheral == peripheral,
                let procedure = operation.procedure
            else { return false }
            if let handle = procedure.characteristic?.handle { return characteristicHandles.contains(handle) }
            if let handle = procedure.serviceHandle { return serviceHandles.contains(handle) }
            return false
        })
        guard !invalidated.isEmpty else { return }
        let error = CoreBluetoothError(
            .invalidHandle, reason: "the peripheral removed the service of this attribute before its request was sent")
        for id in invalidated {
            guard let key = pending[id]?.link else { continue }
            links[key]?.waitingForBearer.removeAll { $0 == id }
            record(.refused, central: key.central, peripheral: key.peripheral, error: error, detail: "invalidated")
            complete(id, .failure(error))
        }
    }

    func localServices(peripheral: UUID) -> [LocalService] {
        peripherals[peripheral]?.database.localServices ?? []
    }

    // MARK: Values and updates

    /// Refuses `operation` for a peripheral that was shut down (its database stays as it was:
    /// calls that change it while powered off are still taken).
    mutating func requireNotShutDown(peripheral: UUID, _ operation: String) throws {
        guard peripherals[peripheral]?.isShutDown == true else { return }
        let error = APIMisuseError.managerShutDown(operation: operation)
        record(.refused, peripheral: peripheral, error: error, detail: operation)
        throw error
    }

    /// The published characteristic matching a peripheral manager's reference.
    func requirePublished(_ characteristic: LocalCharacteristic, of peripheral: UUID) throws
        -> GATTDatabase.Characteristic
    {
        // (Read at the peripheral's position: the subscript's getter copies the whole record.)
        guard let p = peripherals.position(of: peripheral),
            let record = peripherals[at: p].database.characteristic(at: characteristic.handle),
            record.local == characteristic
        else { throw APIMisuseError.characteristicNotPublished(characteristic.uuid, handle: characteristic.handle) }
        return record
    }

    mutating func setValue(peripheral: UUID, value: Data, characteristic: LocalCharacteristic) throws {
        try requireNotShutDown(peripheral: peripheral, "setValue")
        let record = try requirePublished(characteristic, of: peripheral)
        guard !record.isStatic else {
            throw APIMisuseError.staticCharacteristic(characteristic.uuid, handle: characteristic.handle)
        }
        guard value.count <= GATTDatabase.maximumValueLength else {
            throw APIMisuseError.valueTooLong(
                operation: "setValue", length: value.count, maximum: GATTDatabase.maximumValueLength)
        }
        peripherals[peripheral]!.database.setValue(value, at: characteristic.handle)
    }

    /// Sends a notification or indication to the subscribed centrals (or those of them in
    /// `centrals`), truncating the value to each central's maximum update length (or
    /// refusing it when lengths are strict). Returns `false` when the update queue is full:
    /// nothing is sent then, and a ready event follows when there is room (an update with room
    /// for one goes to every subscriber, overfilling the queue rather than being refused).
    /// The updates cross at the links' connection events (at once in fast mode with an
    /// unbounded queue).
    mutating func updateValue(peripheral: UUID, value: Data, characteristic: LocalCharacteristic, centrals: [UUID]?)
        throws -> Bool
    {
        try requirePoweredOn(peripheral: peripheral, "updateValue")
        let record = try requirePublished(characteristic, of: peripheral)
        guard record.local.properties.supportsSubscription else {
            throw APIMisuseError.characteristicCannotNotify(characteristic.uuid, handle: characteristic.handle)
        }
        // Links are reached by slot and the peripheral by position: this runs for every update.
        var targets: [Int] = []
        for slot in links.entries.indices where links.contains(slot: slot) {
            let key = links[at: slot].key
            guard key.peripheral == peripheral, links[at: slot].subscriptions[characteristic.handle] != nil,
                centrals?.contains(key.central) ?? true
            else { continue }
            targets.append(slot)
        }
        // In the links' deterministic order (see `links(ofPeripheral:)`).
        if targets.count > 1 { targets.sort { links[at: $0].key.central.precedes(links[at: $1].key.central) } }
        let p = peripherals.position(of: peripheral)!
        let strict =
            peripherals[at: p].configuration.strictLengths || peripherals[at: p].configuration.strictMisuse
        if strict, let shortest = targets.map({ links[at: $0].maximumValueLength }).min(), value.count > shortest {
            throw APIMisuseError.valueTooLong(operation: "updateValue", length: value.count, maximum: shortest)
        }
        if let failure = injection(
            .updateValue, peripheral: peripheral, characteristic: characteristic.uuid, handle: characteristic.handle)
        {
            self.record(
                .notification, peripheral: peripheral, attribute: characteristic.uuid, handle: characteristic.handle,
                value: value, error: failure.error ?? CoreBluetoothError(.unknown), detail: "injected")
            if let error = failure.error { throw error }
            return false
        }
        // Refused only while the queue is full, as CoreBluetooth's `updateValue` returns `false`
        // only then: an update to more subscribers than the queue holds overfills it rather than
        // being refused for ever (each refusal's ready event would say there is room, and the
        // retry would be refused again).
        let capacity = peripherals[at: p].configuration.updateQueue.capacity
        if let capacity, !targets.isEmpty, peripherals[at: p].queuedUpdates >= capacity {
            peripherals.entries[p]!.updateQueueWasFull = true
            self.record(
                .notification, peripheral: peripheral, attribute: characteristic.uuid, handle: characteristic.handle,
                value: value, detail: Self.updateRefusedDetail)
            noteRefusedUpdate(peripheral: peripheral, characteristic: characteristic)
            return false
        }
        if !refusedUpdates.isEmpty { refusedUpdates.removeAll { $0.peripheral == peripheral } }
        if targets.isEmpty {
            noteUnheardUpdate(peripheral: peripheral, characteristic: characteristic)
        } else if !unheardUpdates.isEmpty {
            // The characteristic's latest update was heard.
            unheardUpdates.removeAll { $0.peripheral == peripheral && $0.handle == characteristic.handle }
        }
        let remote = remoteCharacteristic(record, of: peripheral)
        for slot in targets {
            guard links.contains(slot: slot) else { continue }  // an earlier target's event ended it
            let key = links[at: slot].key
            let limit = links[at: slot].maximumValueLength
            let kind = links.entries[slot]!.subscriptions[characteristic.handle]!
            if value.count > limit {
                self.record(
                    .truncated, central: key.central, peripheral: peripheral, attribute: characteristic.uuid,
                    handle: characteristic.handle,
                    detail: "\(kind == .notify ? "notification" : "indication") of \(value.count) bytes cut to \(limit)"
                )
                // (Not strict: checked above, before anything was sent.)
                try? misused(
                    .valueTruncated, by: .peripheral(peripheral), central: key.central, peripheral: peripheral,
                    characteristic: characteristic.uuid, handle: characteristic.handle,
                    error: .valueTooLong(operation: "updateValue", length: value.count, maximum: limit))
            }
            peripherals.entries[p]!.queuedUpdates += 1
            links.entries[slot]!.toCentral.append(
                .update(Update(characteristic: remote, value: value.prefix(limit), kind: kind)))
            if sendsAtOnce(capacity: capacity) {
                connectionEvent(slot: slot, generation: links[at: slot].generation)
            } else {
                scheduleConnectionEvent(slot: slot)
            }
        }
        peripherals.entries[p]!.database.setValue(
            value.prefix(GATTDatabase.maximumValueLength), at: characteristic.handle)
        return true
    }

    func subscribedCentrals(peripheral: UUID, characteristic: LocalCharacteristic) -> [RemoteCentral] {
        links(ofPeripheral: peripheral).compactMap { key in
            let link = links[key]!
            guard link.subscriptions[characteristic.handle] != nil else { return nil }
            return RemoteCentral(identifier: key.central, maximumUpdateValueLength: link.maximumValueLength)
        }
    }

    func maximumUpdateValueLength(peripheral: UUID, central: UUID) -> Int? {
        links[LinkKey(central: central, peripheral: peripheral)].map(\.maximumValueLength)
    }

    /// The central's view of a published characteristic.
    func remoteCharacteristic(_ record: GATTDatabase.Characteristic, of peripheral: UUID) -> RemoteCharacteristic {
        // (The service is found in place: `localServices` builds an array of every service.)
        let service = peripherals[existing: peripheral].database.services.first {
            $0.local.handle == record.local.serviceHandle
        }!.local
        return RemoteCharacteristic(
            service: RemoteService(
                peripheral: peripheral, uuid: service.uuid, isPrimary: service.isPrimary, handle: service.handle,
                endHandle: service.endHandle),
            uuid: record.local.uuid, properties: record.local.properties.declared, handle: record.local.handle)
    }
}
