#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Which manager identifiers are taken on a bridge: each live manager has its own, and only a
/// manager with the restore identifier of one whose app was terminated (state restoration)
/// takes over that one's identifier.
///
/// A manager the app let go of (shut down, its app not terminated) releases its identifier: a
/// manager made after it with the same one starts afresh under it (see
/// ``release(_:ticket:)``). Each claim comes with a ticket (``ticket(of:)``), so that a manager
/// releasing its identifier late (twice, or after its app was terminated and a successor took
/// the identifier over) leaves the claim of the manager that holds it now alone.
struct IdentifierClaims: Sendable {
    /// What a manager asking for an identifier gets.
    enum Claim: Equatable, Sendable {
        /// The identifier is its own: no manager had it, or the one that had it was let go of.
        case granted
        /// The identifier was the terminated app's manager's, with the same restore identifier:
        /// the new manager takes over what the system kept for it.
        case takenOver
        /// A live manager (or a terminated app's, kept for another restore identifier) has it:
        /// the new manager may not join.
        case taken
    }

    /// The identifiers managers took (room for a few made at once: growing from one to two
    /// allocated twice in a test of a central and a peripheral).
    private var claimed = IdentifierSet(minimumCapacity: 4)
    /// The identifiers of managers whose app was terminated while the system keeps what they
    /// held, with their restore identifiers: the next manager with that restore identifier
    /// takes it over.
    private var awaitingRelaunch: [IdentifierKey: String] = [:]

    /// Identifiers whose managers the app let go of (they shut down, the app not terminated):
    /// the next manager with one starts afresh under it.
    private var released = IdentifierSet(minimumCapacity: 1)

    /// How many times each identifier passed from one manager to the next (granted again after
    /// a release, or taken over after a termination); none for most. The manager holding an
    /// identifier has the count as its ticket.
    private var successions: [IdentifierKey: Int] = [:]

    /// Claims `identifier` for a new manager with `restoreIdentifier` (or none). A manager
    /// granted it or taking it over holds it with ``ticket(of:)`` as it is after the claim.
    mutating func claim(_ identifier: UUID, restoreIdentifier: String?) -> Claim {
        if claimed.insert(identifier) { return .granted }
        let key = IdentifierKey(identifier)
        if released.remove(identifier) {
            successions[key, default: 0] += 1
            return .granted
        }
        guard let restoreIdentifier, awaitingRelaunch[key] == restoreIdentifier else { return .taken }
        awaitingRelaunch[key] = nil
        successions[key, default: 0] += 1
        return .takenOver
    }

    /// The ticket of the manager that holds `identifier` now: its predecessors' are smaller.
    func ticket(of identifier: UUID) -> Int { successions[IdentifierKey(identifier)] ?? 0 }

    /// The app let go of the manager holding `identifier` with `ticket` (it shuts down; its app
    /// was not terminated, or the system would keep it for the next manager): a manager created
    /// later with that identifier (the same restore identifier, or given) starts afresh under
    /// it. Nothing when a later manager holds the identifier (the ticket is an older one's).
    mutating func release(_ identifier: UUID, ticket: Int) {
        let key = IdentifierKey(identifier)
        guard claimed.contains(identifier), awaitingRelaunch[key] == nil, ticket == (successions[key] ?? 0) else {
            return
        }
        _ = released.insert(identifier)
    }

    /// The app of the manager with `identifier` was terminated and the system keeps what it
    /// held for the next manager with `restoreIdentifier`, which may then take `identifier` over.
    mutating func awaitRelaunch(of identifier: UUID, restoreIdentifier: String) {
        guard claimed.contains(identifier) else { return }
        awaitingRelaunch[IdentifierKey(identifier)] = restoreIdentifier
    }
}
