import BLECore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

extension MockBLEBridge {
    func writeDescriptor(central: UUID, descriptor: RemoteDescriptor, value: Data) async throws {
        let link = try requireLink(central: central, peripheral: descriptor.peripheral, "writeValue(_:for:)")
        try requireCurrent(descriptor)
        let key = LinkKey(central: central, peripheral: descriptor.peripheral)
        let injected = injection(
            .write, central: central, peripheral: key.peripheral, characteristic: descriptor.characteristic.uuid)
        let database = world.peripherals[descriptor.peripheral]!.database
        let cost = world.cost(on: key, roundTrips: Self.writeRoundTrips(length: value.count, mtu: link.mtu))
        try await perform(.operation("write descriptor"), on: key, cost: cost, injected: injected) {
            do {
                if let error = injected?.error { throw error }
                try database.planDescriptorWrite(handle: descriptor.handle)
            } catch {
                self.world.record(
                    .writeDescriptor, central: central, peripheral: descriptor.peripheral, attribute: descriptor.uuid,
                    handle: descriptor.handle, value: value, error: error)
                throw error
            }
        }
    }

    // MARK: Writes

    /// Writes a characteristic. With response, a value longer than ATT_MTU − 3 goes as a long
    /// write (Prepare Writes of ATT_MTU − 5 bytes, then Execute Write), which a manual
    /// peripheral receives as one batch of requests, and the call returns after the round
    /// trips. Without response, the call returns at once: a value longer than ATT_MTU − 3 is
    /// truncated to it as on a device (or refused with strict lengths), and the write waits in
    /// the transmit queue for a connection event — or is dropped if the queue is full.
    func write(central: UUID, characteristic: RemoteCharacteristic, value: Data, type: WriteType) async throws {
        try await pairIfNeeded(central: central, for: characteristic) { database, security in
            _ = try database.planWrite(
                handle: characteristic.handle, length: min(value.count, GATTDatabase.maximumValueLength), type: type,
                security: security)
        }
        let link = try requireLink(central: central, peripheral: characteristic.peripheral, "writeValue")
        _ = try requireCurrent(characteristic)
        let key = LinkKey(central: central, peripheral: characteristic.peripheral)
        var value = value
        let log: (Data, (any Error)?, String?) -> Void = { value, error, detail in
            self.world.record(
                .write, central: central, peripheral: characteristic.peripheral, attribute: characteristic.uuid,
                handle: characteristic.handle, value: value, writeType: type, error: error, detail: detail)
        }
        if type == .withoutResponse, value.count > link.mtu - 3 {
            if world.centrals[central]!.configuration.strictLengths {
                let error = APIMisuseError.valueTooLong(
                    operation: "writeValue(_:for:type: .withoutResponse)", length: value.count, maximum: link.mtu - 3)
                log(value, error, nil)
                throw error
            }
            world.record(
                .truncated, central: central, peripheral: characteristic.peripheral, attribute: characteristic.uuid,
                handle: characteristic.handle, writeType: type,
                detail:
                    "write without response of \(value.count) bytes cut to \(link.mtu - 3) (ATT_MTU \(link.mtu) - 3)")
            value = value.prefix(link.mtu - 3)
        }
        let injected = injection(
            .write, central: central, peripheral: key.peripheral, characteristic: characteristic.uuid)
        let kind = WaitingOperation.Kind.write(characteristic.uuid, handle: characteristic.handle)
        let written = value
        let local: LocalCharacteristic
        do {
            local = try world.peripherals[key.peripheral]!.database.planWrite(
                handle: characteristic.handle, length: value.count, type: type, security: link.security)
        } catch {
            guard type == .withResponse else {
                log(written, error, nil)
                throw error
            }
            try await perform(kind, on: key, cost: world.cost(on: key, roundTrips: 1), injected: injected) {
                log(written, error, nil)
                throw error
            }
            return
        }
        guard type == .withResponse else {
            if let error = injected?.error {
                log(written, error, "injected")
                throw error
            }
            if queuesWrites(of: central) {
                let accepted = enqueueWrite(
                    SimulationWorld.QueuedWrite(characteristic: characteristic, value: value), on: key)
                log(
                    written, accepted ? nil : CoreBluetoothError(.outOfSpace),
                    accepted ? nil : "dropped: transmit queue full")
            } else {
                log(written, nil, nil)
                deliverCommand(value, to: characteristic, on: key)
            }
            return
        }
        let batch = writeBatch(value, type: type, link: key, mtu: link.mtu, characteristic: local)
        let handling = world.peripherals[key.peripheral]!.configuration.requestHandling
        if case .manual = handling, injected?.error == nil {
            world.record(
                .writeRequest, central: central, peripheral: key.peripheral, attribute: local.uuid,
                handle: local.handle,
                value: value, writeType: type, detail: "requests=\(batch.count) id=\(batch[0].id)")
            _ = try await suspend(kind, on: key) { id in
                self.openRequests[batch[0].id] = OpenRequest(
                    request: batch[0], link: key, waiting: id,
                    kind: .write(value: written, remote: characteristic, batch: batch))
                if injected == .neverAnswers { return }
                self.deliverOrQueue(batch[0].id)
            }
            return
        }
        let cost = world.cost(on: key, roundTrips: Self.writeRoundTrips(length: value.count, mtu: link.mtu))
        try await perform(kind, on: key, cost: cost, injected: injected) {
            if let error = injected?.error {
                log(written, error, "injected")
                throw error
            }
            if case .handler(let handler) = handling {
                for request in batch {
                    let response = handler(request)
                    if response.result != .success {
                        log(written, ATTError(response.result), nil)
                        throw ATTError(response.result)
                    }
                }
            } else {
                self.world.peripherals[key.peripheral]?.database.setValue(written, at: local.handle)
            }
            log(written, nil, nil)
        }
    }

    /// A write without response arriving at the peripheral: stored (automatic), passed to the
    /// handler (whose answer is ignored), or delivered as a write request (manual).
    func deliverCommand(_ value: Data, to characteristic: RemoteCharacteristic, on key: LinkKey) {
        guard let record = world.peripherals[key.peripheral]?.database.characteristic(at: characteristic.handle),
            let link = world.links[key]
        else { return }
        world.attPDUCount += 1
        switch world.peripherals[key.peripheral]!.configuration.requestHandling {
        case .automatic:
            world.peripherals[key.peripheral]!.database.setValue(value, at: characteristic.handle)
        case .handler(let handler):
            _ = handler(makeRequest(link: key, mtu: link.mtu, characteristic: record.local, offset: 0, value: value))
        case .manual:
            let request = makeRequest(link: key, mtu: link.mtu, characteristic: record.local, offset: 0, value: value)
            world.record(
                .writeRequest, central: key.central, peripheral: key.peripheral, attribute: characteristic.uuid,
                handle: characteristic.handle, value: value, writeType: .withoutResponse,
                detail: "requests=1 id=\(request.id)")
            world.peripherals[key.peripheral]!.events.yield(.writeRequests([request]))
        }
    }

    /// The requests a peripheral receives for one write: one, or one per Prepare Write part.
    func writeBatch(_ value: Data, type: WriteType, link: LinkKey, mtu: Int, characteristic: LocalCharacteristic)
        -> [ATTRequest]
    {
        guard type == .withResponse, value.count > mtu - 3 else {
            return [makeRequest(link: link, mtu: mtu, characteristic: characteristic, offset: 0, value: value)]
        }
        let part = mtu - 5
        return stride(from: 0, to: value.count, by: part).map { offset in
            let end = min(offset + part, value.count)
            return makeRequest(
                link: link, mtu: mtu, characteristic: characteristic, offset: offset,
                value: value.subdata(in: value.startIndex + offset..<value.startIndex + end))
        }
    }
}
