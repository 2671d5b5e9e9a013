#if canImport(CoreBluetooth)
    import CoreBluetooth

    extension AdvertisementData {
        /// Creates advertisement data from the dictionary CoreBluetooth passes to
        /// `centralManager(_:didDiscover:advertisementData:rssi:)`. Keys it does not know and
        /// values of unexpected types are ignored.
        public init(_ dictionary: [String: Any]) {
            func uuids(_ key: String) -> [BluetoothUUID] {
                (dictionary[key] as? [CBUUID])?.map(BluetoothUUID.init) ?? []
            }
            var serviceData: [BluetoothUUID: Data] = [:]
            for (uuid, data) in dictionary[CBAdvertisementDataServiceDataKey] as? [CBUUID: Data] ?? [:] {
                serviceData[BluetoothUUID(uuid)] = data
            }
            self.init(
                localName: dictionary[CBAdvertisementDataLocalNameKey] as? String,
                serviceUUIDs: uuids(CBAdvertisementDataServiceUUIDsKey),
                overflowServiceUUIDs: uuids(CBAdvertisementDataOverflowServiceUUIDsKey),
                solicitedServiceUUIDs: uuids(CBAdvertisementDataSolicitedServiceUUIDsKey),
                manufacturerData: dictionary[CBAdvertisementDataManufacturerDataKey] as? Data,
                serviceData: serviceData,
                txPowerLevel: (dictionary[CBAdvertisementDataTxPowerLevelKey] as? NSNumber)?.intValue,
                isConnectable: (dictionary[CBAdvertisementDataIsConnectable] as? NSNumber)?.boolValue)
        }

        /// The advertisement as a CoreBluetooth dictionary, with a key for each present field.
        ///
        /// `CBPeripheralManager.startAdvertising(_:)` honours only the local name and service
        /// UUIDs; the other keys are what a central receives.
        public var coreBluetoothDictionary: [String: Any] {
            var dictionary: [String: Any] = [:]
            if let localName { dictionary[CBAdvertisementDataLocalNameKey] = localName }
            if !serviceUUIDs.isEmpty { dictionary[CBAdvertisementDataServiceUUIDsKey] = serviceUUIDs.map(\.cbUUID) }
            if !overflowServiceUUIDs.isEmpty {
                dictionary[CBAdvertisementDataOverflowServiceUUIDsKey] = overflowServiceUUIDs.map(\.cbUUID)
            }
            if !solicitedServiceUUIDs.isEmpty {
                dictionary[CBAdvertisementDataSolicitedServiceUUIDsKey] = solicitedServiceUUIDs.map(\.cbUUID)
            }
            if let manufacturerData { dictionary[CBAdvertisementDataManufacturerDataKey] = manufacturerData }
            if !serviceData.isEmpty {
                var cbServiceData: [CBUUID: Data] = [:]
                for (uuid, data) in serviceData { cbServiceData[uuid.cbUUID] = data }
                dictionary[CBAdvertisementDataServiceDataKey] = cbServiceData
            }
            if let txPowerLevel { dictionary[CBAdvertisementDataTxPowerLevelKey] = NSNumber(value: txPowerLevel) }
            if let isConnectable { dictionary[CBAdvertisementDataIsConnectable] = NSNumber(value: isConnectable) }
            return dictionary
        }
    }
#endif
