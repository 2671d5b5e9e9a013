import BLECore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

extension MockBLEBridge {
    // MARK: Termination

    /// The app of a central is terminated: without a restore identifier, the central shuts
    /// down; with one, the system keeps its links, attempts and scan (and the attributes it
    /// discovered) for a successor, while the manager itself goes away.
    func terminate(central: UUID) {
        guard let record = world.centrals[central], record.pendingRestoration == nil else { return }
        guard record.configuration.restoreIdentifier != nil else {
            shutDown(central: central)
            return
        }
        let connected = world.links(ofCentral: central).map(\.peripheral)
        let connecting = world.attempts.keys.filter { $0.central == central }.map(\.peripheral)
            .sorted { $0.uuidString < $1.uuidString }
        world.centrals[central]!.pendingRestoration = RestoredCentralState(
            peripherals: (connected + connecting).map(world.remotePeripheral),
            scanServices: record.scan.map { $0.services ?? [] }, scanOptions: record.scan?.options)
        // The app is gone: nothing it awaited will resume in it, and it hears nothing more.
        // (Pending connection attempts stay: the system completes them for the successor.)
        resumeWaiting(where: { $0.link.central == central }, with: .failure(CoreBluetoothError(.operationCancelled)))
        world.centrals[central]!.state = .unknown
        world.record(.stateChanged, central: central, detail: "app terminated")
        record.events.finish()
    }

    /// The app of a peripheral is terminated: without a restore identifier, the peripheral
    /// shuts down; with one, the system keeps its services, advertising and links.
    func terminate(peripheral: UUID) {
        guard let record = world.peripherals[peripheral], record.pendingRestoration == nil else { return }
        guard record.configuration.restoreIdentifier != nil else {
            shutDown(peripheral: peripheral)
            return
        }
        world.peripherals[peripheral]!.pendingRestoration = RestoredPeripheralState(
            services: record.database.localServices, advertisement: record.advertisement)
        world.record(.stateChanged, peripheral: peripheral, detail: "app terminated")
        record.events.finish()
    }

    // MARK: Restoration

    /// A relaunched app's central takes over what the system kept: its first event is the
    /// restored state, then its state settles as a new manager's does.
    func restore(central: UUID, events: EventBroadcaster<CentralEvent>, configuration: MockCentralManager.Configuration)
    {
        guard let restored = world.centrals[central]?.pendingRestoration else { return }
        world.centrals[central]!.pendingRestoration = nil
        world.centrals[central]!.events = events
        world.centrals[central]!.configuration = configuration
        world.centrals[central]!.restored = restored
        world.record(.stateChanged, central: central, detail: "restored")
        events.yield(.willRestoreState(restored))
        let state = startState(
            configuration.stateTransition, initial: configuration.initialState, manager: .central(central))
        world.centrals[central]!.state = state
        world.record(.stateChanged, central: central, detail: state.description)
    }

    /// A relaunched app's peripheral manager takes over its services, advertising and links.
    func restore(
        peripheral: UUID, events: EventBroadcaster<PeripheralEvent>, configuration: MockPeripheralManager.Configuration
    ) {
        guard let restored = world.peripherals[peripheral]?.pendingRestoration else { return }
        world.peripherals[peripheral]!.pendingRestoration = nil
        world.peripherals[peripheral]!.events = events
        world.peripherals[peripheral]!.configuration = configuration
        world.peripherals[peripheral]!.restored = restored
        world.record(.stateChanged, peripheral: peripheral, detail: "restored")
        events.yield(.willRestoreState(restored))
    }

    func restoredState(central: UUID) -> RestoredCentralState? { world.centrals[central]?.restored }

    func restoredState(peripheral: UUID) -> RestoredPeripheralState? { world.peripherals[peripheral]?.restored }
}
