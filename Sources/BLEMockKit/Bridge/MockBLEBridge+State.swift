import BLECore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

extension MockBLEBridge {
    /// The state a new manager starts in, and the steps its state takes by itself.
    func startState(_ transition: StateTransition, initial: ManagerState, manager: SimulationWorld.Manager)
        -> ManagerState
    {
        guard case .realistic(let duration) = transition else { return transition.settledState(initial: initial) }
        let halfway = world.now.advanced(by: duration / 2)
        let settled = world.now.advanced(by: duration)
        world.schedule.schedule(.stateStep(manager, .resetting), at: halfway)
        world.schedule.schedule(.stateStep(manager, initial), at: settled)
        world.stateSettles[manager] = settled
        return .unknown
    }

    func applyStateStep(_ manager: SimulationWorld.Manager, _ state: ManagerState) {
        setState(manager, to: state, automatic: true)
    }

    /// Runs the simulation until a manager's automatic state steps are done.
    func settleState(of manager: SimulationWorld.Manager) {
        guard let settles = world.stateSettles[manager] else { return }
        if settles > world.now { runEvents(through: settles) }
        world.stateSettles[manager] = nil
    }

    /// Changes a manager's state and emits the change. Leaving `poweredOn` stops scanning and
    /// advertising and drops every link of the manager: centrals see `peripheralDisconnected`,
    /// and a peripheral's published services are removed (as CoreBluetooth clears them).
    ///
    /// A change a test makes (not an automatic step) cancels the manager's remaining automatic
    /// state steps, so a realistic start-up never undoes it.
    func setState(_ manager: SimulationWorld.Manager, to state: ManagerState, automatic: Bool = false) {
        if !automatic {
            world.schedule.removeAll {
                if case .stateStep(manager, _) = $0 { return true }
                return false
            }
            world.stateSettles[manager] = nil
        }
        switch manager {
        case .central(let central):
            guard let old = world.centrals[central]?.state, old != state else { return }
            world.centrals[central]!.state = state
            world.record(.stateChanged, central: central, detail: state.description)
            world.centrals[central]!.events.yield(.stateChanged(state))
            guard old == .poweredOn else { return }
            stopScan(central: central)
            for key in world.attempts.keys where key.central == central {
                world.attempts[key] = nil
                world.schedule.removeAll { $0 == .connectionTimeout(key) || $0 == .linkEstablished(key) }
            }
            for key in world.links(ofCentral: central) {
                let error = CoreBluetoothError(.peripheralDisconnected)
                tearDown(key, reason: error, pendingError: error)
            }
            resumeWaiting(
                where: { $0.link.central == central }, with: .failure(CoreBluetoothError(.peripheralDisconnected)))
        case .peripheral(let peripheral):
            guard let old = world.peripherals[peripheral]?.state, old != state else { return }
            world.peripherals[peripheral]!.state = state
            world.record(.stateChanged, peripheral: peripheral, detail: state.description)
            world.peripherals[peripheral]!.events.yield(.stateChanged(state))
            if state == .poweredOn {
                connectPendingAttempts(to: peripheral)
                return
            }
            guard old == .poweredOn else { return }
            stopAdvertising(peripheral: peripheral)
            for key in world.links(ofPeripheral: peripheral) {
                let error = CoreBluetoothError(.peripheralDisconnected)
                tearDown(key, reason: error, pendingError: error)
            }
            removeAllServices(peripheral: peripheral)
            world.peripherals[peripheral]!.updateQueue.removeAll()
            world.peripherals[peripheral]!.updateQueueWasFull = false
        }
    }
}
