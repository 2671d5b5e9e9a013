import BLECore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension MockBLEBridge {
    // MARK: Reads

    /// Reads a characteristic as the central's stack does: one Read, then Read Blobs while a
    /// full part (ATT_MTU − 1 bytes) comes back, up to 512 bytes.
    func read(central: UUID, characteristic: RemoteCharacteristic) async throws -> Data {
        let link = try requireLink(central: central, peripheral: characteristic.peripheral, "readValue")
        _ = try requireCurrent(characteristic)
        let key = LinkKey(central: central, peripheral: characteristic.peripheral)
        let peripheral = world.peripherals[characteristic.peripheral]!
        func log(_ value: Data?, _ error: (any Error)?) {
            world.record(
                .read, central: central, peripheral: characteristic.peripheral, attribute: characteristic.uuid,
                handle: characteristic.handle, value: value, error: error)
        }
        let plan: GATTDatabase.ReadPlan
        do {
            plan = try peripheral.database.planRead(handle: characteristic.handle, offset: 0, security: link.security)
        } catch {
            log(nil, error)
            throw error
        }
        switch plan {
        case .answered(let value):
            log(value, nil)
            return value
        case .askPeripheral(let local):
            switch peripheral.configuration.requestHandling {
            case .automatic:
                let value = Data(peripheral.database.characteristic(at: local.handle)!.value.prefix(GATTDatabase.maximumValueLength))
                log(value, nil)
                return value
            case .handler(let handler):
                var soFar = Data()
                while true {
                    let request = makeRequest(link: key, mtu: link.mtu, characteristic: local, offset: soFar.count, value: nil)
                    let response = handler(request)
                    guard response.result == .success else {
                        log(nil, ATTError(response.result))
                        throw ATTError(response.result)
                    }
                    let (total, done) = Self.appendReadPart(response.value ?? Data(), to: soFar, mtu: link.mtu)
                    soFar = total
                    if done { break }
                }
                log(soFar, nil)
                return soFar
            case .manual:
                let request = makeRequest(link: key, mtu: link.mtu, characteristic: local, offset: 0, value: nil)
                return try await suspend(.read(characteristic.uuid, handle: characteristic.handle), on: key) { id in
                    self.openRequests[request.id] = OpenRequest(
                        request: request, link: key, waiting: id, kind: .read(soFar: Data(), remote: characteristic))
                    self.deliverReadRequest(request, link: key)
                }
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

    func readDescriptor(central: UUID, descriptor: RemoteDescriptor) throws -> Data {
        let link = try requireLink(central: central, peripheral: descriptor.peripheral, "readValue(for:)")
        _ = try requireCurrent(descriptor.characteristic)
        let database = world.peripherals[descriptor.peripheral]!.database
        do {
            let value: Data
            switch try database.planDescriptorRead(handle: descriptor.handle, offset: 0) {
            case .answered(let data): value = data
            case .clientConfiguration(let characteristic):
                let kind = link.subscriptions[characteristic.handle]
                let raw = kind?.rawValue ?? 0
                value = Data([UInt8(raw & 0xFF), UInt8(raw >> 8)])
            }
            world.record(
                .readDescriptor, central: central, peripheral: descriptor.peripheral, attribute: descriptor.uuid,
                handle: descriptor.handle, value: value)
            return value
        } catch {
            world.record(
                .readDescriptor, central: central, peripheral: descriptor.peripheral, attribute: descriptor.uuid,
                handle: descriptor.handle, error: error)
            throw error
        }
    }

    func writeDescriptor(central: UUID, descriptor: RemoteDescriptor, value: Data) throws {
        _ = try requireLink(central: central, peripheral: descriptor.peripheral, "writeValue(_:for:)")
        _ = try requireCurrent(descriptor.characteristic)
        do {
            try world.peripherals[descriptor.peripheral]!.database.planDescriptorWrite(handle: descriptor.handle)
        } catch {
            world.record(
                .writeDescriptor, central: central, peripheral: descriptor.peripheral, attribute: descriptor.uuid,
                handle: descriptor.handle, value: value, error: error)
            throw error
        }
    }

    // MARK: Writes

    /// Writes a characteristic. With response, a value longer than ATT_MTU − 3 goes as a long
    /// write (Prepare Writes of ATT_MTU − 5 bytes, then Execute Write), which a manual
    /// peripheral receives as one batch of requests. Without response, a value longer than
    /// ATT_MTU − 3 is truncated to it, as on a device, and the truncation is logged.
    func write(central: UUID, characteristic: RemoteCharacteristic, value: Data, type: WriteType) async throws {
        let link = try requireLink(central: central, peripheral: characteristic.peripheral, "writeValue")
        _ = try requireCurrent(characteristic)
        let key = LinkKey(central: central, peripheral: characteristic.peripheral)
        var value = value
        func log(_ error: (any Error)?) {
            world.record(
                .write, central: central, peripheral: characteristic.peripheral, attribute: characteristic.uuid,
                handle: characteristic.handle, value: value, writeType: type, error: error)
        }
        if type == .withoutResponse, value.count > link.mtu - 3 {
            world.record(
                .truncated, central: central, peripheral: characteristic.peripheral, attribute: characteristic.uuid,
                handle: characteristic.handle, writeType: type,
                detail: "write without response of \(value.count) bytes cut to \(link.mtu - 3) (ATT_MTU \(link.mtu) - 3)")
            value = value.prefix(link.mtu - 3)
        }
        let local: LocalCharacteristic
        do {
            local = try world.peripherals[key.peripheral]!.database.planWrite(
                handle: characteristic.handle, length: value.count, type: type, security: link.security)
        } catch {
            log(error)
            throw error
        }
        let batch = writeBatch(value, type: type, link: key, mtu: link.mtu, characteristic: local)
        switch world.peripherals[key.peripheral]!.configuration.requestHandling {
        case .automatic:
            world.peripherals[key.peripheral]!.database.setValue(value, at: local.handle)
            log(nil)
        case .handler(let handler):
            for request in batch {
                let response = handler(request)
                if response.result != .success, type == .withResponse {
                    log(ATTError(response.result))
                    throw ATTError(response.result)
                }
            }
            log(nil)
        case .manual:
            world.record(
                .writeRequest, central: central, peripheral: key.peripheral, attribute: local.uuid, handle: local.handle,
                value: value, writeType: type, detail: "requests=\(batch.count) id=\(batch[0].id)")
            world.peripherals[key.peripheral]!.events.yield(.writeRequests(batch))
            guard type == .withResponse else {
                log(nil)
                return
            }
            let written = value
            _ = try await suspend(.write(characteristic.uuid, handle: characteristic.handle), on: key) { id in
                self.openRequests[batch[0].id] = OpenRequest(
                    request: batch[0], link: key, waiting: id, kind: .write(value: written, remote: characteristic))
            }
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
                deliverReadRequest(next, link: key)
            }
        case .write(let written, let remote):
            let error = result == .success ? nil : ATTError(result)
            world.record(
                .write, central: key.central, peripheral: peripheral, attribute: remote.uuid, handle: remote.handle,
                value: written, writeType: .withResponse, error: error)
            resume(waitingID, with: error.map { .failure($0) } ?? .success(Data()))
        }
    }
}
