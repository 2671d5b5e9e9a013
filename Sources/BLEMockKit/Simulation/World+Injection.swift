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
        _ operation: ErrorInjection.Operation, central: UUID, peripheral: UUID?, characteristic: BluetoothUUID? = nil
    ) -> ErrorInjection.Failure? {
        guard !injections.isEmpty, let c = centrals.position(of: central) else { return nil }
        return injections.check(
            operation, owner: central, peripheral: peripheral, characteristic: characteristic,
            random: &centrals.entries[c]!.random.injection)
    }

    /// Like `injection(_:central:peripheral:characteristic:)`, also returning the entry that
    /// fired, for a failure that takes effect later (a connection attempt's).
    mutating func firedInjection(_ operation: ErrorInjection.Operation, central: UUID, peripheral: UUID?) -> (
        failure: ErrorInjection.Failure, entry: Int
    )? {
        guard !injections.isEmpty, let c = centrals.position(of: central) else { return nil }
        return injections.fire(
            operation, owner: central, peripheral: peripheral, characteristic: nil,
            random: &centrals.entries[c]!.random.injection
        )
    }

    /// The failure to inject into a peripheral's operation, if any.
    mutating func injection(
        _ operation: ErrorInjection.Operation, peripheral: UUID, characteristic: BluetoothUUID? = nil
    )
        -> ErrorInjection.Failure?
    {
        guard !injections.isEmpty, let p = peripherals.position(of: peripheral) else { return nil }
        return injections.check(
            operation, owner: peripheral, peripheral: peripheral, characteristic: characteristic,
            random: &peripherals.entries[p]!.random.injection)
    }

    /// Installs an injection for one manager's operations, or for every manager (`owner` nil).
    mutating func inject(_ injection: ErrorInjection, owner: UUID?) {
        injections.add(injection, owner: owner)
    }
}
