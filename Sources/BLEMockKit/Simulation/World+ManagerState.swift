import BLECore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

extension World {
    // MARK: Joining the air

    /// Adds a central manager to the air.
    mutating func addCentral(_ identifier: UUID, configuration: MockCentralManager.Configuration) {
        guard !centrals.contains(identifier) else { return }
        centralOrder.append(identifier)
        installCentral(identifier, configuration: configuration)
    }

    /// A central manager that shut down is made again under its identifier (an app that let go
    /// of its manager made another with the same restore identifier): it starts afresh, as a new
    /// one does (its predecessor's start-up steps still to come are dropped); what the system
    /// keeps for the phone (bonds) stays, and so does its app's background execution.
    mutating func restart(central identifier: UUID, configuration: MockCentralManager.Configuration) {
        guard centrals.contains(identifier), centrals[existing: identifier].isShutDown else { return }
        let isInBackground = centrals[existing: identifier].isInBackground
        forgetStateSteps(of: .central(identifier))
        installCentral(identifier, configuration: configuration)
        centrals[identifier]!.isInBackground = isInBackground
    }

    /// Drops a manager's automatic state steps still to come (those of a predecessor that shut
    /// down before its state settled, which must not reach the manager made again).
    private mutating func forgetStateSteps(of manager: Manager) {
        schedule.removeAll {
            if case .stateStep(manager, _) = $0 { return true }
            return false
        }
        stateSettles[manager] = nil
    }

    /// Puts a new central record under `identifier` (already in ``centralOrder``).
    private mutating func installCentral(_ identifier: UUID, configuration: MockCentralManager.Configuration) {
        let streams =
            configuration.seed.map { Streams(SeededGenerator(seed: $0)) }
            ?? Streams(deriving: .central, of: identifier, from: random)
        let state = startState(
            configuration.stateTransition, initial: configuration.initialState, manager: .central(identifier))
        centrals[identifier] = Central(
            identifier: identifier, configuration: limited(configuration), state: state, random: streams)
        let problem = Self.problem(in: configuration)
        centrals[identifier]!.configurationProblem = problem
        record(.stateChanged, central: identifier, detail: state.description)
        // CoreBluetooth reports the state once a new manager knows it; a transitioning one
        // reports each step as it comes.
        if stateSettles[.central(identifier)] == nil { deliver(CentralEvent.stateChanged(state), to: identifier) }
        if problem == nil { installInjections(of: configuration.errorInjection, owner: identifier) }
    }

    /// Installs the error injections of a manager's configuration (a valid one: a manager whose
    /// configuration has a problem refuses every call, and injects nothing).
    mutating func installInjections(of configured: [ErrorInjection], owner: UUID) {
        for injection in configured { injections.add(injection, owner: owner) }
    }

    /// Adds a peripheral manager to the air.
    mutating func addPeripheral(_ identifier: UUID, configuration: MockPeripheralManager.Configuration) {
        guard !peripherals.contains(identifier) else { return }
        peripheralOrder.append(identifier)
        installPeripheral(identifier, configuration: configuration)
    }

    /// A peripheral manager that shut down is made again under its identifier (an app that let
    /// go of its manager made another with the same restore identifier): it starts afresh, as a
    /// new one does, with no services, L2CAP channels or advertising (they went with its
    /// predecessor, advertising sets a front end gave included; so do its predecessor's
    /// start-up steps still to come). What does not belong to the manager stays: where the
    /// device is (its simulated proximity), whether its app runs in the background, and what the
    /// system keeps (bonds, centrals' knowledge of the peripheral, a connection by the system).
    mutating func restart(peripheral identifier: UUID, configuration: MockPeripheralManager.Configuration) {
        guard peripherals.contains(identifier), peripherals[existing: identifier].isShutDown else { return }
        let old = peripherals[existing: identifier]
        forgetStateSteps(of: .peripheral(identifier))
        if advertisingSets.removeValue(forKey: identifier) != nil {
            schedule.removeAll {
                if case .advertiseSet(identifier, _) = $0 { return true }
                return false
            }
        }
        installPeripheral(identifier, configuration: configuration)
        peripherals[identifier]!.proximity = old.proximity
        peripherals[identifier]!.proximitySimulated = old.proximitySimulated
        peripherals[identifier]!.isInBackground = old.isInBackground
    }

    /// Puts a new peripheral record under `identifier` (already in ``peripheralOrder``).
    private mutating func installPeripheral(_ identifier: UUID, configuration: MockPeripheralManager.Configuration) {
        let streams =
            configuration.seed.map { Streams(SeededGenerator(seed: $0)) }
            ?? Streams(deriving: .peripheral, of: identifier, from: random)
        let state = startState(
            configuration.stateTransition, initial: configuration.initialState, manager: .peripheral(identifier))
        peripherals[identifier] = Peripheral(
            identifier: identifier, configuration: limited(configuration), state: state, random: streams)
        let problem = Self.problem(in: configuration)
        peripherals[identifier]!.configurationProblem = problem
        record(.stateChanged, peripheral: identifier, detail: state.description)
        if stateSettles[.peripheral(identifier)] == nil {
            deliver(PeripheralEvent.stateChanged(state), to: identifier)
        }
        if problem == nil { installInjections(of: configuration.errorInjection, owner: identifier) }
    }

    /// The world of a manager that may not join its bridge (its identifier is another
    /// manager's there): it has that manager alone, refusing every call with `problem`.
    static func refusing(_ arrival: ArrivalQueue.Arrival, problem: String) -> World {
        var world = World(seed: 0, timing: .instant)
        switch arrival {
        case .central(let identifier, _, let configuration):
            world.addCentral(identifier, configuration: configuration)
            world.centrals[identifier]!.configurationProblem = problem
        case .peripheral(let identifier, _, let configuration):
            world.addPeripheral(identifier, configuration: configuration)
            world.peripherals[identifier]!.configurationProblem = problem
        }
        return world
    }

    /// What is wrong with a central's configuration (named by field), or `nil`: the manager
    /// then refuses every call with `invalidConfiguration`.
    static func problem(in configuration: MockCentralManager.Configuration) -> String? {
        problem(
            in: "MockCentralManager", isCentral: true, mtu: configuration.mtu, injections: configuration.errorInjection)
            ?? configuration.numericProblem
    }

    /// What is wrong with a peripheral's configuration (named by field), or `nil`.
    static func problem(in configuration: MockPeripheralManager.Configuration) -> String? {
        problem(
            in: "MockPeripheralManager", isCentral: false, mtu: configuration.mtu,
            injections: configuration.errorInjection) ?? configuration.numericProblem
    }

    private static func problem(
        in manager: String, isCentral: Bool, mtu: MTUMode, injections: [ErrorInjection]
    ) -> String? {
        if let problem = mtu.problem() { return "\(manager).Configuration.mtu: \(problem)" }
        for injection in injections {
            if let problem = injection.problem(inCentral: isCentral) {
                return "\(manager).Configuration.errorInjection: \(problem)"
            }
        }
        return nil
    }

    /// The state a new manager starts in, and the steps its state takes by itself.
    mutating func startState(_ transition: StateTransition, initial: ManagerState, manager: Manager) -> ManagerState {
        let duration: Duration
        switch transition {
        case .realistic(let total):
            duration = total
            schedule.schedule(.stateStep(manager, .resetting), at: now.advanced(by: total / 2))
        case .delayed(let total):
            duration = total
        case .instant, .stuck:
            return transition.settledState(initial: initial)
        }
        let settled = now.advanced(by: duration)
        schedule.schedule(.stateStep(manager, initial), at: settled)
        stateSettles[manager] = settled
        return .unknown
    }

    // MARK: State

    /// A manager's state (`unknown` for one not on the air).
    func state(of manager: Manager) -> ManagerState {
        switch manager {
        case .central(let central): centrals.position(of: central).map { centrals[at: $0].state } ?? .unknown
        case .peripheral(let peripheral):
            peripherals.position(of: peripheral).map { peripherals[at: $0].state } ?? .unknown
        }
    }

    /// Whether a manager's state has settled: its automatic steps are done and it is neither
    /// `unknown` nor `resetting` (or it was shut down, or is not on the air).
    func hasSettled(_ manager: Manager) -> Bool {
        guard stateSettles[manager] == nil else { return false }
        // (Read at the record's position: mapping the subscript's optional copied the record.)
        let record: (state: ManagerState, isShutDown: Bool)? =
            switch manager {
            case .central(let central):
                centrals.position(of: central).map { (centrals[at: $0].state, centrals[at: $0].isShutDown) }
            case .peripheral(let peripheral):
                peripherals.position(of: peripheral).map { (peripherals[at: $0].state, peripherals[at: $0].isShutDown) }
            }
        guard let record, !record.isShutDown else { return true }
        return record.state.isSettled
    }

    /// The manager's state if it has settled (see ``hasSettled(_:)``), or if its configuration
    /// (or its bridge's) is invalid: what `waitForPoweredOn` returns at once, without starting
    /// an operation. (A refused manager's state may never settle, and every other call it makes
    /// reports why: its wait must not hang.)
    @inline(__always)
    func settledState(of manager: Manager) -> ManagerState? {
        hasSettled(manager) || isRefused(manager) ? state(of: manager) : nil
    }

    /// Whether a manager refuses every call for an invalid configuration (its own or its bridge's).
    func isRefused(_ manager: Manager) -> Bool {
        if bridgeProblem != nil { return true }
        switch manager {
        case .central(let central):
            return centrals.position(of: central).map { centrals[at: $0].configurationProblem != nil } ?? false
        case .peripheral(let peripheral):
            return peripherals.position(of: peripheral).map { peripherals[at: $0].configurationProblem != nil }
                ?? false
        }
    }

    /// Starts `waitForPoweredOn`: it ends with the manager's state once the state has settled
    /// (at once when it has), as CoreBluetooth's first `…DidUpdateState` with a settled state:
    /// a manager that is `resetting` or stuck in `unknown` keeps it waiting.
    mutating func startSettling(_ manager: Manager, id: OperationID) {
        if let settled = settledState(of: manager) {
            effects.append(.complete(id, .success(.state(settled))))
            return
        }
        pending[id] = PendingOperation(id: id, owner: manager, kind: .settle(manager), since: now, stage: .waiting)
    }

    /// Changes a manager's state and emits the change. Leaving `poweredOn` stops scanning and
    /// advertising and drops every link of the manager: centrals see `peripheralDisconnected`,
    /// and a peripheral's published services and L2CAP PSMs are removed (as CoreBluetooth clears
    /// them). So does a relaunched app's central whose start-up settles below `poweredOn`: what
    /// the system kept for it, it kept with Bluetooth on.
    ///
    /// A change a test makes (not an automatic step) cancels the manager's remaining automatic
    /// state steps, so a realistic start-up never undoes it.
    mutating func setState(_ manager: Manager, to state: ManagerState, automatic: Bool = false) {
        // (Whether this is the last automatic step of the manager's start-up.)
        let settlesStartUp = automatic && stateSettles[manager].map { $0 <= now } == true
        if !automatic {
            schedule.removeAll {
                if case .stateStep(manager, _) = $0 { return true }
                return false
            }
            stateSettles[manager] = nil
        } else if let settles = stateSettles[manager], settles <= now {
            stateSettles[manager] = nil
        }
        defer {
            if stateSettles[manager] == nil { finishSettling(manager) }
        }
        switch manager {
        case .central(let central):
            guard let old = centrals[central]?.state, old != state, !centrals[existing: central].isShutDown else {
                return
            }
            centrals[central]!.state = state
            record(.stateChanged, central: central, detail: state.description)
            deliver(CentralEvent.stateChanged(state), to: central)
            if state == .poweredOn, !heldForRestoration.isEmpty { releaseHeld(.central(central)) }
            let relaunchSettlesOff =
                settlesStartUp && state != .poweredOn && centrals[existing: central].restored != nil
            guard old == .poweredOn || relaunchSettlesOff else { return }
            leavePoweredOn(central: central)
        case .peripheral(let peripheral):
            guard let old = peripherals[peripheral]?.state, old != state, !peripherals[existing: peripheral].isShutDown
            else {
                return
            }
            peripherals[peripheral]!.state = state
            record(.stateChanged, peripheral: peripheral, detail: state.description)
            deliver(PeripheralEvent.stateChanged(state), to: peripheral)
            if state == .poweredOn {
                resumePausedAdvertising(of: peripheral)
                connectPendingAttempts(to: peripheral)
                return
            }
            if old == .poweredOn {
                // Below powered on, advertising has stopped and every central is disconnected
                // (CoreBluetooth's header); powered off, advertising only pauses.
                let paused = state == .poweredOff ? peripherals[existing: peripheral].advertisement : nil
                stopAdvertising(peripheral: peripheral)
                peripherals[peripheral]!.pausedAdvertisement = paused
                // The update queue goes with the power, and no ready callback is owed: a manager
                // that is not powered on takes no `updateValue` (cleared before the links go, as
                // their teardown empties the queue and would say there is room again).
                peripherals[peripheral]!.updateQueueWasFull = false
                let error = CoreBluetoothError(.peripheralDisconnected)
                for key in links(ofPeripheral: peripheral) { tearDown(key, reason: error, pendingError: error) }
                peripherals[peripheral]!.queuedUpdates = 0
            }
            // Below powered off, advertising must be started again and the local database is
            // cleared: the app adds its services (and publishes its PSMs) again. Powered off,
            // they wait for Bluetooth to come back.
            guard state != .poweredOff, old == .poweredOn || old == .poweredOff else { return }
            peripherals[peripheral]!.pausedAdvertisement = nil
            removeAllServices(peripheral: peripheral)
            unpublishAllL2CAPChannels(peripheral: peripheral)
        }
    }

    /// What a central's Bluetooth leaving `poweredOn` ends: its scan, its connection attempts
    /// (they fail with `connectionFailed`) and its links (`peripheralDisconnected`), and the events
    /// held for a relaunched app (they were about links that are gone now).
    mutating func leavePoweredOn(central: UUID) {
        heldForRestoration[.central(central)] = nil
        stopScan(central: central)
        dropAttempts(ofCentral: central)
        // A connection that never came up failed (as CoreBluetooth reports it); calls on a
        // link fail because the link went.
        failOperations(CoreBluetoothError(.connectionFailed)) {
            if case .connect(let key) = $0.kind { return key.central == central }
            return false
        }
        let error = CoreBluetoothError(.peripheralDisconnected)
        for key in links(ofCentral: central) { tearDown(key, reason: error, pendingError: error) }
        failOperations(error) { $0.owner == .central(central) && $0.link != nil }
    }

    /// Ends every `waitForPoweredOn` of a manager whose state steps are done.
    private mutating func finishSettling(_ manager: Manager) {
        guard hasSettled(manager) else { return }
        let settling = pending.keys(where: {
            if case .settle(manager) = $0.kind { return true }
            return false
        })
        for id in settling { complete(id, .success(.state(state(of: manager)))) }
    }

    /// Checks that a central can run `operation`: its configuration is valid and it is powered on.
    mutating func requirePoweredOn(central: UUID, _ operation: String) throws {
        if let c = centrals.position(of: central), centrals[at: c].state == .poweredOn,
            centrals[at: c].configurationProblem == nil, bridgeProblem == nil
        {
            return
        }
        do {
            if centrals[central]?.isShutDown == true { throw APIMisuseError.managerShutDown(operation: operation) }
            if let bridgeProblem { throw APIMisuseError.invalidConfiguration(bridgeProblem) }
            if let problem = centrals[central]?.configurationProblem {
                throw APIMisuseError.invalidConfiguration(problem)
            }
            let state = state(of: .central(central))
            guard state == .poweredOn else { throw APIMisuseError.notPoweredOn(operation: operation, state: state) }
        } catch {
            record(.refused, central: central, error: error, detail: operation)
            throw error
        }
    }

    /// Checks that a peripheral can run `operation`: its configuration is valid and it is powered on.
    mutating func requirePoweredOn(peripheral: UUID, _ operation: String) throws {
        if let p = peripherals.position(of: peripheral), peripherals[at: p].state == .poweredOn,
            peripherals[at: p].configurationProblem == nil, bridgeProblem == nil
        {
            return
        }
        do {
            if peripherals[peripheral]?.isShutDown == true {
                throw APIMisuseError.managerShutDown(operation: operation)
            }
            if let bridgeProblem { throw APIMisuseError.invalidConfiguration(bridgeProblem) }
            if let problem = peripherals[peripheral]?.configurationProblem {
                throw APIMisuseError.invalidConfiguration(problem)
            }
            let state = state(of: .peripheral(peripheral))
            guard state == .poweredOn else { throw APIMisuseError.notPoweredOn(operation: operation, state: state) }
        } catch {
            record(.refused, peripheral: peripheral, error: error, detail: operation)
            throw error
        }
    }

    /// A manager's app moves to the background or back (test hook of both managers).
    mutating func setBackground(_ manager: Manager, _ isInBackground: Bool) {
        let detail = isInBackground ? "background" : "foreground"
        switch manager {
        case .central(let central):
            guard centrals.contains(central), centrals[existing: central].isInBackground != isInBackground else {
                return
            }
            centrals[central]!.isInBackground = isInBackground
            record(.stateChanged, central: central, detail: detail)
        case .peripheral(let peripheral):
            guard peripherals.contains(peripheral), peripherals[existing: peripheral].isInBackground != isInBackground
            else {
                return
            }
            peripherals[peripheral]!.isInBackground = isInBackground
            record(.stateChanged, peripheral: peripheral, detail: detail)
        }
    }

    // MARK: Shutting down

    /// Takes a central off the air: its scan stops, its links drop (peripherals see it
    /// unsubscribe), its operations fail with `operationCancelled`, and its event streams finish.
    mutating func shutDown(central: UUID) {
        guard centrals.contains(central), !centrals[existing: central].isShutDown else { return }
        stopScan(central: central)
        // Its pending connection attempts end too: no link to a dead central comes up later.
        dropAttempts(ofCentral: central)
        let cancelled = CoreBluetoothError(.operationCancelled)
        for key in links(ofCentral: central) { tearDown(key, reason: nil, pendingError: cancelled) }
        failOperations(cancelled) { $0.owner == .central(central) }
        // What it injected went with it (a manager made again under its identifier has its own).
        injections.retire(owner: central)
        centrals[central]!.state = .unknown
        centrals[central]!.isShutDown = true
        record(.stateChanged, central: central, detail: "shut down")
        effects.append(.finishEvents(.central(central)))
    }

    /// Sets how much a peripheral's RSSI readings vary from now on (±`spread` dBm, kept within
    /// the configuration's 0…147).
    mutating func setRSSIVariation(of peripheral: UUID, _ spread: Int) {
        guard peripherals.contains(peripheral) else { return }
        peripherals[peripheral]!.configuration.rssiVariation = min(max(spread, 0), 147)
    }

    /// Takes a peripheral off the air: advertising stops, its links drop (centrals see
    /// `peripheralDisconnected`), its requests are forgotten, and its event streams finish.
    /// Centrals' pending connections to it stay pending, as a device's do for a peripheral that
    /// went quiet (they do not time out): a manager made again under its identifier may still
    /// complete them.
    mutating func shutDown(peripheral: UUID) {
        guard peripherals.contains(peripheral), !peripherals[existing: peripheral].isShutDown else { return }
        stopAdvertising(peripheral: peripheral)
        let error = CoreBluetoothError(.peripheralDisconnected)
        for key in links(ofPeripheral: peripheral) { tearDown(key, reason: error, pendingError: error) }
        failOperations(CoreBluetoothError(.operationCancelled)) { $0.owner == .peripheral(peripheral) }
        injections.retire(owner: peripheral)
        peripherals[peripheral]!.state = .unknown
        peripherals[peripheral]!.isShutDown = true
        record(.stateChanged, peripheral: peripheral, detail: "shut down")
        effects.append(.finishEvents(.peripheral(peripheral)))
    }
}

/// The world of a refused manager (``World/refusing(_:problem:)``), or of one that outlived its
/// app (``World/shutDownStandIn(_:)``), in a box of its own: the manager holds a reference, not
/// a whole world inline.
final class RefusedWorld {
    var world: World

    init(_ arrival: ArrivalQueue.Arrival, problem: String) {
        world = World.refusing(arrival, problem: problem)
    }

    /// The world of a manager whose app was terminated while the system keeps its role for the
    /// next manager (a restore identifier): the manager is shut down there, so it refuses every
    /// call (`managerShutDown`) and reports `unknown`, and nothing it does reaches what the
    /// system keeps, which has its identifier.
    init(shutDown arrival: ArrivalQueue.Arrival) {
        world = World.shutDownStandIn(arrival)
    }
}

extension World {
    /// A world with the manager of `arrival` alone, shut down (see ``RefusedWorld``).
    static func shutDownStandIn(_ arrival: ArrivalQueue.Arrival) -> World {
        var world = World(seed: 0, timing: .instant)
        switch arrival {
        case .central(let identifier, _, let configuration):
            world.addCentral(identifier, configuration: configuration)
            world.shutDown(central: identifier)
        case .peripheral(let identifier, _, let configuration):
            world.addPeripheral(identifier, configuration: configuration)
            world.shutDown(peripheral: identifier)
        }
        return world
    }
}
