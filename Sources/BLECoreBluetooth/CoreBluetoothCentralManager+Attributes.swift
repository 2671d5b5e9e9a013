#if canImport(CoreBluetooth)
    import BLECore
    @preconcurrency import CoreBluetooth

    /// A peripheral this central knows, and the numbers of its discovered attributes.
    struct PeripheralRecord {
        /// The CoreBluetooth peripheral, kept alive here (CoreBluetooth releases peripherals
        /// nobody retains).
        let peripheral: CBPeripheral
        /// The numbers standing in for the handles of its services, characteristics and
        /// descriptors (see ``AttributeNumbering``).
        var numbering = AttributeNumbering<CBAttribute>()
    }

    extension CoreBluetoothCentralManager {
        /// Remembers a peripheral (and becomes its delegate) and returns its value.
        func register(_ peripheral: CBPeripheral) -> RemotePeripheral {
            if peripherals[peripheral.identifier] == nil {
                peripheral.delegate = delegate
                peripherals[peripheral.identifier] = PeripheralRecord(peripheral: peripheral)
            }
            return remote(peripheral)
        }

        func remote(_ peripheral: CBPeripheral) -> RemotePeripheral {
            RemotePeripheral(identifier: peripheral.identifier, name: peripheral.name)
        }

        func record(for identifier: UUID) throws -> PeripheralRecord {
            guard let record = peripherals[identifier] else { throw CoreBluetoothError(.unknownDevice) }
            return record
        }

        /// The peripheral of an operation that needs a link: powered on, known and connected.
        func connectedPeripheral(_ identifier: UUID, for operation: String) throws -> CBPeripheral {
            try requirePoweredOn(operation)
            let peripheral = try record(for: identifier).peripheral
            guard peripheral.state == .connected else { throw CoreBluetoothError(.notConnected) }
            return peripheral
        }

        /// The number of an attribute, assigning the next one on first sight.
        func number(of attribute: CBAttribute, on peripheral: UUID) -> UInt16? {
            peripherals[peripheral]?.numbering.number(for: attribute)
        }

        /// The CoreBluetooth object a value's handle stands for, or
        /// `CoreBluetoothError.Code.invalidHandle` when it is stale or of another kind.
        func attribute<Attribute: CBAttribute>(_ type: Attribute.Type, numbered handle: UInt16, on peripheral: UUID)
            throws -> Attribute
        {
            guard let attribute = try record(for: peripheral).numbering.object(numbered: handle) as? Attribute else {
                throw CoreBluetoothError(.invalidHandle)
            }
            return attribute
        }

        func remoteService(_ service: CBService, on peripheral: UUID) -> RemoteService? {
            guard let handle = number(of: service, on: peripheral) else { return nil }
            return RemoteService(
                peripheral: peripheral, uuid: BluetoothUUID(service.uuid), isPrimary: service.isPrimary, handle: handle,
                endHandle: handle)
        }

        func remoteCharacteristic(_ characteristic: CBCharacteristic, on peripheral: UUID) -> RemoteCharacteristic? {
            guard let cbService = characteristic.service, let service = remoteService(cbService, on: peripheral),
                let handle = number(of: characteristic, on: peripheral)
            else { return nil }
            return RemoteCharacteristic(
                service: service, uuid: BluetoothUUID(characteristic.uuid),
                properties: CharacteristicProperties(characteristic.properties), handle: handle)
        }

        func remoteDescriptor(_ descriptor: CBDescriptor, on peripheral: UUID) -> RemoteDescriptor? {
            guard let cbCharacteristic = descriptor.characteristic,
                let characteristic = remoteCharacteristic(cbCharacteristic, on: peripheral),
                let handle = number(of: descriptor, on: peripheral)
            else { return nil }
            return RemoteDescriptor(
                characteristic: characteristic, uuid: BluetoothUUID(descriptor.uuid), handle: handle)
        }

        /// Forgets invalidated services with their characteristics and descriptors.
        func forget(_ services: [CBService], on peripheral: UUID) {
            var objects: [CBAttribute] = []
            for service in services {
                objects.append(service)
                for characteristic in service.characteristics ?? [] {
                    objects.append(characteristic)
                    objects.append(contentsOf: characteristic.descriptors ?? [])
                }
            }
            peripherals[peripheral]?.numbering.forget(objects)
        }

        /// Keeps the services whose UUID is in `uuids` (all when `uuids` is `nil`).
        func filter<Value>(_ values: [Value], uuids: [BluetoothUUID]?, uuid: (Value) -> BluetoothUUID) -> [Value] {
            guard let uuids else { return values }
            return values.filter { uuids.contains(uuid($0)) }
        }
    }
#endif
