import BLECore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The error injections in force on a bridge, with how often each has fired.
struct InjectionBook: Sendable {
    struct Entry: Sendable {
        var injection: ErrorInjection
        /// The manager whose configuration or call installed it; it applies to that manager's
        /// operations only. `nil` for bridge-wide injections.
        var owner: UUID?
        var fired = 0
        /// How many matching operations met it (fired on or not: a `.probability` entry draws
        /// for each).
        var met = 0
        /// Whether its manager went (shut down, or its app terminated): it fires no more, and
        /// `finish()` still lists it if it never fired (see ``InjectionBook/retire(owner:)``).
        var isRetired = false
        /// Whether it can still fire.
        var isExhausted: Bool {
            switch injection.frequency {
            case .once: fired >= 1
            case .times(let count): fired >= count
            case .always, .probability: false
            }
        }
    }

    private(set) var entries: [Entry] = []

    /// Whether no injection was ever installed.
    var isEmpty: Bool { entries.isEmpty }

    mutating func add(_ injection: ErrorInjection, owner: UUID?) {
        entries.append(Entry(injection: injection, owner: owner))
    }

    /// Retires the injections a manager's configuration and calls installed, as the manager goes
    /// (shut down, or its app terminated): a manager made again under its identifier, or a
    /// relaunched app's, has its own configuration's, and never fires its predecessor's.
    mutating func retire(owner: UUID) {
        for index in entries.indices where entries[index].owner == owner { entries[index].isRetired = true }
    }

    /// The failure to inject into an operation, if any: the first live entry that matches
    /// fires (a probability entry draws from `random` to decide).
    mutating func check(
        _ operation: ErrorInjection.Operation, owner: UUID, peripheral: UUID?, characteristic: BluetoothUUID?,
        handle: UInt16? = nil, random: inout SeededGenerator
    ) -> ErrorInjection.Failure? {
        fire(
            operation, owner: owner, peripheral: peripheral, characteristic: characteristic, handle: handle,
            random: &random)?.failure
    }

    /// Like `check`, but also says which entry fired, so that a failure that never took
    /// effect (its operation ended first) can be taken back with `retract`.
    /// (`handle` is the value handle of the operation's characteristic, which an injection aimed
    /// at one characteristic of its UUID must match.)
    mutating func fire(
        _ operation: ErrorInjection.Operation, owner: UUID, peripheral: UUID?, characteristic: BluetoothUUID?,
        handle: UInt16? = nil, random: inout SeededGenerator
    ) -> (failure: ErrorInjection.Failure, entry: Int)? {
        for index in entries.indices {
            let entry = entries[index]
            let injection = entry.injection
            guard injection.operation == operation, !entry.isExhausted, !entry.isRetired,
                entry.owner == nil || entry.owner == owner,
                injection.peripheral == nil || injection.peripheral == peripheral,
                injection.characteristic == nil || injection.characteristic == characteristic,
                injection.characteristicHandle == nil || injection.characteristicHandle == handle
            else { continue }
            entries[index].met += 1
            if case .probability(let probability) = injection.frequency, !random.bool(probability: probability) {
                continue
            }
            entries[index].fired += 1
            return (injection.failure, index)
        }
        return nil
    }

    /// Takes back one firing of entry `entry`: the operation it failed ended before the
    /// failure was seen, so the injection is still owed (and `finish()` reports it if it
    /// never fires again).
    mutating func retract(_ entry: Int) {
        guard entries.indices.contains(entry), entries[entry].fired > 0 else { return }
        entries[entry].fired -= 1
    }

    /// Injections that should have fired and did not: `.once` and `.times` entries not used
    /// up, `.always` entries that never fired, and `.probability` entries no matching
    /// operation met (one that met some and drew no failure for any did what it was asked: how
    /// often it fires is the seed's).
    var unfired: [Entry] {
        entries.filter { entry in
            switch entry.injection.frequency {
            case .once, .times: !entry.isExhausted
            case .always: entry.fired == 0
            case .probability: entry.met == 0
            }
        }
    }
}
