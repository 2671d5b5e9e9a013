#if canImport(CoreBluetooth)
    import BLECore
    @preconcurrency import CoreBluetooth

    extension CoreBluetoothPeripheralManager {
        /// Handles one delegate callback, in the order CoreBluetooth delivered it.
        func handle(_ handoff: CallbackInbox<PeripheralCallback>.Handoff) {
            guard !isShutDown else { return }
            switch handoff.callback {
            case .stateUpdated(let cbState):
                updateState(ManagerState(cbState))
            case .startedAdvertising(let error):
                advertising.isAdvertising = error == nil
                operations.resume(.startAdvertising, with: result(error))
            case .added(let service, let error):
                guard let handle = numbering.existingNumber(for: service) else { return }
                operations.resume(.add(service: handle), with: result(error))
            case .subscribed(let central, let characteristic):
                centrals[central.identifier] = central
                guard let local = local(characteristic) else { return }
                fanOut.yield(.subscribed(remote(central), local))
            case .unsubscribed(let central, let characteristic):
                guard let local = local(characteristic) else { return }
                fanOut.yield(.unsubscribed(remote(central), local))
            case .readRequest(let request):
                guard let attRequest = register([request]).first else { return }
                fanOut.yield(.readRequest(attRequest))
            case .writeRequests(let batch):
                let attRequests = register(batch)
                guard !attRequests.isEmpty else { return }
                fanOut.yield(.writeRequests(attRequests))
            case .readyToUpdateSubscribers:
                fanOut.yield(.readyToUpdateSubscribers)
            case .willRestoreState(let dictionary):
                restore(dictionary)
            case .l2capPublished(let psm, let error):
                psmOperations.resume(
                    .publishL2CAPChannel,
                    with: error.map { .failure(CoreBluetoothErrorMapping.operationError(from: $0)) } ?? .success(psm))
            case .l2capUnpublished(let psm, let error):
                psmOperations.resume(
                    .unpublishL2CAPChannel(psm: psm),
                    with: error.map { .failure(CoreBluetoothErrorMapping.operationError(from: $0)) } ?? .success(psm))
            case .l2capChannelOpened(let channel, let error):
                channelOpened(channel, error: error)
            }
        }

        /// A new state: settles waiters; leaving `poweredOn` drops what CoreBluetooth drops (its
        /// database only below `poweredOff`).
        func updateState(_ newState: ManagerState) {
            state = newState
            fanOut.yield(.stateChanged(newState))
            advertising.stateChanged(to: newState)
            if newState != .poweredOn {
                let error = APIMisuseError.notPoweredOn(operation: "add", state: newState)
                operations.failAll(where: \.isAdd, with: error)
                operations.failAll(
                    where: { $0 == .startAdvertising },
                    with: APIMisuseError.notPoweredOn(operation: "startAdvertising", state: newState))
                psmOperations.failAll(
                    with: APIMisuseError.notPoweredOn(operation: "publishL2CAPChannel", state: newState))
                if newState != .poweredOff {
                    for entry in published.values { forget(entry) }
                }
                requests = [:]
                centrals = [:]
            }
            if newState != .unknown && newState != .resetting { settleWaiters(with: newState) }
        }

        /// Gives CoreBluetooth requests ids and keeps them (a batch under its first id) until
        /// answered. A request for a characteristic this manager did not publish is answered
        /// at once with `invalidHandle` and not reported.
        func register(_ batch: [CBATTRequest]) -> [ATTRequest] {
            var attRequests: [ATTRequest] = []
            for request in batch {
                centrals[request.central.identifier] = request.central
                guard let characteristic = local(request.characteristic) else {
                    manager.respond(to: batch[0], withResult: .invalidHandle)
                    return []
                }
                attRequests.append(
                    ATTRequest(
                        id: nextRequestID, central: remote(request.central), characteristic: characteristic,
                        offset: request.offset, value: request.value))
                nextRequestID += 1
            }
            if let first = attRequests.first { requests[first.id] = batch }
            return attRequests
        }

        func result(_ error: (any Error)?) -> Result<Void, any Error> {
            guard let error else { return .success(()) }
            return .failure(CoreBluetoothErrorMapping.kitError(fromCoreBluetooth: error))
        }
    }
#endif
