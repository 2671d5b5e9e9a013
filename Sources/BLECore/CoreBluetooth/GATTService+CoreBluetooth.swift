#if canImport(CoreBluetooth)
    import CoreBluetooth

    extension GATTService {
        /// Creates the equivalent `CBMutableService`, with its characteristics and descriptors.
        ///
        /// - Parameter includedServices: services already created for this database, by UUID;
        ///   each UUID in ``includedServices`` found here is set as an included service.
        public func makeMutableService(includedServices lookup: [BluetoothUUID: CBService] = [:]) -> CBMutableService {
            let service = CBMutableService(type: uuid.cbUUID, primary: isPrimary)
            service.characteristics = characteristics.map { $0.makeMutableCharacteristic() }
            let included = includedServices.compactMap { lookup[$0] }
            if !included.isEmpty { service.includedServices = included }
            return service
        }
    }

    extension GATTCharacteristic {
        /// Creates the equivalent `CBMutableCharacteristic` with its descriptors.
        public func makeMutableCharacteristic() -> CBMutableCharacteristic {
            let characteristic = CBMutableCharacteristic(
                type: uuid.cbUUID, properties: properties.cbProperties, value: value,
                permissions: permissions.cbPermissions)
            if !descriptors.isEmpty {
                characteristic.descriptors = descriptors.map { $0.makeMutableDescriptor() }
            }
            return characteristic
        }
    }

    extension GATTDescriptor {
        /// Creates the equivalent `CBMutableDescriptor`. CoreBluetooth expects a string for the
        /// User Description (`2901`) and data for other descriptors; the value is converted so.
        public func makeMutableDescriptor() -> CBMutableDescriptor {
            CBMutableDescriptor(type: uuid.cbUUID, value: coreBluetoothValue)
        }
    }
#endif
