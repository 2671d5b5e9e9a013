/// Whether and how a central pairs with a peripheral whose attributes need encryption.
///
/// A characteristic or descriptor whose permissions (`readEncryptionRequired`,
/// `writeEncryptionRequired`) or properties (`notifyEncryptionRequired`,
/// `indicateEncryptionRequired`) need encryption answers an unencrypted link as the
/// Bluetooth Core Specification says (Vol 3, Part C, 10.3.1): ATT 0x05 (insufficient
/// authentication) when the central has no keys for the peripheral, ATT 0x0F (insufficient
/// encryption) when it has. iOS then pairs on its own; ``onFirstAccess`` does the same.
///
/// Pairing creates a bond on both sides, kept on the bridge across reconnections until a
/// side removes it (`simulateBondRemoval(of:)` on either manager). A bonded link is encrypted
/// as it comes up. When only the central still has the bond, connecting fails with
/// `CoreBluetoothError.Code.peerRemovedPairingInformation`, as on a device, until the central
/// removes its stale bond too (as a user does with "Forget This Device").
public enum PairingBehavior: Sendable, Hashable {
    /// What an automatic pairing ends with.
    public enum Outcome: Sendable, Hashable {
        /// The devices pair; the access that needed it is retried and succeeds.
        case succeeds
        /// The pairing is refused (the user declines it): the access fails with the ATT error
        /// the peripheral answered (0x05 or 0x0F), and no bond is made.
        case rejected
        /// The peer never completes the pairing: the access fails with
        /// `CoreBluetoothError.Code.encryptionTimedOut`.
        case timesOut
    }

    /// Never pairs: accesses that need encryption fail with the peripheral's ATT error.
    case never
    /// Pairs on the first access that needs it, taking `duration` of virtual time (plus the
    /// refused access's round trip), with `outcome`.
    case automatic(duration: Duration, outcome: Outcome)

    /// Pairing as iOS does it on first access, taking one second and succeeding.
    public static var onFirstAccess: PairingBehavior { .automatic(duration: .seconds(1), outcome: .succeeds) }
}
