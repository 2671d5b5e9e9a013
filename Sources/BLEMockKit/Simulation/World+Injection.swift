import BLECore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Error injection: the failures tests install, checked when an operation starts.
extension World {
    /// The failure to inject into a central's operation, if any (a probability entry draws
    /// from the central's stream).
    mutating func injection(
        _ operation: ErrorInjection.Operation, central: UUID, peripheral: UUID?, characteristic: BluetoothUUID? = nil,
        handle: UInt16? = nil
    ) -> ErrorInjection.Failure? {
        guard !injections.isEmpty, let c = centrals.position(of: central) else { return nil }
        return injections.check(
            operation, owner: central, peripheral: peripheral, characteristic: characteristic, handle: handle,
            random: &centrals.entries[c]!.random.injection)
    }

    /// Like `injection(_:central:peripheral:characteristic:)`, also returning the entry that
    /// fired, for a failure that takes effect later (a connection attempt's, or a request's as
    /// it reaches the peripheral): one that never does is taken back (`InjectionBook.retract`).
    mutating func firedInjection(
        _ operation: ErrorInjection.Operation, central: UUID, peripheral: UUID?, characteristic: BluetoothUUID? = nil,
        handle: UInt16? = nil
    ) -> (failure: ErrorInjection.Failure, entry: Int)? {
        guard !injections.isEmpty, let c = centrals.position(of: central) else { return nil }
        return injections.fire(
            operation, owner: central, peripheral: peripheral, characteristic: characteristic, handle: handle,
            random: &centrals.entries[c]!.random.injection
        )
    }

    /// The failure to inject into a peripheral's operation, if any.
    mutating func injection(
        _ operation: ErrorInjection.Operation, peripheral: UUID, characteristic: BluetoothUUID? = nil,
        handle: UInt16? = nil
    ) -> ErrorInjection.Failure? {
        guard !injections.isEmpty, let p = peripherals.position(of: peripheral) else { return nil }
        return injections.check(
            operation, owner: peripheral, peripheral: peripheral, characteristic: characteristic, handle: handle,
            random: &peripherals.entries[p]!.random.injection)
    }

    /// Installs an injection for one manager's operations, or for every manager (`owner` nil).
    ///
    /// An injection a configuration's `errorInjection` would refuse (another role's operation,
    /// a count below 1, a probability outside 0…1) is refused the same way: it is not
    /// installed, the refusal is logged, and from then on the manager (every manager on the
    /// bridge, for a bridge-wide one) refuses every call with
    /// `APIMisuseError.invalidConfiguration(_:)` naming the problem, as a manager configured
    /// with it does. (`inject(_:)` does not throw, so the next call reports it.)
    mutating func inject(_ injection: ErrorInjection, owner: UUID?) {
        guard let owner else {
            if let problem = injection.problem(inCentral: nil) {
                let message = "MockBLEBridge.inject(_:): \(problem)"
                if bridgeProblem == nil { bridgeProblem = message }
                record(.refused, error: APIMisuseError.invalidConfiguration(message), detail: "inject")
                return
            }
            injections.add(injection, owner: nil)
            return
        }
        if let c = centrals.position(of: owner) {
            if let problem = injection.problem(inCentral: true) {
                let message = "MockCentralManager.inject(_:): \(problem)"
                if centrals[at: c].configurationProblem == nil { centrals.entries[c]!.configurationProblem = message }
                record(.refused, central: owner, error: APIMisuseError.invalidConfiguration(message), detail: "inject")
                return
            }
        } else if let p = peripherals.position(of: owner) {
            if let problem = injection.problem(inCentral: false) {
                let message = "MockPeripheralManager.inject(_:): \(problem)"
                if peripherals[at: p].configurationProblem == nil {
                    peripherals.entries[p]!.configurationProblem = message
                }
                record(
                    .refused, peripheral: owner, error: APIMisuseError.invalidConfiguration(message), detail: "inject")
                return
            }
        }
        injections.add(injection, owner: owner)
    }
}
