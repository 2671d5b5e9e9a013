import BLECore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Pairing, as iOS does it: when the server refuses an access for want of encryption
/// (insufficient authentication or encryption) and the central pairs automatically, the link
/// pairs (taking the configured virtual time) and the refused request is sent again. On
/// success the link is encrypted and both sides keep the bond; a rejected pairing fails the
/// access with the peripheral's refusal, a timed-out one with `encryptionTimedOut`.
extension World {
    /// Whether a refused procedure pairs and tries again.
    func startsPairing(for id: OperationID, after refusal: ATTError, on key: LinkKey) -> Bool {
        guard refusal.code.asksForEncryption,
            let operation = pending[id], !operation.pairingTried, links[key]?.security.pairingTimedOut != true,
            case .automatic = centrals[key.central]?.configuration.pairing
        else { return false }
        guard let procedure = operation.procedure else { return true }
        switch procedure.kind {
        case .read, .readBlob, .write: return true
        case .setNotify(_, let enabled, _): return enabled
        default: return false
        }
    }

    /// Pairs the link on behalf of operation `id`, whose request was refused.
    mutating func startPairing(for id: OperationID, on key: LinkKey, refusal: ATTError) {
        guard case .automatic(let duration, _) = centrals[key.central]?.configuration.pairing, let link = links[key]
        else { return }
        pending[id]?.pairingTried = true
        pending[id]?.stage = .pairing
        schedule.schedule(
            .pairingDone(key, generation: link.generation, id), at: now.advanced(by: max(duration, .zero)))
    }

    /// Pairing ended: the link is encrypted and the request goes again, or the operation fails.
    mutating func pairingDone(_ key: LinkKey, generation: Int, operation id: OperationID) {
        guard links[key]?.generation == generation, let operation = pending[id],
            case .automatic(_, let configured) = centrals[key.central]?.configuration.pairing
        else { return }
        let failure: (any Error)?
        // An exploration's pairing refusal, when one is armed, decides instead.
        let outcome = takePlannedPairingRefusal() ? .rejected : configured
        switch outcome {
        case .succeeds:
            links[key]!.security = LinkSecurity(isEncrypted: true, serverHasKeys: true)
            centralBonds.insert(key)
            peripheralBonds.insert(key)
            record(.paired, central: key.central, peripheral: key.peripheral)
            failure = nil
        case .rejected:
            failure = refusalError(of: operation, on: key)
            record(.paired, central: key.central, peripheral: key.peripheral, error: failure)
        case .timesOut:
            failure = CoreBluetoothError(.encryptionTimedOut)
            links[key]!.security.pairingTimedOut = true
            record(.paired, central: key.central, peripheral: key.peripheral, error: failure)
        }
        if let failure {
            if case .openL2CAP = operation.kind { return complete(id, .failure(failure)) }
            return finishProcedure(id, .failure(failure))
        }
        if operation.isCancelled { return complete(id, .failure(CancellationError())) }
        switch operation.kind {
        case .openL2CAP:
            pending[id]!.stage = .sent
            sendToPeripheral(.signal(id), on: key)
        default:
            sendRequest(of: id, on: key)
        }
    }

    /// The error a rejected pairing leaves an access with: the refusal that started it.
    private func refusalError(of operation: PendingOperation, on key: LinkKey) -> any Error {
        let refusal = links[key]!.security.encryptionError ?? ATTError(.insufficientAuthentication)
        if case .openL2CAP = operation.kind { return L2CAPChannelRecord.error(for: refusal) }
        return refusal
    }

    /// Removes the bond one side keeps: the peripheral's (a device reset or a "forget" on the
    /// accessory), after which the central's reconnection fails with
    /// `peerRemovedPairingInformation`; or the central's (the user's "Forget This Device"),
    /// after which the next access needing encryption pairs again.
    mutating func removeBond(_ key: LinkKey, onCentral: Bool) {
        // (A live link keeps the encryption it has; only what its server answers changes.)
        if onCentral {
            guard centralBonds.remove(key) != nil else { return }
        } else {
            guard peripheralBonds.remove(key) != nil else { return }
            links[key]?.security.serverHasKeys = false
        }
        record(
            .bondRemoved, central: key.central, peripheral: key.peripheral,
            detail: onCentral ? "by the central" : "by the peripheral")
    }

    func isBonded(_ key: LinkKey) -> Bool { centralBonds.contains(key) }
}
