import BLECore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

extension MockBLEBridge {
    // MARK: Connection events

    func registerForConnectionEvents(central: UUID, options: ConnectionEventOptions?) {
        guard world.centrals[central] != nil else { return }
        // `nil` asks for every connection; store it as options that match everything.
        world.centrals[central]!.connectionEventOptions = options ?? ConnectionEventOptions()
    }

    /// Tells every registered central whose options match that a link to `peripheral` came
    /// up or went down, whichever central it belongs to.
    func reportConnectionEvent(_ event: ConnectionEvent, peripheral: UUID) {
        guard let record = world.peripherals[peripheral] else { return }
        let services = record.database.localServices.map(\.uuid) + (record.airAdvertisement?.serviceUUIDs ?? [])
        let remote = world.remotePeripheral(peripheral)
        for central in world.centralOrder {
            guard let options = world.centrals[central]?.connectionEventOptions,
                options.matches(identifier: peripheral, services: services)
            else { continue }
            world.record(.connectionEvent, central: central, peripheral: peripheral, detail: event.description)
            world.centrals[central]!.events.yield(.connectionEvent(event, remote))
        }
    }

    // MARK: ANCS

    /// A link to an ANCS-requesting peripheral came up: the central's user decision
    /// (``MockCentralManager/Configuration/grantsANCSAuthorization``) is reported.
    func reportANCSAuthorization(_ key: LinkKey) {
        guard world.peripherals[key.peripheral]?.configuration.requestsANCSAuthorization == true,
            let granted = world.centrals[key.central]?.configuration.grantsANCSAuthorization
        else { return }
        setANCSAuthorization(granted, key: key)
    }

    /// Test hook of the central: the user changes a connected peripheral's ANCS access.
    func setANCSAuthorization(_ authorized: Bool, key: LinkKey) {
        guard world.links[key] != nil,
            world.peripherals[key.peripheral]?.configuration.requestsANCSAuthorization == true,
            world.centrals[key.central]?.ancsAuthorizations[key.peripheral] != authorized
        else { return }
        world.centrals[key.central]!.ancsAuthorizations[key.peripheral] = authorized
        world.record(
            .ancsAuthorization, central: key.central, peripheral: key.peripheral,
            detail: authorized ? "authorized" : "not authorized")
        world.centrals[key.central]!.events.yield(
            .ancsAuthorizationUpdated(world.remotePeripheral(key.peripheral), isAuthorized: authorized))
    }

    func isANCSAuthorized(central: UUID, peripheral: UUID) -> Bool {
        world.centrals[central]?.ancsAuthorizations[peripheral] ?? false
    }
}
