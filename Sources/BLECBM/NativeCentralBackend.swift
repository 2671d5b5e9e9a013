#if canImport(CoreBluetooth)
    import BLECore
    import BLEMockKit
    import CoreBluetooth
    import Foundation

    /// A ``CBMCentralManager`` on CoreBluetooth itself (Apple platforms, outside any bridge
    /// scope): every call forwards to a `CBCentralManager`, and every CoreBluetooth callback
    /// updates the mirrored objects and calls the app's delegate, on the app's queue.
    ///
    /// CoreBluetooth does not expose attribute handles; each service, characteristic and
    /// descriptor object gets a number of its own (in discovery order) to key the mirror.
    final class NativeCentralBackend: NSObject, CentralBackend, CBCentralManagerDelegate, CBPeripheralDelegate,
        @unchecked Sendable
    {
        // @unchecked Sendable: the mirror tables are only read and written with `lock` held;
        // `central` is set once in init; CoreBluetooth calls back on `queue`.
        private var central: CBCentralManager!
        let lock = Lock()
        private weak var manager: CBMCentralManager?
        private var storedRecording: CentralRecording?
        private var peripherals: [UUID: (native: CBPeripheral, object: CBMPeripheral)] = [:]
        private var objects: [ObjectIdentifier: AnyObject] = [:]
        private var natives: [ObjectIdentifier: AnyObject] = [:]
        private var nextHandle: UInt16 = 1

        init(queue: DispatchQueue?, options: [String: Any]?) {
            super.init()
            central = CBCentralManager(delegate: self, queue: queue, options: options)
        }

        func attach(_ manager: CBMCentralManager) { lock.withLock { self.manager = manager } }

        // MARK: The mirror

        /// The object for a CoreBluetooth peripheral (the same one each time).
        private func object(for native: CBPeripheral) -> CBMPeripheral {
            lock.withLock {
                if let known = peripherals[native.identifier] {
                    known.object.storedName = native.name
                    return known.object
                }
                let created = CBMPeripheral(
                    RemotePeripheral(identifier: native.identifier, name: native.name), backend: self, lock: lock)
                native.delegate = self
                peripherals[native.identifier] = (native, created)
                return created
            }
        }

        /// With the lock held: the next attribute number.
        private func takeHandle() -> UInt16 {
            defer { nextHandle &+= 1 }
            return nextHandle
        }

        private func object(for service: CBService, of peripheral: CBMPeripheral) -> CBMService {
            lock.withLock {
                if let known = objects[ObjectIdentifier(service)] as? CBMService { return known }
                let handle = takeHandle()
                let created = CBMService(
                    RemoteService(
                        peripheral: peripheral.identifier, uuid: BluetoothUUID(service.uuid),
                        isPrimary: service.isPrimary,
                        handle: handle, endHandle: handle),
                    peripheral: peripheral)
                objects[ObjectIdentifier(service)] = created
                natives[ObjectIdentifier(created)] = service
                peripheral.serviceObjects[handle] = created
                return created
            }
        }

        private func object(for characteristic: CBCharacteristic, in service: CBMService, of peripheral: CBMPeripheral)
            -> CBMCharacteristic
        {
            lock.withLock {
                if let known = objects[ObjectIdentifier(characteristic)] as? CBMCharacteristic { return known }
                let handle = takeHandle()
                let created = CBMCharacteristic(
                    RemoteCharacteristic(
                        service: service.remote, uuid: BluetoothUUID(characteristic.uuid),
                        properties: CharacteristicProperties(rawValue: characteristic.properties.rawValue),
                        handle: handle),
                    service: service)
                objects[ObjectIdentifier(characteristic)] = created
                natives[ObjectIdentifier(created)] = characteristic
                peripheral.characteristicObjects[handle] = created
                return created
            }
        }

        private func object(
            for descriptor: CBDescriptor, in characteristic: CBMCharacteristic, of peripheral: CBMPeripheral
        )
            -> CBMDescriptor
        {
            lock.withLock {
                if let known = objects[ObjectIdentifier(descriptor)] as? CBMDescriptor { return known }
                let handle = takeHandle()
                let created = CBMDescriptor(
                    RemoteDescriptor(
                        characteristic: characteristic.remote, uuid: BluetoothUUID(descriptor.uuid), handle: handle),
                    characteristic: characteristic)
                objects[ObjectIdentifier(descriptor)] = created
                natives[ObjectIdentifier(created)] = descriptor
                peripheral.descriptorObjects[handle] = created
                return created
            }
        }

        private func native<T: AnyObject>(_ object: AnyObject, as type: T.Type) -> T? {
            lock.withLock { natives[ObjectIdentifier(object)] as? T }
        }

        private func nativePeripheral(_ peripheral: CBMPeripheral) -> CBPeripheral? {
            lock.withLock { peripherals[peripheral.identifier]?.native }
        }

        /// The manager's recording state, while it records.
        var recording: CentralRecording? { lock.withLock { storedRecording } }

        func recordingChanged(_ recording: CentralRecording?) {
            lock.withLock { storedRecording = recording }
        }

        private var managerAndDelegate: (CBMCentralManager, any CBMCentralManagerDelegate)? {
            guard let manager = lock.withLock({ manager }), let delegate = manager.deliveryDelegate else { return nil }
            return (manager, delegate)
        }

        // MARK: Manager

        var state: CBMManagerState { CBMManagerState(rawValue: central.state.rawValue) ?? .unknown }

        var authorization: CBMManagerAuthorization { NativeSupport.authorization }

        var isScanning: Bool { central.isScanning }

        func scanForPeripherals(withServices serviceUUIDs: [CBMUUID]?, options: [String: Any]?) {
            var options = options
            if let solicited = options?[CBMCentralManagerScanOptionSolicitedServiceUUIDsKey] as? [CBMUUID] {
                options?[CBMCentralManagerScanOptionSolicitedServiceUUIDsKey] = solicited.map(\.cbUUID)
            }
            central.scanForPeripherals(withServices: serviceUUIDs?.map(\.cbUUID), options: options)
        }

        func stopScan() { central.stopScan() }

        func connect(_ peripheral: CBMPeripheral, options: [String: Any]?) {
            guard let native = nativePeripheral(peripheral) else { return }
            lock.withLock { if peripheral.storedState == .disconnected { peripheral.storedState = .connecting } }
            central.connect(native, options: options)
        }

        func cancelPeripheralConnection(_ peripheral: CBMPeripheral) {
            guard let native = nativePeripheral(peripheral) else { return }
            lock.withLock { if peripheral.storedState == .connected { peripheral.storedState = .disconnecting } }
            central.cancelPeripheralConnection(native)
        }

        func retrievePeripherals(withIdentifiers identifiers: [UUID]) -> [CBMPeripheral] {
            central.retrievePeripherals(withIdentifiers: identifiers).map(object(for:))
        }

        func retrieveConnectedPeripherals(withServices serviceUUIDs: [CBMUUID]) -> [CBMPeripheral] {
            central.retrieveConnectedPeripherals(withServices: serviceUUIDs.map(\.cbUUID)).map(object(for:))
        }

        func registerForConnectionEvents(options: [CBMConnectionEventMatchingOption: Any]?) {
            #if os(iOS) || os(watchOS) || os(tvOS) || os(visionOS)
                var converted: [CBConnectionEventMatchingOption: Any]?
                if let options {
                    var result: [CBConnectionEventMatchingOption: Any] = [:]
                    if let services = options[.serviceUUIDs] as? [CBMUUID] {
                        result[.serviceUUIDs] = services.map(\.cbUUID)
                    }
                    if let identifiers = options[.peripheralUUIDs] as? [UUID] { result[.peripheralUUIDs] = identifiers }
                    converted = result
                }
                central.registerForConnectionEvents(options: converted)
            #endif
        }

        // MARK: Peripheral

        func canSendWriteWithoutResponse(_ peripheral: CBMPeripheral) -> Bool {
            nativePeripheral(peripheral)?.canSendWriteWithoutResponse ?? false
        }

        func maximumWriteValueLength(_ peripheral: CBMPeripheral, type: CBMCharacteristicWriteType) -> Int {
            nativePeripheral(peripheral)?.maximumWriteValueLength(
                for: type == .withResponse ? .withResponse : .withoutResponse)
                ?? CBMPeripheral.maximumWriteValueLengthWithoutLink(for: type)
        }

        func discoverServices(_ uuids: [CBMUUID]?, for peripheral: CBMPeripheral) {
            nativePeripheral(peripheral)?.discoverServices(uuids?.map(\.cbUUID))
        }

        func discoverIncludedServices(_ uuids: [CBMUUID]?, for service: CBMService, of peripheral: CBMPeripheral) {
            guard let native = native(service, as: CBService.self) else { return }
            nativePeripheral(peripheral)?.discoverIncludedServices(uuids?.map(\.cbUUID), for: native)
        }

        func discoverCharacteristics(_ uuids: [CBMUUID]?, for service: CBMService, of peripheral: CBMPeripheral) {
            guard let native = native(service, as: CBService.self) else { return }
            nativePeripheral(peripheral)?.discoverCharacteristics(uuids?.map(\.cbUUID), for: native)
        }

        func discoverDescriptors(for characteristic: CBMCharacteristic, of peripheral: CBMPeripheral) {
            guard let native = native(characteristic, as: CBCharacteristic.self) else { return }
            nativePeripheral(peripheral)?.discoverDescriptors(for: native)
        }

        func readValue(for characteristic: CBMCharacteristic, of peripheral: CBMPeripheral) {
            guard let native = native(characteristic, as: CBCharacteristic.self) else { return }
            nativePeripheral(peripheral)?.readValue(for: native)
        }

        func readValue(for descriptor: CBMDescriptor, of peripheral: CBMPeripheral) {
            guard let native = native(descriptor, as: CBDescriptor.self) else { return }
            nativePeripheral(peripheral)?.readValue(for: native)
        }

        func writeValue(
            _ data: Data, for characteristic: CBMCharacteristic, type: CBMCharacteristicWriteType,
            of peripheral: CBMPeripheral
        ) {
            guard let native = native(characteristic, as: CBCharacteristic.self) else { return }
            nativePeripheral(peripheral)?.writeValue(
                data, for: native, type: type == .withResponse ? .withResponse : .withoutResponse)
        }

        func writeValue(_ data: Data, for descriptor: CBMDescriptor, of peripheral: CBMPeripheral) {
            guard let native = native(descriptor, as: CBDescriptor.self) else { return }
            nativePeripheral(peripheral)?.writeValue(data, for: native)
        }

        func setNotifyValue(_ enabled: Bool, for characteristic: CBMCharacteristic, of peripheral: CBMPeripheral) {
            guard let native = native(characteristic, as: CBCharacteristic.self) else { return }
            nativePeripheral(peripheral)?.setNotifyValue(enabled, for: native)
        }

        func readRSSI(of peripheral: CBMPeripheral) { nativePeripheral(peripheral)?.readRSSI() }

        func openL2CAPChannel(_ psm: UInt16, on peripheral: CBMPeripheral) {
            nativePeripheral(peripheral)?.openL2CAPChannel(psm)
        }

        // MARK: CBCentralManagerDelegate

        func centralManagerDidUpdateState(_ central: CBCentralManager) {
            guard let (manager, delegate) = managerAndDelegate else { return }
            delegate.centralManagerDidUpdateState(manager)
        }

        func centralManager(_ central: CBCentralManager, willRestoreState dict: [String: Any]) {
            var converted = dict
            if let restored = dict[CBCentralManagerRestoredStatePeripheralsKey] as? [CBPeripheral] {
                converted[CBMCentralManagerRestoredStatePeripheralsKey] = restored.map(object(for:))
            }
            if let services = dict[CBCentralManagerRestoredStateScanServicesKey] as? [CBUUID] {
                converted[CBMCentralManagerRestoredStateScanServicesKey] = services.map(CBMUUID.init(cbUUID:))
            }
            guard let (manager, delegate) = managerAndDelegate else { return }
            delegate.centralManager(manager, willRestoreState: converted)
        }

        func centralManager(
            _ central: CBCentralManager, didDiscover peripheral: CBPeripheral, advertisementData: [String: Any],
            rssi: NSNumber
        ) {
            let object = object(for: peripheral)
            guard let (manager, delegate) = managerAndDelegate else { return }
            delegate.centralManager(
                manager, didDiscover: object, advertisementData: NativeSupport.advertisement(advertisementData),
                rssi: rssi)
        }

        func centralManager(_ central: CBCentralManager, didConnect peripheral: CBPeripheral) {
            let object = object(for: peripheral)
            lock.withLock { object.storedState = .connected }
            guard let (manager, delegate) = managerAndDelegate else { return }
            delegate.centralManager(manager, didConnect: object)
        }

        func centralManager(_ central: CBCentralManager, didFailToConnect peripheral: CBPeripheral, error: (any Error)?)
        {
            let object = object(for: peripheral)
            lock.withLock { object.storedState = .disconnected }
            guard let (manager, delegate) = managerAndDelegate else { return }
            delegate.centralManager(manager, didFailToConnect: object, error: NativeSupport.bridging(error))
        }

        func centralManager(
            _ central: CBCentralManager, didDisconnectPeripheral peripheral: CBPeripheral, error: (any Error)?
        ) {
            let object = object(for: peripheral)
            lock.withLock {
                object.storedState = .disconnected
                object.storedServices = nil
                object.serviceObjects.removeAll()
                object.characteristicObjects.removeAll()
                object.descriptorObjects.removeAll()
            }
            guard let (manager, delegate) = managerAndDelegate else { return }
            delegate.centralManager(
                manager, didDisconnectPeripheral: object, timestamp: Date().timeIntervalSinceReferenceDate,
                isReconnecting: false, error: NativeSupport.bridging(error))
        }

        func centralManager(
            _ central: CBCentralManager, didUpdateANCSAuthorizationFor peripheral: CBPeripheral
        ) {
            let object = object(for: peripheral)
            #if os(iOS) || os(watchOS) || os(visionOS)
                lock.withLock { object.storedANCSAuthorized = peripheral.ancsAuthorized }
            #endif
            guard let (manager, delegate) = managerAndDelegate else { return }
            delegate.centralManager(manager, didUpdateANCSAuthorizationFor: object)
        }

        // MARK: CBPeripheralDelegate

        func peripheralDidUpdateName(_ peripheral: CBPeripheral) {
            let object = object(for: peripheral)
            object.deliveryDelegate?.peripheralDidUpdateName(object)
        }

        func peripheral(_ peripheral: CBPeripheral, didModifyServices invalidatedServices: [CBService]) {
            let object = object(for: peripheral)
            let gone = invalidatedServices.map { self.object(for: $0, of: object) }
            lock.withLock { object.storedServices?.removeAll { service in gone.contains { $0 === service } } }
            object.deliveryDelegate?.peripheral(object, didModifyServices: gone)
        }

        func peripheral(_ peripheral: CBPeripheral, didReadRSSI rssi: NSNumber, error: (any Error)?) {
            let object = object(for: peripheral)
            if error == nil { lock.withLock { object.storedRSSI = rssi } }
            object.deliveryDelegate?.peripheral(object, didReadRSSI: rssi, error: NativeSupport.bridging(error))
        }

        func peripheral(_ peripheral: CBPeripheral, didDiscoverServices error: (any Error)?) {
            let object = object(for: peripheral)
            let services = (peripheral.services ?? []).map { self.object(for: $0, of: object) }
            lock.withLock { object.storedServices = services }
            object.deliveryDelegate?.peripheral(object, didDiscoverServices: NativeSupport.bridging(error))
        }

        func peripheral(
            _ peripheral: CBPeripheral, didDiscoverIncludedServicesFor service: CBService, error: (any Error)?
        ) {
            let object = object(for: peripheral)
            let parent = self.object(for: service, of: object)
            let included = (service.includedServices ?? []).map { self.object(for: $0, of: object) }
            lock.withLock { parent.mergeIncludedServices(included) }
            object.deliveryDelegate?.peripheral(
                object, didDiscoverIncludedServicesFor: parent, error: NativeSupport.bridging(error))
        }

        func peripheral(
            _ peripheral: CBPeripheral, didDiscoverCharacteristicsFor service: CBService, error: (any Error)?
        ) {
            let object = object(for: peripheral)
            let parent = self.object(for: service, of: object)
            let found = (service.characteristics ?? []).map { self.object(for: $0, in: parent, of: object) }
            lock.withLock { parent.mergeCharacteristics(found) }
            object.deliveryDelegate?.peripheral(
                object, didDiscoverCharacteristicsFor: parent, error: NativeSupport.bridging(error))
        }

        /// The mirrored object of a CoreBluetooth characteristic, with its value and state
        /// brought up to date.
        private func updated(_ characteristic: CBCharacteristic, of peripheral: CBMPeripheral) -> CBMCharacteristic? {
            guard let object = lock.withLock({ objects[ObjectIdentifier(characteristic)] as? CBMCharacteristic }) else {
                return nil
            }
            lock.withLock {
                object.storedValue = characteristic.value
                object.notifying = characteristic.isNotifying
            }
            return object
        }

        func peripheral(
            _ peripheral: CBPeripheral, didUpdateValueFor characteristic: CBCharacteristic, error: (any Error)?
        ) {
            let object = object(for: peripheral)
            guard let mirrored = updated(characteristic, of: object) else { return }
            object.deliveryDelegate?.peripheral(
                object, didUpdateValueFor: mirrored, error: NativeSupport.bridging(error))
        }

        func peripheral(
            _ peripheral: CBPeripheral, didWriteValueFor characteristic: CBCharacteristic, error: (any Error)?
        ) {
            let object = object(for: peripheral)
            guard let mirrored = updated(characteristic, of: object) else { return }
            object.deliveryDelegate?.peripheral(
                object, didWriteValueFor: mirrored, error: NativeSupport.bridging(error))
        }

        func peripheral(
            _ peripheral: CBPeripheral, didUpdateNotificationStateFor characteristic: CBCharacteristic,
            error: (any Error)?
        ) {
            let object = object(for: peripheral)
            guard let mirrored = updated(characteristic, of: object) else { return }
            object.deliveryDelegate?.peripheral(
                object, didUpdateNotificationStateFor: mirrored, error: NativeSupport.bridging(error))
        }

        func peripheral(
            _ peripheral: CBPeripheral, didDiscoverDescriptorsFor characteristic: CBCharacteristic, error: (any Error)?
        ) {
            let object = object(for: peripheral)
            guard let mirrored = updated(characteristic, of: object) else { return }
            let found = (characteristic.descriptors ?? []).map { self.object(for: $0, in: mirrored, of: object) }
            lock.withLock {
                mirrored.storedDescriptors = merged(mirrored.storedDescriptors, found, by: { $0.remote.handle })
            }
            object.deliveryDelegate?.peripheral(
                object, didDiscoverDescriptorsFor: mirrored, error: NativeSupport.bridging(error))
        }

        func peripheral(_ peripheral: CBPeripheral, didUpdateValueFor descriptor: CBDescriptor, error: (any Error)?) {
            let object = object(for: peripheral)
            guard let mirrored = lock.withLock({ objects[ObjectIdentifier(descriptor)] as? CBMDescriptor }) else {
                return
            }
            let value = descriptor.value
            lock.withLock { mirrored.storedValue = value }
            object.deliveryDelegate?.peripheral(
                object, didUpdateValueFor: mirrored, error: NativeSupport.bridging(error))
        }

        func peripheral(_ peripheral: CBPeripheral, didWriteValueFor descriptor: CBDescriptor, error: (any Error)?) {
            let object = object(for: peripheral)
            guard let mirrored = lock.withLock({ objects[ObjectIdentifier(descriptor)] as? CBMDescriptor }) else {
                return
            }
            object.deliveryDelegate?.peripheral(
                object, didWriteValueFor: mirrored, error: NativeSupport.bridging(error))
        }

        func peripheralIsReady(toSendWriteWithoutResponse peripheral: CBPeripheral) {
            let object = object(for: peripheral)
            object.deliveryDelegate?.peripheralIsReady(toSendWriteWithoutResponse: object)
        }

        func peripheral(_ peripheral: CBPeripheral, didOpen channel: CBL2CAPChannel?, error: (any Error)?) {
            let object = object(for: peripheral)
            let opened = channel.map {
                CBML2CAPChannel(
                    psm: $0.psm, peer: object, channel: nil, inputStream: $0.inputStream, outputStream: $0.outputStream)
            }
            object.deliveryDelegate?.peripheral(object, didOpen: opened, error: NativeSupport.bridging(error))
        }
    }

    extension CBMUUID {
        /// The UUID as CoreBluetooth's.
        var cbUUID: CBUUID { CBUUID(data: data) }

        /// A UUID from CoreBluetooth's.
        convenience init(cbUUID: CBUUID) { self.init(data: cbUUID.data) }
    }
#endif
