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
    /// The peripheral, the server that decides each access, keeps keys (a bond) for the
    /// central, whether or not the link uses them (the central may have forgotten its own).
    var serverHasKeys: Bool = false
    /// A pairing on this link timed out: no Security Manager procedure may run on it again
    /// until a new link exists (Bluetooth Core Specification, Vol 3, Part H, 3.4).
    var pairingTimedOut: Bool = false

    /// The error an access that needs encryption gets on this link, if any (Bluetooth Core
    /// Specification, Vol 3, Part C, 10.3.1, a rule of the server's): none when encrypted;
    /// 0x0F (insufficient encryption) when the server has keys for the central; 0x05
    /// (insufficient authentication) when it has none.
    var encryptionError: ATTError? {
        isEncrypted ? nil : ATTError(serverHasKeys ? .insufficientEncryption : .insufficientAuthentication)
    }
}

/// Which kind of update a subscription asked for, as the CCCD value encodes it.
enum SubscriptionKind: UInt16, Hashable, Sendable {
    /// Notifications (CCCD value 0x0001): not confirmed.
    case notify = 0x0001
    /// Indications (CCCD value 0x0002): confirmed by the central.
    case indicate = 0x0002
}
