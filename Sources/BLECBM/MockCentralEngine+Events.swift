import BLECore
import BLEMockKit
import Foundation

/// The central's events, turned into delegate callbacks.
extension MockCentralEngine {
    /// Handles an event of the central (on the bridge's executor, in the simulation's order):
    /// what the bridge's side of the mirror needs now, and a callback on the app's queue.
    func handle(_ reported: CentralEvent) {
        // Each peripheral named as the system names it at this point of the simulation (not as
        // the callback runs: the bridge may be further on by then).
        let event = names.naming(reported)
        switch event {
        case .stateChanged(let state):
            lock.withLock {
                if simulatedState == .poweredOn && state != .poweredOn { powerLosses.simulated += 1 }
                simulatedState = CBMManagerState(state)
            }
            startRestoration(state)
            deliver { [self] in
                let forgotten = lock.withLock { () -> [CBMPeripheral] in
                    setState(CBMManagerState(state))
                    // Below powered off (resetting, unsupported, unauthorized, unknown) the
                    // peripheral objects are invalid, as CoreBluetooth's header says: the app
                    // discovers or retrieves them again. Powered off, they stay this manager's,
                    // disconnected: an app that keeps one connects it again once Bluetooth is on.
                    switch CBMManagerState(state) {
                    case .poweredOn: return []
                    case .poweredOff:
                        disconnectPeripherals()
                        return []
                    case .unknown, .resetting, .unsupported, .unauthorized: return forgetPeripherals()
                    }
                }
                withExtendedLifetime(forgotten) {
                    guard let (manager, delegate) = managerAndDelegate else { return }
                    delegate.centralManagerDidUpdateState(manager)
                }
            }
        case .discovered(let discovery):
            spec(discovery.peripheral.identifier)?.noteDiscovered()
            deliverAbout { [self] in
                let peripheral = peripheralObject(discovery.peripheral)
                guard let (manager, delegate) = managerAndDelegate else { return }
                delegate.centralManager(
                    manager, didDiscover: peripheral, advertisementData: discovery.advertisementData.cbmDictionary,
                    rssi: NSNumber(value: discovery.rssi))
            }
        case .connected(let remote):
            spec(remote.identifier)?.noteConnected(.init(central: central.identifier, peripheral: remote.identifier))
            let restored = isRestoredConnection(remote.identifier)
            deliverAbout { [self] in
                // (A link the manager cancelled as the app let go of the peripheral, or is about
                // to cancel as the app let go of it before this callback: no object to tell. One
                // the app cancelled before this callback: CoreBluetooth reports only the
                // disconnection that follows.)
                guard !withholdsDidConnect(remote.identifier) else { return }
                let peripheral = peripheralObject(remote)
                lock.withLock { peripheral.storedState = .connected }
                guard !restored, let (manager, delegate) = managerAndDelegate else { return }
                delegate.centralManager(manager, didConnect: peripheral)
            }
        case .failedToConnect(let remote, let error):
            noteFailedAttemptReported(remote.identifier)
            // (Taken here, on the bridge's executor, before the link's next events.)
            let wasRestoredConnected = isRestoredConnection(remote.identifier)
            deliverAbout { [self] in
                let failure = connectionFailure(remote.identifier, error)
                let ending = endWithholding(remote.identifier)
                guard !ending.withheld else { return }
                let peripheral = peripheralObject(remote)
                // (A newer attempt the app made keeps it `connecting`.)
                if !ending.superseded { lock.withLock { peripheral.storedState = .disconnected } }
                reportFailedConnection(peripheral, failure, restoredConnected: wasRestoredConnected)
            }
        case .disconnected(let remote, let reason):
            // (The link's mirror goes in the order of the app's callbacks: see LinkMirror.)
            deliver { [self] in lock.withLock { dropLink(remote.identifier) } }
            let (poweredOn, losses) = lock.withLock { (simulatedState == .poweredOn, powerLosses.simulated) }
            let simulation = spec(remote.identifier)
            let ended = simulation?.noteDisconnected(.init(central: central.identifier, peripheral: remote.identifier))
            // Links Bluetooth's turning off ended are not reported: the state change says it
            // (the peripheral objects are disconnected, or invalid below powered off), as
            // CoreBluetooth does.
            guard poweredOn else { return }
            var error = reason.map(CBMError.bridging)
            if let simulation {
                // A test's `simulateDisconnection(withError:)` error reaches the app as given.
                error = simulation.disconnectionError(replacing: error)
                // The spec's delegate hears the end of the device's one connection, when the
                // last link of the apps' (this bridge's centrals and another app's) ends: on the
                // app's queue, just before the app does, as CoreBluetoothMock tells it.
                if ended == true {
                    let heard = UncheckedError(error)
                    deliver { simulation.delegate.peripheral(simulation.spec, didDisconnect: heard.error) }
                }
            }
            let reported = UncheckedError(error)
            let timestamp =
                Self.seconds(bridge.clockNow) + LockedValue.on(bridge, key: TimestampOrigin.self, initial: 0).value
            // A link that dropped (not one the app cancelled) of a peripheral connected with
            // auto-reconnect: the system connects again at once, and says so. The attempt is
            // queued now, ahead of whatever the app does once told (a cancel, Bluetooth turned
            // off), not by a command that would queue it only once applied, behind those; and
            // Bluetooth going off before it is applied ends it.
            let existing = knownPeripheral(remote.identifier)
            let reconnecting =
                reason != nil && existing.map { object in lock.withLock { object.reconnectsAutomatically } } == true
            if reconnecting, let existing { attempt(existing, madeAfter: losses) }
            deliverAbout { [self] in
                let ending = endWithholding(remote.identifier)
                guard !ending.withheld else { return }
                let peripheral = peripheralObject(remote)
                lock.withLock {
                    invalidate(peripheral)
                    // (The system reconnecting, or a newer attempt the app made: `connecting`.)
                    if reconnecting || ending.superseded { peripheral.storedState = .connecting }
                }
                guard let (manager, delegate) = managerAndDelegate else { return }
                delegate.centralManager(
                    manager, didDisconnectPeripheral: peripheral, timestamp: timestamp, isReconnecting: reconnecting,
                    error: reported.error)
            }
        case .valueUpdated(let remote, let value):
            deliverAbout { [self] in
                let peripheral = peripheralObject(RemotePeripheral(identifier: remote.peripheral, name: nil))
                guard
                    let characteristic = lock.withLock({ () -> CBMCharacteristic? in
                        let object = peripheral.characteristicObjects[remote.handle]
                        object?.storedValue = value
                        return object
                    })
                else { return }
                peripheral.deliveryDelegate?.peripheral(peripheral, didUpdateValueFor: characteristic, error: nil)
            }
        case .readyToSendWriteWithoutResponse(let remote):
            deliverAbout { [self] in
                _ = lock.withLock { updateLink(remote.identifier) { $0.simulationReady() } }
                let peripheral = peripheralObject(remote)
                peripheral.deliveryDelegate?.peripheralIsReady(toSendWriteWithoutResponse: peripheral)
            }
        case .servicesModified(let remote, let invalidated):
            // A spec's service change is one Service Changed indication: the app hears the
            // services it invalidated, once. The simulated peripheral publishes the new services
            // one by one after removing the old ones, and the stack says so for each, with none
            // invalidated: those are not the device's indications, and the app does not hear them.
            if invalidated.isEmpty, spec(remote.identifier) != nil { return }
            deliverAbout { [self] in
                let peripheral = peripheralObject(remote)
                let objects = lock.withLock { () -> [CBMService] in
                    // Every object the app has for an invalidated service: one it discovered
                    // as a primary service, or only as one another service includes (which
                    // leaves that service's `includedServices` too).
                    let handles = Set(invalidated.map(\.handle))
                    let gone = peripheral.serviceObjects.filter { handles.contains($0.key) }.values
                        .sorted { $0.remote.handle < $1.remote.handle }
                    peripheral.storedServices?.removeAll { handles.contains($0.remote.handle) }
                    for service in peripheral.serviceObjects.values { service.removeIncludedServices(at: handles) }
                    for service in gone { forget(service, of: peripheral) }
                    return gone
                }
                peripheral.deliveryDelegate?.peripheral(peripheral, didModifyServices: objects)
            }
        case .nameUpdated(let remote):
            deliverAbout { [self] in
                let peripheral = peripheralObject(remote)
                peripheral.deliveryDelegate?.peripheralDidUpdateName(peripheral)
            }
        case .connectionEvent(let connectionEvent, let remote):
            deliverAbout { [self] in
                let peripheral = peripheralObject(remote)
                guard let (manager, delegate) = managerAndDelegate else { return }
                delegate.centralManager(
                    manager,
                    connectionEventDidOccur: connectionEvent == .peerConnected ? .peerConnected : .peerDisconnected,
                    for: peripheral)
            }
        case .ancsAuthorizationUpdated(let remote, let isAuthorized):
            deliverAbout { [self] in
                let peripheral = peripheralObject(remote)
                lock.withLock { peripheral.storedANCSAuthorized = isAuthorized }
                guard let (manager, delegate) = managerAndDelegate else { return }
                delegate.centralManager(manager, didUpdateANCSAuthorizationFor: peripheral)
            }
        case .willRestoreState(let restored):
            // What the system kept of each link, read now (in the simulation's order): the
            // restored objects carry their state, discovered attributes and notification states.
            let links = restored.peripherals.map { remote in
                (remote, central.assumeIsolated { $0.restoredLink(to: remote.identifier) })
            }
            deliver { [self] in
                lock.withLock {
                    for (remote, link) in links {
                        guard let length = link.maximumWriteLength else { continue }
                        openLink(remote.identifier, maximumWriteLength: length)
                    }
                    // The scan the system kept for the app goes on: the manager is scanning.
                    if restored.scanServices != nil || restored.scanOptions != nil { scanning = true }
                }
                let peripherals = links.map { remote, link in restoredObject(remote, link) }
                var dictionary: [String: Any] = [CBMCentralManagerRestoredStatePeripheralsKey: peripherals]
                if let services = restored.scanServices {
                    dictionary[CBMCentralManagerRestoredStateScanServicesKey] = services.map(
                        CBMUUID.init(bluetoothUUID:))
                }
                if let options = restored.scanOptions {
                    // Every scan option in use as the system stopped the app.
                    var scanOptions: [String: Any] = [
                        CBMCentralManagerScanOptionAllowDuplicatesKey: NSNumber(value: options.allowDuplicates)
                    ]
                    if !options.solicitedServiceUUIDs.isEmpty {
                        scanOptions[CBMCentralManagerScanOptionSolicitedServiceUUIDsKey] =
                            options.solicitedServiceUUIDs.map(CBMUUID.init(bluetoothUUID:))
                    }
                    dictionary[CBMCentralManagerRestoredStateScanOptionsKey] = scanOptions
                }
                guard let (manager, delegate) = managerAndDelegate else { return }
                delegate.centralManager(manager, willRestoreState: dictionary)
            }
        }
    }

    /// The object for a restored peripheral, with the state, services (included ones too),
    /// characteristics and notification states the system kept (see
    /// ``MockCentralManager/RestoredLink``).
    private func restoredObject(_ remote: RemotePeripheral, _ link: MockCentralManager.RestoredLink) -> CBMPeripheral {
        let peripheral = peripheralObject(remote)
        lock.withLock {
            peripheral.storedState = link.isConnected ? .connected : link.isConnecting ? .connecting : .disconnected
            guard !link.services.isEmpty else { return }
            let services = objects(
                for: link.services, in: &peripheral.serviceObjects, handle: { $0.handle },
                make: { CBMService($0, peripheral: peripheral) })
            peripheral.storedServices = services
            // Each service, then the included services discovered in it (and in those).
            var pending = services
            var visited = Set(services.map(\.remote.handle))
            while !pending.isEmpty {
                let service = pending.removeFirst()
                let included = objects(
                    for: link.includedServices[service.remote] ?? [], in: &peripheral.serviceObjects,
                    handle: { $0.handle }, make: { CBMService($0, peripheral: peripheral) })
                if !included.isEmpty { service.mergeIncludedServices(included) }
                pending += included.filter { visited.insert($0.remote.handle).inserted }
                let found = link.characteristics[service.remote] ?? []
                guard !found.isEmpty else { continue }
                let characteristics = objects(
                    for: found, in: &peripheral.characteristicObjects, handle: { $0.handle },
                    make: { CBMCharacteristic($0, service: service) })
                service.mergeCharacteristics(characteristics)
                for characteristic in characteristics {
                    characteristic.notifying = link.subscribed.contains(characteristic.remote.handle)
                }
            }
        }
        return peripheral
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

    /// With the lock held: every peripheral object is disconnected, its services gone (Bluetooth
    /// is off): the objects stay the manager's, and the system's reconnections end.
    func disconnectPeripherals() {
        for peripheral in peripheralObjects {
            invalidate(peripheral)
            peripheral.reconnectsAutomatically = false
        }
        removeAllLinks()
    }

    /// With the lock held: forgets every peripheral object (they are invalid). Returns them: let
    /// go of them once the lock is released (a CoreBluetoothMock manager's objects may be the last
    /// to hold their delegates, and a delegate's deinit is the app's code, which may call the
    /// manager).
    func forgetPeripherals() -> [CBMPeripheral] {
        let objects = peripheralObjects
        disconnectPeripherals()
        removeAllPeripherals()
        return objects
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

/// An error handed to the app's queue (the app's own error value, given to a test hook; never
/// mutated).
struct UncheckedError: @unchecked Sendable {
    let error: (any Error)?
    init(_ error: (any Error)?) { self.error = error }
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
