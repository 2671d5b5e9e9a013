import BLECore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// One run of a scenario: the bridge, the two managers, and what the central has seen.
/// Used by ``ScenarioRunner`` from one task, step after step.
final class ScenarioSession: Sendable {
    let scenario: Scenario
    let bridge: MockBLEBridge
    let central: MockCentralManager
    let peripheral: LoadedPeripheral
    /// When the most recent `connect` step succeeded (what `advance` `from: connect` counts from).
    let connectedAt = LockedValue<VirtualClock.Instant?>(nil)
    /// Taps on the managers' events, read after each step.
    let centralTap: Int
    let peripheralTap: Int

    /// The longest a `scan` without `for`, or a disconnection, waits in virtual time.
    static let patience = Duration.seconds(10)
    /// The step by which waiting moves virtual time.
    static let waitingStep = Duration.milliseconds(10)

    private init(
        scenario: Scenario, bridge: MockBLEBridge, central: MockCentralManager, peripheral: LoadedPeripheral
    ) {
        self.scenario = scenario
        self.bridge = bridge
        self.central = central
        self.peripheral = peripheral
        centralTap = central.broadcaster.openTap()
        peripheralTap = peripheral.manager.broadcaster.openTap()
    }

    /// Puts the profile's peripheral and a central on `bridge`, both powered on.
    static func start(
        _ scenario: Scenario, on bridge: MockBLEBridge, central centralConfiguration: MockCentralManager.Configuration,
        peripheral peripheralConfiguration: MockPeripheralManager.Configuration
    ) async throws -> ScenarioSession {
        let loaded = try await scenario.peripheral.makePeripheral(on: bridge, configuration: peripheralConfiguration)
        let central = MockCentralManager(configuration: centralConfiguration, bridge: bridge)
        _ = await central.waitForPoweredOn()
        return ScenarioSession(scenario: scenario, bridge: bridge, central: central, peripheral: loaded)
    }

    /// Shuts both managers down and closes the taps.
    func end() async {
        central.broadcaster.closeTap(centralTap)
        peripheral.manager.broadcaster.closeTap(peripheralTap)
        await central.shutDown()
        await peripheral.manager.shutDown()
    }

    /// How long an operation may wait for an answer that needs time to pass before the
    /// session gives up on it: ATT's transaction timeout (Bluetooth Core Specification,
    /// Vol 3, Part F, 3.3.3), after which the link is dropped.
    static let transactionTimeout = Duration.seconds(30)

    /// Runs one step and returns its record.
    ///
    /// The op runs in a task of its own. Operations drive virtual time themselves while they
    /// wait for something scheduled; one that waits for something nothing schedules (a
    /// peripheral out of range, a connection to a device that is gone, an injected silence)
    /// is driven here, event by event, for up to ``transactionTimeout`` of virtual time (or
    /// until a request outstanding on the ATT bearer times out in the simulation, which drops
    /// its link); then its link is dropped with `connectionTimeout` (or its connection
    /// attempt cancelled).
    func perform(_ step: ScenarioStep) async -> ScenarioTrace.Record {
        let pdusBefore = await bridge.attPDUCount
        let logBefore = await bridge.logCount
        let started = await bridge.now
        let completion = StepCompletion()
        let task = Task { [self] in
            defer {
                completion.finish()
                bridge.waiters.wakeWatchers()
            }
            var record = ScenarioTrace.Record(step: step.index, op: step.operation.name)
            var seen = ObservedEvents()
            do {
                try await run(step.operation, into: &record, seen: &seen)
            } catch {
                record.ok = false
                record.error = ScenarioTrace.TraceError(error)
            }
            return (record, seen)
        }
        let abandonedAttempt = await drive(until: completion, startedAt: started)
        var (record, seen) = await task.value
        seen.append(drainEvents())
        // The disconnection that ends an attempt the session gave up on ends no link.
        if abandonedAttempt { seen.linkLost = false }
        let pdus = await bridge.attPDUCount - pdusBefore
        if pdus > 0 || step.operation.usesTheLink { record.attPDUs = pdus }
        if !seen.received.isEmpty || record.received != nil {
            record.received = (record.received ?? []) + seen.received
        }
        if !seen.disconnections.isEmpty {
            // A CoreBluetooth peripheral manager learns of a lost central only through the
            // subscriptions that ended with it.
            var reason: [(key: String, value: TraceValue)] = [
                ("central", seen.disconnections.last!.map { ScenarioTrace.TraceError($0).value } ?? .null)
            ]
            if seen.linkLost {
                reason.append(
                    (
                        "peripheral",
                        .object([("unsubscribed", .array(seen.unsubscribed.map { .string($0.description) }))])
                    )
                )
            }
            record.reason = .object(reason)
        }
        if case .scan = step.operation { record.discovered = .array(seen.discoveries.map(Self.describe)) }
        record.mtu = await linkMTU
        if case .connect = step.operation, record.ok { connectedAt.value = await bridge.now }
        record.time = await bridge.now - .zero
        record.started = started - .zero
        record.logRange = logBefore..<(await bridge.logCount)
        return record
    }

    /// Moves virtual time for an operation stuck waiting, until `completion` is done. Returns
    /// whether it gave up on a connection attempt (cancelled it: no link was up).
    private func drive(until completion: StepCompletion, startedAt started: VirtualClock.Instant) async -> Bool {
        let deadline = started.advanced(by: Self.transactionTimeout)
        var gaveUp = false
        var abandonedAttempt = false
        while true {
            await bridge.waiters.untilSuspended(orUntil: { completion.isDone })
            if completion.isDone { return abandonedAttempt }
            // A request outstanding on the ATT bearer times out in the simulation itself
            // (`LinkTiming.attTransactionTimeout`), which may be after this step's deadline: a
            // request sent late in the step, or a longer timeout; the session lets it.
            let limit = max(deadline, await bridge.transactionTimerDeadline ?? deadline)
            if await bridge.runNextEvent(notAfter: limit) { continue }
            await bridge.advance(to: deadline)
            if !gaveUp {
                gaveUp = true
                if await bridge.isWaitingToConnect {
                    abandonedAttempt = true
                    try? await central.cancelPeripheralConnection(peripheral.identifier)
                } else {
                    await bridge.simulate(
                        .disconnect(
                            central: central.identifier, peripheral: peripheral.identifier,
                            error: CoreBluetoothError(.connectionTimeout)))
                }
            } else {
                await bridge.failWaitingOperations(with: CoreBluetoothError(.connectionTimeout))
            }
        }
    }

    struct ObservedEvents {
        var discoveries: [DiscoveredPeripheral] = []
        var received: [Data] = []
        /// The error of each disconnection (nil when the central asked for it).
        var disconnections: [CoreBluetoothError?] = []
        /// The characteristics the peripheral saw the central unsubscribe from.
        var unsubscribed: [BluetoothUUID] = []
        /// Whether a link that was up went down (not only an attempt that failed).
        var linkLost = false

        mutating func append(_ other: ObservedEvents) {
            discoveries += other.discoveries
            received += other.received
            disconnections += other.disconnections
            unsubscribed += other.unsubscribed
            linkLost = linkLost || other.linkLost
        }
    }

    /// Takes the central's events (and the peripheral's unsubscriptions) since the last call.
    func drainEvents() -> ObservedEvents {
        var seen = ObservedEvents()
        for event in peripheral.manager.broadcaster.drain(peripheralTap) {
            if case .unsubscribed(let remote, let characteristic) = event, remote.identifier == central.identifier {
                seen.unsubscribed.append(characteristic.uuid)
            }
        }
        for event in central.broadcaster.drain(centralTap) {
            switch event {
            case .discovered(let discovery) where discovery.identifier == peripheral.identifier:
                seen.discoveries.append(discovery)
            case .valueUpdated(_, let value):
                seen.received.append(value)
            case .disconnected(let remote, let error) where remote.identifier == peripheral.identifier:
                seen.disconnections.append(error)
                seen.linkLost = true
            case .failedToConnect(let remote, let error) where remote.identifier == peripheral.identifier:
                seen.disconnections.append(error)
            default:
                break
            }
        }
        return seen
    }

    /// Moves virtual time on in small steps until `done` holds for what was seen, or
    /// `limit` passed.
    func advance(until done: (ObservedEvents) -> Bool, limit: Duration, seen: inout ObservedEvents) async {
        let deadline = await bridge.now.advanced(by: limit)
        seen.append(drainEvents())
        while !done(seen), await bridge.now < deadline {
            await bridge.advance(by: Self.waitingStep)
            seen.append(drainEvents())
        }
    }

    /// The link's ATT_MTU while the central is connected.
    var linkMTU: Int? {
        get async {
            await bridge.linkMTU(central: central.identifier, peripheral: peripheral.identifier)
        }
    }

    /// The central's view of a characteristic the step names: the discovered one while
    /// connected (`APIMisuseError.characteristicNotFound(_:service:peripheral:)` if it was
    /// not discovered, as CoreBluetooth has no object for it then); when not connected, the
    /// reference the central kept, so the operation fails as the stack fails it.
    func remote(_ reference: ScenarioStep.CharacteristicReference) async throws -> RemoteCharacteristic {
        let service = peripheral.services[reference.serviceIndex]
        let local = service.characteristics[reference.characteristicIndex]
        guard await central.isConnected(peripheral.identifier) else {
            return RemoteCharacteristic(
                service: RemoteService(
                    peripheral: peripheral.identifier, uuid: service.uuid, isPrimary: service.isPrimary,
                    handle: service.handle, endHandle: service.endHandle),
                uuid: local.uuid, properties: local.properties.declared, handle: local.handle)
        }
        let services = await central.services(of: peripheral.identifier)
        for service in services where service.handle == local.serviceHandle {
            if let match = await central.characteristics(of: service).first(where: { $0.handle == local.handle }) {
                return match
            }
        }
        throw APIMisuseError.characteristicNotFound(
            local.uuid, service: local.serviceUUID, peripheral: peripheral.identifier)
    }

    /// The peripheral's own reference to a characteristic the step names.
    func local(_ reference: ScenarioStep.CharacteristicReference) -> LocalCharacteristic {
        peripheral.services[reference.serviceIndex].characteristics[reference.characteristicIndex]
    }
}

extension ScenarioStep.Operation {
    /// Whether the op works over the link, so its record always carries `attPDUs`.
    var usesTheLink: Bool {
        switch self {
        case .connect, .discover, .read, .readOnce, .readDescriptor, .writeDescriptor, .write,
            .writeWithoutResponseBurst, .subscribe, .subscribeToIndications, .unsubscribe, .notify, .notifyBurst,
            .indicate, .readRequest:
            true
        default: false
        }
    }
}

/// Whether a step's task has finished; set by the task, read by the session's driver.
final class StepCompletion: @unchecked Sendable {
    // @unchecked Sendable: `done` is only read and written with `lock` held.
    private let lock = Lock()
    private var done = false

    func finish() { lock.withLock { done = true } }

    var isDone: Bool { lock.withLock { done } }
}

extension MockBLEBridge {
    /// How many entries ``log`` has (without copying it).
    var logCount: Int { world.log.count }

    var isWaitingToConnect: Bool {
        world.pending.values.contains {
            if case .connect = $0.kind { return true }
            return false
        }
    }

    /// When the last transaction timer on the schedule fires (a request outstanding on some
    /// link times out then, unless it is answered first).
    var transactionTimerDeadline: VirtualClock.Instant? {
        world.schedule.ordered {
            if case .transactionTimer = $0 { return true }
            return false
        }.last?.deadline
    }

    func runNextEvent(notAfter limit: VirtualClock.Instant) -> Bool {
        guard world.runNextEvent(dueBy: limit) else { return false }
        syncClock()
        applyEffects()
        return true
    }

    func failWaitingOperations(with error: any Error) {
        mutate { $0.failOperations(error) { _ in true } }
    }

    func linkMTU(central: UUID, peripheral: UUID) -> Int? {
        world.linkMTU(central: central, peripheral: peripheral)
    }

    /// The descriptors a discovery of `characteristic` finds on its peripheral.
    func descriptors(of characteristic: RemoteCharacteristic) -> [RemoteDescriptor] {
        world.peripherals[characteristic.peripheral]?.database.descriptors(of: characteristic) ?? []
    }

    /// Runs the schedule until a peripheral's queued notifications and indications have crossed.
    func runUntilUpdatesDelivered(peripheral: UUID, maximumEvents: Int = 10_000) {
        var count = 0
        while (world.peripherals[peripheral]?.queuedUpdates ?? 0) > 0, count < maximumEvents,
            runNextEvent(notAfter: world.schedule.nextDeadline ?? world.now)
        {
            count += 1
        }
    }

    /// Runs the schedule until a central's write-without-response queue has room (or holds
    /// nothing, or its link is gone).
    func runUntilWriteQueueHasRoom(central: UUID, peripheral: UUID, maximumEvents: Int = 10_000) {
        let key = LinkKey(central: central, peripheral: peripheral)
        var count = 0
        while !world.canQueueCommand(on: key), (world.links[key]?.queuedCommands ?? 0) > 0, count < maximumEvents,
            runNextEvent(notAfter: world.schedule.nextDeadline ?? world.now)
        {
            count += 1
        }
    }

    /// Runs the next scheduled event while a peripheral has updates queued; whether one ran.
    func runNextUpdateEvent(peripheral: UUID) -> Bool {
        guard (world.peripherals[peripheral]?.queuedUpdates ?? 0) > 0 else { return false }
        return runNextEvent(notAfter: world.schedule.nextDeadline ?? world.now)
    }

    /// Runs the schedule until a central's queued writes without response have crossed.
    func runUntilWritesSent(central: UUID, peripheral: UUID, maximumEvents: Int = 10_000) {
        let key = LinkKey(central: central, peripheral: peripheral)
        var count = 0
        while (world.links[key]?.queuedCommands ?? 0) > 0, count < maximumEvents,
            runNextEvent(notAfter: world.schedule.nextDeadline ?? world.now)
        {
            count += 1
        }
    }
}
