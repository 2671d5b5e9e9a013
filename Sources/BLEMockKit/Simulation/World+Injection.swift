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
        guard centrals[central] != nil else { return nil }
        return injections.check(
            operation, owner: central, peripheral: peripheral, characteristic: characteristic,
            random: &centrals[central]!.random)
    }

    /// The failure to inject into a peripheral's operation, if any.
    mutating func injection(
        _ operation: ErrorInjection.Operation, peripheral: UUID, characteristic: BluetoothUUID? = nil
    )
        -> ErrorInjection.Failure?
    {
        guard peripherals[peripheral] != nil else { return nil }
        return injections.check(
            operation, owner: peripheral, peripheral: peripheral, characteristic: characteristic,
            random: &peripherals[peripheral]!.random)
    }

    /// Installs an injection for one manager's operations, or for every manager (`owner` nil).
    mutating func inject(_ injection: ErrorInjection, owner: UUID?) {
        injections.add(injection, owner: owner)
    }
}
