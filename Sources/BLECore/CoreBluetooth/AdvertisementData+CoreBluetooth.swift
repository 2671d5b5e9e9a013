#if canImport(CoreBluetooth)
    import CoreBluetooth

    extension AdvertisementDictionaryKeys {
        /// CoreBluetooth's own key constants.
        package static let framework = AdvertisementDictionaryKeys(
            localName: CBAdvertisementDataLocalNameKey, txPowerLevel: CBAdvertisementDataTxPowerLevelKey,
            serviceUUIDs: CBAdvertisementDataServiceUUIDsKey, serviceData: CBAdvertisementDataServiceDataKey,
            manufacturerData: CBAdvertisementDataManufacturerDataKey,
            overflowServiceUUIDs: CBAdvertisementDataOverflowServiceUUIDsKey,
            isConnectable: CBAdvertisementDataIsConnectable,
            solicitedServiceUUIDs: CBAdvertisementDataSolicitedServiceUUIDsKey)
    }

    extension AdvertisementData {
        /// Creates advertisement data from the dictionary CoreBluetooth passes to
        /// `centralManager(_:didDiscover:advertisementData:rssi:)`. Keys it does not know and
        /// values of unexpected types are ignored.
        public init(_ dictionary: [String: Any]) {
            self.init(dictionary: dictionary, keys: .framework) { (uuid: CBUUID) in BluetoothUUID(uuid) }
        }

        /// The advertisement as a CoreBluetooth dictionary, with a key for each present field.
        ///
        /// `CBPeripheralManager.startAdvertising(_:)` honours only the local name and service
        /// UUIDs; the other keys are what a central receives.
        public var coreBluetoothDictionary: [String: Any] { dictionary(keys: .framework) { $0.cbUUID } }
    }
#endif
