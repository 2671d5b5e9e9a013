import BLECore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The central's GATT client: procedures run one at a time on each link's ATT bearer, each a
/// sequence of request/response exchanges through the link's pipes.
extension World {
    // MARK: Checks

    /// The slot of the link an operation needs: the central must be powered on and connected.
    @discardableResult
    mutating func requireLink(central: UUID, peripheral: UUID, _ operation: String) throws -> Int {
        try requirePoweredOn(central: central, operation)
        guard let slot = links.position(of: LinkKey(central: central, peripheral: peripheral)) else {
            // A peripheral the system never saw is unknown; a known one is not connected.
            let error =
                known.contains(peripheral)
                ? CoreBluetoothError(.notConnected) : unknownDevice(peripheral, central: central)
            record(.refused, central: central, peripheral: peripheral, error: error, detail: operation)
            throw error
        }
        return slot
    }

    /// Checks that the central discovered a characteristic on this link (not on an earlier
    /// one, nor another central) and that it is still current on its peripheral.
    mutating func requireCurrent(_ characteristic: RemoteCharacteristic, on slot: Int) throws {
        if links[at: slot].discoveredHandles.contains(characteristic.handle),
            let p = peripherals.position(of: characteristic.peripheral),
            peripherals[at: p].database.isCurrent(characteristic)
        {
            return
        }
        let error = CoreBluetoothError(.invalidHandle)
        let discovered = links[at: slot].discoveredHandles.contains(characteristic.handle)
        record(
            .refused, central: links[at: slot].key.central, peripheral: characteristic.peripheral,
            attribute: characteristic.uuid, handle: characteristic.handle, error: error,
            detail: discovered ? "stale characteristic" : "characteristic not discovered on this link")
        throw error
    }

    /// Checks that the central discovered a service on this link (as a primary service or an
    /// included one) and that it is still current: a service kept across a reconnect, or one
    /// another central discovered, is refused as its characteristics are. The central's lists
    /// are emptied when its link goes and lose a service its peripheral removes.
    mutating func requireCurrent(_ service: RemoteService, on slot: Int) throws {
        let key = links[at: slot].key
        let discovered = centrals.inPlace(key.central) { central in
            central.services[key.peripheral]?.contains(service) == true
                || central.includedServices[key.peripheral]?.contains(service) == true
        }
        if discovered == true { return }
        let error = CoreBluetoothError(.invalidHandle)
        record(
            .refused, central: key.central, peripheral: service.peripheral, attribute: service.uuid,
            handle: service.handle, error: error, detail: "service not discovered on this link")
        throw error
    }

    /// Checks that a discovered descriptor still exists on its (current) characteristic.
    mutating func requireCurrent(_ descriptor: RemoteDescriptor, on slot: Int) throws {
        try requireCurrent(descriptor.characteristic, on: slot)
        let current =
            peripherals[existing: descriptor.peripheral].database.descriptors(of: descriptor.characteristic) ?? []
        guard !current.contains(descriptor) else { return }
        let error = CoreBluetoothError(.invalidHandle)
        record(
            .refused, central: links[at: slot].key.central, peripheral: descriptor.peripheral,
            attribute: descriptor.uuid, handle: descriptor.handle, error: error,
            detail: "descriptor not on its characteristic")
        throw error
    }

    // MARK: Starting a procedure

    /// Starts a GATT procedure: checks it, plans its exchanges, and queues it for the link's
    /// ATT bearer.
    mutating func startProcedure(_ kind: GATTProcedure.Kind, central: UUID, peripheral: UUID, id: OperationID) {
        let key = LinkKey(central: central, peripheral: peripheral)
        let exchanges: Int
        let slot: Int
        do {
            slot = try requireLink(central: central, peripheral: peripheral, kind.apiName)
            exchanges = try plannedExchanges(of: kind, on: slot, peripheral: peripheral)
        } catch {
            return complete(id, .failure(error))
        }
        var procedure = GATTProcedure(kind: kind, exchanges: exchanges)
        var injectedEntry: Int?
        if exchanges > 0,
            let fired = firedInjection(
                kind.injectedOperation, central: central, peripheral: peripheral,
                characteristic: procedure.characteristic?.uuid, handle: procedure.characteristic?.handle)
        {
            procedure.injected = fired.failure
            injectedEntry = fired.entry
        }
        var operation = PendingOperation(id: id, owner: .central(central), kind: .gatt(key), since: now, stage: .queued)
        operation.procedure = consume procedure
        operation.injectedEntry = injectedEntry
        pending.insert(operation)
        if exchanges == 0 {
            // Nothing to ask the server: the procedure ends at once, with nothing on the air
            // (and so nothing an injection could fail).
            return finishProcedure(id, .success(.done))
        }
        if links[at: slot].bearer == nil {
            links.entries[slot]!.bearer = id
            sendRequest(of: id, on: key)
        } else {
            links.entries[slot]!.waitingForBearer.append(id)
        }
    }

    /// The exchanges a procedure plans (checking the attributes it names are still current).
    private mutating func plannedExchanges(of kind: GATTProcedure.Kind, on slot: Int, peripheral: UUID) throws -> Int {
        let mtu = links[at: slot].mtu
        let p = peripherals.position(of: peripheral)!
        switch kind {
        case .discoverServices(let uuids):
            return peripherals[at: p].database.primaryServiceExchanges(matching: uuids, mtu: mtu)
        case .discoverIncludedServices(let service, _):
            try requireCurrent(service, on: slot)
            return peripherals[at: p].database.includedServiceExchanges(of: service.handle, mtu: mtu) ?? 1
        case .discoverCharacteristics(let service, _):
            // The client reads every characteristic declaration in the service's range and
            // filters by UUID itself (Vol 3, Part G, 4.6.2): the UUIDs asked for do not
            // change what crosses the link.
            try requireCurrent(service, on: slot)
            return peripherals[at: p].database.characteristicExchanges(of: service.handle, mtu: mtu) ?? 1
        case .discoverDescriptors(let characteristic):
            try requireCurrent(characteristic, on: slot)
            // Descriptors sit between the value handle and the next declaration: with none,
            // the range is empty and the client sends no request at all (Vol 3, Part G, 4.7.1).
            return peripherals[at: p].database.descriptorExchanges(of: characteristic, mtu: mtu) ?? 0
        case .read(let characteristic), .readBlob(let characteristic, _):
            // A read ends on its first short part: see `appendReadPart`.
            try requireCurrent(characteristic, on: slot)
            return kind.isSingleRead ? 1 : .max
        case .readDescriptor(let descriptor):
            try requireCurrent(descriptor, on: slot)
            return .max
        case .write(let characteristic, let value):
            try requireCurrent(characteristic, on: slot)
            return GATTProcedure.writeExchanges(length: value.count, mtu: mtu)
        case .writeDescriptor(let descriptor, let value):
            try requireCurrent(descriptor, on: slot)
            if descriptor.uuid == .clientCharacteristicConfiguration {
                // CoreBluetooth refuses this before anything is sent.
                let error = APIMisuseError.clientConfigurationWrite(
                    characteristic: descriptor.characteristic.uuid, handle: descriptor.characteristic.handle)
                record(
                    .refused, peripheral: peripheral, attribute: descriptor.uuid, handle: descriptor.handle,
                    error: error, detail: kind.apiName)
                throw error
            }
            return GATTProcedure.writeExchanges(length: value.count, mtu: mtu)
        case .setNotify(let characteristic, let enabled, _):
            try requireCurrent(characteristic, on: slot)
            // A characteristic that can neither notify nor indicate has no Client
            // Characteristic Configuration descriptor to write: the client sends nothing and
            // fails at once (CoreBluetooth: "The request is not supported").
            guard characteristic.properties.supportsSubscription else {
                let error = ATTError(.requestNotSupported)
                record(
                    enabled ? .subscribe : .unsubscribe, central: links[at: slot].key.central,
                    peripheral: peripheral, attribute: characteristic.uuid, handle: characteristic.handle, error: error)
                throw error
            }
            return 1
        }
    }

    /// Sends the procedure's next request.
    mutating func sendRequest(of id: OperationID, on key: LinkKey) {
        if let position = pending.position(of: id) { pending.entries[position]!.stage = .sent }
        startTransaction(on: key)
        sendToPeripheral(.request(id), on: key)
    }

    /// A procedure ended: the bearer goes to the next procedure waiting for it.
    mutating func releaseBearer(of id: OperationID, on key: LinkKey) {
        guard let slot = links.position(of: key), links[at: slot].bearer == id else { return }
        links.entries[slot]!.bearer = nil
        while !links[at: slot].waitingForBearer.isEmpty {
            let next = links.entries[slot]!.waitingForBearer.removeFirst()
            guard pending.contains(next) else { continue }
            links.entries[slot]!.bearer = next
            sendRequest(of: next, on: key)
            return
        }
        stopTransactionTimer(at: slot)
    }

    // MARK: Answers

    /// The answer to a procedure's request arrived at the central.
    mutating func procedureAnswered(_ id: OperationID, _ answer: ServerAnswer, on key: LinkKey) {
        // The procedure's fields are read in place: a copy of it would retain everything it holds.
        guard let position = pending.position(of: id), let slot = links.position(of: key),
            let (isCancelled, completed, exchanges, isRead, cancelling) = pending.inPlace(
                at: position,
                { operation -> (Bool, Int, Int, Bool, (any Error)?)? in
                    // Field by field: binding the procedure (or mapping it) would copy it whole.
                    guard operation.procedure != nil else { return nil }
                    return (
                        operation.isCancelled, operation.procedure!.completed, operation.procedure!.exchanges,
                        operation.procedure!.kind.isRead, operation.procedure!.cancelling
                    )
                })
        else { return }
        links.entries[slot]!.requestSentAt = nil
        if isCancelled { return complete(id, .failure(CancellationError())) }
        // The Execute Write that cancelled a refused long write was answered: it ends with the
        // Prepare Write's error, or, refused for want of encryption, the link pairs and the
        // write goes again from its first part.
        if let cancelling {
            if let refusal = cancelling as? ATTError, startsPairing(for: id, after: refusal, on: key) {
                pending.entries[position]!.procedure!.cancelling = nil
                return startPairing(for: id, on: key, refusal: refusal)
            }
            return finishProcedure(id, .failure(cancelling), at: position)
        }
        let mtu = links[at: slot].mtu
        switch answer {
        case .failure(let error):
            if isRead, completed > 0, (error as? ATTError)?.code == .attributeNotLong {
                // A Read Blob after a full part of a value exactly ATT_MTU − 1 bytes long: the
                // server says there is no more, and what was read is the whole value.
                return finishProcedure(
                    id, .success(.value(pending.inPlace(at: position) { $0.procedure!.received })))
            }
            if error is ATTError, pending.inPlace(at: position, { $0.procedure!.isPreparingWrite }) {
                // A Prepare Write refused with an Error Response: before the error reaches the
                // app (or the link pairs, when the refusal asks for encryption: see above), the
                // client has the server drop the parts it queued, with an Execute Write of flags
                // 0x00 (Vol 3, Part F, 3.4.6.3), as bumble's client does. (An injected
                // CoreBluetooth error is no Error Response: the write ends with it at once.)
                pending.entries[position]!.procedure!.cancelling = error
                sendRequest(of: id, on: key)
            } else if let refusal = error as? ATTError, startsPairing(for: id, after: refusal, on: key) {
                startPairing(for: id, on: key, refusal: refusal)
            } else {
                finishProcedure(id, .failure(error))
            }
        case .page:
            pending.entries[position]!.procedure!.completed += 1
            if completed + 1 >= exchanges {
                finishProcedure(id, .success(.done), at: position)
            } else {
                sendRequest(of: id, on: key)
            }
        case .value(let part):
            guard isRead else { return finishProcedure(id, .success(.value(part.prefix(mtu - 1))), at: position) }
            let (total, done) = GATTProcedure.appendReadPart(
                part, to: pending.inPlace(at: position) { $0.procedure!.received }, mtu: mtu)
            if done { return finishProcedure(id, .success(.value(total)), at: position) }
            pending.entries[position]!.procedure!.received = total
            pending.entries[position]!.procedure!.completed += 1
            sendRequest(of: id, on: key)
        case .written:
            finishProcedure(id, .success(.done), at: position)
        case .channel, .channelRefused:
            break
        }
    }

    /// Ends a procedure: what the central learned is recorded, and the outcome logged.
    mutating func finishProcedure(_ id: OperationID, _ outcome: Result<Reply, any Error>) {
        guard let position = pending.position(of: id) else { return }
        finishProcedure(id, outcome, at: position)
    }

    /// Ends the procedure of the operation at `position` in `pending` (a caller that has just
    /// looked it up).
    mutating func finishProcedure(_ id: OperationID, _ outcome: Result<Reply, any Error>, at position: Int) {
        guard
            let (key, kind) = pending.inPlace(
                at: position,
                { operation -> (LinkKey, GATTProcedure.Kind)? in
                    guard case .gatt(let key) = operation.kind, operation.procedure != nil else { return nil }
                    return (key, operation.procedure!.kind)
                })
        else { return }
        let central = key.central
        let peripheral = key.peripheral
        var result = outcome
        switch kind {
        case .discoverServices(let uuids):
            switch outcome {
            case .success: result = .success(.services(finishServiceDiscovery(key, uuids: uuids)))
            case .failure(let error):
                record(.servicesDiscovered, central: central, peripheral: peripheral, error: error)
            }
        case .discoverIncludedServices(let service, let uuids):
            result = outcome.flatMap { _ in
                Result { .services(try finishIncludedServiceDiscovery(key, service: service, uuids: uuids)) }
            }
            if case .failure(let error) = result {
                record(.includedServicesDiscovered, central: central, peripheral: peripheral, error: error)
            }
        case .discoverCharacteristics(let service, let uuids):
            result = outcome.flatMap { _ in
                Result { .characteristics(try finishCharacteristicDiscovery(key, service: service, uuids: uuids)) }
            }
            if case .failure(let error) = result {
                record(.characteristicsDiscovered, central: central, peripheral: peripheral, error: error)
            }
        case .discoverDescriptors(let characteristic):
            result = outcome.flatMap { _ in
                Result {
                    guard let slot = links.position(of: key) else { throw CoreBluetoothError(.notConnected) }
                    try requireCurrent(characteristic, on: slot)
                    return .descriptors(finishDescriptorDiscovery(key, characteristic: characteristic))
                }
            }
            if case .failure(let error) = result {
                record(
                    .descriptorsDiscovered, central: central, peripheral: peripheral, attribute: characteristic.uuid,
                    handle: characteristic.handle, error: error)
            }
        case .read(let characteristic):
            record(
                .read, central: central, peripheral: peripheral, attribute: characteristic.uuid,
                handle: characteristic.handle, value: outcome.bytes, error: outcome.error)
        case .readBlob(let characteristic, let offset):
            record(
                .response, central: central, peripheral: peripheral, attribute: characteristic.uuid,
                handle: characteristic.handle, value: outcome.bytes, error: outcome.error, detail: "offset=\(offset)")
        case .readDescriptor(let descriptor):
            record(
                .readDescriptor, central: central, peripheral: peripheral, attribute: descriptor.uuid,
                handle: descriptor.handle, value: outcome.bytes, error: outcome.error)
        case .write(let characteristic, let value):
            record(
                .write, central: central, peripheral: peripheral, attribute: characteristic.uuid,
                handle: characteristic.handle, value: value, writeType: .withResponse, error: outcome.error)
        case .writeDescriptor(let descriptor, let value):
            record(
                .writeDescriptor, central: central, peripheral: peripheral, attribute: descriptor.uuid,
                handle: descriptor.handle, value: value, error: outcome.error)
        case .setNotify(let characteristic, let enabled, _):
            if let error = outcome.error {
                record(
                    enabled ? .subscribe : .unsubscribe, central: central, peripheral: peripheral,
                    attribute: characteristic.uuid, handle: characteristic.handle, error: error)
            }
        }
        complete(id, result, at: position)
    }

    // MARK: Discovery results

    private mutating func finishServiceDiscovery(_ key: LinkKey, uuids: [BluetoothUUID]?) -> [RemoteService] {
        let found = peripherals[existing: key.peripheral].database.primaryServices(
            matching: uuids, peripheral: key.peripheral)
        let known = centrals[existing: key.central].services[key.peripheral]
        centrals[key.central]!.services[key.peripheral] = Self.merging(found, into: known, by: \.handle)
        systemChanges &+= 1
        record(
            .servicesDiscovered, central: key.central, peripheral: key.peripheral,
            detail: Self.uuidList(found.lazy.map(\.uuid)))
        return found
    }

    private mutating func finishIncludedServiceDiscovery(
        _ key: LinkKey, service: RemoteService, uuids: [BluetoothUUID]?
    ) throws -> [RemoteService] {
        let database = peripherals[existing: key.peripheral].database
        guard let found = database.includedServices(of: service.handle, matching: uuids, peripheral: key.peripheral),
            database.localServices.contains(where: { $0.handle == service.handle && $0.uuid == service.uuid })
        else { throw CoreBluetoothError(.invalidHandle) }
        var included = centrals[key.central]!.includedServices[key.peripheral] ?? []
        for service in found where !included.contains(service) { included.append(service) }
        centrals[key.central]!.includedServices[key.peripheral] = included
        record(
            .includedServicesDiscovered, central: key.central, peripheral: key.peripheral, attribute: service.uuid,
            handle: service.handle, detail: Self.uuidList(found.lazy.map(\.uuid)))
        return found
    }

    private mutating func finishCharacteristicDiscovery(
        _ key: LinkKey, service: RemoteService, uuids: [BluetoothUUID]?
    ) throws -> [RemoteCharacteristic] {
        // (The records are read in place: the subscript's getter copies all of one.)
        let listed = peripherals.inPlace(key.peripheral) { peripheral -> [RemoteCharacteristic]? in
            guard
                peripheral.database.services.contains(where: {
                    $0.local.handle == service.handle && $0.local.uuid == service.uuid
                })
            else { return nil }
            return peripheral.database.characteristics(of: service.handle, matching: uuids, peripheral: key.peripheral)
        }
        guard let found = listed ?? nil else { throw CoreBluetoothError(.invalidHandle) }
        let known = centrals[existing: key.central].characteristics[service]
        centrals[key.central]!.characteristics[service] = Self.merging(found, into: known, by: \.handle)
        if let slot = links.position(of: key) {
            links.inPlace(at: slot) { link in
                link.discoveredHandles.reserveCapacity(link.discoveredHandles.count + found.count)
                link.discoveredHandles.formUnion(found.lazy.map(\.handle))
            }
        }
        record(
            .characteristicsDiscovered, central: key.central, peripheral: key.peripheral, attribute: service.uuid,
            handle: service.handle, detail: Self.uuidList(found.lazy.map(\.uuid)))
        return found
    }

    private mutating func finishDescriptorDiscovery(_ key: LinkKey, characteristic: RemoteCharacteristic)
        -> [RemoteDescriptor]
    {
        let found = (peripherals.inPlace(key.peripheral) { $0.database.descriptors(of: characteristic) } ?? nil) ?? []
        record(
            .descriptorsDiscovered, central: key.central, peripheral: key.peripheral, attribute: characteristic.uuid,
            handle: characteristic.handle, detail: Self.uuidList(found.lazy.map(\.uuid)))
        return found
    }

    /// What a central knows after a discovery: what it knew, with what was found added, in
    /// handle order. (Most discoveries are a first one: what was found is the list, in order.)
    static func merging<Attribute: Equatable>(
        _ found: [Attribute], into known: [Attribute]?, by handle: (Attribute) -> UInt16
    ) -> [Attribute] {
        guard var merged = known, !merged.isEmpty else { return found }
        merged.reserveCapacity(merged.count + found.count)
        for attribute in found where !merged.contains(attribute) { merged.append(attribute) }
        merged.sort { handle($0) < handle($1) }
        return merged
    }

    /// UUIDs as a log entry lists them: comma-separated, in their shortest form.
    static func uuidList(_ uuids: some Sequence<BluetoothUUID>) -> String {
        var list = ""
        for uuid in uuids {
            if !list.isEmpty { list += "," }
            list += uuid.uuidString
        }
        return list
    }

    // MARK: Writes without response

    /// Queues a write without response, as CoreBluetooth does: a value longer than
    /// ATT_MTU − 3 is cut to it, a write while the queue is full is dropped (logged with
    /// `outOfSpace`), and a write to a characteristic without the property is not sent. Each
    /// of those is recorded as a ``Misuse`` (thrown with strict misuse; strict lengths throw
    /// for a long value). Returns at once, saying what became of the write: the command crosses
    /// at a connection event (at once in fast mode with an unbounded queue).
    @discardableResult
    mutating func writeWithoutResponse(
        central: UUID, characteristic: RemoteCharacteristic, value: Data
    ) throws -> WriteWithoutResponseOutcome {
        let slot = try requireLink(central: central, peripheral: characteristic.peripheral, "writeValue")
        try requireCurrent(characteristic, on: slot)
        let key = LinkKey(central: central, peripheral: characteristic.peripheral)
        let mtu = links[at: slot].mtu
        let limit = links[at: slot].maximumValueLength
        var value = value
        func log(_ value: Data, _ error: (any Error)?, _ detail: String?) {
            record(
                .write, central: central, peripheral: key.peripheral, attribute: characteristic.uuid,
                handle: characteristic.handle, value: value, writeType: .withoutResponse, error: error, detail: detail)
        }
        func misused(_ kind: Misuse.Kind, _ error: APIMisuseError) throws {
            try self.misused(
                kind, by: .central(central), central: central, peripheral: key.peripheral,
                characteristic: characteristic.uuid, handle: characteristic.handle, error: error)
        }
        // CoreBluetooth sends a Write Command only to a characteristic with the property. What
        // the peripheral does with it (permissions, encryption) it decides on arrival, and it
        // never answers (see `serveCommand`), so no injection applies here either: `.write`
        // injections target writes with response only.
        guard characteristic.properties.contains(.writeWithoutResponse) else {
            let error = APIMisuseError.writeWithoutResponseNotSupported(
                characteristic.uuid, handle: characteristic.handle)
            log(value, error, "not sent")
            try misused(.writeWithoutResponseNotSupported, error)
            return .notSent
        }
        if value.count > limit {
            let error = APIMisuseError.valueTooLong(
                operation: "writeValue(_:for:type: .withoutResponse)", length: value.count, maximum: limit)
            do {
                if centrals[existing: central].configuration.strictLengths { throw error }
                try misused(.valueTruncated, error)
            } catch {
                log(value, error, nil)
                throw error
            }
            record(
                .truncated, central: central, peripheral: key.peripheral, attribute: characteristic.uuid,
                handle: characteristic.handle, writeType: .withoutResponse,
                detail:
                    "write without response of \(value.count) bytes cut to \(limit) "
                    + (limit == mtu - 3 ? "(ATT_MTU \(mtu) - 3)" : "(the longest attribute value)"))
            value = value.prefix(limit)
        }
        guard canQueueCommand(on: key) else {
            links.entries[slot]!.commandQueueWasFull = true
            log(value, CoreBluetoothError(.outOfSpace), "dropped: transmit queue full")
            try misused(
                .writeWithoutResponseDropped,
                .writeWithoutResponseQueueFull(characteristic.uuid, handle: characteristic.handle))
            return .dropped
        }
        log(value, nil, nil)
        links.entries[slot]!.queuedCommands += 1
        if !canQueueCommand(on: key) { links.entries[slot]!.commandQueueWasFull = true }
        links.entries[slot]!.toPeripheral.append(.command(WriteCommand(characteristic: characteristic, value: value)))
        // (Read in place: the subscript's getter copies the whole central record.)
        let capacity = centrals[existing: central].configuration.writeWithoutResponseQueue
            .capacity
        if sendsAtOnce(capacity: capacity) {
            connectionEventNow(key)
        } else {
            scheduleConnectionEvent(key)
        }
        return .queued(value)
    }

    // MARK: Queries

    func discoveredServices(central: UUID, peripheral: UUID) -> [RemoteService] {
        centrals[central]?.services[peripheral] ?? []
    }

    func discoveredCharacteristics(central: UUID, service: RemoteService) -> [RemoteCharacteristic] {
        centrals[central]?.characteristics[service] ?? []
    }

    /// The services `service` includes that `central` has discovered (as included services), in
    /// the order the peripheral's database lists them.
    func discoveredIncludedServices(central: UUID, of service: RemoteService) -> [RemoteService] {
        guard let known = centrals[central]?.includedServices[service.peripheral], !known.isEmpty,
            let included = peripherals[service.peripheral]?.database.includedServices(
                of: service.handle, matching: nil, peripheral: service.peripheral)
        else { return [] }
        return included.filter { known.contains($0) }
    }

    mutating func maximumWriteValueLength(central: UUID, peripheral: UUID, type: WriteType) throws -> Int {
        let slot = try requireLink(central: central, peripheral: peripheral, "maximumWriteValueLength")
        return type == .withResponse ? GATTDatabase.maximumValueLength : links[at: slot].maximumValueLength
    }

    func canSendWriteWithoutResponse(central: UUID, peripheral: UUID) -> Bool {
        canQueueCommand(on: LinkKey(central: central, peripheral: peripheral))
    }

    func linkMTU(central: UUID, peripheral: UUID) -> Int? {
        links[LinkKey(central: central, peripheral: peripheral)]?.mtu
    }
}

extension GATTProcedure.Kind {
    /// The app-facing name of the call, for refusals.
    var apiName: String {
        switch self {
        case .discoverServices: "discoverServices"
        case .discoverIncludedServices: "discoverIncludedServices"
        case .discoverCharacteristics: "discoverCharacteristics"
        case .discoverDescriptors: "discoverDescriptors"
        case .read, .readBlob: "readValue"
        case .readDescriptor: "readValue(for:)"
        case .write: "writeValue"
        case .writeDescriptor: "writeValue(_:for:)"
        case .setNotify: "setNotifyValue"
        }
    }

    /// The operation an error injection names for this procedure.
    var injectedOperation: ErrorInjection.Operation {
        switch self {
        case .discoverServices, .discoverIncludedServices: .serviceDiscovery
        case .discoverCharacteristics: .characteristicDiscovery
        case .discoverDescriptors: .descriptorDiscovery
        case .read, .readBlob, .readDescriptor: .read
        case .write, .writeDescriptor: .write
        case .setNotify: .subscribe
        }
    }

    /// Whether this is a characteristic read as the stack does it (Read, then Read Blobs).
    var isRead: Bool {
        switch self {
        case .read, .readDescriptor: true
        default: false
        }
    }

    /// Whether a read stops after one request (a single Read Blob).
    var isSingleRead: Bool {
        if case .readBlob = self { return true }
        return false
    }
}

extension Result {
    /// The error, if any.
    var error: Failure? {
        if case .failure(let error) = self { return error }
        return nil
    }
}

extension Result where Success == Reply {
    /// The bytes of a `.value` reply, if any.
    var bytes: Data? {
        if case .success(.value(let data)) = self { return data }
        return nil
    }
}
