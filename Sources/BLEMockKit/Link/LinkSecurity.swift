import BLECore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The security a link offers the attributes it reaches.
struct LinkSecurity: Hashable, Sendable {
    /// The link is encrypted (paired).
    var isEncrypted: Bool = false
    /// The link's keys were authenticated (MITM-protected pairing).
    var isAuthenticated: Bool = false
    /// The central has keys (a bond) for the peripheral, whether or not the link uses them.
    var hasBond: Bool = false
    /// A pairing on this link timed out: no Security Manager procedure may run on it again
    /// until a new link exists (Bluetooth Core Specification, Vol 3, Part H, 3.4).
    var pairingTimedOut: Bool = false

    /// The error an access that needs encryption gets on this link, if any (Bluetooth Core
    /// Specification, Vol 3, Part C, 10.3.1): none when encrypted; 0x0F (insufficient
    /// encryption) when keys exist; 0x05 (insufficient authentication) when there are none.
    var encryptionError: ATTError? {
        isEncrypted ? nil : ATTError(hasBond ? .insufficientEncryption : .insufficientAuthentication)
    }
}

/// Which kind of update a subscription asked for, as the CCCD value encodes it.
enum SubscriptionKind: UInt16, Hashable, Sendable {
    /// Notifications (CCCD value 0x0001): not confirmed.
    case notify = 0x0001
    /// Indications (CCCD value 0x0002): confirmed by the central.
    case indicate = 0x0002
}
