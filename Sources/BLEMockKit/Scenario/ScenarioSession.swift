import BLECore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// One run of a scenario: the bridge, the two managers, and what the central has seen.
/// Used by ``ScenarioRunner`` from one task, step after step.
final class ScenarioSession {
    let scenario: Scenario
    let bridge: MockBLEBridge
    let central: MockCentralManager
    let peripheral: LoadedPeripheral
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

    /// Runs one step and returns its record.
    func perform(_ step: ScenarioStep) async -> ScenarioTrace.Record {
        var record = ScenarioTrace.Record(step: step.index, op: step.operation.name)
        let pdusBefore = await bridge.attPDUCount
        var seen = ObservedEvents()
        do {
            try await run(step.operation, into: &record, seen: &seen)
        } catch {
            record.ok = false
            record.error = ScenarioTrace.TraceError(error)
        }
        seen.append(drainEvents())
        let pdus = await bridge.attPDUCount - pdusBefore
        if pdus > 0 || step.operation.usesTheLink { record.attPDUs = pdus }
        if !seen.received.isEmpty || record.received != nil {
            record.received = (record.received ?? []) + seen.received
        }
        if !seen.disconnections.isEmpty {
            record.reason = .object([
                ("central", seen.disconnections.last!.map { ScenarioTrace.TraceError($0).value } ?? .null)
            ])
        }
        if case .scan = step.operation { record.discovered = .array(seen.discoveries.map(Self.describe)) }
        record.mtu = await linkMTU
        record.time = await bridge.now - .zero
        return record
    }

    /// What the central saw during a step.
    struct ObservedEvents {
        var discoveries: [DiscoveredPeripheral] = []
        var received: [Data] = []
        /// The error of each disconnection (nil when the central asked for it).
        var disconnections: [CoreBluetoothError?] = []

        mutating func append(_ other: ObservedEvents) {
            discoveries += other.discoveries
            received += other.received
            disconnections += other.disconnections
        }
    }

    /// Takes the central's events since the last call.
    func drainEvents() -> ObservedEvents {
        _ = peripheral.manager.broadcaster.drain(peripheralTap)
        var seen = ObservedEvents()
        for event in central.broadcaster.drain(centralTap) {
            switch event {
            case .discovered(let discovery) where discovery.identifier == peripheral.identifier:
                seen.discoveries.append(discovery)
            case .valueUpdated(_, let value):
                seen.received.append(value)
            case .disconnected(let remote, let error) where remote.identifier == peripheral.identifier:
                seen.disconnections.append(error)
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

    /// The central's view of a characteristic the step names (after discovery).
    func remote(_ reference: ScenarioStep.CharacteristicReference) async throws -> RemoteCharacteristic {
        let local = peripheral.services[reference.serviceIndex].characteristics[reference.characteristicIndex]
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
        case .connect, .discover, .read, .write, .subscribe, .unsubscribe, .notify, .indicate, .readRequest: true
        default: false
        }
    }
}

extension MockBLEBridge {
    /// The ATT_MTU of the link between a central and a peripheral, if they are connected.
    func linkMTU(central: UUID, peripheral: UUID) -> Int? {
        world.links[SimulationWorld.LinkKey(central: central, peripheral: peripheral)]?.mtu
    }

    /// Runs the schedule until `peripheral`'s queued notifications and indications have all
    /// gone out (or `maximumEvents` events ran), so the centrals have them.
    func runUntilUpdatesDelivered(peripheral: UUID, maximumEvents: Int = 10_000) {
        var count = 0
        while world.peripherals[peripheral]?.updateQueue.isEmpty == false, let next = world.schedule.nextDeadline,
            count < maximumEvents
        {
            runEvents(through: next)
            count += 1
        }
    }

    /// Runs the schedule until the central's queued writes without response to `peripheral`
    /// have gone out (or `maximumEvents` events ran).
    func runUntilWritesSent(central: UUID, peripheral: UUID, maximumEvents: Int = 10_000) {
        let key = SimulationWorld.LinkKey(central: central, peripheral: peripheral)
        var count = 0
        while world.links[key]?.writeQueue.isEmpty == false, let next = world.schedule.nextDeadline,
            count < maximumEvents
        {
            runEvents(through: next)
            count += 1
        }
    }
}
