import BLECore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// State restoration: an app the system terminates keeps, with a restore identifier, what
/// the system holds for it, and a relaunched app's manager with the same restore identifier
/// takes it back.
extension World {
    // MARK: Termination

    /// The app of a central is terminated: without a restore identifier, the central shuts
    /// down; with one, the system keeps its links, attempts and scan (and the attributes it
    /// discovered) for a successor, while the manager itself goes away, and with it its L2CAP
    /// channels (closed at both ends: CoreBluetooth does not restore them) and the error
    /// injections it installed (``InjectionBook/retire(owner:)``).
    mutating func terminate(central: UUID) {
        guard let terminated = centrals[central], terminated.pendingRestoration == nil else { return }
        guard keepsForRestoration(.central(central)) else { return shutDown(central: central) }
        let connected = links(ofCentral: central).map(\.peripheral)
        let connecting = attempts.keys.filter { $0.central == central }.map(\.peripheral)
            .sorted { $0.precedes($1) }
        centrals[central]!.pendingRestoration = RestoredCentralState(
            peripherals: (connected + connecting).map(remotePeripheral),
            scanServices: terminated.scan.map { $0.services ?? [] }, scanOptions: terminated.scan?.options)
        // The app is gone: nothing it awaited will resume in it, and it hears nothing more.
        // (Pending connection attempts stay: the system completes them for the successor.)
        // What it left on the links the system keeps is withdrawn where the air allows, as for a
        // caller that gave up: a request still in the pipe is taken back; one the peripheral has
        // stays outstanding until its answer, which then goes to nobody.
        let waiting = pending.keys(where: { $0.owner == .central(central) })
        for id in waiting {
            effects.append(.complete(id, .failure(CoreBluetoothError(.operationCancelled))))
            if case .connect = pending[existing: id].kind {
                pending[id] = nil
            } else {
                cancel(id)
            }
        }
        // Its channels go with its process: the other end sees each close as when an app closes
        // one, and the terminated app's end sends no more over the link the system keeps.
        for id in channels.keys.sorted() where channels[id]!.link.central == central { closeChannel(id) }
        injections.retire(owner: central)
        centrals[central]!.state = .unknown
        record(.stateChanged, central: central, detail: "app terminated")
        effects.append(.finishEvents(.central(central)))
        // What happens for the app from now on waits for its relaunch.
        heldForRestoration[.central(central)] = []
    }

    /// The app of a peripheral is terminated: without a restore identifier, the peripheral
    /// shuts down; with one, the system keeps its services, advertising and links. Its L2CAP
    /// PSMs and channels go with the app (CoreBluetooth does not restore them): each PSM is
    /// unpublished and the channels on it close at both ends. So do the error injections it
    /// installed (``InjectionBook/retire(owner:)``).
    mutating func terminate(peripheral: UUID) {
        guard let record = peripherals[peripheral], record.pendingRestoration == nil else { return }
        guard keepsForRestoration(.peripheral(peripheral)) else { return shutDown(peripheral: peripheral) }
        peripherals[peripheral]!.pendingRestoration = RestoredPeripheralState(
            services: record.database.localServices, advertisement: record.advertisement)
        unpublishAllL2CAPChannels(peripheral: peripheral)
        injections.retire(owner: peripheral)
        self.record(.stateChanged, peripheral: peripheral, detail: "app terminated")
        effects.append(.finishEvents(.peripheral(peripheral)))
        // What happens for the app from now on waits for its relaunch.
        heldForRestoration[.peripheral(peripheral)] = []
    }

    /// Whether terminating a manager's app now would keep what it holds for a successor (it has
    /// a restore identifier, is on the air and not terminated already).
    func keepsForRestoration(_ manager: Manager) -> Bool {
        switch manager {
        case .central(let central):
            guard let record = centrals[central] else { return false }
            return record.pendingRestoration == nil && record.configuration.restoreIdentifier != nil
                && !record.isShutDown
        case .peripheral(let peripheral):
            guard let record = peripherals[peripheral] else { return false }
            return record.pendingRestoration == nil && record.configuration.restoreIdentifier != nil
                && !record.isShutDown
        }
    }

    /// Whether a manager joining with this identifier takes over what a terminated app left.
    func awaitsRestoration(_ manager: Manager) -> Bool {
        switch manager {
        case .central(let central): centrals[central]?.pendingRestoration != nil
        case .peripheral(let peripheral): peripherals[peripheral]?.pendingRestoration != nil
        }
    }

    // MARK: Restoration

    /// A relaunched app's central takes over what the system kept: its first event is the
    /// restored state, then its state settles as a new manager's does (reported once known, as
    /// CoreBluetooth calls `centralManagerDidUpdateState(_:)` after `willRestoreState`). Its
    /// configuration is checked and its error injections installed as a new manager's are. A
    /// state that settles below `poweredOn` drops what the system kept, as Bluetooth leaving
    /// `poweredOn` does (``leavePoweredOn(central:)``): the system kept it with Bluetooth on.
    ///
    /// The events held while the app was gone follow its first state. For a front end's manager
    /// they come at a step of this instant, after its attaching is done (`releasingAtOnce`
    /// false: a front end's command and a run's driver run the instant's steps). A manager of the
    /// async API joins with no such command, and its calls run only what they need of the
    /// schedule, so such a step could wait for some later call, holding every event for the
    /// manager meanwhile: it gets them at once (`releasingAtOnce`).
    mutating func restore(central: UUID, configuration: MockCentralManager.Configuration, releasingAtOnce: Bool) {
        guard let restored = centrals[central]?.pendingRestoration else { return }
        centrals[central]!.pendingRestoration = nil
        centrals[central]!.configuration = limited(configuration)
        centrals[central]!.restored = restored
        let problem = Self.problem(in: configuration)
        centrals[central]!.configurationProblem = problem
        if problem == nil { installInjections(of: configuration.errorInjection, owner: central) }
        record(.stateChanged, central: central, detail: "restored")
        deliver(.willRestoreState(restored), to: central)
        let state = startState(
            configuration.stateTransition, initial: configuration.initialState, manager: .central(central))
        centrals[central]!.state = state
        record(.stateChanged, central: central, detail: state.description)
        // A transitioning state reports each step as it comes (``setState(_:to:automatic:)``).
        guard stateSettles[.central(central)] == nil else { return }
        deliver(CentralEvent.stateChanged(state), to: central)
        // The events held while the app was gone follow its first state, once it is powered on
        // (see above).
        guard state == .poweredOn else { return leavePoweredOn(central: central) }
        if releasingAtOnce {
            releaseHeld(.central(central))
        } else {
            schedule.schedule(.releaseHeld(.central(central)), at: now)
        }
    }

    /// Hands a relaunched app's manager the events held for it while its app was terminated,
    /// in their order (a central's once it is powered on: see
    /// ``restore(central:configuration:releasingAtOnce:)``).
    mutating func releaseHeld(_ manager: Manager) {
        switch manager {
        case .central(let central):
            guard centrals[central]?.pendingRestoration == nil, centrals[central]?.state == .poweredOn else { return }
        case .peripheral(let peripheral):
            guard peripherals[peripheral]?.pendingRestoration == nil else { return }
        }
        guard let held = heldForRestoration.removeValue(forKey: manager) else { return }
        effects.append(contentsOf: held)
    }

    /// A relaunched app's peripheral manager takes over its services, advertising and links:
    /// its first event is the restored state, then its state (the system's, which the
    /// peripheral keeps while its app is gone), as CoreBluetooth calls
    /// `peripheralManagerDidUpdateState(_:)` after `willRestoreState`. Its configuration is
    /// checked and its error injections installed as a new manager's are. The events held while
    /// its app was gone follow as a central's do (see
    /// ``restore(central:configuration:releasingAtOnce:)``).
    mutating func restore(
        peripheral: UUID, configuration: MockPeripheralManager.Configuration, releasingAtOnce: Bool
    ) {
        guard let restored = peripherals[peripheral]?.pendingRestoration else { return }
        let answering = Peripheral(
            identifier: peripheral, configuration: configuration, state: .unknown,
            random: Streams(SeededGenerator(seed: 0)))
        peripherals[peripheral]!.pendingRestoration = nil
        peripherals[peripheral]!.configuration = limited(answering.configuration)
        peripherals[peripheral]!.answering = answering.answering
        peripherals[peripheral]!.restored = restored
        let problem = Self.problem(in: configuration)
        peripherals[peripheral]!.configurationProblem = problem
        if problem == nil { installInjections(of: configuration.errorInjection, owner: peripheral) }
        record(.stateChanged, peripheral: peripheral, detail: "restored")
        deliver(.willRestoreState(restored), to: peripheral)
        deliver(PeripheralEvent.stateChanged(peripherals[existing: peripheral].state), to: peripheral)
        // The events held while the app was gone follow its first state, in this instant.
        if releasingAtOnce {
            releaseHeld(.peripheral(peripheral))
        } else {
            schedule.schedule(.releaseHeld(.peripheral(peripheral)), at: now)
        }
    }

    func restoredState(central: UUID) -> RestoredCentralState? { centrals[central]?.restored }

    func restoredState(peripheral: UUID) -> RestoredPeripheralState? { peripherals[peripheral]?.restored }
}

extension PeripheralEvent {
    /// Whether the event, for a peripheral whose app is terminated, waits for the relaunched
    /// app's manager (its state and restoration are the manager's own).
    var waitsForRelaunch: Bool {
        switch self {
        case .stateChanged, .willRestoreState: false
        default: true
        }
    }
}

extension CentralEvent {
    /// Whether the event, for a central whose app is terminated, waits for the relaunched
    /// app's manager (its state and restoration are the manager's own).
    var waitsForRelaunch: Bool {
        switch self {
        case .stateChanged, .willRestoreState: false
        default: true
        }
    }
}
