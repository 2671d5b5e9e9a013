import BLECore
import BLEMockKit
import Foundation

/// The central's events, turned into delegate callbacks.
extension MockCentralEngine {
    /// Handles an event of the central (on the bridge's executor, in the simulation's order):
    /// what the bridge's side of the mirror needs now, and a callback on the app's queue.
    func handle(_ event: CentralEvent) {
        switch event {
        case .stateChanged(let state):
            deliver { [self] in
                lock.withLock { setState(CBMManagerState(state)) }
                guard let (manager, delegate) = managerAndDelegate else { return }
                delegate.centralManagerDidUpdateState(manager)
            }
        case .discovered(let discovery):
            deliver { [self] in
                let peripheral = peripheralObject(discovery.peripheral)
                guard let (manager, delegate) = managerAndDelegate else { return }
                delegate.centralManager(
                    manager, didDiscover: peripheral, advertisementData: discovery.advertisementData.cbmDictionary,
                    rssi: NSNumber(value: discovery.rssi))
            }
        case .connected(let remote):
            deliver { [self] in
                let peripheral = peripheralObject(remote)
                lock.withLock { peripheral.storedState = .connected }
                guard let (manager, delegate) = managerAndDelegate else { return }
                delegate.centralManager(manager, didConnect: peripheral)
            }
        case .failedToConnect(let remote, let error):
            deliver { [self] in
                let peripheral = peripheralObject(remote)
                lock.withLock { peripheral.storedState = .disconnected }
                guard let (manager, delegate) = managerAndDelegate else { return }
                delegate.centralManager(manager, didFailToConnect: peripheral, error: CBMError.bridging(error))
            }
        case .disconnected(let remote, let error):
            lock.withLock { dropLink(remote.identifier) }
            if let simulation = spec(remote.identifier) {
                simulation.delegate.peripheral(simulation.spec, didDisconnect: error.map(CBMError.bridging))
            }
            let timestamp = Self.seconds(bridge.clock.now)
            deliver { [self] in
                let peripheral = peripheralObject(remote)
                lock.withLock { invalidate(peripheral) }
                guard let (manager, delegate) = managerAndDelegate else { return }
                delegate.centralManager(
                    manager, didDisconnectPeripheral: peripheral, timestamp: timestamp, isReconnecting: false,
                    error: error.map(CBMError.bridging))
            }
        case .valueUpdated(let remote, let value):
            deliver { [self] in
                let peripheral = peripheralObject(RemotePeripheral(identifier: remote.peripheral, name: nil))
                guard
                    let characteristic = lock.withLock({ () -> CBMCharacteristic? in
                        let object = peripheral.characteristicObjects[remote.handle]
                        object?.storedValue = value
                        return object
                    })
                else { return }
                peripheral.delegate?.peripheral(peripheral, didUpdateValueFor: characteristic, error: nil)
            }
        case .readyToSendWriteWithoutResponse(let remote):
            deliver { [self] in
                let peripheral = peripheralObject(remote)
                peripheral.delegate?.peripheralIsReady(toSendWriteWithoutResponse: peripheral)
            }
        case .servicesModified(let remote, let invalidated):
            deliver { [self] in
                let peripheral = peripheralObject(remote)
                let objects = lock.withLock { () -> [CBMService] in
                    let handles = Set(invalidated.map(\.handle))
                    let gone = (peripheral.storedServices ?? []).filter { handles.contains($0.remote.handle) }
                    peripheral.storedServices?.removeAll { handles.contains($0.remote.handle) }
                    for service in gone { forget(service, of: peripheral) }
                    return gone
                }
                peripheral.delegate?.peripheral(peripheral, didModifyServices: objects)
            }
        case .nameUpdated(let remote):
            deliver { [self] in
                let peripheral = peripheralObject(remote)
                peripheral.delegate?.peripheralDidUpdateName(peripheral)
            }
        case .connectionEvent(let connectionEvent, let remote):
            deliver { [self] in
                let peripheral = peripheralObject(remote)
                guard let (manager, delegate) = managerAndDelegate else { return }
                delegate.centralManager(
                    manager,
                    connectionEventDidOccur: connectionEvent == .peerConnected ? .peerConnected : .peerDisconnected,
                    for: peripheral)
            }
        case .ancsAuthorizationUpdated(let remote, let isAuthorized):
            deliver { [self] in
                let peripheral = peripheralObject(remote)
                lock.withLock { peripheral.storedANCSAuthorized = isAuthorized }
                guard let (manager, delegate) = managerAndDelegate else { return }
                delegate.centralManager(manager, didUpdateANCSAuthorizationFor: peripheral)
            }
        case .willRestoreState(let restored):
            deliver { [self] in
                var dictionary: [String: Any] = [
                    CBMCentralManagerRestoredStatePeripheralsKey: restored.peripherals.map(peripheralObject)
                ]
                if let services = restored.scanServices {
                    dictionary[CBMCentralManagerRestoredStateScanServicesKey] = services.map(
                        CBMUUID.init(bluetoothUUID:))
                }
                if let options = restored.scanOptions {
                    dictionary[CBMCentralManagerRestoredStateScanOptionsKey] = [
                        CBMCentralManagerScanOptionAllowDuplicatesKey: NSNumber(value: options.allowDuplicates)
                    ]
                }
                guard let (manager, delegate) = managerAndDelegate else { return }
                delegate.centralManager(manager, willRestoreState: dictionary)
            }
        }
    }

    /// With the lock held: a disconnected peripheral's services and their objects are gone
    /// (discovery after reconnecting makes new ones), notifications are off.
    private func invalidate(_ peripheral: CBMPeripheral) {
        peripheral.storedState = .disconnected
        peripheral.storedServices = nil
        for characteristic in peripheral.characteristicObjects.values { characteristic.notifying = false }
        peripheral.serviceObjects.removeAll()
        peripheral.characteristicObjects.removeAll()
        peripheral.descriptorObjects.removeAll()
    }

    /// With the lock held: forgets the objects of an invalidated service.
    private func forget(_ service: CBMService, of peripheral: CBMPeripheral) {
        let range = service.remote.handle...service.remote.endHandle
        peripheral.serviceObjects = peripheral.serviceObjects.filter { !range.contains($0.key) }
        peripheral.characteristicObjects = peripheral.characteristicObjects.filter { !range.contains($0.key) }
        peripheral.descriptorObjects = peripheral.descriptorObjects.filter { !range.contains($0.key) }
    }

    /// A virtual instant as seconds (the timestamp of a disconnection).
    static func seconds(_ instant: VirtualClock.Instant) -> TimeInterval {
        let duration = instant.offset
        return Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }
}

extension AdvertisementData {
    /// The advertisement as CoreBluetooth's dictionary, with a key for each present field
    /// (connectable unless it says otherwise, as a central always learns it).
    var cbmDictionary: [String: Any] {
        var advertisement = self
        advertisement.isConnectable = isConnectable ?? true
        return advertisement.dictionary(keys: .platform) { CBMUUID(bluetoothUUID: $0) }
    }
}
