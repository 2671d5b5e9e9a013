import BLECore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Connection events (`registerForConnectionEvents`) and ANCS authorization.
extension World {
    mutating func registerForConnectionEvents(central: UUID, options: ConnectionEventOptions?) {
        guard centrals.contains(central) else { return }
        // `nil` asks for every connection; store it as options that match everything.
        centrals[central]!.connectionEventOptions = options ?? ConnectionEventOptions()
    }

    /// Tells every registered central whose options match that a link to `peripheral` came
    /// up or went down, whichever central it belongs to.
    mutating func reportConnectionEvent(_ event: ConnectionEvent, peripheral: UUID) {
        // Most tests register no central: then nothing is looked at or copied.
        guard let p = peripherals.position(of: peripheral),
            // (Each record read at its position: the array's elements were copied one by one.)
            centrals.entries.indices.contains(where: { centrals[at: $0].connectionEventOptions != nil })
        else { return }
        let services = peripherals.inPlace(at: p) { record in
            record.database.localServices.map(\.uuid) + (record.airAdvertisement?.serviceUUIDs ?? [])
        }
        let remote = remotePeripheral(peripheral)
        for central in centralOrder {
            guard let options = centrals[central]?.connectionEventOptions,
                centrals[existing: central].state == .poweredOn,
                options.matches(identifier: peripheral, services: services)
            else { continue }
            self.record(.connectionEvent, central: central, peripheral: peripheral, detail: event.description)
            deliver(.connectionEvent(event, remote), to: central)
        }
    }

    /// A link to an ANCS-requesting peripheral came up: the central's user decision
    /// (``MockCentralManager/Configuration/grantsANCSAuthorization``) is reported.
    mutating func reportANCSAuthorization(_ key: LinkKey) {
        guard peripherals.inPlace(key.peripheral, { $0.configuration.requestsANCSAuthorization }) == true,
            let granted = centrals.inPlace(key.central, { $0.configuration.grantsANCSAuthorization })
        else { return }
        setANCSAuthorization(granted, key: key)
    }

    /// Test hook of the central: the user changes a connected peripheral's ANCS access.
    mutating func setANCSAuthorization(_ authorized: Bool, key: LinkKey) {
        guard links.contains(key), peripherals[key.peripheral]?.configuration.requestsANCSAuthorization == true,
            centrals[key.central]?.ancsAuthorizations[key.peripheral] != authorized
        else { return }
        centrals[key.central]!.ancsAuthorizations[key.peripheral] = authorized
        record(
            .ancsAuthorization, central: key.central, peripheral: key.peripheral,
            detail: authorized ? "authorized" : "not authorized")
        deliver(.ancsAuthorizationUpdated(remotePeripheral(key.peripheral), isAuthorized: authorized), to: key.central)
    }

    func isANCSAuthorized(central: UUID, peripheral: UUID) -> Bool {
        centrals[central]?.ancsAuthorizations[peripheral] ?? false
    }
}
