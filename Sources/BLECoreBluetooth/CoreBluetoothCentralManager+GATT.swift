#if canImport(CoreBluetooth)
    import BLECore
    @preconcurrency import CoreBluetooth

    extension CoreBluetoothCentralManager {
        public func discoverServices(_ serviceUUIDs: [BluetoothUUID]?, for peripheral: UUID) async throws
            -> [RemoteService]
        {
            let cbPeripheral = try connectedPeripheral(peripheral, for: "discoverServices")
            try await operations.wait(for: .discoverServices(peripheral: peripheral)) {
                cbPeripheral.discoverServices(serviceUUIDs?.map(\.cbUUID))
            }
            return filter(services(of: peripheral), uuids: serviceUUIDs, uuid: \.uuid)
        }

        public func discoverIncludedServices(_ serviceUUIDs: [BluetoothUUID]?, for service: RemoteService)
            async throws -> [RemoteService]
        {
            let cbPeripheral = try connectedPeripheral(service.peripheral, for: "discoverIncludedServices")
            let cbService = try attribute(CBService.self, numbered: service.handle, on: service.peripheral)
            try await operations.wait(
                for: .discoverIncludedServices(peripheral: service.peripheral, service: service.handle)
            ) {
                cbPeripheral.discoverIncludedServices(serviceUUIDs?.map(\.cbUUID), for: cbService)
            }
            let included = (cbService.includedServices ?? []).compactMap { remoteService($0, on: service.peripheral) }
            return filter(included, uuids: serviceUUIDs, uuid: \.uuid)
        }

        public func discoverCharacteristics(_ characteristicUUIDs: [BluetoothUUID]?, for service: RemoteService)
            async throws -> [RemoteCharacteristic]
        {
            let cbPeripheral = try connectedPeripheral(service.peripheral, for: "discoverCharacteristics")
            let cbService = try attribute(CBService.self, numbered: service.handle, on: service.peripheral)
            try await operations.wait(
                for: .discoverCharacteristics(peripheral: service.peripheral, service: service.handle)
            ) {
                cbPeripheral.discoverCharacteristics(characteristicUUIDs?.map(\.cbUUID), for: cbService)
            }
            return filter(characteristics(of: service), uuids: characteristicUUIDs, uuid: \.uuid)
        }

        public func discoverDescriptors(for characteristic: RemoteCharacteristic) async throws -> [RemoteDescriptor] {
            let peripheral = characteristic.peripheral
            let cbPeripheral = try connectedPeripheral(peripheral, for: "discoverDescriptors")
            let cbCharacteristic = try attribute(CBCharacteristic.self, numbered: characteristic.handle, on: peripheral)
            try await operations.wait(
                for: .discoverDescriptors(peripheral: peripheral, characteristic: characteristic.handle)
            ) {
                cbPeripheral.discoverDescriptors(for: cbCharacteristic)
            }
            return (cbCharacteristic.descriptors ?? []).compactMap { remoteDescriptor($0, on: peripheral) }
        }

        public func services(of peripheral: UUID) -> [RemoteService] {
            (peripherals[peripheral]?.peripheral.services ?? []).compactMap { remoteService($0, on: peripheral) }
        }

        public func characteristics(of service: RemoteService) -> [RemoteCharacteristic] {
            guard let cbService = try? attribute(CBService.self, numbered: service.handle, on: service.peripheral)
            else { return [] }
            return (cbService.characteristics ?? []).compactMap { remoteCharacteristic($0, on: service.peripheral) }
        }

        public func readValue(for characteristic: RemoteCharacteristic) async throws -> Data {
            let peripheral = characteristic.peripheral
            let cbPeripheral = try connectedPeripheral(peripheral, for: "readValue")
            let cbCharacteristic = try attribute(CBCharacteristic.self, numbered: characteristic.handle, on: peripheral)
            return try await reads.wait(
                for: .readCharacteristic(peripheral: peripheral, characteristic: characteristic.handle)
            ) {
                cbPeripheral.readValue(for: cbCharacteristic)
            }
        }

        public func readValue(for descriptor: RemoteDescriptor) async throws -> Data {
            let peripheral = descriptor.peripheral
            let cbPeripheral = try connectedPeripheral(peripheral, for: "readValue")
            let cbDescriptor = try attribute(CBDescriptor.self, numbered: descriptor.handle, on: peripheral)
            return try await reads.wait(for: .readDescriptor(peripheral: peripheral, descriptor: descriptor.handle)) {
                cbPeripheral.readValue(for: cbDescriptor)
            }
        }

        /// Writes a value. Without response, the write is handed to CoreBluetooth and the call
        /// returns at once (check ``canSendWriteWithoutResponse(to:)`` first: CoreBluetooth drops
        /// writes while its queue is full).
        public func writeValue(_ value: Data, for characteristic: RemoteCharacteristic, type: WriteType) async throws {
            let peripheral = characteristic.peripheral
            let cbPeripheral = try connectedPeripheral(peripheral, for: "writeValue")
            let cbCharacteristic = try attribute(CBCharacteristic.self, numbered: characteristic.handle, on: peripheral)
            guard type == .withResponse else {
                // To a characteristic without the property, CoreBluetooth logs a warning and
                // sends nothing; the mock records that as a misuse.
                cbPeripheral.writeValue(value, for: cbCharacteristic, type: .withoutResponse)
                return
            }
            try await operations.wait(
                for: .writeCharacteristic(peripheral: peripheral, characteristic: characteristic.handle)
            ) {
                cbPeripheral.writeValue(value, for: cbCharacteristic, type: .withResponse)
            }
        }

        public func writeValue(_ value: Data, for descriptor: RemoteDescriptor) async throws {
            let peripheral = descriptor.peripheral
            let cbPeripheral = try connectedPeripheral(peripheral, for: "writeValue")
            let cbDescriptor = try attribute(CBDescriptor.self, numbered: descriptor.handle, on: peripheral)
            // CoreBluetooth raises an exception for this; the kit throws.
            guard descriptor.uuid != .clientCharacteristicConfiguration else {
                throw APIMisuseError.clientConfigurationWrite(
                    characteristic: descriptor.characteristic.uuid, handle: descriptor.characteristic.handle)
            }
            try await operations.wait(for: .writeDescriptor(peripheral: peripheral, descriptor: descriptor.handle)) {
                cbPeripheral.writeValue(value, for: cbDescriptor)
            }
        }

        public func setNotifyValue(_ enabled: Bool, for characteristic: RemoteCharacteristic) async throws {
            let peripheral = characteristic.peripheral
            let cbPeripheral = try connectedPeripheral(peripheral, for: "setNotifyValue")
            let cbCharacteristic = try attribute(CBCharacteristic.self, numbered: characteristic.handle, on: peripheral)
            try await operations.wait(
                for: .setNotifyValue(peripheral: peripheral, characteristic: characteristic.handle)
            ) {
                cbPeripheral.setNotifyValue(enabled, for: cbCharacteristic)
            }
        }

        public func readRSSI(for peripheral: UUID) async throws -> Int {
            let cbPeripheral = try connectedPeripheral(peripheral, for: "readRSSI")
            return try await rssiReads.wait(for: .readRSSI(peripheral: peripheral)) { cbPeripheral.readRSSI() }
        }

        public func maximumWriteValueLength(for peripheral: UUID, type: WriteType) throws -> Int {
            try connectedPeripheral(peripheral, for: "maximumWriteValueLength").maximumWriteValueLength(
                for: type.cbWriteType)
        }

        public func canSendWriteWithoutResponse(to peripheral: UUID) -> Bool {
            peripherals[peripheral]?.peripheral.canSendWriteWithoutResponse ?? false
        }
    }
#endif
