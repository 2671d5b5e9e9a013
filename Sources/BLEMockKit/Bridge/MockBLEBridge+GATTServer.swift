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
        guard world.peripherals[identifier] == nil else { return }
        world.peripherals[identifier] = SimulationWorld.Peripheral(
            identifier: identifier, events: events, configuration: configuration, state: configuration.initialState)
        world.peripheralOrder.append(identifier)
        world.record(.stateChanged, peripheral: identifier, detail: configuration.initialState.description)
    }

    func peripheralState(_ peripheral: UUID) -> ManagerState { world.peripherals[peripheral]?.state ?? .unknown }

    func requirePoweredOn(peripheral: UUID, _ operation: String) throws {
        let state = peripheralState(peripheral)
        guard state == .poweredOn else { throw APIMisuseError.notPoweredOn(operation: operation, state: state) }
    }

    // MARK: Services

    func addService(peripheral: UUID, service: GATTService) throws -> LocalService {
        try requirePoweredOn(peripheral: peripheral, "add")
        do {
            let local = try world.peripherals[peripheral]!.database.add(service)
            world.record(
                .serviceAdded, peripheral: peripheral, attribute: local.uuid, handle: local.handle,
                detail: "handles \(local.handle)-\(local.endHandle)")
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
            world.record(.serviceRemoved, peripheral: peripheral, attribute: service.local.uuid, handle: service.local.handle)
        }
        invalidate(removed, of: peripheral)
    }

    /// Tells every connected central that these services are gone: their discovered copies
    /// are dropped, subscriptions to their characteristics end, and a services-modified event
    /// lists what was invalidated.
    func invalidate(_ services: [GATTDatabase.Service], of peripheral: UUID) {
        guard !services.isEmpty else { return }
        let handles = Set(services.flatMap { $0.characteristics.map(\.local.handle) })
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
        world.peripherals[peripheral]!.advertisement = advertisement
        world.record(
            .advertisingStarted, peripheral: peripheral,
            detail: [advertisement.localName.map { "name=\($0)" }, "services=\(advertisement.serviceUUIDs.map(\.uuidString).joined(separator: ","))"]
                .compactMap { $0 }.joined(separator: " "))
        for central in world.centralOrder { deliverAdvertisement(from: peripheral, to: central) }
        scheduleAdvertisingIfNeeded()
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
        _ = try requirePublished(characteristic, of: peripheral)
        world.peripherals[peripheral]!.database.setValue(value, at: characteristic.handle)
    }

    /// Sends a notification or indication to the subscribed centrals (or those of them in
    /// `centrals`), truncating the value to each central's maximum update length.
    func updateValue(peripheral: UUID, value: Data, characteristic: LocalCharacteristic, centrals: [UUID]?) throws -> Bool {
        try requirePoweredOn(peripheral: peripheral, "updateValue")
        let record = try requirePublished(characteristic, of: peripheral)
        guard record.local.properties.supportsSubscription else {
            throw APIMisuseError.characteristicCannotNotify(characteristic.uuid, handle: characteristic.handle)
        }
        world.peripherals[peripheral]!.database.setValue(value, at: characteristic.handle)
        let remote = remoteCharacteristic(record, of: peripheral)
        for key in world.links(ofPeripheral: peripheral) {
            guard let kind = world.links[key]!.subscriptions[characteristic.handle],
                centrals?.contains(key.central) ?? true
            else { continue }
            let limit = world.links[key]!.mtu - 3
            var payload = value
            if payload.count > limit {
                world.record(
                    .truncated, central: key.central, peripheral: peripheral, attribute: characteristic.uuid,
                    handle: characteristic.handle,
                    detail: "\(kind == .notify ? "notification" : "indication") of \(value.count) bytes cut to \(limit)")
                payload = payload.prefix(limit)
            }
            world.record(
                kind == .notify ? .notification : .indication, central: key.central, peripheral: peripheral,
                attribute: characteristic.uuid, handle: characteristic.handle, value: payload)
            world.centrals[key.central]!.events.yield(.valueUpdated(remote, payload))
        }
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
        let service = world.peripherals[peripheral]!.database.localServices.first { $0.handle == record.local.serviceHandle }!
        return RemoteCharacteristic(
            service: RemoteService(
                peripheral: peripheral, uuid: service.uuid, isPrimary: service.isPrimary, handle: service.handle,
                endHandle: service.endHandle),
            uuid: record.local.uuid, properties: record.local.properties, handle: record.local.handle)
    }
}
