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

    /// The exchanges a discovery of the primary services takes at `mtu`, counted without
    /// building what it finds.
    ///
    /// All of them (`uuids` `nil`; Vol 3, Part G, 4.4.1): Read By Group Type responses, each
    /// listing as many services as fit whose UUIDs have one size (a response's entries share one
    /// length, Vol 3, Part F, 3.4.4.10: a 16-bit UUID makes an entry of 6 bytes, a 128-bit one of
    /// 20), and a last request answered "attribute not found". (A 32-bit UUID crosses as 128
    /// bits: see `BluetoothUUID.travelsAs128Bits`.)
    ///
    /// Those with the given UUIDs: a Discover Primary Service by Service UUID for each UUID, once
    /// (Vol 3, Part G, 4.4.2): Find By Type Value responses listing the handle ranges of that
    /// UUID's services, as many as fit in ATT_MTU − 1 bytes (4 bytes each, Vol 3, Part F,
    /// 3.4.3.4), and a last request answered "attribute not found" (the only exchange when there
    /// are none). A Read By Group Type request names no UUID to filter by, so its responses
    /// cannot list some services only.
    func primaryServiceExchanges(matching uuids: [BluetoothUUID]?, mtu: Int) -> Int {
        guard let uuids else {
            var responses = GATTProcedure.Responses(mtu: mtu)
            for service in services where service.local.isPrimary {
                responses.add(entryOf: service.local.uuid.travelsAs128Bits ? 20 : 6)
            }
            return responses.count + 1
        }
        let rangesPerResponse = (mtu - 1) / 4
        var exchanges = 0
        for (index, uuid) in uuids.enumerated() where !uuids[..<index].contains(uuid) {
            var found = 0
            for service in services where service.local.isPrimary && service.local.uuid == uuid { found += 1 }
            exchanges += (found + rangesPerResponse - 1) / rangesPerResponse + 1
        }
        return exchanges
    }

    /// The exchanges a discovery of the characteristics of the service at `handle` takes at
    /// `mtu` (`nil` for no such service): Read By Type responses of characteristic declarations
    /// of one UUID size each (7 bytes an entry with a 16-bit UUID, 21 with a 128-bit one), and a
    /// last request answered "attribute not found" (the only exchange for a service with nothing
    /// after its declaration: the range asked for starts at the declaration, Vol 3, Part G, 4.6.1).
    func characteristicExchanges(of handle: UInt16, mtu: Int) -> Int? {
        guard let service = services.first(where: { $0.local.handle == handle }) else { return nil }
        var responses = GATTProcedure.Responses(mtu: mtu)
        for characteristic in service.characteristics {
            responses.add(entryOf: characteristic.local.uuid.travelsAs128Bits ? 21 : 7)
        }
        return responses.count + 1
    }

    /// The exchanges a discovery of the services the service at `handle` includes takes at `mtu`
    /// (`nil` for no such service; Vol 3, Part G, 4.5.1): Read By Type responses of include
    /// declarations of one size each (8 bytes with the included service's 16-bit UUID, 6
    /// without a 128-bit one, which a Read of the included service's declaration then fetches),
    /// and a last request answered "attribute not found" unless the last include ends the
    /// service (the only exchange for a service with nothing after its declaration: the range
    /// asked for starts at the declaration).
    func includedServiceExchanges(of handle: UInt16, mtu: Int) -> Int? {
        guard let service = services.first(where: { $0.local.handle == handle }) else { return nil }
        var responses = GATTProcedure.Responses(mtu: mtu)
        var reads = 0
        for included in service.local.includedServiceHandles {
            let isLong = services.first { $0.local.handle == included }?.local.uuid.travelsAs128Bits == true
            responses.add(entryOf: isLong ? 6 : 8)
            if isLong { reads += 1 }
        }
        // The includes sit right after the declaration: the last one ends a service with no
        // characteristics, and the client stops there.
        let endsService = service.characteristics.isEmpty && !service.local.includedServiceHandles.isEmpty
        return responses.count + reads + (endsService ? 0 : 1)
    }

    /// The exchanges a discovery of a characteristic's descriptors takes at `mtu` (`nil` when
    /// it is not in this database): Find Information responses of descriptors of one UUID size
    /// each (4 bytes with a 16-bit UUID, 18 with a 128-bit one), the stack-managed CCCD first;
    /// no last request, as the last descriptor ends the range the client asks for (Vol 3,
    /// Part G, 4.7.1), and none at all for a characteristic without descriptors.
    func descriptorExchanges(of characteristic: RemoteCharacteristic, mtu: Int) -> Int? {
        guard let location = location(ofValueHandle: characteristic.handle) else { return nil }
        let record = services[location.service].characteristics[location.characteristic]
        var responses = GATTProcedure.Responses(mtu: mtu)
        if record.cccdHandle != nil { responses.add(entryOf: 4) }
        for descriptor in record.descriptors { responses.add(entryOf: descriptor.uuid.travelsAs128Bits ? 18 : 4) }
        return responses.count
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
                    properties: characteristic.local.properties.declared, handle: characteristic.local.handle))
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

extension BluetoothUUID {
    /// Whether ATT carries this UUID in 128 bits: every UUID without a 16-bit form, a 32-bit
    /// one too, which ATT widens to 128 bits wherever a PDU carries it (Core specification,
    /// Vol 3, Part F, 3.2.1).
    var travelsAs128Bits: Bool { width != .bits16 }
}
