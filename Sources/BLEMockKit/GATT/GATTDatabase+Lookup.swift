import BLECore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

extension GATTDatabase {
    /// Where a characteristic lives: indices into ``services`` and its characteristics.
    struct Location: Hashable, Sendable {
        var service: Int
        var characteristic: Int
    }

    /// Finds the characteristic whose value handle is `handle`.
    func location(ofValueHandle handle: UInt16) -> Location? {
        for (serviceIndex, service) in services.enumerated()
        where service.local.handle <= handle && handle <= service.local.endHandle {
            if let index = service.characteristics.firstIndex(where: { $0.local.handle == handle }) {
                return Location(service: serviceIndex, characteristic: index)
            }
        }
        return nil
    }

    /// The characteristic with this value handle.
    func characteristic(at handle: UInt16) -> Characteristic? {
        location(ofValueHandle: handle).map { services[$0.service].characteristics[$0.characteristic] }
    }

    /// The published form of the characteristic with this value handle (without copying its
    /// value and descriptors).
    func localCharacteristic(at handle: UInt16) -> LocalCharacteristic? {
        location(ofValueHandle: handle).map { services[$0.service].characteristics[$0.characteristic].local }
    }

    /// The characteristic owning a descriptor handle (CCCD or other), with the descriptor
    /// (`nil` for the CCCD).
    func descriptorOwner(handle: UInt16) -> (characteristic: Characteristic, descriptor: Descriptor?)? {
        for service in services where service.local.handle <= handle && handle <= service.local.endHandle {
            for characteristic in service.characteristics {
                if characteristic.cccdHandle == handle { return (characteristic, nil) }
                if let descriptor = characteristic.descriptors.first(where: { $0.handle == handle }) {
                    return (characteristic, descriptor)
                }
            }
        }
        return nil
    }

    /// Sets the current value of a characteristic (the value an automatic responder serves).
    mutating func setValue(_ value: Data, at handle: UInt16) {
        guard let location = location(ofValueHandle: handle) else { return }
        services[location.service].characteristics[location.characteristic].value = value
    }

    // MARK: Discovery, as a central sees it

    /// Primary services, all or those with the given UUIDs, in handle order.
    func primaryServices(matching uuids: [BluetoothUUID]?, peripheral: UUID) -> [RemoteService] {
        services.filter { $0.local.isPrimary && (uuids?.contains($0.local.uuid) ?? true) }
            .map { remote($0.local, peripheral: peripheral) }
    }

    /// How many entries a discovery of the primary services (all, or those with the given
    /// UUIDs) lists, and whether one has a 128-bit UUID: what its exchanges are planned from,
    /// without building what it finds.
    func primaryServiceEntries(matching uuids: [BluetoothUUID]?) -> (count: Int, hasLongUUID: Bool) {
        var count = 0
        var hasLongUUID = false
        for service in services where service.local.isPrimary && (uuids?.contains(service.local.uuid) ?? true) {
            count += 1
            hasLongUUID = hasLongUUID || service.local.uuid.width == .bits128
        }
        return (count, hasLongUUID)
    }

    /// How many characteristic declarations the service at `handle` has, and whether one has a
    /// 128-bit UUID (`nil` for no such service).
    func characteristicEntries(of handle: UInt16) -> (count: Int, hasLongUUID: Bool)? {
        guard let service = services.first(where: { $0.local.handle == handle }) else { return nil }
        return (
            service.characteristics.count,
            service.characteristics.contains { $0.local.uuid.width == .bits128 }
        )
    }

    /// How many descriptors a characteristic has, the stack-managed CCCD included (`nil` when
    /// it is not in this database).
    func descriptorCount(of characteristic: RemoteCharacteristic) -> Int? {
        guard let location = location(ofValueHandle: characteristic.handle) else { return nil }
        let record = services[location.service].characteristics[location.characteristic]
        return (record.cccdHandle == nil ? 0 : 1) + record.descriptors.count
    }

    /// The services included by the service at `handle`.
    func includedServices(of handle: UInt16, matching uuids: [BluetoothUUID]?, peripheral: UUID) -> [RemoteService]? {
        guard let service = services.first(where: { $0.local.handle == handle }) else { return nil }
        return service.local.includedServiceHandles.compactMap { included in
            services.first { $0.local.handle == included }
        }
        .filter { uuids?.contains($0.local.uuid) ?? true }
        .map { remote($0.local, peripheral: peripheral) }
    }

    /// The characteristics of the service at `handle`, all or those with the given UUIDs.
    func characteristics(of handle: UInt16, matching uuids: [BluetoothUUID]?, peripheral: UUID)
        -> [RemoteCharacteristic]?
    {
        guard let service = services.first(where: { $0.local.handle == handle }) else { return nil }
        let remoteService = remote(service.local, peripheral: peripheral)
        var found: [RemoteCharacteristic] = []
        found.reserveCapacity(service.characteristics.count)
        for characteristic in service.characteristics where uuids?.contains(characteristic.local.uuid) ?? true {
            found.append(
                RemoteCharacteristic(
                    service: remoteService, uuid: characteristic.local.uuid,
                    properties: characteristic.local.properties, handle: characteristic.local.handle))
        }
        return found
    }

    /// The descriptors of a characteristic, including the stack-managed CCCD, in handle order.
    func descriptors(of characteristic: RemoteCharacteristic) -> [RemoteDescriptor]? {
        guard let record = self.characteristic(at: characteristic.handle) else { return nil }
        var result: [RemoteDescriptor] = []
        result.reserveCapacity((record.cccdHandle == nil ? 0 : 1) + record.descriptors.count)
        if let cccd = record.cccdHandle {
            result.append(
                RemoteDescriptor(characteristic: characteristic, uuid: .clientCharacteristicConfiguration, handle: cccd)
            )
        }
        result += record.descriptors.map {
            RemoteDescriptor(characteristic: characteristic, uuid: $0.uuid, handle: $0.handle)
        }
        return result
    }

    /// Whether a central's reference still names the same attribute in this database.
    func isCurrent(_ characteristic: RemoteCharacteristic) -> Bool {
        guard let record = self.characteristic(at: characteristic.handle) else { return false }
        return record.local.uuid == characteristic.uuid && record.local.serviceHandle == characteristic.service.handle
    }

    private func remote(_ local: LocalService, peripheral: UUID) -> RemoteService {
        RemoteService(
            peripheral: peripheral, uuid: local.uuid, isPrimary: local.isPrimary, handle: local.handle,
            endHandle: local.endHandle)
    }
}
