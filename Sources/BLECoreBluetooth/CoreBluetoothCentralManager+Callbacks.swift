#if canImport(CoreBluetooth)
    import BLECore
    @preconcurrency import CoreBluetooth

    extension CoreBluetoothCentralManager {
        /// Handles one delegate callback, in the order CoreBluetooth delivered it.
        func handle(_ handoff: CallbackInbox<CentralCallback>.Handoff) {
            guard !isShutDown else { return }
            switch handoff.callback {
            case .stateUpdated(let cbState):
                updateState(ManagerState(cbState))
            case .discovered(let peripheral, let advertisementData, let rssi):
                let remote = register(peripheral)
                let advertisement = AdvertisementData(advertisementData)
                fanOut.yield(
                    .discovered(DiscoveredPeripheral(peripheral: remote, advertisementData: advertisement, rssi: rssi)))
            case .connected(let peripheral):
                stopConnectTimer(for: peripheral.identifier)
                connectedIDs.insert(peripheral.identifier)
                operations.resumeAll(.connect(peripheral: peripheral.identifier), with: .success(()))
                fanOut.yield(.connected(register(peripheral)))
            case .failedToConnect(let peripheral, let error):
                stopConnectTimer(for: peripheral.identifier)
                let reason = CoreBluetoothErrorMapping.linkError(from: error) ?? CoreBluetoothError(.connectionFailed)
                operations.resumeAll(.connect(peripheral: peripheral.identifier), with: .failure(reason))
                fanOut.yield(.failedToConnect(register(peripheral), reason))
            case .disconnected(let peripheral, let error):
                disconnected(peripheral, error: error)
            case .nameUpdated(let peripheral):
                fanOut.yield(.nameUpdated(register(peripheral)))
            case .servicesModified(let peripheral, let invalidated):
                let identifier = peripheral.identifier
                let services = invalidated.compactMap { remoteService($0, on: identifier) }
                forget(invalidated, on: identifier)
                fanOut.yield(.servicesModified(register(peripheral), invalidated: services))
            case .rssiRead(let peripheral, let rssi, let error):
                rssiReads.resume(.readRSSI(peripheral: peripheral.identifier), with: result(rssi, error))
            case .servicesDiscovered(let peripheral, let error):
                numberAll(peripheral.services ?? [], on: peripheral.identifier)
                operations.resume(.discoverServices(peripheral: peripheral.identifier), with: result((), error))
            case .includedServicesDiscovered(let peripheral, let service, let error):
                numberAll(service.includedServices ?? [], on: peripheral.identifier)
                guard let handle = existingNumber(of: service, on: peripheral.identifier) else { return }
                operations.resume(
                    .discoverIncludedServices(peripheral: peripheral.identifier, service: handle),
                    with: result((), error))
            case .characteristicsDiscovered(let peripheral, let service, let error):
                numberAll(service.characteristics ?? [], on: peripheral.identifier)
                guard let handle = existingNumber(of: service, on: peripheral.identifier) else { return }
                operations.resume(
                    .discoverCharacteristics(peripheral: peripheral.identifier, service: handle),
                    with: result((), error))
            case .descriptorsDiscovered(let peripheral, let characteristic, let error):
                numberAll(characteristic.descriptors ?? [], on: peripheral.identifier)
                guard let handle = existingNumber(of: characteristic, on: peripheral.identifier) else { return }
                operations.resume(
                    .discoverDescriptors(peripheral: peripheral.identifier, characteristic: handle),
                    with: result((), error))
            case .characteristicValueUpdated(let peripheral, let characteristic, let value, let error):
                valueUpdated(characteristic, on: peripheral.identifier, value: value, error: error)
            case .characteristicWritten(let peripheral, let characteristic, let error):
                guard let handle = existingNumber(of: characteristic, on: peripheral.identifier) else { return }
                operations.resume(
                    .writeCharacteristic(peripheral: peripheral.identifier, characteristic: handle),
                    with: result((), error))
            case .notificationStateUpdated(let peripheral, let characteristic, let error):
                guard let handle = existingNumber(of: characteristic, on: peripheral.identifier) else { return }
                operations.resume(
                    .setNotifyValue(peripheral: peripheral.identifier, characteristic: handle), with: result((), error))
            case .descriptorValueUpdated(let peripheral, let descriptor, let value, let error):
                guard let handle = existingNumber(of: descriptor, on: peripheral.identifier) else { return }
                reads.resume(
                    .readDescriptor(peripheral: peripheral.identifier, descriptor: handle),
                    with: result(value ?? Data(), error))
            case .descriptorWritten(let peripheral, let descriptor, let error):
                guard let handle = existingNumber(of: descriptor, on: peripheral.identifier) else { return }
                operations.resume(
                    .writeDescriptor(peripheral: peripheral.identifier, descriptor: handle), with: result((), error))
            case .readyToSendWriteWithoutResponse(let peripheral):
                fanOut.yield(.readyToSendWriteWithoutResponse(register(peripheral)))
            case .willRestoreState(let dictionary):
                restore(dictionary)
            case .connectionEvent(let event, let peripheral):
                fanOut.yield(.connectionEvent(ConnectionEvent(event), register(peripheral)))
            case .ancsAuthorizationUpdated(let peripheral):
                fanOut.yield(
                    .ancsAuthorizationUpdated(register(peripheral), isAuthorized: Self.ancsAuthorized(peripheral)))
            case .l2capChannelOpened(let peripheral, let channel, let error):
                channelOpened(channel, on: peripheral, error: error)
            }
        }

        /// A new state: settles waiters; leaving `poweredOn` ends scanning and every link.
        func updateState(_ newState: ManagerState) {
            let wasPoweredOn = state == .poweredOn
            state = newState
            fanOut.yield(.stateChanged(newState))
            if newState != .poweredOn {
                scanning = false
                for timer in connectTimers.values { timer.cancel() }
                connectTimers = [:]
                operations.failAll(where: { !$0.needsLink }, with: CoreBluetoothError(.connectionFailed))
                failAll(where: { $0.needsLink }, with: CoreBluetoothError(.peripheralDisconnected))
                if wasPoweredOn {
                    for identifier in connectedIDs.sorted(by: { $0.uuidString < $1.uuidString }) {
                        guard let record = peripherals[identifier] else { continue }
                        peripherals[identifier]?.numbering.forgetAll()
                        fanOut.yield(
                            .disconnected(remote(record.peripheral), CoreBluetoothError(.peripheralDisconnected)))
                    }
                    connectedIDs = []
                }
            }
            if newState != .unknown && newState != .resetting { settleWaiters(with: newState) }
        }

        /// A link ended (or a pending connection was cancelled): fails that peripheral's waiting
        /// calls and forgets its attribute numbers, which CoreBluetooth invalidates.
        func disconnected(_ peripheral: CBPeripheral, error: (any Error)?) {
            let identifier = peripheral.identifier
            stopConnectTimer(for: identifier)
            let reason = CoreBluetoothErrorMapping.linkError(from: error)
            failAll(where: { $0.peripheral == identifier }, with: reason ?? CoreBluetoothError(.operationCancelled))
            peripherals[identifier]?.numbering.forgetAll()
            // A cancelled connection attempt ends here too; only a link that was up is reported.
            if connectedIDs.remove(identifier) != nil {
                fanOut.yield(.disconnected(register(peripheral), reason))
            }
        }

        /// A read answer or a notification: CoreBluetooth reports both the same way, so it
        /// answers the oldest read in flight, if any, and is a notification otherwise.
        func valueUpdated(_ characteristic: CBCharacteristic, on peripheral: UUID, value: Data?, error: (any Error)?) {
            guard let handle = existingNumber(of: characteristic, on: peripheral) else { return }
            let key = CentralOperation.readCharacteristic(peripheral: peripheral, characteristic: handle)
            if reads.resume(key, with: result(value ?? Data(), error)) { return }
            guard error == nil, let remote = remoteCharacteristic(characteristic, on: peripheral) else { return }
            fanOut.yield(.valueUpdated(remote, value ?? Data()))
        }

        func numberAll(_ attributes: [CBAttribute], on peripheral: UUID) {
            for attribute in attributes { _ = number(of: attribute, on: peripheral) }
        }

        func existingNumber(of attribute: CBAttribute, on peripheral: UUID) -> UInt16? {
            peripherals[peripheral]?.numbering.existingNumber(for: attribute)
        }

        /// A callback's outcome: its value, or its error mapped to the kit's errors.
        func result<Value>(_ value: Value, _ error: (any Error)?) -> Result<Value, any Error> {
            guard let error else { return .success(value) }
            return .failure(CoreBluetoothErrorMapping.kitError(fromCoreBluetooth: error))
        }
    }
#endif
