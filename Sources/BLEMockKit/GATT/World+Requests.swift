import BLECore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The peripheral's GATT server: how requests are answered when they arrive. The stack
/// answers static values, discovery, Prepare Writes and CCCD writes itself; a dynamic
/// characteristic is answered by the peripheral's ``RequestHandling``: at once with its
/// current value (automatic), by its handler (which the bridge calls), or by the app
/// (manual), whose answer crosses the link like any other.
extension World {
    /// A procedure's request arrived at the peripheral.
    mutating func serveRequest(_ id: OperationID, on key: LinkKey) {
        // The procedure's fields are read in place, field by field: a copy of it (or of its
        // kind, for the discovery pages and reads most requests are) would retain everything it
        // holds.
        guard let position = pending.position(of: id),
            let (shape, completed, isLastExchange, injected) = pending.inPlace(
                at: position,
                { operation -> (RequestShape, Int, Bool, ErrorInjection.Failure?)? in
                    guard operation.procedure != nil else { return nil }
                    let shape: RequestShape
                    switch operation.procedure!.kind {
                    case .discoverServices, .discoverIncludedServices, .discoverCharacteristics, .discoverDescriptors:
                        shape = .page
                    case .read: shape = .read
                    case .write where operation.procedure!.cancelling != nil,
                        .writeDescriptor where operation.procedure!.cancelling != nil:
                        shape = .cancel
                    default: shape = .other
                    }
                    return (
                        shape, operation.procedure!.completed, operation.procedure!.isLastExchange,
                        operation.procedure!.injected
                    )
                })
        else { return }
        if completed == 0, let injected {
            pending.entries[position]!.procedure!.injected = nil
            guard let error = injected.error else {
                pending.entries[position]!.stage = .neverAnswered
                return armTransactionTimer(on: key)
            }
            return answerRequest(id, .failure(error), on: key)
        }
        switch shape {
        case .page: return answerRequest(id, .page, on: key)
        // The client's Execute Write of flags 0x00 after a refused Prepare Write: the queue is
        // dropped, and answered with an Execute Write Response.
        case .cancel: return answerRequest(id, .written, on: key)
        case .read:
            return serveRead(
                id, at: position, offset: pending.inPlace(at: position) { $0.procedure!.received.count }, on: key)
        case .other: break
        }
        guard let p = peripherals.position(of: key.peripheral), let slot = links.position(of: key) else { return }
        switch pending.inPlace(at: position, { $0.procedure!.kind }) {
        case .discoverServices, .discoverIncludedServices, .discoverCharacteristics, .discoverDescriptors, .read:
            // Answered above.
            break
        case .readBlob(_, let offset):
            serveRead(id, at: position, offset: offset, on: key)
        case .readDescriptor(let descriptor):
            do {
                // A Read, then Read Blobs: each answer carries the next ATT_MTU − 1 bytes, and
                // the central collects them until a shorter part arrives, as for a characteristic.
                let value = try descriptorValue(descriptor, on: links.entries[slot]!)
                let part = links[at: slot].mtu - 1
                let offset = min(completed * part, value.count)
                answerRequest(id, .value(Data(value[(value.startIndex + offset)...].prefix(part))), on: key)
            } catch {
                answerRequest(id, .failure(error), on: key)
            }
        case .write(let characteristic, let value):
            if completed == 0 {
                do {
                    // The first request (the Write Request, or the first Prepare Write) is
                    // checked for permission and security. A long write's length is checked
                    // only at the Execute Write, once every part was queued (Vol 3, Part F,
                    // 3.4.6.1: "Invalid Attribute Value Length" comes from the Execute Write).
                    _ = try peripherals[at: p].database.planWrite(
                        handle: characteristic.handle, length: isLastExchange ? value.count : 0, type: .withResponse,
                        security: links[at: slot].security)
                } catch {
                    return answerRequest(id, .failure(error), on: key)
                }
            }
            guard isLastExchange else {
                // A Prepare Write: the server queues its part until the Execute Write, and
                // refuses one its queue cannot hold (Vol 3, Part F, 3.4.6.1); the client then
                // cancels the write (see `procedureAnswered`).
                if let capacity = peripherals[at: p].configuration.preparedWriteCapacity {
                    let part = GATTProcedure.preparedPartLength(mtu: links[at: slot].mtu)
                    let queued = min((completed + 1) * part, value.count)
                    if queued > capacity { return answerRequest(id, .failure(ATTError(.prepareQueueFull)), on: key) }
                }
                return answerRequest(id, .page, on: key)
            }
            guard value.count <= GATTDatabase.maximumValueLength else {
                return answerRequest(id, .failure(ATTError(.invalidAttributeValueLength)), on: key)
            }
            serveWrite(id, characteristic: characteristic, value: value, on: key)
        case .writeDescriptor(let descriptor, _):
            do {
                try peripherals[at: p].database.planDescriptorWrite(handle: descriptor.handle)
            } catch {
                answerRequest(id, .failure(error), on: key)
            }
        case .setNotify(let characteristic, let enabled, let indications):
            do {
                try serveSubscription(characteristic, enabled: enabled, indications: indications, on: key)
                answerRequest(id, .written, on: key)
            } catch {
                answerRequest(id, .failure(error), on: key)
            }
        }
    }

    /// Sends the peripheral's answer to a request.
    mutating func answerRequest(_ id: OperationID, _ answer: ServerAnswer, on key: LinkKey) {
        if let position = pending.position(of: id) { pending.entries[position]!.stage = .sent }
        sendToCentral(.response(id, answer), on: key)
    }

    /// A Read (offset 0) or Read Blob at `offset`, of the operation at `position` in
    /// `pending`: an offset past the end is 0x07 Invalid Offset (Vol 3, Part F, 3.4.4.5).
    /// For a value no longer than ATT_MTU − 1 bytes the specification lets a server answer a
    /// Read Blob with 0x0B Attribute Not Long instead
    /// ("may"), and bumble's server does (scripts/bumble-att-checks.py, check 2); the kit
    /// answers with the bytes (empty at an offset equal to the length), as the scenario
    /// format's `readRequest` specifies. A client reading a long value accepts either answer
    /// as the end of the value (see `procedureAnswered`), so a manual peripheral may answer 0x0B.
    private mutating func serveRead(_ id: OperationID, at position: Int, offset: Int, on key: LinkKey) {
        // (The handle is read in place: reading it through the record copied all of it.)
        guard let slot = links.position(of: key), let p = peripherals.position(of: key.peripheral),
            let handle = pending.inPlace(at: position, { $0.procedure?.characteristic?.handle })
        else { return }
        let mtu = links[at: slot].mtu
        let security = links[at: slot].security
        do {
            let plan = try peripherals[at: p].database.planRead(handle: handle, offset: offset, security: security)
            switch plan {
            case .answered(let value):
                answerRequest(id, .value(value.prefix(mtu - 1)), on: key)
            case .askPeripheral(let local):
                switch peripherals[at: p].answering {
                case .automatic:
                    let current = peripherals[at: p].database.characteristic(at: local.handle)!.value
                    let value = try GATTDatabase.slice(current.prefix(GATTDatabase.maximumValueLength), from: offset)
                    answerRequest(id, .value(value.prefix(mtu - 1)), on: key)
                case .handler:
                    let request = makeRequest(link: key, characteristic: local, offset: offset, value: nil)
                    pending[id]!.stage = .awaitingAnswer(request.id)
                    armTransactionTimer(on: key)
                    effects.append(.ask(key.peripheral, .read(request, id)))
                case .manual:
                    let request = makeRequest(link: key, characteristic: local, offset: offset, value: nil)
                    pending[id]!.stage = .awaitingAnswer(request.id)
                    armTransactionTimer(on: key)
                    record(
                        .readRequest, central: key.central, peripheral: key.peripheral, attribute: local.uuid,
                        handle: local.handle, detail: "offset=\(offset) id=\(request.id)")
                    deliver(.readRequest(request), to: key.peripheral)
                }
            }
        } catch {
            answerRequest(id, .failure(error), on: key)
        }
    }

    /// The last request of a write with response (the Write Request, or the Execute Write of
    /// a long write): the value is stored, or the handler or app is asked.
    private mutating func serveWrite(
        _ id: OperationID, characteristic: RemoteCharacteristic, value: Data, on key: LinkKey
    ) {
        // (The record is read in place: the subscript's getter copies all of it.)
        let p = peripherals.position(of: key.peripheral)!
        guard let local = peripherals[at: p].database.localCharacteristic(at: characteristic.handle) else {
            return answerRequest(id, .failure(ATTError(.invalidHandle)), on: key)
        }
        switch peripherals[at: p].answering {
        case .automatic:
            peripherals.entries[p]!.database.setValue(value, at: local.handle)
            answerRequest(id, .written, on: key)
        case .handler, .manual:
            let batch = writeBatch(value, link: key, characteristic: local)
            pending[id]!.procedure!.batch = batch
            pending[id]!.stage = .awaitingAnswer(batch[0].id)
            armTransactionTimer(on: key)
            if peripherals[at: p].answering == .handler {
                effects.append(.ask(key.peripheral, .write(batch, id)))
            } else {
                record(
                    .writeRequest, central: key.central, peripheral: key.peripheral, attribute: local.uuid,
                    handle: local.handle, value: value, writeType: .withResponse,
                    detail: "requests=\(batch.count) id=\(batch[0].id)")
                deliver(.writeRequests(batch), to: key.peripheral)
            }
        }
    }

    /// Subscribes or unsubscribes a central (a CCCD write arriving at the server).
    private mutating func serveSubscription(
        _ characteristic: RemoteCharacteristic, enabled: Bool, indications: Bool, on key: LinkKey
    ) throws {
        // The link's fields are read in place: a copy of it would retain everything it holds.
        let slot = links.position(of: key)!
        let (maximumValueLength, security, subscribed) = links.inPlace(at: slot) { link in
            (link.maximumValueLength, link.security, link.subscriptions[characteristic.handle])
        }
        let p = peripherals.position(of: key.peripheral)!
        // A CCCD write naming a characteristic the server no longer has (its service was
        // removed while the request crossed) is answered as any request for a missing handle:
        // an Error Response with 0x01 Invalid Handle (Vol 3, Part F, 3.4.1.1).
        guard let local = peripherals[at: p].database.localCharacteristic(at: characteristic.handle) else {
            throw ATTError(.invalidHandle)
        }
        let remoteCentral = RemoteCentral(identifier: key.central, maximumUpdateValueLength: maximumValueLength)
        if enabled {
            var kind = try peripherals[at: p].database.planSubscribe(
                handle: characteristic.handle, security: security)
            if indications, local.properties.contains(.indicate) {
                kind = .indicate
            } else if indications, local.properties.contains(.indicateEncryptionRequired) {
                if let error = security.encryptionError { throw error }
                kind = .indicate
            }
            // A write of the other bit to a subscribed central's CCCD switches its updates to that
            // kind (the descriptor is a bit field the client may rewrite at any time: Vol 3,
            // Part G, 3.3.3.3); the peripheral app heard of the subscription already.
            guard subscribed != kind else { return }
            links[key]!.subscriptions[characteristic.handle] = kind
            self.record(
                .subscribe, central: key.central, peripheral: key.peripheral, attribute: characteristic.uuid,
                handle: characteristic.handle, detail: kind == .notify ? "notify" : "indicate")
            if subscribed == nil { deliver(.subscribed(remoteCentral, local), to: key.peripheral) }
        } else {
            guard links[key]!.subscriptions.removeValue(forKey: characteristic.handle) != nil else { return }
            self.record(
                .unsubscribe, central: key.central, peripheral: key.peripheral, attribute: characteristic.uuid,
                handle: characteristic.handle)
            deliver(.unsubscribed(remoteCentral, local), to: key.peripheral)
        }
    }

    /// A write command arrived: stored (automatic), shown to the handler (whose answer is
    /// ignored), or delivered to the app as a write request (manual).
    mutating func serveCommand(_ command: WriteCommand, on key: LinkKey) {
        let handle = command.characteristic.handle
        guard let p = peripherals.position(of: key.peripheral), let slot = links.position(of: key) else { return }
        // A Write Command the server cannot accept (no such handle, no permission, encryption
        // needed) is dropped: ATT has no response to a command, so the central never knows.
        do {
            _ = try peripherals[at: p].database.planWrite(
                handle: handle, length: command.value.count, type: .withoutResponse,
                security: links[at: slot].security)
        } catch {
            self.record(
                .refused, central: key.central, peripheral: key.peripheral, attribute: command.characteristic.uuid,
                handle: handle, value: command.value, writeType: .withoutResponse, error: error,
                detail: "write command dropped by the peripheral (a command gets no response)")
            return
        }
        guard let record = peripherals[at: p].database.characteristic(at: handle) else { return }
        // (In place: the subscript's getter copies the whole peripheral record.)
        switch peripherals[at: p].answering {
        case .automatic:
            peripherals.entries[p]!.database.setValue(command.value, at: handle)
        case .handler:
            var request = makeRequest(link: key, characteristic: record.local, offset: 0, value: command.value)
            request.isCommand = true
            effects.append(.ask(key.peripheral, .command(request)))
        case .manual:
            var request = makeRequest(link: key, characteristic: record.local, offset: 0, value: command.value)
            request.isCommand = true
            self.record(
                .writeRequest, central: key.central, peripheral: key.peripheral, attribute: command.characteristic.uuid,
                handle: handle, value: command.value, writeType: .withoutResponse, detail: "requests=1 id=\(request.id)"
            )
            deliver(.writeRequests([request]), to: key.peripheral)
        }
    }

    // MARK: The app's answers

    /// Whether `peripheral`'s request `id` waits for its app's answer (a request answered, or
    /// whose link went, does not).
    func awaitsAnswer(from peripheral: UUID, to id: UInt64) -> Bool {
        pending.values.contains { $0.stage == .awaitingAnswer(id) && $0.link?.peripheral == peripheral }
    }

    /// A manual peripheral answers a request it was handed; returns the operation it answers,
    /// or `nil` for a write command, which has no response: CoreBluetooth ignores the call. A
    /// success is ignored quietly; an error is a ``Misuse`` (the central never learns of it).
    /// A read's value longer than an attribute holds from the request's offset (512 bytes in
    /// all) is cut to it, and a ``Misuse`` too; a strict peripheral throws either at the call
    /// instead, and the request stays unanswered. A write's answer carries no value (an ATT
    /// Write Response has none): a value given with it is ignored, as CoreBluetooth ignores the
    /// value of the request object an app answers a write with, which holds what was written.
    @discardableResult
    ///
    /// `call` names the app's call in a misuse's error (the CoreBluetooth-shaped API's answer is
    /// `respond(to:withResult:)`, with the value in the request).
    mutating func respond(
        peripheral: UUID, to request: ATTRequest, result: ATTError.Code, value: Data?,
        call: String = "respond(to:withResult:value:)"
    ) throws -> OperationID? {
        if request.isCommand {
            record(
                .response, central: request.central.identifier, peripheral: peripheral,
                attribute: request.characteristic.uuid, handle: request.characteristic.handle, value: value,
                detail: "id=\(request.id) result=\(result.name) ignored: a write command gets no response")
            try answeredCommand(request, result: result, by: peripheral, strictness: .throwing)
            return nil
        }
        guard
            let operation = pending.values.first(where: {
                $0.stage == .awaitingAnswer(request.id) && $0.link?.peripheral == peripheral
            }), let key = operation.link
        else { throw APIMisuseError.unknownRequest(id: request.id) }
        let answered = try readAnswer(
            RequestResponse(result: result, value: value), to: request, of: operation, by: peripheral,
            strictness: .throwing, call: call)
        // The entry holds what the response carries: a read's value cut at ATT_MTU − 1 (the part
        // after it is asked for again, at its offset).
        let isWrite: Bool = if case .write? = operation.procedure?.kind { true } else { false }
        let carried = isWrite ? value : value?.prefix(links[existing: key].mtu - 1)
        record(
            .response, central: key.central, peripheral: peripheral, attribute: request.characteristic.uuid,
            handle: request.characteristic.handle, value: carried, detail: "id=\(request.id) result=\(result.name)")
        answer(operation.id, with: answered)
        return operation.id
    }

    /// A handler's answer to a request it left for later (see
    /// `MockPeripheralManager.Configuration.deferringHandler`): the operation waiting for it (for
    /// a write, the request or one of its batch) is answered as a handler's answer is
    /// (``handlerAnswered(_:of:with:by:)``). When none
    /// waits (its link went away meanwhile, or its service), the answer is dropped, as one that
    /// arrives for a link that is gone.
    mutating func answerLater(peripheral: UUID, to request: ATTRequest, with response: RequestResponse) {
        let waiting = pending.values.first { operation in
            guard case .awaitingAnswer(let awaited) = operation.stage, operation.link?.peripheral == peripheral else {
                return false
            }
            return awaited == request.id || operation.procedure?.batch.contains { $0.id == request.id } == true
        }
        guard let waiting else { return }
        handlerAnswered(request, of: waiting.id, with: response, by: peripheral)
    }

    /// A request handler answered a request of operation `id`: as a manual peripheral's
    /// answer is taken, except that a misuse in it is recorded whatever `strictMisuse` says (a
    /// handler's answer is no call that could throw).
    mutating func handlerAnswered(
        _ request: ATTRequest, of id: OperationID, with response: RequestResponse, by peripheral: UUID
    ) {
        guard let operation = pending[id] else { return }
        let answered = try? readAnswer(response, to: request, of: operation, by: peripheral, strictness: .recording)
        answer(id, with: answered ?? response)
    }

    /// A request handler answered a write command: an error answer is a ``Misuse``, as a
    /// manual peripheral's is, recorded whatever `strictMisuse` says.
    mutating func handlerAnswered(command request: ATTRequest, with response: RequestResponse, by peripheral: UUID) {
        try? answeredCommand(request, result: response.result, by: peripheral, strictness: .recording)
    }

    /// Whether a misuse in a peripheral's answer throws (a strict peripheral's call) or is
    /// recorded whatever `strictMisuse` says (a handler's answer, which no call could throw from).
    enum AnswerStrictness {
        case throwing, recording
    }

    /// An answer to a write command: an error one is a ``Misuse`` (the central never learns of it).
    private mutating func answeredCommand(
        _ request: ATTRequest, result: ATTError.Code, by peripheral: UUID, strictness: AnswerStrictness
    ) throws {
        guard result != .success else { return }
        try misused(
            .responseToCommand, by: .peripheral(peripheral), central: request.central.identifier,
            peripheral: peripheral, characteristic: request.characteristic.uuid, handle: request.characteristic.handle,
            error: .responseToCommand(id: request.id, result: result), throwing: strictness == .throwing)
    }

    /// A successful answer to a read request as it goes back: its value cut to what an
    /// attribute holds from the request's offset on (512 bytes in all), which is a ``Misuse``.
    private mutating func readAnswer(
        _ response: RequestResponse, to request: ATTRequest, of operation: PendingOperation, by peripheral: UUID,
        strictness: AnswerStrictness, call: String = "respond(to:withResult:value:)"
    ) throws -> RequestResponse {
        guard response.result == .success, let value = response.value, let procedure = operation.procedure else {
            return response
        }
        if case .write = procedure.kind { return response }
        let limit = max(0, GATTDatabase.maximumValueLength - request.offset)
        guard value.count > limit else { return response }
        let central = request.central.identifier
        let error = APIMisuseError.valueTooLong(
            operation: call, length: value.count, maximum: limit)
        try misused(
            .valueTruncated, by: .peripheral(peripheral), central: central, peripheral: peripheral,
            characteristic: request.characteristic.uuid, handle: request.characteristic.handle, error: error,
            throwing: strictness == .throwing)
        record(
            .truncated, central: central, peripheral: peripheral, attribute: request.characteristic.uuid,
            handle: request.characteristic.handle,
            detail: "answer to read request id=\(request.id) at offset \(request.offset) of \(value.count) bytes "
                + "cut to \(limit) (an attribute value holds at most \(GATTDatabase.maximumValueLength))")
        return RequestResponse(result: .success, value: value.prefix(limit))
    }

    /// The handler's or the app's answer to operation `id`'s request: it goes back over the
    /// link (in the same connection event when given in the same instant).
    mutating func answer(_ id: OperationID, with response: RequestResponse) {
        guard let operation = pending[id], case .awaitingAnswer = operation.stage, case .gatt(let key) = operation.kind,
            let link = links[key], let procedure = operation.procedure
        else { return }
        guard response.result == .success else {
            return answerRequest(id, .failure(ATTError(response.result)), on: key)
        }
        switch procedure.kind {
        case .write:
            answerRequest(id, .written, on: key)
        default:
            answerRequest(id, .value((response.value ?? Data()).prefix(link.mtu - 1)), on: key)
        }
    }

    /// The requests a peripheral receives for a write with response: one, or one per
    /// Prepare Write part (all delivered at the Execute Write).
    mutating func writeBatch(_ value: Data, link key: LinkKey, characteristic: LocalCharacteristic) -> [ATTRequest] {
        let mtu = links[existing: key].mtu
        guard value.count > mtu - 3 else {
            return [makeRequest(link: key, characteristic: characteristic, offset: 0, value: value)]
        }
        let part = GATTProcedure.preparedPartLength(mtu: mtu)
        return stride(from: 0, to: value.count, by: part).map { offset in
            let end = min(offset + part, value.count)
            return makeRequest(
                link: key, characteristic: characteristic, offset: offset,
                value: value.subdata(in: value.startIndex + offset..<value.startIndex + end))
        }
    }

    /// A request as the peripheral's app receives it.
    mutating func makeRequest(link key: LinkKey, characteristic: LocalCharacteristic, offset: Int, value: Data?)
        -> ATTRequest
    {
        defer { nextRequestID += 1 }
        let mtu = links[key]?.mtu ?? 23
        return ATTRequest(
            id: nextRequestID,
            central: RemoteCentral(
                identifier: key.central, maximumUpdateValueLength: Link.maximumValueLength(mtu: mtu)),
            characteristic: characteristic, offset: offset, value: value)
    }

    /// A descriptor's value as a read gets it (the CCCD's from the link's subscription).
    func descriptorValue(_ descriptor: RemoteDescriptor, on link: Link) throws -> Data {
        switch try peripherals[existing: descriptor.peripheral].database.planDescriptorRead(
            handle: descriptor.handle, offset: 0)
        {
        case .answered(let data):
            return data
        case .clientConfiguration(let characteristic):
            let raw = link.subscriptions[characteristic.handle]?.rawValue ?? 0
            return Data([UInt8(raw & 0xFF), UInt8(raw >> 8)])
        }
    }
}

/// How the server answers a request: with a discovery page, a part of a characteristic's
/// value, the Execute Write Response to the Execute Write (flags 0x00) that drops a refused long
/// write's queued parts, or as its procedure's kind says in full.
private enum RequestShape {
    case page, read, cancel, other
}
