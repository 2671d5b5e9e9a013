import BLECore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

extension MockBLEBridge {
    /// Pairs the link first if the central's access (checked by `plan` against the link's
    /// security) needs encryption and the central pairs automatically, as iOS does; does
    /// nothing otherwise (the access then fails with the peripheral's ATT error as usual).
    ///
    /// The refused access's round trip and the pairing take virtual time. On success the link
    /// is encrypted and both sides keep the bond; a rejected pairing fails with the ATT error
    /// the peripheral gave, a timed-out one with `encryptionTimedOut`.
    func pairIfNeeded(
        central: UUID, for characteristic: RemoteCharacteristic, _ plan: (GATTDatabase, LinkSecurity) throws -> Void
    ) async throws {
        let key = LinkKey(central: central, peripheral: characteristic.peripheral)
        guard let link = world.links[key], let database = world.peripherals[key.peripheral]?.database,
            case .automatic(let duration, let outcome) = world.centrals[central]?.configuration.pairing
        else { return }
        do {
            try plan(database, link.security)
            return
        } catch let refusal as ATTError
            where refusal.code == .insufficientAuthentication || refusal.code == .insufficientEncryption
        {
            let cost = world.cost(on: key, roundTrips: 1) + duration
            try await perform(.operation("pairing"), on: key, cost: cost) {
                switch outcome {
                case .succeeds:
                    self.world.links[key]?.security = LinkSecurity(isEncrypted: true, hasBond: true)
                    self.world.centralBonds.insert(key)
                    self.world.peripheralBonds.insert(key)
                    self.world.record(.paired, central: key.central, peripheral: key.peripheral)
                case .rejected:
                    self.world.record(.paired, central: key.central, peripheral: key.peripheral, error: refusal)
                    throw refusal
                case .timesOut:
                    let error = CoreBluetoothError(.encryptionTimedOut)
                    self.world.record(.paired, central: key.central, peripheral: key.peripheral, error: error)
                    throw error
                }
            }
        } catch {
            return  // another refusal: the access reports it
        }
    }

    /// Whether a central keeps a bond with a peripheral.
    public func isBonded(central: UUID, peripheral: UUID) -> Bool {
        world.centralBonds.contains(LinkKey(central: central, peripheral: peripheral))
    }

    /// Removes the bond one side keeps: the peripheral's (a device reset or a "forget" on the
    /// accessory), after which the central's reconnection fails with
    /// `peerRemovedPairingInformation`; or the central's (the user's "Forget This Device"),
    /// after which the next access needing encryption pairs again.
    func removeBond(_ key: LinkKey, onCentral: Bool) {
        if onCentral {
            guard world.centralBonds.remove(key) != nil else { return }
            world.links[key]?.security.hasBond = false
        } else {
            guard world.peripheralBonds.remove(key) != nil else { return }
        }
        world.record(
            .bondRemoved, central: key.central, peripheral: key.peripheral,
            detail: onCentral ? "by the central" : "by the peripheral")
    }
}
