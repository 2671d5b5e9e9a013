import BLECore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

extension MockBLEBridge {
    /// One Read Blob Request at `offset`, as the peripheral receives it when a central's long
    /// read reaches that offset: the response carries at most ATT_MTU − 1 bytes of the value
    /// from `offset`; `offset` equal to the value's length gives an empty part, beyond it ATT
    /// 0x07 (invalid offset). Takes one round trip. A static value is answered by the stack;
    /// a dynamic one with the peripheral's current value (automatic) or by its handler; a
    /// manual peripheral gets the request and answers it with `respond(to:withResult:value:)`.
    func readBlob(central: UUID, characteristic: RemoteCharacteristic, offset: Int) async throws -> Data {
        try await pairIfNeeded(central: central, for: characteristic) { database, security in
            _ = try database.planRead(handle: characteristic.handle, offset: offset, security: security)
        }
        let link = try requireLink(central: central, peripheral: characteristic.peripheral, "readValue")
        _ = try requireCurrent(characteristic)
        let key = LinkKey(central: central, peripheral: characteristic.peripheral)
        let injected = injection(
            .read, central: central, peripheral: key.peripheral, characteristic: characteristic.uuid)
        let mtu = link.mtu
        let result: Result<Data, any Error>
        do {
            let database = world.peripherals[key.peripheral]!.database
            switch try database.planRead(handle: characteristic.handle, offset: offset, security: link.security) {
            case .answered(let value):
                result = .success(value.prefix(mtu - 1))
            case .askPeripheral(let local):
                let configuration = world.peripherals[key.peripheral]!.configuration
                let request = makeRequest(link: key, mtu: mtu, characteristic: local, offset: offset, value: nil)
                switch configuration.requestHandling {
                case .automatic:
                    let current = database.characteristic(at: local.handle)!.value
                    let value = try GATTDatabase.slice(current.prefix(GATTDatabase.maximumValueLength), from: offset)
                    result = .success(value.prefix(mtu - 1))
                case .handler(let handler):
                    let response = handler(request)
                    guard response.result == .success else { throw ATTError(response.result) }
                    result = .success((response.value ?? Data()).prefix(mtu - 1))
                case .manual:
                    return try await manualReadBlob(request, remote: characteristic, link: key, injected: injected)
                }
            }
        } catch {
            result = .failure(error)
        }
        world.record(
            .readRequest, central: central, peripheral: key.peripheral, attribute: characteristic.uuid,
            handle: characteristic.handle, detail: "offset=\(offset)")
        return try await perform(
            .read(characteristic.uuid, handle: characteristic.handle), on: key,
            cost: world.cost(on: key, roundTrips: 1), injected: injected
        ) {
            let outcome = result.flatMap { value in injected?.error.map { .failure($0) } ?? .success(value) }
            switch outcome {
            case .success(let value):
                self.world.record(
                    .response, central: central, peripheral: key.peripheral, attribute: characteristic.uuid,
                    handle: characteristic.handle, value: value, detail: "offset=\(offset)")
                return value
            case .failure(let error):
                self.world.record(
                    .response, central: central, peripheral: key.peripheral, attribute: characteristic.uuid,
                    handle: characteristic.handle, error: error, detail: "offset=\(offset)")
                throw error
            }
        }
    }

    /// A manual peripheral's Read Blob: delivered as a request; its answer (cut to
    /// ATT_MTU − 1 bytes) completes the call.
    private func manualReadBlob(
        _ request: ATTRequest, remote: RemoteCharacteristic, link key: LinkKey, injected: ErrorInjection.Failure?
    ) async throws -> Data {
        if let error = injected?.error {
            return try await perform(
                .read(remote.uuid, handle: remote.handle), on: key, cost: world.cost(on: key, roundTrips: 1)
            ) { throw error }
        }
        let value = try await suspend(.read(remote.uuid, handle: remote.handle), on: key) { id in
            // A part at the limit would normally ask for the next one; a single Read Blob
            // stops after it, so the read is marked done whatever the part's length.
            self.openRequests[request.id] = OpenRequest(
                request: request, link: key, waiting: id, kind: .blob(remote: remote))
            if injected == .neverAnswers { return }
            self.deliverOrQueue(request.id)
        }
        return value as? Data ?? Data()
    }
}
