import BLECore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

extension ScenarioSession {
    /// Performs one op, filling in the fields it produces; throws how it failed.
    func run(
        _ operation: ScenarioStep.Operation, into record: inout ScenarioTrace.Record, seen: inout ObservedEvents
    ) async throws {
        let target = peripheral.identifier
        switch operation {
        case .powerOn(let role):
            record.state = try await setState(.poweredOn, of: role)
        case .setState(let state, let role):
            record.state = try await setState(state, of: role)
        case .scan(let services, let allowDuplicates, let solicited, let duration):
            try await central.scanForPeripherals(
                withServices: services,
                options: ScanOptions(allowDuplicates: allowDuplicates, solicitedServiceUUIDs: solicited))
            if let duration {
                await bridge.advance(by: duration)
            } else {
                await advance(until: { !$0.discoveries.isEmpty }, limit: Self.patience, seen: &seen)
            }
        case .stopScan:
            await central.stopScan()
        case .connect(let timeout):
            try await central.connect(target, options: ConnectOptions(timeout: timeout))
            record.maxWriteWithoutResponse = try await central.maximumWriteValueLength(
                for: target, type: .withoutResponse)
            record.maxWriteWithResponse = try await central.maximumWriteValueLength(for: target, type: .withResponse)
        case .discover:
            record.discovered = try await discover()
        case .read(let reference):
            record.value = try await central.readValue(for: try await remote(reference))
        case .readOnce(let reference):
            record.value = try await central.readBlob(of: try await remote(reference), offset: 0)
        case .readDescriptor(let reference, let uuid):
            record.value = try await central.readValue(for: try await descriptor(uuid, of: reference))
        case .writeDescriptor(let reference, let uuid, let value):
            try await central.writeValue(value, for: try await descriptor(uuid, of: reference))
        case .setMTU(let mtu, .central):
            try await central.simulateMTUPreference(.fixed(mtu))
        case .setMTU(let mtu, .peripheral):
            try await peripheral.manager.simulateMTUPreference(.fixed(mtu))
        case .write(let reference, let value, let withResponse):
            do {
                try await central.writeValue(
                    value, for: try await remote(reference), type: withResponse ? .withResponse : .withoutResponse)
                if !withResponse { await bridge.runUntilWritesSent(central: central.identifier, peripheral: target) }
            } catch {
                record.stored = await peripheral.manager.value(of: local(reference))
                throw error
            }
            record.stored = await peripheral.manager.value(of: local(reference))
        case .writeWithoutResponseBurst(let reference, let values):
            do {
                let characteristic = try await remote(reference)
                for value in values {
                    // As an app waits for `peripheralIsReady(toSendWriteWithoutResponse:)`.
                    await bridge.runUntilWriteQueueHasRoom(central: central.identifier, peripheral: target)
                    try await central.writeValue(value, for: characteristic, type: .withoutResponse)
                }
                await bridge.runUntilWritesSent(central: central.identifier, peripheral: target)
            } catch {
                record.stored = await peripheral.manager.value(of: local(reference))
                throw error
            }
            record.stored = await peripheral.manager.value(of: local(reference))
        case .subscribe(let reference):
            try await central.setNotifyValue(true, for: try await remote(reference))
        case .subscribeToIndications(let reference):
            try await central.subscribeToIndications(of: try await remote(reference))
        case .unsubscribe(let reference):
            try await central.setNotifyValue(false, for: try await remote(reference))
        case .notify(let reference, let value), .indicate(let reference, let value):
            record.received = []
            let sent = try await peripheral.manager.updateValue(value, for: local(reference), onSubscribedCentrals: nil)
            guard sent else { throw ScenarioStepError.updateQueueFull }
            await bridge.runUntilUpdatesDelivered(peripheral: target)
        case .notifyBurst(let reference, let values):
            record.received = []
            for value in values {
                // As a peripheral waits for `peripheralManagerIsReady(toUpdateSubscribers:)`.
                while !(try await peripheral.manager.updateValue(
                    value, for: local(reference), onSubscribedCentrals: nil))
                {
                    guard await bridge.runNextUpdateEvent(peripheral: target) else {
                        throw ScenarioStepError.updateQueueFull
                    }
                }
            }
            await bridge.runUntilUpdatesDelivered(peripheral: target)
        case .readRequest(let reference, let offset):
            record.value = try await central.readBlob(of: try await remote(reference), offset: offset)
        case .setValue(let reference, let value):
            try await peripheral.manager.setValue(value, for: local(reference))
        case .readRSSI:
            record.rssi = try await central.readRSSI(for: target)
        case .advance(let duration):
            await bridge.advance(by: duration)
        case .advanceTo(let duration, let origin):
            let start = origin == .connect ? connectedAt.value ?? .zero : .zero
            let target = start.advanced(by: duration)
            if await bridge.now < target { await bridge.advance(to: target) }
        case .inject(let injection):
            // Aimed at the one characteristic the step named (another may have its UUID).
            let characteristic = injection.characteristic.map(local)
            var aimed = ErrorInjection(
                injection.target, failure: injection.failure,
                frequency: injection.times == 1 ? .once : .times(injection.times), peripheral: target,
                characteristic: characteristic?.uuid)
            aimed.characteristicHandle = characteristic?.handle
            await bridge.inject(aimed)
        case .fault(let kind, let role, let error):
            try await fault(kind, role: role, error: error, record: &record)
        case .disconnect(let side):
            guard await central.isConnected(target) else { throw CoreBluetoothError(.notConnected) }
            switch side {
            case .central: try await central.cancelPeripheralConnection(target)
            case .peripheral: await peripheral.manager.simulateDisconnection(of: central.identifier)
            }
            await advance(until: { !$0.disconnections.isEmpty }, limit: Self.patience, seen: &seen)
        }
    }

    private func setState(_ state: ManagerState, of role: ScenarioStep.Role) async throws -> ManagerState {
        switch role {
        case .central:
            if await central.state != state { await central.simulateStateChange(state) }
            return state == .poweredOn ? await central.waitForPoweredOn() : await central.state
        case .peripheral:
            let manager = peripheral.manager
            if await manager.state != state { await manager.simulateStateChange(state) }
            return state == .poweredOn ? await manager.waitForPoweredOn() : await manager.state
        }
    }

    private func fault(
        _ kind: ScenarioStep.FaultKind, role: ScenarioStep.Role, error: CoreBluetoothError.Code?,
        record: inout ScenarioTrace.Record
    ) async throws {
        let target = peripheral.identifier
        switch kind {
        case .disconnect:
            await bridge.simulate(
                .disconnect(
                    central: central.identifier, peripheral: target,
                    error: CoreBluetoothError(error ?? .connectionTimeout)))
        case .reset:
            await bridge.simulate(.reset(peripheral: target))
        case .outOfRange:
            await bridge.simulate(.proximity(peripheral: target, .outOfRange))
        case .inRange:
            await bridge.simulate(.proximity(peripheral: target, .near))
        case .powerOff:
            record.state = try await setState(.poweredOff, of: role)
        }
    }

    /// Discovers everything and describes it: services (with included services), their
    /// characteristics with properties as a bit set, and descriptors.
    private func discover() async throws -> TraceValue {
        var services: [TraceValue] = []
        for service in try await central.discoverServices(nil, for: peripheral.identifier) {
            let included = try await central.discoverIncludedServices(nil, for: service)
            var characteristics: [TraceValue] = []
            for characteristic in try await central.discoverCharacteristics(nil, for: service) {
                let descriptors = try await central.discoverDescriptors(for: characteristic)
                characteristics.append(
                    .object([
                        ("uuid", .string(characteristic.uuid.description)),
                        ("properties", .int(Int(characteristic.properties.rawValue))),
                        ("descriptors", .array(descriptors.map { .string($0.uuid.description) })),
                    ]))
            }
            var fields: [(key: String, value: TraceValue)] = [
                ("uuid", .string(service.uuid.description)), ("primary", .bool(service.isPrimary)),
            ]
            if !included.isEmpty {
                fields.append(("includedServices", .array(included.map { .string($0.uuid.description) })))
            }
            fields.append(("characteristics", .array(characteristics)))
            services.append(.object(fields))
        }
        return .object([("services", .array(services))])
    }

    /// A discovery as the trace shows it: name, RSSI and the advertisement's fields.
    static func describe(_ discovery: DiscoveredPeripheral) -> TraceValue {
        let advertisement = discovery.advertisementData
        var fields: [(key: String, value: TraceValue)] = []
        if let name = discovery.peripheral.name { fields.append(("name", .string(name))) }
        fields.append(("rssi", .int(discovery.rssi)))
        if let localName = advertisement.localName { fields.append(("localName", .string(localName))) }
        let uuidList: ([BluetoothUUID]) -> TraceValue = { .array($0.map { .string($0.description) }) }
        if !advertisement.serviceUUIDs.isEmpty { fields.append(("serviceUUIDs", uuidList(advertisement.serviceUUIDs))) }
        if !advertisement.overflowServiceUUIDs.isEmpty {
            fields.append(("overflowServiceUUIDs", uuidList(advertisement.overflowServiceUUIDs)))
        }
        if !advertisement.solicitedServiceUUIDs.isEmpty {
            fields.append(("solicitedServiceUUIDs", uuidList(advertisement.solicitedServiceUUIDs)))
        }
        if let data = advertisement.manufacturerData {
            fields.append(("manufacturerData", .string(FixtureBytes.hexString(data))))
        }
        if !advertisement.serviceData.isEmpty {
            let sorted = advertisement.serviceData.sorted { $0.key.description < $1.key.description }
            fields.append(
                ("serviceData", .object(sorted.map { ($0.key.description, .string(FixtureBytes.hexString($0.value))) }))
            )
        }
        if let power = advertisement.txPowerLevel { fields.append(("txPowerLevel", .int(power))) }
        if let connectable = advertisement.isConnectable { fields.append(("isConnectable", .bool(connectable))) }
        return .object(fields)
    }
}

/// Failures a step can have that no manager throws.
extension ScenarioStep.Operation {
    /// The characteristic the op names, if any (an `inject`'s, when it aims at one).
    var characteristicReference: ScenarioStep.CharacteristicReference? {
        switch self {
        case .read(let reference), .readOnce(let reference), .readDescriptor(let reference, _),
            .writeDescriptor(let reference, _, _), .write(let reference, _, _),
            .writeWithoutResponseBurst(let reference, _), .subscribe(let reference),
            .subscribeToIndications(let reference), .unsubscribe(let reference), .notify(let reference, _),
            .notifyBurst(let reference, _), .indicate(let reference, _), .readRequest(let reference, _),
            .setValue(let reference, _):
            reference
        case .inject(let injection): injection.characteristic
        case .powerOn, .setState, .scan, .stopScan, .connect, .discover, .setMTU, .readRSSI, .advance, .advanceTo,
            .fault, .disconnect:
            nil
        }
    }
}

enum ScenarioStepError: Error {
    /// `updateValue` returned `false`: the transmit queue was full.
    case updateQueueFull
    /// The characteristic has no descriptor of the UUID a `readDescriptor` or
    /// `writeDescriptor` names.
    case descriptorNotFound(BluetoothUUID)
}

extension ScenarioSession {
    /// The central's view of a characteristic's descriptor: one `discover` found (the
    /// peripheral's descriptor of that UUID), on the characteristic the step names.
    func descriptor(_ uuid: BluetoothUUID, of reference: ScenarioStep.CharacteristicReference) async throws
        -> RemoteDescriptor
    {
        let characteristic = try await remote(reference)
        guard let found = await bridge.descriptors(of: characteristic).first(where: { $0.uuid == uuid }) else {
            throw ScenarioStepError.descriptorNotFound(uuid)
        }
        return found
    }
}
