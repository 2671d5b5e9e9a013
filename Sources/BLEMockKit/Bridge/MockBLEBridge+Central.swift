import BLECore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension MockBLEBridge {
    // MARK: Registration and state

    /// Adds a central manager to the air (once).
    func register(central identifier: UUID, events: EventBroadcaster<CentralEvent>, configuration: MockCentralManager.Configuration) {
        guard world.centrals[identifier] == nil else { return }
        world.centrals[identifier] = SimulationWorld.Central(
            identifier: identifier, events: events, configuration: configuration, state: configuration.initialState)
        world.centralOrder.append(identifier)
        world.record(.stateChanged, central: identifier, detail: configuration.initialState.description)
    }

    func centralState(_ central: UUID) -> ManagerState { world.centrals[central]?.state ?? .unknown }

    func requirePoweredOn(central: UUID, _ operation: String) throws {
        let state = centralState(central)
        guard state == .poweredOn else { throw APIMisuseError.notPoweredOn(operation: operation, state: state) }
    }

    // MARK: Scanning

    func startScan(central: UUID, services: [BluetoothUUID]?, options: ScanOptions) throws {
        try requirePoweredOn(central: central, "scanForPeripherals")
        world.centrals[central]!.scan = SimulationWorld.Scan(services: services, options: options)
        world.record(
            .scanStarted, central: central,
            detail: "services=\(services.map { $0.map(\.uuidString).joined(separator: ",") } ?? "any")"
                + (options.allowDuplicates ? " allowDuplicates" : ""))
        for peripheral in world.peripheralOrder where world.peripherals[peripheral]!.advertisement != nil {
            deliverAdvertisement(from: peripheral, to: central)
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
        guard let record = world.peripherals[peripheral], let advertisement = record.advertisement,
            var scan = world.centrals[central]?.scan, world.centrals[central]?.state == .poweredOn,
            scan.matches(advertisement)
        else { return }
        guard scan.options.allowDuplicates || !scan.reported.contains(peripheral) else { return }
        scan.reported.insert(peripheral)
        world.centrals[central]!.scan = scan
        let remote = world.remotePeripheral(peripheral)
        world.known.insert(peripheral)
        let rssi = record.configuration.rssi
        world.record(.discovered, central: central, peripheral: peripheral, detail: "rssi=\(rssi)")
        world.centrals[central]!.events.yield(
            .discovered(DiscoveredPeripheral(peripheral: remote, advertisementData: advertisement, rssi: rssi)))
    }

    /// Whether any scanning central wants every advertisement, which needs periodic advertising.
    var anyScanWantsDuplicates: Bool {
        world.centralOrder.contains { world.centrals[$0]!.scan?.options.allowDuplicates == true }
    }

    /// Schedules the next advertisement of every advertising peripheral, if anyone listens.
    func scheduleAdvertisingIfNeeded() {
        guard anyScanWantsDuplicates else { return }
        for peripheral in world.peripheralOrder {
            guard let record = world.peripherals[peripheral], record.advertisement != nil, !record.advertisingScheduled
            else { continue }
            world.peripherals[peripheral]!.advertisingScheduled = true
            world.schedule.schedule(
                .advertise(peripheral: peripheral), at: world.now.advanced(by: record.configuration.advertisingInterval))
        }
    }

    /// A scheduled advertisement: report it to every scanning central, then schedule the next.
    func advertisementDue(from peripheral: UUID) {
        guard world.peripherals[peripheral] != nil else { return }
        world.peripherals[peripheral]!.advertisingScheduled = false
        guard world.peripherals[peripheral]!.advertisement != nil else { return }
        for central in world.centralOrder { deliverAdvertisement(from: peripheral, to: central) }
        scheduleAdvertisingIfNeeded()
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
