#if canImport(CoreBluetooth)
    import BLECore
    @preconcurrency import CoreBluetooth

    extension CoreBluetoothPeripheralManager {
        /// Publishes a service: builds its `CBMutableService`, numbers it (see the type's
        /// documentation), and returns once CoreBluetooth confirmed it in `didAdd`.
        public func add(_ service: GATTService) async throws -> LocalService {
            try requirePoweredOn("add")
            var lookup: [BluetoothUUID: CBService] = [:]
            for entry in published.values { lookup[entry.local.uuid] = entry.service }
            for included in service.includedServices where lookup[included] == nil {
                throw APIMisuseError.invalidService(service.uuid, reason: .includedServiceNotPublished(included))
            }
            let cbService = service.makeMutableService(includedServices: lookup)
            let (local, objects) = try number(cbService, describing: service)
            do {
                try await operations.wait(for: .add(service: local.handle)) { manager.add(cbService) }
            } catch {
                numbering.forget(objects)
                throw error
            }
            published[local.handle] = Published(service: cbService, local: local)
            for (object, characteristic) in zip(cbService.characteristics ?? [], local.characteristics) {
                guard let object = object as? CBMutableCharacteristic else { continue }
                localCharacteristics[characteristic.handle] = (object, characteristic)
            }
            return local
        }

        public func remove(_ service: LocalService) async throws {
            guard let entry = published[service.handle], entry.local == service else {
                throw APIMisuseError.serviceNotPublished(service.uuid, handle: service.handle)
            }
            manager.remove(entry.service)
            forget(entry)
        }

        public func removeAllServices() async {
            manager.removeAllServices()
            for entry in published.values { forget(entry) }
        }

        /// Numbers a new service, its characteristics and their descriptors, in that order.
        func number(_ cbService: CBMutableService, describing service: GATTService) throws -> (
            LocalService, [CBAttribute]
        ) {
            var objects: [CBAttribute] = []
            func next(_ object: CBAttribute) throws -> UInt16 {
                guard let number = numbering.number(for: object) else {
                    numbering.forget(objects)
                    throw APIMisuseError.invalidService(service.uuid, reason: .outOfHandles)
                }
                objects.append(object)
                return number
            }
            let serviceHandle = try next(cbService)
            var characteristics: [LocalCharacteristic] = []
            for (object, description) in zip(cbService.characteristics ?? [], service.characteristics) {
                let handle = try next(object)
                for descriptor in object.descriptors ?? [] { _ = try next(descriptor) }
                characteristics.append(
                    LocalCharacteristic(
                        serviceUUID: service.uuid, serviceHandle: serviceHandle, uuid: description.uuid,
                        properties: description.properties, permissions: description.permissions, handle: handle))
            }
            let includedHandles = service.includedServices.compactMap { uuid in
                published.values.first { $0.local.uuid == uuid }?.local.handle
            }
            let local = LocalService(
                uuid: service.uuid, isPrimary: service.isPrimary, handle: serviceHandle,
                endHandle: numbering.existingNumber(for: objects.last!) ?? serviceHandle,
                includedServiceHandles: includedHandles, characteristics: characteristics)
            return (local, objects)
        }

        /// Forgets a published service and everything numbered for it.
        func forget(_ entry: Published) {
            published[entry.local.handle] = nil
            var objects: [CBAttribute] = [entry.service]
            for characteristic in entry.local.characteristics {
                guard let object = localCharacteristics.removeValue(forKey: characteristic.handle)?.object else {
                    continue
                }
                objects.append(object)
                objects.append(contentsOf: object.descriptors ?? [])
            }
            numbering.forget(objects)
        }

        /// The published characteristic a CoreBluetooth request or subscription names.
        func local(_ characteristic: CBCharacteristic) -> LocalCharacteristic? {
            numbering.existingNumber(for: characteristic).flatMap { localCharacteristics[$0]?.local }
        }
    }
#endif
