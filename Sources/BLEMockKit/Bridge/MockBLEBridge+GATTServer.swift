import BLECore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

extension MockBLEBridge {
    // MARK: Registration and state

    /// Adds a peripheral manager to the air (once).
    func register(
        peripheral identifier: UUID, events: EventBroadcaster<PeripheralEvent>,
        configuration: MockPeripheralManager.Configuration
    ) {
        if let record = world.peripherals[identifier] {
            if record.pendingRestoration != nil, record.events !== events {
                restore(peripheral: identifier, events: events, configuration: configuration)
            }
            return
        }
        let random =
            configuration.seed.map { SeededGenerator(seed: $0) }
            ?? world.random.derived("peripheral").derived(identifier.uuidString)
        let state = startState(
            configuration.stateTransition, initial: configuration.initialState, manager: .peripheral(identifier))
        world.peripherals[identifier] = SimulationWorld.Peripheral(
            identifier: identifier, events: events, configuration: configuration, state: state, random: random)
        world.peripheralOrder.append(identifier)
        world.record(.stateChanged, peripheral: identifier, detail: state.description)
        for injection in configuration.errorInjection { inject(injection, owner: identifier) }
    }

    func peripheralState(_ peripheral: UUID) -> ManagerState { world.peripherals[peripheral]?.state ?? .unknown }

    /// Waits (in virtual time) for the peripheral's automatic state steps, then returns its state.
    func waitForPoweredOn(peripheral: UUID) -> ManagerState {
        settleState(of: .peripheral(peripheral))
        return peripheralState(peripheral)
    }

    func requirePoweredOn(peripheral: UUID, _ operation: String) throws {
        do {
            if let problem = world.peripherals[peripheral]?.configuration.mtu.problem() {
                throw APIMisuseError.invalidConfiguration("MockPeripheralManager.Configuration.mtu: \(problem)")
            }
            let state = peripheralState(peripheral)
            guard state == .poweredOn else { throw APIMisuseError.notPoweredOn(operation: operation, state: state) }
        } catch {
            world.record(.refused, peripheral: peripheral, error: error, detail: operation)
            throw error
        }
    }

    // MARK: Services

    func addService(peripheral: UUID, service: GATTService) throws -> LocalService {
        try requirePoweredOn(peripheral: peripheral, "add")
        do {
            if let error = injection(.serviceAdd, peripheral: peripheral)?.error { throw error }
            let local = try world.peripherals[peripheral]!.database.add(service)
            world.record(
                .serviceAdded, peripheral: peripheral, attribute: local.uuid, handle: local.handle,
                detail: "handles \(local.handle)-\(local.endHandle)")
            // Connected centrals learn the database changed (a Service Changed indication);
            // nothing they discovered is invalid, so the list is empty.
            for key in world.links(ofPeripheral: peripheral) {
                world.centrals[key.central]?.events.yield(
                    .servicesModified(world.remotePeripheral(peripheral), invalidated: []))
            }
            return local
        } catch {
            world.record(.serviceAdded, peripheral: peripheral, attribute: service.uuid, error: error)
            throw error
        }
    }

    func removeService(peripheral: UUID, service: LocalService) throws {
        let removed = try world.peripherals[peripheral]!.database.remove(service)
        world.record(.serviceRemoved, peripheral: peripheral, attribute: service.uuid, handle: service.handle)
        invalidate([removed], of: peripheral)
    }

    func removeAllServices(peripheral: UUID) {
        let removed = world.peripherals[peripheral]!.database.removeAll()
        for service in removed {
            world.record(
                .serviceRemoved, peripheral: peripheral, attribute: service.local.uuid, handle: service.local.handle)
        }
        invalidate(removed, of: peripheral)
    }

    /// Tells every connected central that these services are gone: their discovered copies
    /// are dropped, subscriptions to their characteristics end, and a services-modified event
    /// lists what was invalidated.
    func invalidate(_ services: [GATTDatabase.Service], of peripheral: UUID) {
        guard !services.isEmpty else { return }
        let handles = Set(services.flatMap { $0.characteristics.map(\.local.handle) })
        // Requests for removed characteristics are answered by the server with "invalid handle".
        for (id, open) in openRequests.sorted(by: { $0.key < $1.key })
        where open.link.peripheral == peripheral && handles.contains(open.request.characteristic.handle) {
            openRequests[id] = nil
            if let waitingID = open.waiting { resume(waitingID, with: .failure(ATTError(.invalidHandle))) }
            requestAnswered(on: open.link)
        }
        for key in world.links(ofPeripheral: peripheral) {
            for handle in handles { world.links[key]!.subscriptions[handle] = nil }
            guard var central = world.centrals[key.central] else { continue }
            let known = central.services[peripheral] ?? []
            let invalidated = known.filter { remote in services.contains { $0.local.handle == remote.handle } }
            central.services[peripheral] = known.filter { !invalidated.contains($0) }
            for service in invalidated { central.characteristics[service] = nil }
            world.centrals[key.central] = central
            central.events.yield(.servicesModified(world.remotePeripheral(peripheral), invalidated: invalidated))
        }
    }

    func localServices(peripheral: UUID) -> [LocalService] {
        world.peripherals[peripheral]?.database.localServices ?? []
    }

    // MARK: Advertising

    func startAdvertising(peripheral: UUID, advertisement: AdvertisementData) throws {
        try requirePoweredOn(peripheral: peripheral, "startAdvertising")
        guard world.peripherals[peripheral]!.advertisement == nil else {
            let error = CoreBluetoothError(.alreadyAdvertising)
            world.record(.advertisingStarted, peripheral: peripheral, error: error)
            throw error
        }
        if let error = injection(.advertisingStart, peripheral: peripheral)?.error {
            world.record(.advertisingStarted, peripheral: peripheral, error: error)
            throw error
        }
        world.peripherals[peripheral]!.advertisement = advertisement
        world.peripherals[peripheral]!.advertisingStarted = world.now.advanced(
            by: world.peripherals[peripheral]!.configuration.advertisingDelay)
        world.record(
            .advertisingStarted, peripheral: peripheral,
            detail: [
                advertisement.localName.map { "name=\($0)" },
                "services=\(advertisement.serviceUUIDs.map(\.uuidString).joined(separator: ","))",
            ]
            .compactMap { $0 }.joined(separator: " "))
        if world.timing.isInstant, world.peripherals[peripheral]!.advertisingStarted == world.now {
            for central in world.centralOrder { deliverAdvertisement(from: peripheral, to: central) }
            if world.peripherals[peripheral]!.configuration.advertisesOnce {
                stopAdvertising(peripheral: peripheral)
                return
            }
        }
        scheduleAdvertising(of: peripheral, needed: advertisingEventsNeeded)
        connectPendingAttempts(to: peripheral)
    }

    func stopAdvertising(peripheral: UUID) {
        guard world.peripherals[peripheral]?.advertisement != nil else { return }
        world.peripherals[peripheral]!.advertisement = nil
        world.record(.advertisingStopped, peripheral: peripheral)
    }

    func isAdvertising(peripheral: UUID) -> Bool { world.peripherals[peripheral]?.advertisement != nil }

    // MARK: Values and updates

    /// The published characteristic matching a peripheral manager's reference.
    func requirePublished(_ characteristic: LocalCharacteristic, of peripheral: UUID) throws
        -> GATTDatabase.Characteristic
    {
        guard let record = world.peripherals[peripheral]?.database.characteristic(at: characteristic.handle),
            record.local == characteristic
        else { throw APIMisuseError.characteristicNotPublished(characteristic.uuid, handle: characteristic.handle) }
        return record
    }

    func setValue(peripheral: UUID, value: Data, characteristic: LocalCharacteristic) throws {
        let record = try requirePublished(characteristic, of: peripheral)
        guard !record.isStatic else {
            throw APIMisuseError.staticCharacteristic(characteristic.uuid, handle: characteristic.handle)
        }
        guard value.count <= GATTDatabase.maximumValueLength else {
            throw APIMisuseError.valueTooLong(
                operation: "setValue", length: value.count, maximum: GATTDatabase.maximumValueLength)
        }
        world.peripherals[peripheral]!.database.setValue(value, at: characteristic.handle)
    }

    /// Sends a notification or indication to the subscribed centrals (or those of them in
    /// `centrals`), truncating the value to each central's maximum update length (or
    /// refusing it when lengths are strict). With a queue, returns `false` when the updates do
    /// not fit; nothing is sent then, and a ready event follows when there is room.
    func updateValue(peripheral: UUID, value: Data, characteristic: LocalCharacteristic, centrals: [UUID]?) throws
        -> Bool
    {
        try requirePoweredOn(peripheral: peripheral, "updateValue")
        let record = try requirePublished(characteristic, of: peripheral)
        guard record.local.properties.supportsSubscription else {
            throw APIMisuseError.characteristicCannotNotify(characteristic.uuid, handle: characteristic.handle)
        }
        let targets = world.links(ofPeripheral: peripheral).filter { key in
            world.links[key]!.subscriptions[characteristic.handle] != nil && (centrals?.contains(key.central) ?? true)
        }
        let configuration = world.peripherals[peripheral]!.configuration
        if configuration.strictLengths, let shortest = targets.map({ world.links[$0]!.mtu - 3 }).min(),
            value.count > shortest
        {
            throw APIMisuseError.valueTooLong(operation: "updateValue", length: value.count, maximum: shortest)
        }
        if let failure = injection(.updateValue, peripheral: peripheral, characteristic: characteristic.uuid) {
            world.record(
                .notification, peripheral: peripheral, attribute: characteristic.uuid, handle: characteristic.handle,
                value: value, error: failure.error ?? CoreBluetoothError(.unknown), detail: "injected")
            if let error = failure.error { throw error }
            return false
        }
        let remote = remoteCharacteristic(record, of: peripheral)
        let updates = targets.map { key -> SimulationWorld.QueuedUpdate in
            let limit = world.links[key]!.mtu - 3
            let kind = world.links[key]!.subscriptions[characteristic.handle]!
            if value.count > limit {
                world.record(
                    .truncated, central: key.central, peripheral: peripheral, attribute: characteristic.uuid,
                    handle: characteristic.handle,
                    detail: "\(kind == .notify ? "notification" : "indication") of \(value.count) bytes cut to \(limit)"
                )
            }
            return SimulationWorld.QueuedUpdate(
                link: key, characteristic: remote, value: value.prefix(limit), kind: kind)
        }
        if queuesUpdates(of: peripheral) {
            guard enqueueUpdates(updates, of: peripheral) else {
                world.record(
                    .notification, peripheral: peripheral, attribute: characteristic.uuid,
                    handle: characteristic.handle, value: value,
                    detail: "transmit queue full: updateValue returned false")
                return false
            }
        } else {
            for update in updates { deliverUpdate(update) }
        }
        world.peripherals[peripheral]!.database.setValue(
            value.prefix(GATTDatabase.maximumValueLength), at: characteristic.handle)
        return true
    }

    func subscribedCentrals(peripheral: UUID, characteristic: LocalCharacteristic) -> [RemoteCentral] {
        world.links(ofPeripheral: peripheral).compactMap { key in
            let link = world.links[key]!
            guard link.subscriptions[characteristic.handle] != nil else { return nil }
            return RemoteCentral(identifier: key.central, maximumUpdateValueLength: link.mtu - 3)
        }
    }

    func maximumUpdateValueLength(peripheral: UUID, central: UUID) -> Int? {
        world.links[LinkKey(central: central, peripheral: peripheral)].map { $0.mtu - 3 }
    }

    /// The central's view of a published characteristic.
    func remoteCharacteristic(_ record: GATTDatabase.Characteristic, of peripheral: UUID) -> RemoteCharacteristic {
        let service = world.peripherals[peripheral]!.database.localServices.first {
            $0.handle == record.local.serviceHandle
        }!
        return RemoteCharacteristic(
            service: RemoteService(
                peripheral: peripheral, uuid: service.uuid, isPrimary: service.isPrimary, handle: service.handle,
                endHandle: service.endHandle),
            uuid: record.local.uuid, properties: record.local.properties, handle: record.local.handle)
    }
}
