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
        } catch let refusal as ATTError
            where refusal.code == .insufficientAuthentication || refusal.code == .insufficientEncryption
        {
            // The refused request and its error response cross the link first.
            try await pair(key, duration: duration, outcome: outcome, refusalCost: world.cost(on: key, roundTrips: 1)) {
                refusal
            }
        } catch {
            return  // another refusal: the access reports it
        }
    }

    /// Pairs a link on behalf of an access the peripheral refused, when the central pairs
    /// automatically; does nothing otherwise. A rejected pairing throws `rejection()`.
    func pairForAccess(_ key: LinkKey, refusalCost: Duration, rejection: @escaping () -> any Error) async throws {
        guard case .automatic(let duration, let outcome) = world.centrals[key.central]?.configuration.pairing else {
            return
        }
        try await pair(key, duration: duration, outcome: outcome, refusalCost: refusalCost, rejection: rejection)
    }

    /// Takes `refusalCost` plus the pairing's `duration` of virtual time, then bonds and
    /// encrypts the link, or fails as `outcome` says.
    private func pair(
        _ key: LinkKey, duration: Duration, outcome: PairingBehavior.Outcome, refusalCost: Duration,
        rejection: @escaping () -> any Error
    ) async throws {
        try await perform(.operation("pairing"), on: key, cost: refusalCost + duration) {
            switch outcome {
            case .succeeds:
                self.world.links[key]?.security = LinkSecurity(isEncrypted: true, hasBond: true)
                self.world.centralBonds.insert(key)
                self.world.peripheralBonds.insert(key)
                self.world.record(.paired, central: key.central, peripheral: key.peripheral)
            case .rejected:
                let error = rejection()
                self.world.record(.paired, central: key.central, peripheral: key.peripheral, error: error)
                throw error
            case .timesOut:
                let error = CoreBluetoothError(.encryptionTimedOut)
                self.world.record(.paired, central: key.central, peripheral: key.peripheral, error: error)
                throw error
            }
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
