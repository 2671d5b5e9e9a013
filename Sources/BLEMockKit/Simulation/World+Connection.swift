import BLECore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

extension World {
    // MARK: Attempts

    /// Starts connecting a central to a peripheral.
    ///
    /// A connectable advertising peripheral connects after the connection latency (none in
    /// fast mode). One that is not advertising (or out of range, or powered off) keeps the
    /// attempt pending, as CoreBluetooth does, until it becomes connectable or the timeout
    /// passes; so does one advertising as non-connectable, in realistic timing (fast mode fails
    /// that at once). A central at its connection limit fails the attempt at once.
    ///
    /// An attempt the peripheral refuses (`refusal`) goes as any other: it fails with that error
    /// where its link would have come up (at once in fast mode, after the connection latency in
    /// realistic timing), and no injection is spent on it.
    mutating func startConnecting(
        central: UUID, peripheral: UUID, timeout: Duration?, id: OperationID, refusal: CoreBluetoothError? = nil
    ) {
        if let timeout, let problem = ConfigurationProblems.check("connect(_:options:): timeout", positive: timeout) {
            let error = APIMisuseError.invalidArgument(
                problem + "; give a timeout above zero, or none (nil) to wait until the link comes up or the "
                    + "attempt is cancelled")
            record(.refused, central: central, peripheral: peripheral, error: error, detail: "connect")
            return complete(id, .failure(error))
        }
        do {
            try requirePoweredOn(central: central, "connect")
        } catch {
            return complete(id, .failure(error))
        }
        guard known.contains(peripheral), peripherals.contains(peripheral) else {
            let error = unknownDevice(peripheral, central: central)
            record(.refused, central: central, peripheral: peripheral, error: error, detail: "connect")
            return complete(id, .failure(error))
        }
        let key = LinkKey(central: central, peripheral: peripheral)
        if links.contains(key) { return complete(id, .success(.done)) }
        let isNewAttempt = attempts[key] == nil
        if isNewAttempt {
            record(.connecting, central: central, peripheral: peripheral)
            // (The records are read in place: the subscript's getter copies all of one.)
            if let limit = centrals.inPlace(central, { $0.configuration.connection.limit }) ?? nil,
                links(ofCentral: central).count >= limit
            {
                return complete(id, .failure(failAttempt(key, CoreBluetoothError(.connectionLimitReached))))
            }
            // CoreBluetooth keeps a connection to a non-connectable advertiser pending (until it
            // advertises as connectable, or the app cancels); realistic timing does too. Fast
            // mode fails it at once, so a unit test without a timeout cannot wait for ever.
            if timing.isInstant, peripherals.inPlace(peripheral, { $0.advertisement?.isConnectable == false }) == true {
                return complete(id, .failure(failAttempt(key, CoreBluetoothError(.connectionFailed))))
            }
            let probability = centrals.inPlace(central) { $0.configuration.connection.failureProbability } ?? 0
            let failsByChance = probability > 0 && centrals[central]!.random.connection.bool(probability: probability)
            if let refusal {
                attempts[key] = ConnectionAttempt(
                    injected: .coreBluetooth(refusal.code), injectedEntry: nil, failsByChance: failsByChance)
            } else {
                let fired = firedInjection(.connect, central: central, peripheral: peripheral)
                attempts[key] = ConnectionAttempt(
                    injected: fired?.failure, injectedEntry: fired?.entry, failsByChance: failsByChance)
            }
        }
        var operation = PendingOperation(
            id: id, owner: .central(central), kind: .connect(key), since: now, stage: .waiting)
        if let timeout {
            // Each call's own timeout: a second connect to a pending peripheral gives up on its own.
            operation.deadline = now.advanced(by: timeout)
            schedule.schedule(.connectionTimeout(id), at: operation.deadline!)
        }
        pending.insert(operation)
        if isNewAttempt, canConnectNow(peripheral) { beginEstablishing(key) }
    }

    /// Records a failed attempt, tells the central, and returns the error.
    mutating func failAttempt(_ key: LinkKey, _ error: CoreBluetoothError) -> CoreBluetoothError {
        dropAttempt(key)
        record(.connectionFailed, central: key.central, peripheral: key.peripheral, error: error)
        deliver(.failedToConnect(remotePeripheral(key.peripheral), error), to: key.central)
        return error
    }

    /// Forgets every pending attempt of a central (it powered off or shut down).
    mutating func dropAttempts(ofCentral central: UUID) {
        for key in attempts.keys.sorted(by: { $0.peripheral.precedes($1.peripheral) }) where key.central == central {
            dropAttempt(key)
        }
    }

    /// Forgets an attempt and its scheduled establishment.
    mutating func dropAttempt(_ key: LinkKey) {
        guard let attempt = attempts.removeValue(forKey: key) else { return }
        if let entry = attempt.injectedEntry, !attempt.injectionSeen { injections.retract(entry) }
        schedule.removeAll { $0 == .linkEstablished(key) }
    }

    @inline(__always)
    func canConnectNow(_ peripheral: UUID) -> Bool {
        unconnectable(peripheral) == nil
    }

    /// Why a central cannot connect to a peripheral now.
    enum Unconnectable {
        case notOnBridge, shutDown, outOfRange, notAdvertising, notConnectable
        case bluetooth(ManagerState)
    }

    /// Why a connection to `peripheral` cannot come up now, if it cannot (an attempt waits).
    @inline(__always)
    func unconnectable(_ peripheral: UUID) -> Unconnectable? {
        // (Read in place: binding the record copied all of it.)
        guard let p = peripherals.position(of: peripheral) else { return .notOnBridge }
        if peripherals[at: p].isShutDown { return .shutDown }
        if !peripherals[at: p].isHeard { return .outOfRange }
        if peripherals[at: p].state != .poweredOn { return .bluetooth(peripherals[at: p].state) }
        if !peripherals[at: p].isConnectable && !connectedToSystem.contains(peripheral) {
            return peripherals[at: p].advertisement == nil ? .notAdvertising : .notConnectable
        }
        return nil
    }

    /// The peripheral is connectable: the link comes up after the connection latency plus
    /// the MTU exchange (at once in fast mode). To a peripheral the system already holds a link
    /// to (``setConnectedToSystem(peripheral:_:)``, a state restoration's connected peripheral)
    /// it comes up at once in every mode: the radio link is there, and the app only joins it,
    /// as CoreBluetoothMock reports such a connection at once too.
    mutating func beginEstablishing(_ key: LinkKey) {
        guard attempts[key] != nil, attempts[key]!.establishesAt == nil else { return }
        let total: Duration
        if connectedToSystem.contains(key.peripheral) {
            total = .zero
        } else {
            let range =
                (centrals.inPlace(key.central) { $0.configuration.connection.latency } ?? nil)
                ?? timing.connectionLatency
            let latency = drawLatency(in: range, forCentral: key.central)
            total = latency + connectionInterval(forCentral: key.central)
        }
        attempts[key]!.establishesAt = now.advanced(by: total)
        if total == .zero {
            finishAttempt(key)
        } else {
            schedule.schedule(.linkEstablished(key), at: now.advanced(by: total))
        }
    }

    /// The attempt's latency passed: it fails (injected or drawn failure) or the link is up.
    /// A peripheral that stopped being connectable meanwhile (powered off, out of range, no
    /// longer advertising as connectable) was never heard: the attempt stays pending until it
    /// is connectable again.
    mutating func finishAttempt(_ key: LinkKey) {
        guard let attempt = attempts[key] else { return }
        guard canConnectNow(key.peripheral) else {
            attempts[key]!.establishesAt = nil
            return
        }
        if let failure = attempt.injected {
            attempts[key]!.injectionSeen = true
            guard let error = failure.error else {
                attempts[key]!.neverCompletes = true  // never answers: stays pending
                return
            }
            let cbError = error as? CoreBluetoothError ?? CoreBluetoothError(.connectionFailed)
            failConnecting(key, failAttempt(key, cbError))
            return
        }
        if attempt.failsByChance {
            failConnecting(key, failAttempt(key, CoreBluetoothError(.connectionFailed)))
            return
        }
        establishLink(key)
    }

    /// Fails the operations waiting for a connection.
    mutating func failConnecting(_ key: LinkKey, _ error: any Error) {
        failOperations(error) {
            if case .connect(key) = $0.kind { return true }
            return false
        }
    }

    /// Creates the link and completes every attempt waiting for it.
    mutating func establishLink(_ key: LinkKey) {
        dropAttempt(key)
        guard !links.contains(key), centrals.contains(key.central), peripherals.contains(key.peripheral) else { return }
        if centralBonds.contains(key), !peripheralBonds.contains(key) {
            // The central's keys no longer match: encryption fails and the link goes down.
            failConnecting(key, failAttempt(key, CoreBluetoothError(.peerRemovedPairingInformation)))
            return
        }
        // The limit holds when a link comes up, not only when its attempt starts: two pending
        // attempts under a limit of one cannot both connect.
        if let limit = centrals.inPlace(key.central, { $0.configuration.connection.limit }) ?? nil,
            links(ofCentral: key.central).count >= limit
        {
            failConnecting(key, failAttempt(key, CoreBluetoothError(.connectionLimitReached)))
            return
        }
        let mtu = negotiateMTU(key)
        largestLinkMTU = max(largestLinkMTU ?? mtu, mtu)
        linkCount[key, default: 0] += 1
        let generation = linkCount[key]!
        // Each link draws its jitter from its own stream, so other links never perturb it. A
        // world with instant timing never draws it (its connection events fall at once), and
        // does not derive it: deriving hashes the text of both identifiers. (The stream is kept
        // in the link rather than derived lazily there: a larger link costs every copy of it.)
        let stream =
            timing.connectionInterval > .zero
            ? random.derived("link").derived(
                "\(key.central.canonicalString)/\(key.peripheral.canonicalString)/\(generation)") : random
        let (negotiated, interval) = linkTiming(toPeripheral: key.peripheral)
        links[key] = Link(
            key: key, generation: generation, mtu: mtu, random: stream, negotiated: negotiated,
            connectionInterval: interval,
            packetsPerEvent: negotiated?.packetsPerEvent(mtu: mtu) ?? max(1, timing.packetsPerConnectionEvent))
        systemChanges &+= 1
        if centralBonds.contains(key) {
            // A bonded link is encrypted with the stored keys as it comes up.
            links[key]!.security = LinkSecurity(isEncrypted: true, serverHasKeys: true)
        } else if peripheralBonds.contains(key) {
            // The central forgot its keys and the peripheral kept its own: the link is plain, and
            // an access needing encryption meets the answer of a server that has keys.
            links[key]!.security.serverHasKeys = true
        }
        known.insert(key.peripheral)
        // The stack's Exchange MTU Request and Response.
        attPDUCount += 2
        record(.connected, central: key.central, peripheral: key.peripheral, detail: "mtu=\(mtu)")
        deliver(.connected(remotePeripheral(key.peripheral)), to: key.central)
        reportANCSAuthorization(key)
        reportConnectionEvent(.peerConnected, peripheral: key.peripheral)
        let connecting = pending.keys(where: {
            if case .connect(key) = $0.kind { return true }
            return false
        })
        for id in connecting { complete(id, .success(.done)) }
    }

    /// The ATT_MTU a new link gets: the smaller of the preferences each side draws for it, the
    /// bridge's ``LinkLimits/maximumMTU`` and the link profiles' ATT_MTU offers, clamped to 23…517.
    /// Under limits that describe the devices (an exploration's ``LinkConditions``), a side that
    /// prefers what its device does (``MTUMode/device``, a CoreBluetooth-shaped manager's
    /// realistic default) prefers their ATT_MTU: the conditions are the devices of the run.
    mutating func negotiateMTU(_ key: LinkKey) -> Int {
        let centralMode = centrals[existing: key.central].configuration.mtu
        let peripheralMode = peripherals[existing: key.peripheral].configuration.mtu
        let described = limits.imposesMTU ? limits.maximumMTU : nil
        // Only a realistic mode draws: the others leave the streams alone (touching one derives it).
        // A side's `.device` preference is its link profile's offer, when profiles time the link.
        let profiles = timing.negotiated != nil
        let offered =
            (centralMode == .device ? described : nil)
            ?? centralMode.fixedPreference(isCentral: true, profile: profiles ? timing.centralProfile : nil)
            ?? centralMode.draw(isCentral: true, using: &centrals[key.central]!.random.mtu)
        let accepted =
            (peripheralMode == .device ? described : nil)
            ?? peripheralMode.fixedPreference(isCentral: false, profile: profiles ? timing.peripheralProfile : nil)
            ?? peripheralMode.draw(isCentral: false, using: &peripherals[key.peripheral]!.random.mtu)
        let profiled = timing.negotiated?.attMTU ?? 517
        return min(max(min(offered, accepted, limits.maximumMTU ?? 517, profiled), 23), 517)
    }

    /// Starts establishing pending attempts to a peripheral that just became connectable.
    mutating func connectPendingAttempts(to peripheral: UUID) {
        guard canConnectNow(peripheral) else { return }
        let keys = attempts.keys.filter { $0.peripheral == peripheral }
        for key in keys.sorted(by: { $0.central.precedes($1.central) }) { beginEstablishing(key) }
    }

    /// A connect call's timeout passed: the call fails with `connectionTimeout`; when no other
    /// call waits for the attempt, the attempt is cancelled and reported as a failed connection
    /// (the link never came up, so it is not a disconnection).
    mutating func connectionTimedOut(_ id: OperationID) {
        guard case .connect(let key) = pending[id]?.kind else { return }
        let error = CoreBluetoothError(.connectionTimeout)
        complete(id, .failure(error))
        let others = pending.containsValue {
            if case .connect(key) = $0.kind { return true }
            return false
        }
        guard !others, !links.contains(key), attempts[key] != nil else { return }
        dropAttempt(key)
        record(.connectionFailed, central: key.central, peripheral: key.peripheral, error: error)
        deliver(.failedToConnect(remotePeripheral(key.peripheral), error), to: key.central)
    }

    /// Cancels a pending attempt or disconnects; a no-op when neither.
    mutating func cancelConnection(central: UUID, peripheral: UUID) throws {
        // Leaving poweredOn already ended every link and attempt: there is nothing to cancel,
        // and CoreBluetooth does not fail the call (clean-up code must not throw only in tests).
        if centrals.inPlace(central, { $0.isShutDown }) != true, state(of: .central(central)) != .poweredOn { return }
        try requirePoweredOn(central: central, "cancelPeripheralConnection")
        let key = LinkKey(central: central, peripheral: peripheral)
        if links.contains(key) {
            tearDown(key, reason: nil, pendingError: CoreBluetoothError(.operationCancelled))
        } else if attempts[key] != nil {
            dropAttempt(key)
            record(.disconnected, central: central, peripheral: peripheral, detail: "attempt cancelled")
            failConnecting(key, CoreBluetoothError(.operationCancelled))
            deliver(.disconnected(remotePeripheral(peripheral), nil), to: central)
        }
    }

    // MARK: Tear-down

    /// Ends a link: the peripheral sees the central unsubscribe from everything, operations
    /// on the link fail with `pendingError`, what was still in its pipes is lost, the
    /// central's discovered attributes of the peripheral become invalid, and the central gets
    /// a disconnect event with `reason`.
    mutating func tearDown(_ key: LinkKey, reason: CoreBluetoothError?, pendingError: CoreBluetoothError) {
        guard let slot = links.position(of: key), let link = links.removeValue(forKey: key) else { return }
        systemChanges &+= 1
        // Its connection events and pairing end with it (time does not run on to them).
        schedule.removeAll {
            switch $0 {
            case .connectionEvent(slot, link.generation): true
            case .pairingDone(key, link.generation, _): true
            case .transactionTimer(key, link.generation): true
            default: false
            }
        }
        record(.disconnected, central: key.central, peripheral: key.peripheral, error: reason)
        if peripherals.contains(key.peripheral) {
            tellSubscriptionsEnded(link, detail: "disconnected")
            let lostUpdates = link.toCentral.waiting.reduce(0) { count, pdu in
                if case .update = pdu { return count + 1 }
                return count
            }
            if lostUpdates > 0 { updatesLeftQueue(lostUpdates, of: key.peripheral) }
        }
        closeChannels(on: key, failingSendsWith: pendingError)
        failOperations(pendingError) { $0.link == key }
        if centrals.contains(key.central) {
            // Every attribute of the peripheral goes, included services' with the rest.
            let stale =
                (centrals[key.central]!.services.removeValue(forKey: key.peripheral) ?? [])
                + (centrals[key.central]!.includedServices.removeValue(forKey: key.peripheral) ?? [])
            for service in stale { centrals[key.central]!.characteristics[service] = nil }
            centrals[key.central]!.ancsAuthorizations[key.peripheral] = nil
            deliver(.disconnected(remotePeripheral(key.peripheral), reason), to: key.central)
        }
        reportConnectionEvent(.peerDisconnected, peripheral: key.peripheral)
        connectionMayHaveEnded(of: key.peripheral)
    }

    /// Tells a link's peripheral that each of its central's subscriptions ended (all
    /// CoreBluetooth tells a peripheral manager of a lost central), logging why.
    mutating func tellSubscriptionsEnded(_ link: Link, detail: String) {
        let key = link.key
        let central = RemoteCentral(identifier: key.central, maximumUpdateValueLength: link.maximumValueLength)
        for handle in link.subscriptions.keys.sorted() {
            guard let p = peripherals.position(of: key.peripheral),
                let characteristic = peripherals[at: p].database.localCharacteristic(at: handle)
            else { continue }
            record(
                .unsubscribe, central: key.central, peripheral: key.peripheral, attribute: characteristic.uuid,
                handle: handle, detail: detail)
            deliver(.unsubscribed(central, characteristic), to: key.peripheral)
        }
    }

    // MARK: Queries

    func isConnected(central: UUID, peripheral: UUID) -> Bool {
        links.contains(LinkKey(central: central, peripheral: peripheral))
    }

    /// The known peripherals among `identifiers`, each once, in the order asked; none while
    /// the central is not powered on (CoreBluetooth refuses the call then).
    func retrievePeripherals(central: UUID, withIdentifiers identifiers: [UUID]) -> [RemotePeripheral] {
        guard centrals[central]?.state == .poweredOn else { return [] }
        var seen = Set<UUID>()
        return identifiers.filter { known.contains($0) && seen.insert($0).inserted }.map { remotePeripheral($0) }
    }

    /// Test hook: the system knows a peripheral (it was discovered or connected before, as
    /// CoreBluetoothMock's `simulateCaching()`): `retrievePeripherals(withIdentifiers:)`
    /// finds it, and a central may connect to it without scanning.
    mutating func cache(peripheral: UUID) {
        guard peripherals.contains(peripheral) else { return }
        known.insert(peripheral)
        systemChanges &+= 1
    }

    /// Test hook: something outside the simulation holds a connection to a peripheral (or
    /// stops): `retrieveConnectedPeripherals(withServices:)` finds it, and a central connects
    /// to it whether or not it advertises.
    mutating func setConnectedToSystem(peripheral: UUID, _ connected: Bool) {
        guard peripherals.contains(peripheral) else { return }
        systemChanges &+= 1
        if connected {
            known.insert(peripheral)
            connectedToSystem.insert(peripheral)
            connectPendingAttempts(to: peripheral)
        } else {
            connectedToSystem.remove(peripheral)
            connectionMayHaveEnded(of: peripheral)
        }
    }

    /// Peripherals connected (by any central or the system) with one of `services`; none
    /// while the central is not powered on.
    func retrieveConnectedPeripherals(central: UUID, withServices services: [BluetoothUUID]) -> [RemotePeripheral] {
        guard centrals[central]?.state == .poweredOn else { return [] }
        let linked = Set(links.keys.map(\.peripheral))
        return peripheralOrder.filter { peripheral in
            (linked.contains(peripheral) || connectedToSystem.contains(peripheral))
                && peripherals[existing: peripheral].database.localServices.contains { services.contains($0.uuid) }
        }
        .map { remotePeripheral($0) }
    }
}

extension World {
    /// The error for a peripheral the central's system never saw, saying why when no manager
    /// on this bridge has the identifier: the commonest set-up mistake is two managers each on
    /// a bridge of its own.
    func unknownDevice(_ peripheral: UUID, central: UUID) -> CoreBluetoothError {
        guard !peripherals.contains(peripheral) else { return CoreBluetoothError(.unknownDevice) }
        return CoreBluetoothError(
            .unknownDevice,
            reason: "No manager on this central's bridge has identifier \(peripheral.uuidString): a manager "
                + "created without a bridge gets one of its own. Create one MockBLEBridge and pass it to both "
                + "managers (bridge: bridge), or create them inside bridge.run { } or a test with the .mockBridge "
                + "trait, where they share its bridge.")
    }
}
