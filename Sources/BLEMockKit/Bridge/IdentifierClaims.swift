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
/// manager made after it with the same one starts afresh under it (see ``release(_:)``).
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

    /// Claims `identifier` for a new manager with `restoreIdentifier` (or none).
    mutating func claim(_ identifier: UUID, restoreIdentifier: String?) -> Claim {
        if claimed.insert(identifier) { return .granted }
        if released.remove(identifier) { return .granted }
        let key = IdentifierKey(identifier)
        guard let restoreIdentifier, awaitingRelaunch[key] == restoreIdentifier else { return .taken }
        awaitingRelaunch[key] = nil
        return .takenOver
    }

    /// The app let go of the manager with `identifier` (it shuts down; its app was not
    /// terminated, or the system would keep it for the next manager): a manager created later
    /// with that identifier (the same restore identifier, or given) starts afresh under it.
    mutating func release(_ identifier: UUID) {
        guard claimed.contains(identifier), awaitingRelaunch[IdentifierKey(identifier)] == nil else { return }
        _ = released.insert(identifier)
    }

    /// The app of the manager with `identifier` was terminated and the system keeps what it
    /// held for the next manager with `restoreIdentifier`, which may then take `identifier` over.
    mutating func awaitRelaunch(of identifier: UUID, restoreIdentifier: String) {
        guard claimed.contains(identifier) else { return }
        awaitingRelaunch[IdentifierKey(identifier)] = restoreIdentifier
    }
}
