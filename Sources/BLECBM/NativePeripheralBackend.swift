#if canImport(CoreBluetooth)
    import BLECore
    import BLEMockKit
    import CoreBluetooth
    import Foundation

    /// A ``CBMPeripheralManager`` on CoreBluetooth itself (Apple platforms, outside any bridge
    /// scope): services are rebuilt as CoreBluetooth's mutable ones, calls forward to a
    /// `CBPeripheralManager`, and its callbacks reach the app's delegate with the module's
    /// objects, on the app's queue.
    final class NativePeripheralBackend: NSObject, PeripheralBackend, CBPeripheralManagerDelegate,
        @unchecked Sendable
    {
        // @unchecked Sendable: the tables are only read and written with `lock` held;
        // `manager` is set once in init; CoreBluetooth calls back on its queue.
        private var native: CBPeripheralManager!
        let lock = Lock()
        private weak var owner: CBMPeripheralManager?
        /// The app's services and characteristics, by their CoreBluetooth counterparts, and back.
        private var services: [ObjectIdentifier: (app: CBMMutableService, native: CBMutableService)] = [:]
        private var characteristics: [ObjectIdentifier: CBMMutableCharacteristic] = [:]
        private var nativeCharacteristics: [ObjectIdentifier: CBMutableCharacteristic] = [:]
        private var centrals: [UUID: (native: CBCentral, object: CBMCentral)] = [:]
        private var requests: [ObjectIdentifier: CBATTRequest] = [:]

        init(queue: DispatchQueue?, options: [String: Any]?) {
            super.init()
            native = CBPeripheralManager(delegate: self, queue: queue, options: options)
        }

        func attach(_ manager: CBMPeripheralManager) { lock.withLock { owner = manager } }

        private var managerAndDelegate: (CBMPeripheralManager, any CBMPeripheralManagerDelegate)? {
            guard let manager = lock.withLock({ owner }), let delegate = manager.delegate else { return nil }
            return (manager, delegate)
        }

        private func central(_ native: CBCentral) -> CBMCentral {
            lock.withLock {
                if let known = centrals[native.identifier] { return known.object }
                let created = CBMCentral(
                    RemoteCentral(
                        identifier: native.identifier, maximumUpdateValueLength: native.maximumUpdateValueLength))
                centrals[native.identifier] = (native, created)
                return created
            }
        }

        private func request(_ native: CBATTRequest) -> CBMATTRequest? {
            guard let characteristic = lock.withLock({ characteristics[ObjectIdentifier(native.characteristic)] })
            else {
                return nil
            }
            let remote = RemoteCentral(
                identifier: native.central.identifier, maximumUpdateValueLength: native.central.maximumUpdateValueLength
            )
            let local = LocalCharacteristic(
                serviceUUID: characteristic.service.map { $0.uuid.bluetoothUUID } ?? characteristic.uuid.bluetoothUUID,
                serviceHandle: 0, uuid: characteristic.uuid.bluetoothUUID,
                properties: CharacteristicProperties(rawValue: characteristic.properties.rawValue),
                permissions: characteristic.permissions.attributePermissions, handle: 0)
            let object = CBMATTRequest(
                ATTRequest(id: 0, central: remote, characteristic: local, offset: native.offset, value: native.value),
                central: central(native.central), characteristic: characteristic)
            lock.withLock { requests[ObjectIdentifier(object)] = native }
            return object
        }

        var state: CBMManagerState { CBMManagerState(rawValue: native.state.rawValue) ?? .unknown }

        var isAdvertising: Bool { native.isAdvertising }

        func add(_ service: CBMMutableService) {
            let counterpart = CBMutableService(type: service.uuid.cbUUID, primary: service.isPrimary)
            var built: [CBMutableCharacteristic] = []
            for case let characteristic as CBMMutableCharacteristic in service.characteristics ?? [] {
                let nativeCharacteristic = CBMutableCharacteristic(
                    type: characteristic.uuid.cbUUID,
                    properties: CBCharacteristicProperties(rawValue: characteristic.properties.rawValue),
                    value: characteristic.value,
                    permissions: CBAttributePermissions(rawValue: characteristic.permissions.rawValue))
                nativeCharacteristic.descriptors = (characteristic.descriptors ?? []).map {
                    CBMutableDescriptor(type: $0.uuid.cbUUID, value: $0.value)
                }
                characteristic.lock.withLock { characteristic.setService(service) }
                lock.withLock {
                    characteristics[ObjectIdentifier(nativeCharacteristic)] = characteristic
                    nativeCharacteristics[ObjectIdentifier(characteristic)] = nativeCharacteristic
                }
                built.append(nativeCharacteristic)
            }
            counterpart.characteristics = built
            lock.withLock { services[ObjectIdentifier(counterpart)] = (service, counterpart) }
            native.add(counterpart)
        }

        private func counterpart(of service: CBMMutableService) -> CBMutableService? {
            lock.withLock { services.values.first { $0.app === service }?.native }
        }

        func remove(_ service: CBMMutableService) {
            guard let counterpart = counterpart(of: service) else { return }
            native.remove(counterpart)
        }

        func removeAllServices() { native.removeAllServices() }

        func startAdvertising(_ advertisementData: [String: Any]?) {
            var data = advertisementData
            if let uuids = advertisementData?[CBMAdvertisementDataServiceUUIDsKey] as? [CBMUUID] {
                data?[CBMAdvertisementDataServiceUUIDsKey] = uuids.map(\.cbUUID)
            }
            native.startAdvertising(data)
        }

        func stopAdvertising() { native.stopAdvertising() }

        func updateValue(
            _ value: Data, for characteristic: CBMMutableCharacteristic, onSubscribedCentrals centrals: [CBMCentral]?
        ) -> Bool {
            guard let counterpart = lock.withLock({ nativeCharacteristics[ObjectIdentifier(characteristic)] }) else {
                return false
            }
            let targets = centrals.map { list in
                lock.withLock { list.compactMap { self.centrals[$0.identifier]?.native } }
            }
            return native.updateValue(value, for: counterpart, onSubscribedCentrals: targets)
        }

        func respond(to request: CBMATTRequest, withResult result: CBMATTError.Code) {
            guard let counterpart = lock.withLock({ requests.removeValue(forKey: ObjectIdentifier(request)) }) else {
                return
            }
            counterpart.value = request.value
            native.respond(to: counterpart, withResult: CBATTError.Code(rawValue: result.rawValue) ?? .unlikelyError)
        }

        func publishL2CAPChannel(withEncryption encryptionRequired: Bool) {
            native.publishL2CAPChannel(withEncryption: encryptionRequired)
        }

        func unpublishL2CAPChannel(_ psm: UInt16) { native.unpublishL2CAPChannel(psm) }

        // MARK: CBPeripheralManagerDelegate

        func peripheralManagerDidUpdateState(_ peripheral: CBPeripheralManager) {
            guard let (manager, delegate) = managerAndDelegate else { return }
            delegate.peripheralManagerDidUpdateState(manager)
        }

        func peripheralManager(_ peripheral: CBPeripheralManager, willRestoreState dict: [String: Any]) {
            guard let (manager, delegate) = managerAndDelegate else { return }
            delegate.peripheralManager(manager, willRestoreState: dict)
        }

        func peripheralManagerDidStartAdvertising(_ peripheral: CBPeripheralManager, error: (any Error)?) {
            guard let (manager, delegate) = managerAndDelegate else { return }
            delegate.peripheralManagerDidStartAdvertising(manager, error: NativeSupport.bridging(error))
        }

        func peripheralManager(_ peripheral: CBPeripheralManager, didAdd service: CBService, error: (any Error)?) {
            guard let app = lock.withLock({ services[ObjectIdentifier(service)]?.app }),
                let (manager, delegate) = managerAndDelegate
            else { return }
            delegate.peripheralManager(manager, didAdd: app, error: NativeSupport.bridging(error))
        }

        func peripheralManager(
            _ peripheral: CBPeripheralManager, central: CBCentral, didSubscribeTo characteristic: CBCharacteristic
        ) {
            let object = self.central(central)
            guard let app = lock.withLock({ characteristics[ObjectIdentifier(characteristic)] }) else { return }
            app.lock.withLock { app.subscribers.append(object) }
            guard let (manager, delegate) = managerAndDelegate else { return }
            delegate.peripheralManager(manager, central: object, didSubscribeTo: app)
        }

        func peripheralManager(
            _ peripheral: CBPeripheralManager, central: CBCentral, didUnsubscribeFrom characteristic: CBCharacteristic
        ) {
            let object = self.central(central)
            guard let app = lock.withLock({ characteristics[ObjectIdentifier(characteristic)] }) else { return }
            app.lock.withLock { app.subscribers.removeAll { $0 === object } }
            guard let (manager, delegate) = managerAndDelegate else { return }
            delegate.peripheralManager(manager, central: object, didUnsubscribeFrom: app)
        }

        func peripheralManager(_ peripheral: CBPeripheralManager, didReceiveRead request: CBATTRequest) {
            guard let object = self.request(request), let (manager, delegate) = managerAndDelegate else { return }
            delegate.peripheralManager(manager, didReceiveRead: object)
        }

        func peripheralManager(_ peripheral: CBPeripheralManager, didReceiveWrite requests: [CBATTRequest]) {
            let objects = requests.compactMap(request)
            guard !objects.isEmpty, let (manager, delegate) = managerAndDelegate else { return }
            delegate.peripheralManager(manager, didReceiveWrite: objects)
        }

        func peripheralManagerIsReady(toUpdateSubscribers peripheral: CBPeripheralManager) {
            guard let (manager, delegate) = managerAndDelegate else { return }
            delegate.peripheralManagerIsReady(toUpdateSubscribers: manager)
        }

        func peripheralManager(
            _ peripheral: CBPeripheralManager, didPublishL2CAPChannel psm: CBL2CAPPSM, error: (any Error)?
        ) {
            guard let (manager, delegate) = managerAndDelegate else { return }
            delegate.peripheralManager(manager, didPublishL2CAPChannel: psm, error: NativeSupport.bridging(error))
        }

        func peripheralManager(
            _ peripheral: CBPeripheralManager, didUnpublishL2CAPChannel psm: CBL2CAPPSM, error: (any Error)?
        ) {
            guard let (manager, delegate) = managerAndDelegate else { return }
            delegate.peripheralManager(manager, didUnpublishL2CAPChannel: psm, error: NativeSupport.bridging(error))
        }

        func peripheralManager(_ peripheral: CBPeripheralManager, didOpen channel: CBL2CAPChannel?, error: (any Error)?)
        {
            let opened = channel.flatMap { channel -> CBML2CAPChannel? in
                guard let peer = channel.peer else { return nil }
                return CBML2CAPChannel(
                    psm: channel.psm, peer: CBMPeer(identifier: peer.identifier), channel: nil,
                    inputStream: channel.inputStream, outputStream: channel.outputStream)
            }
            guard let (manager, delegate) = managerAndDelegate else { return }
            delegate.peripheralManager(manager, didOpen: opened, error: NativeSupport.bridging(error))
        }
    }
#endif
