import BLECore
import BLEMockKit
import Foundation

/// A peripheral's GATT calls on the bridge.
extension MockCentralEngine {
    /// The Client Characteristic Configuration descriptor's UUID (0x2902).
    static let clientCharacteristicConfiguration = CBMUUID(string: CBMUUIDClientCharacteristicConfigurationString)

    /// Whether a call on `peripheral` may go ahead: it must be connected, as CoreBluetooth
    /// requires (it ignores the call otherwise, which is noted as a misuse).
    private func connected(_ peripheral: CBMPeripheral, _ call: String) -> Bool {
        guard peripheral.state == .connected else { return notConnected(peripheral, call) }
        return true
    }

    /// Notes a call on a peripheral that is not connected (CoreBluetooth ignores it); false.
    private func notConnected(_ peripheral: CBMPeripheral, _ call: String) -> Bool {
        misuse("\(call): \(peripheral.identifier) is not connected")
        return false
    }

    /// Whether a call on an attribute object may go ahead: its peripheral must be connected
    /// (as `connected(_:_:)` checks) and the object one of this connection's (one look under
    /// the lock: this is on every GATT call's path).
    private func current(
        _ handle: UInt16, in objects: (CBMPeripheral) -> [UInt16: some AnyObject],
        _ object: AnyObject, of peripheral: CBMPeripheral, _ call: String
    ) -> Bool {
        let (isConnected, isCurrent) = lock.withLock {
            (peripheral.storedState == .connected, objects(peripheral)[handle] === object)
        }
        guard isConnected else { return notConnected(peripheral, call) }
        guard isCurrent else {
            misuse("\(call): the attribute is not one of \(peripheral.identifier)'s current attributes")
            return false
        }
        return true
    }

    /// With the lock held: the objects for remote attributes, the same object for the same
    /// handle while the connection lasts (made by `make` the first time).
    func objects<Remote, Object: AnyObject>(
        for found: [Remote], in cache: inout [UInt16: Object], handle: (Remote) -> UInt16,
        make: (Remote) -> Object
    ) -> [Object] {
        found.map { remote in
            if let existing = cache[handle(remote)] { return existing }
            let created = make(remote)
            cache[handle(remote)] = created
            return created
        }
    }

    func canSendWriteWithoutResponse(_ peripheral: CBMPeripheral) -> Bool {
        lock.withLock {
            guard peripheral.storedState == .connected, link(peripheral.identifier) != nil else { return false }
            guard let capacity = central.writeWithoutResponseCapacity else { return true }
            var answered = false
            _ = updateLink(peripheral.identifier) { answered = $0.canSend(capacity: capacity) }
            return answered
        }
    }

    func maximumWriteValueLength(_ peripheral: CBMPeripheral, type: CBMCharacteristicWriteType) -> Int {
        guard type == .withoutResponse, let length = lock.withLock({ link(peripheral.identifier)?.maximumWriteLength })
        else { return CBMPeripheral.maximumWriteValueLengthWithoutLink(for: type) }
        return length
    }

    /// Whether the simulated stack refused a write of a spec's descriptor as it refuses every
    /// descriptor write (ATT 0x03: it publishes descriptors with fixed values).
    static func isStackRefusal(_ result: Result<MockCentralManager.FrontEndResult, any Error>) -> Bool {
        guard case .failure(let error) = result else { return false }
        return (error as? ATTError)?.code == .writeNotPermitted
    }

    /// The error a read or write of a spec's characteristic fails with: the spec delegate's own
    /// (which the simulated stack can carry only as ATT 0x0E, unlikely error), as
    /// CoreBluetoothMock hands it over, else the stack's.
    private func failure(_ error: any Error, of characteristic: CBMCharacteristic, on peripheral: CBMPeripheral)
        -> any Error
    {
        if (error as? ATTError)?.code == .unlikelyError, let simulation = spec(peripheral.identifier),
            let answer = simulation.takeDelegateError(
                central: central.identifier, handle: characteristic.remote.handle, of: peripheral.identifier)
        {
            return answer
        }
        return CBMError.bridging(error)
    }

    func discoverServices(_ uuids: [CBMUUID]?, for peripheral: CBMPeripheral) {
        guard connected(peripheral, "discoverServices") else { return }
        if let error = refusal(
            peripheral.identifier, { $0.delegate.peripheral($0.spec, didReceiveServiceDiscoveryRequest: uuids) })
        {
            return reply { peripheral.deliveryDelegate?.peripheral(peripheral, didDiscoverServices: error) }
        }
        operation(.discoverServices(uuids?.map(\.bluetoothUUID), peripheral.identifier)) { engine, result in
            var failure: (any Error)?
            switch result {
            case .success(.services(let found)):
                engine.lock.withLock {
                    let objects = engine.objects(
                        for: found, in: &peripheral.serviceObjects, handle: { $0.handle },
                        make: { CBMService($0, peripheral: peripheral) })
                    peripheral.storedServices = merged(peripheral.storedServices, objects, by: { $0.remote.handle })
                }
            case .success: break
            case .failure(let error): failure = CBMError.bridging(error)
            }
            peripheral.deliveryDelegate?.peripheral(peripheral, didDiscoverServices: failure)
        }
    }

    func discoverIncludedServices(_ uuids: [CBMUUID]?, for service: CBMService, of peripheral: CBMPeripheral) {
        guard
            current(
                service.remote.handle, in: { $0.serviceObjects }, service, of: peripheral, "discoverIncludedServices")
        else { return }
        if let error = refusal(
            peripheral.identifier,
            { simulation in
                simulation.serviceMock(at: service.remote.handle, of: peripheral.identifier).map {
                    simulation.delegate.peripheral(
                        simulation.spec, didReceiveIncludedServiceDiscoveryRequest: uuids, for: $0)
                } ?? .success(())
            })
        {
            return reply {
                peripheral.deliveryDelegate?.peripheral(
                    peripheral, didDiscoverIncludedServicesFor: service, error: error)
            }
        }
        operation(.discoverIncludedServices(uuids?.map(\.bluetoothUUID), service.remote)) { engine, result in
            var failure: (any Error)?
            switch result {
            case .success(.services(let found)):
                engine.lock.withLock {
                    let objects = engine.objects(
                        for: found, in: &peripheral.serviceObjects, handle: { $0.handle },
                        make: { CBMService($0, peripheral: peripheral) })
                    service.mergeIncludedServices(objects)
                }
            case .success: break
            case .failure(let error): failure = CBMError.bridging(error)
            }
            peripheral.deliveryDelegate?.peripheral(peripheral, didDiscoverIncludedServicesFor: service, error: failure)
        }
    }

    func discoverCharacteristics(_ uuids: [CBMUUID]?, for service: CBMService, of peripheral: CBMPeripheral) {
        guard
            current(
                service.remote.handle, in: { $0.serviceObjects }, service, of: peripheral, "discoverCharacteristics")
        else { return }
        if let error = refusal(
            peripheral.identifier,
            { simulation in
                simulation.serviceMock(at: service.remote.handle, of: peripheral.identifier).map {
                    simulation.delegate.peripheral(
                        simulation.spec, didReceiveCharacteristicsDiscoveryRequest: uuids, for: $0)
                } ?? .success(())
            })
        {
            return reply {
                peripheral.deliveryDelegate?.peripheral(
                    peripheral, didDiscoverCharacteristicsFor: service, error: error)
            }
        }
        operation(.discoverCharacteristics(uuids?.map(\.bluetoothUUID), service.remote)) { engine, result in
            var failure: (any Error)?
            switch result {
            case .success(.characteristics(let found)):
                engine.lock.withLock {
                    let objects = engine.objects(
                        for: found, in: &peripheral.characteristicObjects, handle: { $0.handle },
                        make: { CBMCharacteristic($0, service: service) })
                    service.mergeCharacteristics(objects)
                }
            case .success: break
            case .failure(let error): failure = CBMError.bridging(error)
            }
            peripheral.deliveryDelegate?.peripheral(peripheral, didDiscoverCharacteristicsFor: service, error: failure)
        }
    }

    func discoverDescriptors(for characteristic: CBMCharacteristic, of peripheral: CBMPeripheral) {
        guard
            current(
                characteristic.remote.handle, in: { $0.characteristicObjects }, characteristic, of: peripheral,
                "discoverDescriptors")
        else { return }
        if let error = refusal(
            peripheral.identifier,
            { simulation in
                simulation.characteristicMock(at: characteristic.remote.handle, of: peripheral.identifier).map {
                    simulation.delegate.peripheral(simulation.spec, didReceiveDescriptorsDiscoveryRequestFor: $0)
                } ?? .success(())
            })
        {
            return reply {
                peripheral.deliveryDelegate?.peripheral(
                    peripheral, didDiscoverDescriptorsFor: characteristic, error: error)
            }
        }
        let declared = spec(peripheral.identifier)?.characteristicMock(
            at: characteristic.remote.handle, of: peripheral.identifier)?.declaredDescriptorMocks
        operation(.discoverDescriptors(characteristic.remote)) { engine, result in
            var failure: (any Error)?
            switch result {
            case .success(.descriptors(var found)):
                // A spec's characteristic lists the descriptors its spec declares, in that order
                // (as CoreBluetoothMock does), not the CCCD the simulated stack adds.
                if let declared {
                    found = declared.compactMap { mock in
                        guard let index = found.firstIndex(where: { $0.uuid == mock.uuid.bluetoothUUID }) else {
                            return nil
                        }
                        return found.remove(at: index)
                    }
                }
                engine.lock.withLock {
                    let objects = engine.objects(
                        for: found, in: &peripheral.descriptorObjects, handle: { $0.handle },
                        make: { CBMDescriptor($0, characteristic: characteristic) })
                    characteristic.storedDescriptors =
                        declared == nil
                        ? merged(characteristic.storedDescriptors, objects, by: { $0.remote.handle }) : objects
                }
            case .success: break
            case .failure(let error): failure = CBMError.bridging(error)
            }
            peripheral.deliveryDelegate?.peripheral(
                peripheral, didDiscoverDescriptorsFor: characteristic, error: failure)
        }
    }

    func readValue(for characteristic: CBMCharacteristic, of peripheral: CBMPeripheral) {
        guard
            current(
                characteristic.remote.handle, in: { $0.characteristicObjects }, characteristic, of: peripheral,
                "readValue")
        else { return }
        operation(.read(characteristic.remote)) { engine, result in
            var failure: (any Error)?
            switch result {
            case .success(.value(let data)): engine.lock.withLock { characteristic.storedValue = data }
            case .success: break
            case .failure(let error): failure = engine.failure(error, of: characteristic, on: peripheral)
            }
            peripheral.deliveryDelegate?.peripheral(peripheral, didUpdateValueFor: characteristic, error: failure)
        }
    }

    func readValue(for descriptor: CBMDescriptor, of peripheral: CBMPeripheral) {
        guard
            current(descriptor.remote.handle, in: { $0.descriptorObjects }, descriptor, of: peripheral, "readValue")
        else { return }
        let simulation = spec(peripheral.identifier)
        operation(.readDescriptor(descriptor.remote)) { engine, result in
            var failure: (any Error)?
            var result = result
            // A spec's descriptor answers through its delegate, as in CoreBluetoothMock.
            if case .success = result, let simulation, let mock = simulation.descriptorMock(of: descriptor.remote) {
                result = simulation.delegate.peripheral(simulation.spec, didReceiveReadRequestFor: mock)
                    .map { .value($0) }
            }
            switch result {
            case .success(.value(let data)):
                // A spec's descriptor value is the delegate's `Data`, as CoreBluetoothMock hands
                // it over; CoreBluetooth types the others (a user description as a `String`).
                let typed = simulation == nil ? CBMDescriptor.typedValue(data, uuid: descriptor.remote.uuid) : data
                engine.lock.withLock { descriptor.storedValue = typed }
            case .success: break
            case .failure(let error): failure = CBMError.bridging(error)
            }
            peripheral.deliveryDelegate?.peripheral(peripheral, didUpdateValueFor: descriptor, error: failure)
        }
    }

    func writeValue(
        _ data: Data, for characteristic: CBMCharacteristic, type: CBMCharacteristicWriteType,
        of peripheral: CBMPeripheral
    ) {
        guard
            current(
                characteristic.remote.handle, in: { $0.characteristicObjects }, characteristic, of: peripheral,
                "writeValue")
        else { return }
        let remote = characteristic.remote
        guard type == .withResponse else {
            if !remote.properties.contains(.writeWithoutResponse) {
                // CoreBluetooth drops it with a warning in the log: the peripheral never gets it.
                misuse(
                    "writeValue(_:for:type: .withoutResponse): characteristic \(characteristic.uuid) does not allow "
                        + "writes without response; not sent")
            }
            let identifier = peripheral.identifier
            let (generation, recording) = lock.withLock {
                (updateLink(identifier) { $0.inFlight += 1 }, storedRecording)
            }
            command { [self] central in
                let (outcome, queued) = central.queueWriteWithoutResponse(data, for: remote)
                // A strict central refuses what CoreBluetooth would cut or drop: nothing is sent,
                // and as the call cannot throw, the refusal is noted (and recorded as a misuse).
                if case .failure(let error as APIMisuseError) = outcome, Misuse.Kind(refused: error) != nil {
                    misuse("writeValue(_:for:type: .withoutResponse): \(error); not sent (a strict central manager)")
                }
                // Recorded as the stack took it (a write it dropped is not one the peripheral got).
                if let recording {
                    let event: RecordedEvent
                    switch outcome {
                    case .success(let outcome):
                        event = outcome.recordedEvent(peripheral: identifier, handle: remote.handle, value: data)
                    case .failure(let error):
                        event = .write(
                            peripheral: identifier, handle: remote.handle, value: .bytes(data), withResponse: false,
                            error: RecordedError(error))
                    }
                    recording.recorder.record(event)
                }
                guard let generation else { return }
                // (In the order of the app's callbacks: see LinkMirror.)
                deliver { [self] in bridgeQueueChanged(identifier, holds: queued, arrived: true, generation: generation)
                }
            }
            return
        }
        operation(.write(data, remote)) { engine, result in
            var failure: (any Error)?
            if case .failure(let error) = result { failure = engine.failure(error, of: characteristic, on: peripheral) }
            peripheral.deliveryDelegate?.peripheral(peripheral, didWriteValueFor: characteristic, error: failure)
        }
    }

    func writeValue(_ data: Data, for descriptor: CBMDescriptor, of peripheral: CBMPeripheral) {
        guard
            current(descriptor.remote.handle, in: { $0.descriptorObjects }, descriptor, of: peripheral, "writeValue")
        else { return }
        // CoreBluetooth raises NSInternalInconsistencyException for this write (the app crashes):
        // notifications are switched with setNotifyValue(_:for:). Here it is not sent, and noted.
        guard descriptor.uuid != Self.clientCharacteristicConfiguration else {
            return misuse(
                "writeValue: the Client Characteristic Configuration descriptor is written with "
                    + "setNotifyValue(_:for:), not writeValue(_:for:) (CoreBluetooth raises "
                    + "NSInternalInconsistencyException, and the app crashes)")
        }
        let simulation = spec(peripheral.identifier)
        operation(.writeDescriptor(data, descriptor.remote)) { _, result in
            var result = result
            // A spec's descriptor is written through its delegate, as in CoreBluetoothMock. (The
            // simulated stack publishes descriptors with fixed values, as a peripheral manager
            // does, so it answers writeNotPermitted: the delegate decides instead.)
            if let simulation, let mock = simulation.descriptorMock(of: descriptor.remote),
                Self.isStackRefusal(result)
            {
                result = simulation.delegate.peripheral(simulation.spec, didReceiveWriteRequestFor: mock, data: data)
                    .map { .done }
            }
            var failure: (any Error)?
            if case .failure(let error) = result { failure = CBMError.bridging(error) }
            peripheral.deliveryDelegate?.peripheral(peripheral, didWriteValueFor: descriptor, error: failure)
        }
    }

    func setNotifyValue(_ enabled: Bool, for characteristic: CBMCharacteristic, of peripheral: CBMPeripheral) {
        guard
            current(
                characteristic.remote.handle, in: { $0.characteristicObjects }, characteristic, of: peripheral,
                "setNotifyValue")
        else { return }
        // Already in that state, with no change on its way: iOS answers at once without writing
        // the CCCD again (as CoreBluetoothMock does, after testing it on iOS 17 and 26).
        let settled = lock.withLock { characteristic.notifyRequests == 0 && characteristic.notifying == enabled }
        if settled {
            return reply {
                peripheral.deliveryDelegate?.peripheral(
                    peripheral, didUpdateNotificationStateFor: characteristic, error: nil)
            }
        }
        let simulation = spec(peripheral.identifier)
        let mock = simulation?.characteristicMock(at: characteristic.remote.handle, of: peripheral.identifier)
        if let simulation, let mock,
            case .failure(let error) = simulation.delegate.peripheral(
                simulation.spec, didReceiveSetNotifyRequest: enabled, for: mock)
        {
            // The spec's delegate hears its own refusal too, as in CoreBluetoothMock.
            let refusal = UncheckedError(error)
            return reply {
                simulation.delegate.peripheral(
                    simulation.spec, didUpdateNotificationStateFor: mock, error: refusal.error)
                peripheral.deliveryDelegate?.peripheral(
                    peripheral, didUpdateNotificationStateFor: characteristic, error: refusal.error)
            }
        }
        lock.withLock { characteristic.notifyRequests += 1 }
        operation(.setNotify(enabled, characteristic.remote)) { engine, result in
            var failure: (any Error)?
            engine.lock.withLock { characteristic.notifyRequests -= 1 }
            switch result {
            case .success: engine.lock.withLock { characteristic.notifying = enabled }
            case .failure(let error): failure = CBMError.bridging(error)
            }
            if let simulation, let mock {
                // The spec's characteristic notifies from now on (as CoreBluetoothMock sets it
                // before telling the delegate).
                if failure == nil { mock.lock.withLock { mock.notifying = enabled } }
                simulation.delegate.peripheral(simulation.spec, didUpdateNotificationStateFor: mock, error: failure)
            }
            peripheral.deliveryDelegate?.peripheral(
                peripheral, didUpdateNotificationStateFor: characteristic, error: failure)
        }
    }

    func readRSSI(of peripheral: CBMPeripheral) {
        guard connected(peripheral, "readRSSI") else { return }
        operation(.readRSSI(peripheral.identifier)) { engine, result in
            switch result {
            case .success(.rssi(let rssi)):
                let number = NSNumber(value: rssi)
                engine.lock.withLock { peripheral.storedRSSI = number }
                peripheral.deliveryDelegate?.peripheral(peripheral, didReadRSSI: number, error: nil)
            case .success:
                peripheral.deliveryDelegate?.peripheral(peripheral, didReadRSSI: NSNumber(value: 127), error: nil)
            case .failure(let error):
                peripheral.deliveryDelegate?.peripheral(
                    peripheral, didReadRSSI: NSNumber(value: 127), error: CBMError.bridging(error))
            }
        }
    }

    func openL2CAPChannel(_ psm: UInt16, on peripheral: CBMPeripheral) {
        guard connected(peripheral, "openL2CAPChannel") else { return }
        operation(.openL2CAP(psm, peripheral.identifier)) { engine, result in
            switch result {
            case .success(.channel(let channel)):
                let streams = engine.takeStreams(of: channel)
                let link = streams?.link
                let opened = CBML2CAPChannel(
                    psm: psm, peer: peripheral, channel: channel, inputStream: streams?.input,
                    outputStream: streams?.output, released: { link?.channelReleased() })
                peripheral.deliveryDelegate?.peripheral(peripheral, didOpen: opened, error: nil)
            case .success:
                peripheral.deliveryDelegate?.peripheral(peripheral, didOpen: nil, error: CBMError(.unknown))
            case .failure(let error):
                peripheral.deliveryDelegate?.peripheral(peripheral, didOpen: nil, error: CBMError.bridging(error))
            }
        }
    }
}
