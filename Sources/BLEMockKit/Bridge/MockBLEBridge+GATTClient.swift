import BLECore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

extension MockBLEBridge {
    /// The link an operation needs: the central must be powered on and connected.
    func requireLink(central: UUID, peripheral: UUID, _ operation: String) throws -> SimulationWorld.Link {
        try requirePoweredOn(central: central, operation)
        guard let link = world.links[LinkKey(central: central, peripheral: peripheral)] else {
            // A peripheral the system never saw is unknown; a known one is not connected.
            let error = CoreBluetoothError(world.known.contains(peripheral) ? .notConnected : .unknownDevice)
            world.record(.refused, central: central, peripheral: peripheral, error: error, detail: operation)
            throw error
        }
        return link
    }

    /// The peripheral's database entry for a discovered characteristic that is still current.
    func requireCurrent(_ characteristic: RemoteCharacteristic) throws -> GATTDatabase.Characteristic {
        guard let database = world.peripherals[characteristic.peripheral]?.database,
            database.isCurrent(characteristic), let record = database.characteristic(at: characteristic.handle)
        else {
            let error = CoreBluetoothError(.invalidHandle)
            world.record(
                .refused, peripheral: characteristic.peripheral, attribute: characteristic.uuid,
                handle: characteristic.handle, error: error, detail: "stale characteristic")
            throw error
        }
        return record
    }

    /// Checks that a discovered descriptor still exists on its (current) characteristic.
    func requireCurrent(_ descriptor: RemoteDescriptor) throws {
        _ = try requireCurrent(descriptor.characteristic)
        let current =
            world.peripherals[descriptor.peripheral]!.database.descriptors(of: descriptor.characteristic) ?? []
        guard current.contains(descriptor) else { throw CoreBluetoothError(.invalidHandle) }
    }

    /// Throws an injected failure's error (at an operation's completion).
    func throwIfInjected(_ failure: ErrorInjection.Failure?, _ log: ((any Error)) -> Void) throws {
        guard let error = failure?.error else { return }
        log(error)
        throw error
    }

    // MARK: Discovery

    func discoverServices(central: UUID, peripheral: UUID, uuids: [BluetoothUUID]?) async throws -> [RemoteService] {
        let link = try requireLink(central: central, peripheral: peripheral, "discoverServices")
        let key = LinkKey(central: central, peripheral: peripheral)
        let injected = injection(.serviceDiscovery, central: central, peripheral: peripheral)
        let preview = world.peripherals[peripheral]!.database.primaryServices(matching: uuids, peripheral: peripheral)
        let entry = preview.contains { $0.uuid.width == .bits128 } ? 20 : 6
        let cost = world.cost(
            on: key, roundTrips: Self.discoveryRoundTrips(count: preview.count, entrySize: entry, mtu: link.mtu))
        return try await perform(.operation("discoverServices"), on: key, cost: cost, injected: injected) {
            try self.throwIfInjected(injected) {
                self.world.record(.servicesDiscovered, central: central, peripheral: peripheral, error: $0)
            }
            return self.finishServiceDiscovery(central: central, peripheral: peripheral, uuids: uuids)
        }
    }

    func finishServiceDiscovery(central: UUID, peripheral: UUID, uuids: [BluetoothUUID]?) -> [RemoteService] {
        let found = world.peripherals[peripheral]!.database.primaryServices(matching: uuids, peripheral: peripheral)
        var known = world.centrals[central]!.services[peripheral] ?? []
        for service in found where !known.contains(service) { known.append(service) }
        world.centrals[central]!.services[peripheral] = known.sorted { $0.handle < $1.handle }
        world.record(
            .servicesDiscovered, central: central, peripheral: peripheral,
            detail: found.map(\.uuid.uuidString).joined(separator: ","))
        return found
    }

    func discoverIncludedServices(central: UUID, service: RemoteService, uuids: [BluetoothUUID]?) async throws
        -> [RemoteService]
    {
        _ = try requireLink(central: central, peripheral: service.peripheral, "discoverIncludedServices")
        let key = LinkKey(central: central, peripheral: service.peripheral)
        let injected = injection(.serviceDiscovery, central: central, peripheral: service.peripheral)
        return try await perform(
            .operation("discoverIncludedServices"), on: key, cost: world.cost(on: key, roundTrips: 2),
            injected: injected
        ) {
            try self.throwIfInjected(injected) {
                self.world.record(
                    .includedServicesDiscovered, central: central, peripheral: service.peripheral, error: $0)
            }
            return try self.finishIncludedServiceDiscovery(central: central, service: service, uuids: uuids)
        }
    }

    func finishIncludedServiceDiscovery(central: UUID, service: RemoteService, uuids: [BluetoothUUID]?) throws
        -> [RemoteService]
    {
        guard
            let found = world.peripherals[service.peripheral]!.database.includedServices(
                of: service.handle, matching: uuids, peripheral: service.peripheral),
            world.peripherals[service.peripheral]!.database.localServices.contains(where: {
                $0.handle == service.handle && $0.uuid == service.uuid
            })
        else { throw CoreBluetoothError(.invalidHandle) }
        world.record(
            .includedServicesDiscovered, central: central, peripheral: service.peripheral, attribute: service.uuid,
            handle: service.handle, detail: found.map(\.uuid.uuidString).joined(separator: ","))
        return found
    }

    func discoverCharacteristics(central: UUID, service: RemoteService, uuids: [BluetoothUUID]?) async throws
        -> [RemoteCharacteristic]
    {
        let link = try requireLink(central: central, peripheral: service.peripheral, "discoverCharacteristics")
        let key = LinkKey(central: central, peripheral: service.peripheral)
        let injected = injection(.characteristicDiscovery, central: central, peripheral: service.peripheral)
        let preview =
            world.peripherals[service.peripheral]!.database.characteristics(
                of: service.handle, matching: uuids, peripheral: service.peripheral) ?? []
        let entry = preview.contains { $0.uuid.width == .bits128 } ? 21 : 7
        let cost = world.cost(
            on: key, roundTrips: Self.discoveryRoundTrips(count: preview.count, entrySize: entry, mtu: link.mtu))
        return try await perform(.operation("discoverCharacteristics"), on: key, cost: cost, injected: injected) {
            try self.throwIfInjected(injected) {
                self.world.record(
                    .characteristicsDiscovered, central: central, peripheral: service.peripheral, error: $0)
            }
            return try self.finishCharacteristicDiscovery(central: central, service: service, uuids: uuids)
        }
    }

    func finishCharacteristicDiscovery(central: UUID, service: RemoteService, uuids: [BluetoothUUID]?) throws
        -> [RemoteCharacteristic]
    {
        let database = world.peripherals[service.peripheral]!.database
        guard database.localServices.contains(where: { $0.handle == service.handle && $0.uuid == service.uuid }),
            let found = database.characteristics(of: service.handle, matching: uuids, peripheral: service.peripheral)
        else { throw CoreBluetoothError(.invalidHandle) }
        var known = world.centrals[central]!.characteristics[service] ?? []
        for characteristic in found where !known.contains(characteristic) { known.append(characteristic) }
        world.centrals[central]!.characteristics[service] = known.sorted { $0.handle < $1.handle }
        world.record(
            .characteristicsDiscovered, central: central, peripheral: service.peripheral, attribute: service.uuid,
            handle: service.handle, detail: found.map(\.uuid.uuidString).joined(separator: ","))
        return found
    }

    func discoverDescriptors(central: UUID, characteristic: RemoteCharacteristic) async throws -> [RemoteDescriptor] {
        let link = try requireLink(central: central, peripheral: characteristic.peripheral, "discoverDescriptors")
        _ = try requireCurrent(characteristic)
        let key = LinkKey(central: central, peripheral: characteristic.peripheral)
        let injected = injection(
            .descriptorDiscovery, central: central, peripheral: characteristic.peripheral,
            characteristic: characteristic.uuid)
        let count = world.peripherals[characteristic.peripheral]!.database.descriptors(of: characteristic)?.count ?? 0
        let cost = world.cost(on: key, roundTrips: Self.discoveryRoundTrips(count: count, entrySize: 4, mtu: link.mtu))
        return try await perform(.operation("discoverDescriptors"), on: key, cost: cost, injected: injected) {
            try self.throwIfInjected(injected) {
                self.world.record(
                    .descriptorsDiscovered, central: central, peripheral: characteristic.peripheral,
                    attribute: characteristic.uuid, handle: characteristic.handle, error: $0)
            }
            _ = try self.requireCurrent(characteristic)
            return self.finishDescriptorDiscovery(central: central, characteristic: characteristic)
        }
    }

    func finishDescriptorDiscovery(central: UUID, characteristic: RemoteCharacteristic) -> [RemoteDescriptor] {
        let found = world.peripherals[characteristic.peripheral]!.database.descriptors(of: characteristic) ?? []
        world.record(
            .descriptorsDiscovered, central: central, peripheral: characteristic.peripheral,
            attribute: characteristic.uuid, handle: characteristic.handle,
            detail: found.map(\.uuid.uuidString).joined(separator: ","))
        return found
    }

    func discoveredServices(central: UUID, peripheral: UUID) -> [RemoteService] {
        world.centrals[central]?.services[peripheral] ?? []
    }

    func discoveredCharacteristics(central: UUID, service: RemoteService) -> [RemoteCharacteristic] {
        world.centrals[central]?.characteristics[service] ?? []
    }

    // MARK: Subscriptions, RSSI, lengths

    func setNotifyValue(central: UUID, characteristic: RemoteCharacteristic, enabled: Bool) async throws {
        if enabled {
            try await pairIfNeeded(central: central, for: characteristic) { database, security in
                _ = try database.planSubscribe(handle: characteristic.handle, security: security)
            }
        }
        _ = try requireLink(central: central, peripheral: characteristic.peripheral, "setNotifyValue")
        _ = try requireCurrent(characteristic)
        let key = LinkKey(central: central, peripheral: characteristic.peripheral)
        let injected = injection(
            .subscribe, central: central, peripheral: key.peripheral, characteristic: characteristic.uuid)
        try await perform(
            .operation("setNotifyValue"), on: key, cost: world.cost(on: key, roundTrips: 1), injected: injected
        ) {
            try self.throwIfInjected(injected) {
                self.world.record(
                    enabled ? .subscribe : .unsubscribe, central: central, peripheral: characteristic.peripheral,
                    attribute: characteristic.uuid, handle: characteristic.handle, error: $0)
            }
            try self.finishSetNotifyValue(central: central, characteristic: characteristic, enabled: enabled)
        }
    }

    func finishSetNotifyValue(central: UUID, characteristic: RemoteCharacteristic, enabled: Bool) throws {
        let link = try requireLink(central: central, peripheral: characteristic.peripheral, "setNotifyValue")
        let record = try requireCurrent(characteristic)
        let key = LinkKey(central: central, peripheral: characteristic.peripheral)
        let remoteCentral = RemoteCentral(identifier: central, maximumUpdateValueLength: link.mtu - 3)
        let events = world.peripherals[characteristic.peripheral]!.events
        if enabled {
            let kind: SubscriptionKind
            do {
                kind = try world.peripherals[characteristic.peripheral]!.database.planSubscribe(
                    handle: characteristic.handle, security: link.security)
            } catch {
                world.record(
                    .subscribe, central: central, peripheral: characteristic.peripheral, attribute: characteristic.uuid,
                    handle: characteristic.handle, error: error)
                throw error
            }
            guard world.links[key]!.subscriptions[characteristic.handle] == nil else { return }
            world.links[key]!.subscriptions[characteristic.handle] = kind
            world.record(
                .subscribe, central: central, peripheral: characteristic.peripheral, attribute: characteristic.uuid,
                handle: characteristic.handle, detail: kind == .notify ? "notify" : "indicate")
            events.yield(.subscribed(remoteCentral, record.local))
        } else {
            guard world.links[key]!.subscriptions.removeValue(forKey: characteristic.handle) != nil else { return }
            world.record(
                .unsubscribe, central: central, peripheral: characteristic.peripheral, attribute: characteristic.uuid,
                handle: characteristic.handle)
            events.yield(.unsubscribed(remoteCentral, record.local))
        }
    }

    func readRSSI(central: UUID, peripheral: UUID) async throws -> Int {
        _ = try requireLink(central: central, peripheral: peripheral, "readRSSI")
        let key = LinkKey(central: central, peripheral: peripheral)
        let injected = injection(.readRSSI, central: central, peripheral: peripheral)
        return try await perform(
            .operation("readRSSI"), on: key, cost: world.connectionEvent(on: key), injected: injected
        ) {
            try self.throwIfInjected(injected) {
                self.world.record(.rssiRead, central: central, peripheral: peripheral, error: $0)
            }
            let rssi = self.currentRSSI(of: peripheral)
            self.world.record(.rssiRead, central: central, peripheral: peripheral, detail: "rssi=\(rssi)")
            return rssi
        }
    }

    func maximumWriteValueLength(central: UUID, peripheral: UUID, type: WriteType) throws -> Int {
        let link = try requireLink(central: central, peripheral: peripheral, "maximumWriteValueLength")
        return type == .withResponse ? GATTDatabase.maximumValueLength : link.mtu - 3
    }

    func canSendWriteWithoutResponse(central: UUID, peripheral: UUID) -> Bool {
        canQueueWrite(LinkKey(central: central, peripheral: peripheral))
    }
}
