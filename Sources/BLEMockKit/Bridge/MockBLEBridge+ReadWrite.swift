import BLECore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

extension MockBLEBridge {
    // MARK: Reads

    /// Reads a characteristic as the central's stack does: one Read, then Read Blobs while a
    /// full part (ATT_MTU − 1 bytes) comes back, up to 512 bytes; each request and its
    /// response take one connection interval.
    func read(central: UUID, characteristic: RemoteCharacteristic) async throws -> Data {
        let link = try requireLink(central: central, peripheral: characteristic.peripheral, "readValue")
        _ = try requireCurrent(characteristic)
        let key = LinkKey(central: central, peripheral: characteristic.peripheral)
        let injected = injection(
            .read, central: central, peripheral: key.peripheral, characteristic: characteristic.uuid)
        let kind = WaitingOperation.Kind.read(characteristic.uuid, handle: characteristic.handle)
        let log: (Data?, (any Error)?) -> Void = { value, error in
            self.world.record(
                .read, central: central, peripheral: characteristic.peripheral, attribute: characteristic.uuid,
                handle: characteristic.handle, value: value, error: error)
        }
        let database = world.peripherals[key.peripheral]!.database
        let plan: GATTDatabase.ReadPlan
        do {
            plan = try database.planRead(handle: characteristic.handle, offset: 0, security: link.security)
        } catch {
            return try await perform(kind, on: key, cost: world.cost(roundTrips: 1), injected: injected) {
                log(nil, error)
                throw error
            }
        }
        if case .askPeripheral(let local) = plan,
            case .manual = world.peripherals[key.peripheral]!.configuration.requestHandling
        {
            if let error = injected?.error {
                return try await perform(kind, on: key, cost: world.cost(roundTrips: 1)) {
                    log(nil, error)
                    throw error
                }
            }
            let request = makeRequest(link: key, mtu: link.mtu, characteristic: local, offset: 0, value: nil)
            let value = try await suspend(kind, on: key) { id in
                self.openRequests[request.id] = OpenRequest(
                    request: request, link: key, waiting: id, kind: .read(soFar: Data(), remote: characteristic))
                if injected == .neverAnswers { return }
                self.deliverOrQueue(request.id)
            }
            return value as? Data ?? Data()
        }
        // The stack (static value), the automatic responder or the handler answers: the value
        // is known now, and its length sets the number of round trips.
        let value: Data
        do {
            value = try answer(plan, link: key, mtu: link.mtu)
        } catch {
            return try await perform(kind, on: key, cost: world.cost(roundTrips: 1), injected: injected) {
                log(nil, error)
                throw error
            }
        }
        let cost = world.cost(roundTrips: Self.readRoundTrips(length: value.count, mtu: link.mtu))
        return try await perform(kind, on: key, cost: cost, injected: injected) {
            if let error = injected?.error {
                log(nil, error)
                throw error
            }
            log(value, nil)
            return value
        }
    }

    /// The value a read gets without a manual peripheral: the static value, the current value
    /// (automatic), or the handler's parts.
    func answer(_ plan: GATTDatabase.ReadPlan, link key: LinkKey, mtu: Int) throws -> Data {
        switch plan {
        case .answered(let value):
            return value
        case .askPeripheral(let local):
            let peripheral = world.peripherals[key.peripheral]!
            guard case .handler(let handler) = peripheral.configuration.requestHandling else {
                let current = peripheral.database.characteristic(at: local.handle)!.value
                return Data(current.prefix(GATTDatabase.maximumValueLength))
            }
            var soFar = Data()
            while true {
                let request = makeRequest(link: key, mtu: mtu, characteristic: local, offset: soFar.count, value: nil)
                let response = handler(request)
                guard response.result == .success else { throw ATTError(response.result) }
                let (total, done) = Self.appendReadPart(response.value ?? Data(), to: soFar, mtu: mtu)
                soFar = total
                if done { return soFar }
            }
        }
    }

    /// Appends one Read (Blob) response: at most ATT_MTU − 1 bytes count; the read is done
    /// when a part is shorter than that or the value reached 512 bytes.
    static func appendReadPart(_ part: Data, to soFar: Data, mtu: Int) -> (total: Data, done: Bool) {
        let partLimit = mtu - 1
        let accepted = part.prefix(partLimit)
        var total = soFar + accepted
        if total.count >= GATTDatabase.maximumValueLength {
            total = total.prefix(GATTDatabase.maximumValueLength)
            return (total, true)
        }
        return (total, accepted.count < partLimit)
    }

    func deliverReadRequest(_ request: ATTRequest, link: LinkKey) {
        world.record(
            .readRequest, central: link.central, peripheral: link.peripheral, attribute: request.characteristic.uuid,
            handle: request.characteristic.handle, detail: "offset=\(request.offset) id=\(request.id)")
        world.peripherals[link.peripheral]?.events.yield(.readRequest(request))
    }

    func makeRequest(link: LinkKey, mtu: Int, characteristic: LocalCharacteristic, offset: Int, value: Data?)
        -> ATTRequest
    {
        defer { nextRequestID += 1 }
        return ATTRequest(
            id: nextRequestID, central: RemoteCentral(identifier: link.central, maximumUpdateValueLength: mtu - 3),
            characteristic: characteristic, offset: offset, value: value)
    }

    func readDescriptor(central: UUID, descriptor: RemoteDescriptor) async throws -> Data {
        let link = try requireLink(central: central, peripheral: descriptor.peripheral, "readValue(for:)")
        try requireCurrent(descriptor)
        let key = LinkKey(central: central, peripheral: descriptor.peripheral)
        let injected = injection(
            .read, central: central, peripheral: key.peripheral, characteristic: descriptor.characteristic.uuid)
        let database = world.peripherals[descriptor.peripheral]!.database
        let result: Result<Data, any Error> = Result {
            if let error = injected?.error { throw error }
            switch try database.planDescriptorRead(handle: descriptor.handle, offset: 0) {
            case .answered(let data):
                return data
            case .clientConfiguration(let characteristic):
                let raw = link.subscriptions[characteristic.handle]?.rawValue ?? 0
                return Data([UInt8(raw & 0xFF), UInt8(raw >> 8)])
            }
        }
        let length = (try? result.get())?.count ?? 0
        let cost = world.cost(roundTrips: Self.readRoundTrips(length: length, mtu: link.mtu))
        return try await perform(.operation("read descriptor"), on: key, cost: cost, injected: injected) {
            switch result {
            case .success(let value):
                self.world.record(
                    .readDescriptor, central: central, peripheral: descriptor.peripheral, attribute: descriptor.uuid,
                    handle: descriptor.handle, value: value)
                return value
            case .failure(let error):
                self.world.record(
                    .readDescriptor, central: central, peripheral: descriptor.peripheral, attribute: descriptor.uuid,
                    handle: descriptor.handle, error: error)
                throw error
            }
        }
    }

    func writeDescriptor(central: UUID, descriptor: RemoteDescriptor, value: Data) async throws {
        let link = try requireLink(central: central, peripheral: descriptor.peripheral, "writeValue(_:for:)")
        try requireCurrent(descriptor)
        let key = LinkKey(central: central, peripheral: descriptor.peripheral)
        let injected = injection(
            .write, central: central, peripheral: key.peripheral, characteristic: descriptor.characteristic.uuid)
        let database = world.peripherals[descriptor.peripheral]!.database
        let cost = world.cost(roundTrips: Self.writeRoundTrips(length: value.count, mtu: link.mtu))
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
            try await perform(kind, on: key, cost: world.cost(roundTrips: 1), injected: injected) {
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
        let cost = world.cost(roundTrips: Self.writeRoundTrips(length: value.count, mtu: link.mtu))
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

    // MARK: Answers from a manual peripheral

    func respond(peripheral: UUID, request: ATTRequest, result: ATTError.Code, value: Data?) throws {
        guard let open = openRequests[request.id], open.link.peripheral == peripheral else {
            throw APIMisuseError.unknownRequest(id: request.id)
        }
        openRequests[request.id] = nil
        let key = open.link
        world.record(
            .response, central: key.central, peripheral: peripheral, attribute: request.characteristic.uuid,
            handle: request.characteristic.handle, value: value, detail: "id=\(request.id) result=\(result.name)")
        guard let waitingID = open.waiting, let link = world.links[key] else { return }
        defer {
            if openRequests.values.allSatisfy({ $0.link != key || $0.waiting != waitingID }) {
                requestAnswered(on: key)
            }
        }
        switch open.kind {
        case .command:
            return
        case .read(let soFar, let remote):
            let logRead: (Data?, (any Error)?) -> Void = { value, error in
                self.world.record(
                    .read, central: key.central, peripheral: peripheral, attribute: remote.uuid, handle: remote.handle,
                    value: value, error: error)
            }
            guard result == .success else {
                logRead(nil, ATTError(result))
                resume(waitingID, with: .failure(ATTError(result)))
                return
            }
            let (total, done) = Self.appendReadPart(value ?? Data(), to: soFar, mtu: link.mtu)
            if done {
                logRead(total, nil)
                resume(waitingID, with: .success(total))
            } else {
                let next = makeRequest(
                    link: key, mtu: link.mtu, characteristic: request.characteristic, offset: total.count, value: nil)
                openRequests[next.id] = OpenRequest(
                    request: next, link: key, waiting: waitingID, kind: .read(soFar: total, remote: remote))
                world.links[key]!.requestInFlight = next.id
                deliverReadRequest(next, link: key)
            }
        case .write(let written, let remote, _):
            let error = result == .success ? nil : ATTError(result)
            world.record(
                .write, central: key.central, peripheral: peripheral, attribute: remote.uuid, handle: remote.handle,
                value: written, writeType: .withResponse, error: error)
            resume(waitingID, with: error.map { .failure($0) } ?? .success(()))
        }
    }
}
