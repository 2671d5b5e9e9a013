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
        try await pairIfNeeded(central: central, for: characteristic) { database, security in
            _ = try database.planRead(handle: characteristic.handle, offset: 0, security: security)
        }
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
            return try await perform(kind, on: key, cost: world.cost(on: key, roundTrips: 1), injected: injected) {
                log(nil, error)
                throw error
            }
        }
        if case .askPeripheral(let local) = plan,
            case .manual = world.peripherals[key.peripheral]!.configuration.requestHandling
        {
            if let error = injected?.error {
                return try await perform(kind, on: key, cost: world.cost(on: key, roundTrips: 1)) {
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
            return try await perform(kind, on: key, cost: world.cost(on: key, roundTrips: 1), injected: injected) {
                log(nil, error)
                throw error
            }
        }
        let cost = world.cost(on: key, roundTrips: Self.readRoundTrips(length: value.count, mtu: link.mtu))
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
        let cost = world.cost(on: key, roundTrips: Self.readRoundTrips(length: length, mtu: link.mtu))
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
}
