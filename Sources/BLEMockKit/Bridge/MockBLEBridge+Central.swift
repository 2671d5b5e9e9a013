import BLECore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

extension MockBLEBridge {
    // MARK: Registration and state

    /// Adds a central manager to the air (once).
    func register(
        central identifier: UUID, events: EventBroadcaster<CentralEvent>,
        configuration: MockCentralManager.Configuration
    ) {
        if let record = world.centrals[identifier] {
            if record.pendingRestoration != nil, record.events !== events {
                restore(central: identifier, events: events, configuration: configuration)
            }
            return
        }
        let random =
            configuration.seed.map { SeededGenerator(seed: $0) }
            ?? world.random.derived("central").derived(identifier.uuidString)
        let state = startState(
            configuration.stateTransition, initial: configuration.initialState, manager: .central(identifier))
        world.centrals[identifier] = SimulationWorld.Central(
            identifier: identifier, events: events, configuration: configuration, state: state, random: random)
        world.centralOrder.append(identifier)
        world.record(.stateChanged, central: identifier, detail: state.description)
        for injection in configuration.errorInjection { inject(injection, owner: identifier) }
    }

    func centralState(_ central: UUID) -> ManagerState { world.centrals[central]?.state ?? .unknown }

    /// Waits (in virtual time) for the central's automatic state steps, then returns its state.
    func waitForPoweredOn(central: UUID) -> ManagerState {
        settleState(of: .central(central))
        return centralState(central)
    }

    func requirePoweredOn(central: UUID, _ operation: String) throws {
        do {
            if let problem = world.centrals[central]?.configuration.mtu.problem() {
                throw APIMisuseError.invalidConfiguration("MockCentralManager.Configuration.mtu: \(problem)")
            }
            let state = centralState(central)
            guard state == .poweredOn else { throw APIMisuseError.notPoweredOn(operation: operation, state: state) }
        } catch {
            world.record(.refused, central: central, error: error, detail: operation)
            throw error
        }
    }

    // MARK: Scanning

    func startScan(central: UUID, services: [BluetoothUUID]?, options: ScanOptions) throws {
        try requirePoweredOn(central: central, "scanForPeripherals")
        world.centrals[central]!.scan = SimulationWorld.Scan(services: services, options: options)
        world.record(
            .scanStarted, central: central,
            detail: "services=\(services.map { $0.map(\.uuidString).joined(separator: ",") } ?? "any")"
                + (options.allowDuplicates ? " allowDuplicates" : ""))
        if world.timing.isInstant {
            // Instant timing: every advertiser on the air is heard at once.
            for peripheral in world.peripheralOrder where world.peripherals[peripheral]!.advertisement != nil {
                deliverAdvertisement(from: peripheral, to: central)
            }
        }
        scheduleAdvertisingIfNeeded()
    }

    func stopScan(central: UUID) {
        guard world.centrals[central]?.scan != nil else { return }
        world.centrals[central]!.scan = nil
        world.record(.scanStopped, central: central)
    }

    func isScanning(central: UUID) -> Bool { world.centrals[central]?.scan != nil }

    /// Reports one advertisement to one central if its scan matches it.
    func deliverAdvertisement(from peripheral: UUID, to central: UUID) {
        guard let record = world.peripherals[peripheral], let advertisement = record.airAdvertisement, record.isHeard,
            record.advertisingStarted <= world.now, var scan = world.centrals[central]?.scan,
            world.centrals[central]?.state == .poweredOn, scan.matches(advertisement)
        else { return }
        // In the background iOS reports each peripheral once per scan, whatever the options say.
        let duplicates = scan.options.allowDuplicates && world.centrals[central]?.isInBackground != true
        guard duplicates || !scan.reported.contains(peripheral) else { return }
        scan.reported.insert(peripheral)
        world.centrals[central]!.scan = scan
        let remote = world.remotePeripheral(peripheral)
        world.known.insert(peripheral)
        let rssi = currentRSSI(of: peripheral)
        world.record(.discovered, central: central, peripheral: peripheral, detail: "rssi=\(rssi)")
        world.centrals[central]!.events.yield(
            .discovered(DiscoveredPeripheral(peripheral: remote, advertisementData: advertisement, rssi: rssi)))
    }

    /// Whether advertising events must be scheduled: someone scans with realistic timing
    /// (each advertiser is heard at its next advertising event), or wants duplicates.
    var advertisingEventsNeeded: Bool {
        world.centralOrder.contains { central in
            guard let scan = world.centrals[central]!.scan else { return false }
            return !world.timing.isInstant || scan.options.allowDuplicates
        }
    }

    /// Schedules the next advertisement of every advertising peripheral, if anyone listens
    /// (and always the first one of a delayed advertiser).
    func scheduleAdvertisingIfNeeded() {
        let needed = advertisingEventsNeeded
        for peripheral in world.peripheralOrder { scheduleAdvertising(of: peripheral, needed: needed) }
    }

    /// Schedules the next advertisement of one peripheral if it advertises, has none scheduled,
    /// and either someone listens (`needed`) or its first advertisement is still to come.
    ///
    /// Only this peripheral's record is touched, so an advertisement costs the same however
    /// many peripherals share the bridge.
    func scheduleAdvertising(of peripheral: UUID, needed: Bool) {
        guard let index = world.peripherals.index(forKey: peripheral) else { return }
        let record = world.peripherals.values[index]
        guard record.advertisement != nil, !record.advertisingScheduled else { return }
        let delayed = record.advertisingStarted > world.now
        guard needed || delayed else { return }
        world.peripherals.values[index].advertisingScheduled = true
        let next: VirtualClock.Instant
        if delayed {
            next = record.advertisingStarted
        } else {
            // Each advertising event is delayed by a random 0–10 ms (advDelay), as the
            // specification requires, when timing is realistic.
            let advDelay =
                world.timing.isInstant
                ? Duration.zero : world.peripherals.values[index].random.duration(in: .zero ... .milliseconds(10))
            next = world.now.advanced(by: record.configuration.advertisingInterval + advDelay)
        }
        world.schedule.schedule(.advertise(peripheral: peripheral), at: next)
    }

    /// A scheduled advertisement: report it to every scanning central, then schedule the next
    /// (a one-time advertiser stops advertising after its advertisement).
    func advertisementDue(from peripheral: UUID) {
        guard world.peripherals[peripheral] != nil else { return }
        world.peripherals[peripheral]!.advertisingScheduled = false
        guard world.peripherals[peripheral]!.advertisement != nil else { return }
        for central in world.centralOrder { deliverAdvertisement(from: peripheral, to: central) }
        if world.peripherals[peripheral]!.configuration.advertisesOnce {
            stopAdvertising(peripheral: peripheral)
            return
        }
        scheduleAdvertising(of: peripheral, needed: advertisingEventsNeeded)
    }

    // MARK: Peripherals known to the system

    func retrievePeripherals(central: UUID, identifiers: [UUID]) -> [RemotePeripheral] {
        identifiers.filter { world.known.contains($0) }.map { world.remotePeripheral($0) }
    }

    func retrieveConnectedPeripherals(services: [BluetoothUUID]) -> [RemotePeripheral] {
        let connected = Set(world.links.keys.map(\.peripheral))
        return world.peripheralOrder.filter { peripheral in
            connected.contains(peripheral)
                && world.peripherals[peripheral]!.database.localServices.contains { services.contains($0.uuid) }
        }
        .map { world.remotePeripheral($0) }
    }

    func isConnected(central: UUID, peripheral: UUID) -> Bool {
        world.links[SimulationWorld.LinkKey(central: central, peripheral: peripheral)] != nil
    }
}
