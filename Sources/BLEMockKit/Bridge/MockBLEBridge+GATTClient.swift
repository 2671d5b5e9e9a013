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
            throw CoreBluetoothError(.notConnected)
        }
        return link
    }

    /// The peripheral's database entry for a discovered characteristic that is still current.
    func requireCurrent(_ characteristic: RemoteCharacteristic) throws -> GATTDatabase.Characteristic {
        guard let database = world.peripherals[characteristic.peripheral]?.database,
            database.isCurrent(characteristic), let record = database.characteristic(at: characteristic.handle)
        else { throw CoreBluetoothError(.invalidHandle) }
        return record
    }

    // MARK: Discovery

    func discoverServices(central: UUID, peripheral: UUID, uuids: [BluetoothUUID]?) throws -> [RemoteService] {
        _ = try requireLink(central: central, peripheral: peripheral, "discoverServices")
        let found = world.peripherals[peripheral]!.database.primaryServices(matching: uuids, peripheral: peripheral)
        var known = world.centrals[central]!.services[peripheral] ?? []
        for service in found where !known.contains(service) { known.append(service) }
        world.centrals[central]!.services[peripheral] = known.sorted { $0.handle < $1.handle }
        world.record(
            .servicesDiscovered, central: central, peripheral: peripheral,
            detail: found.map(\.uuid.uuidString).joined(separator: ","))
        return found
    }

    func discoverIncludedServices(central: UUID, service: RemoteService, uuids: [BluetoothUUID]?) throws
        -> [RemoteService]
    {
        _ = try requireLink(central: central, peripheral: service.peripheral, "discoverIncludedServices")
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

    func discoverCharacteristics(central: UUID, service: RemoteService, uuids: [BluetoothUUID]?) throws
        -> [RemoteCharacteristic]
    {
        _ = try requireLink(central: central, peripheral: service.peripheral, "discoverCharacteristics")
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

    func discoverDescriptors(central: UUID, characteristic: RemoteCharacteristic) throws -> [RemoteDescriptor] {
        _ = try requireLink(central: central, peripheral: characteristic.peripheral, "discoverDescriptors")
        _ = try requireCurrent(characteristic)
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

    func setNotifyValue(central: UUID, characteristic: RemoteCharacteristic, enabled: Bool) throws {
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

    func readRSSI(central: UUID, peripheral: UUID) throws -> Int {
        _ = try requireLink(central: central, peripheral: peripheral, "readRSSI")
        let rssi = world.peripherals[peripheral]!.configuration.rssi
        world.record(.rssiRead, central: central, peripheral: peripheral, detail: "rssi=\(rssi)")
        return rssi
    }

    func maximumWriteValueLength(central: UUID, peripheral: UUID, type: WriteType) throws -> Int {
        let link = try requireLink(central: central, peripheral: peripheral, "maximumWriteValueLength")
        return type == .withResponse ? GATTDatabase.maximumValueLength : link.mtu - 3
    }

    func canSendWriteWithoutResponse(central: UUID, peripheral: UUID) -> Bool {
        world.links[LinkKey(central: central, peripheral: peripheral)] != nil
    }
}
