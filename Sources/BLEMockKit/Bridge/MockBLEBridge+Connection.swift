import BLECore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

extension MockBLEBridge {
    typealias LinkKey = SimulationWorld.LinkKey

    /// Connects a central to a peripheral; returns when connected.
    ///
    /// A connectable advertising peripheral connects after the connection latency (none in
    /// fast mode). One that is not advertising (or out of range, or powered off) keeps the
    /// attempt pending, as CoreBluetooth does, until it becomes connectable or the timeout
    /// passes; a peripheral advertising as non-connectable, or a central at its connection
    /// limit, fails the attempt at once.
    func connect(central: UUID, peripheral: UUID, options: ConnectOptions) async throws {
        try requirePoweredOn(central: central, "connect")
        guard world.known.contains(peripheral), world.peripherals[peripheral] != nil else {
            throw CoreBluetoothError(.unknownDevice)
        }
        let key = LinkKey(central: central, peripheral: peripheral)
        if world.links[key] != nil { return }
        let isNewAttempt = world.attempts[key] == nil
        if isNewAttempt {
            world.record(.connecting, central: central, peripheral: peripheral)
            if let limit = world.centrals[central]!.configuration.connection.limit,
                world.links(ofCentral: central).count >= limit
            {
                throw failAttempt(key, CoreBluetoothError(.connectionLimitReached))
            }
            if world.peripherals[peripheral]!.advertisement?.isConnectable == false {
                throw failAttempt(key, CoreBluetoothError(.connectionFailed))
            }
            let probability = world.centrals[central]!.configuration.connection.failureProbability
            let failsByChance = probability > 0 && world.centrals[central]!.random.bool(probability: probability)
            world.attempts[key] = SimulationWorld.ConnectionAttempt(
                injected: injection(.connect, central: central, peripheral: peripheral), failsByChance: failsByChance)
            if let timeout = options.timeout {
                world.schedule.schedule(.connectionTimeout(key), at: world.now.advanced(by: max(timeout, .zero)))
            }
        }
        _ = try await suspend(.connect, on: key) { id in
            if isNewAttempt, self.canConnectNow(peripheral) { self.beginEstablishing(key) }
            // Serve the attempt: run the schedule until it completes, or up to its timeout or
            // its establishment, whichever is known.
            let timeout = self.world.schedule.ordered.first { $0.event == .connectionTimeout(key) }?.deadline
            if let limit = [timeout, self.world.attempts[key]?.establishesAt].compactMap({ $0 }).min() {
                self.runEvents(through: limit, until: { self.waiting[id] == nil })
            }
        }
    }

    /// Records a failed attempt, tells the central, and returns the error to throw.
    func failAttempt(_ key: LinkKey, _ error: CoreBluetoothError) -> CoreBluetoothError {
        world.attempts[key] = nil
        world.schedule.removeAll { $0 == .connectionTimeout(key) || $0 == .linkEstablished(key) }
        world.record(.connectionFailed, central: key.central, peripheral: key.peripheral, error: error)
        world.centrals[key.central]?.events.yield(.failedToConnect(world.remotePeripheral(key.peripheral), error))
        return error
    }

    func canConnectNow(_ peripheral: UUID) -> Bool {
        guard let record = world.peripherals[peripheral] else { return false }
        return record.state == .poweredOn && record.isConnectable && record.isHeard
    }

    /// The peripheral is connectable: the link comes up after the connection latency plus
    /// the MTU exchange (at once in fast mode).
    func beginEstablishing(_ key: LinkKey) {
        guard var attempt = world.attempts[key], attempt.establishesAt == nil else { return }
        let range = world.centrals[key.central]!.configuration.connection.latency ?? world.timing.connectionLatency
        let latency = world.drawLatency(in: range, forCentral: key.central)
        let total = latency + world.connectionEvent(forCentral: key.central)
        attempt.establishesAt = world.now.advanced(by: total)
        world.attempts[key] = attempt
        if total == .zero {
            finishAttempt(key)
        } else {
            world.schedule.schedule(.linkEstablished(key), at: attempt.establishesAt!)
        }
    }

    /// The attempt's latency passed: it fails (injected or drawn failure) or the link is up.
    func finishAttempt(_ key: LinkKey) {
        guard let attempt = world.attempts[key] else { return }
        if let failure = attempt.injected {
            guard let error = failure.error else { return }  // never answers: stays pending
            let cbError = error as? CoreBluetoothError ?? CoreBluetoothError(.connectionFailed)
            resumeWaiting(where: { $0.link == key && $0.kind == .connect }, with: .failure(failAttempt(key, cbError)))
            return
        }
        if attempt.failsByChance {
            let error = failAttempt(key, CoreBluetoothError(.connectionFailed))
            resumeWaiting(where: { $0.link == key && $0.kind == .connect }, with: .failure(error))
            return
        }
        establishLink(key)
    }

    /// Creates the link and completes every attempt waiting for it.
    func establishLink(_ key: LinkKey) {
        world.attempts[key] = nil
        guard world.links[key] == nil, let central = world.centrals[key.central],
            world.peripherals[key.peripheral] != nil
        else { return }
        if world.centralBonds.contains(key), !world.peripheralBonds.contains(key) {
            // The central's keys no longer match: encryption fails and the link goes down.
            let error = failAttempt(key, CoreBluetoothError(.peerRemovedPairingInformation))
            resumeWaiting(where: { $0.link == key && $0.kind == .connect }, with: .failure(error))
            return
        }
        let mtu = world.negotiateMTU(central: key.central, peripheral: key.peripheral)
        world.linkCount[key, default: 0] += 1
        // Each link draws its jitter from its own stream, so other links never perturb it.
        let random = world.random.derived("link").derived(
            "\(key.central.uuidString)/\(key.peripheral.uuidString)/\(world.linkCount[key]!)")
        world.links[key] = SimulationWorld.Link(mtu: mtu, random: random)
        if world.centralBonds.contains(key) {
            // A bonded link is encrypted with the stored keys as it comes up.
            world.links[key]!.security = LinkSecurity(isEncrypted: true, hasBond: true)
        }
        world.known.insert(key.peripheral)
        world.schedule.removeAll { $0 == .connectionTimeout(key) || $0 == .linkEstablished(key) }
        // The stack's Exchange MTU Request and Response.
        world.attPDUCount += 2
        world.record(.connected, central: key.central, peripheral: key.peripheral, detail: "mtu=\(mtu)")
        central.events.yield(.connected(world.remotePeripheral(key.peripheral)))
        resumeWaiting(where: { $0.link == key && $0.kind == .connect }, with: .success(()))
    }

    /// Starts establishing pending attempts to a peripheral that just became connectable.
    func connectPendingAttempts(to peripheral: UUID) {
        guard canConnectNow(peripheral) else { return }
        let keys = world.attempts.keys.filter { $0.peripheral == peripheral }
        for key in keys.sorted(by: { $0.central.uuidString < $1.central.uuidString }) { beginEstablishing(key) }
    }

    /// A pending attempt's timeout passed: cancel it and report the timeout.
    func connectionTimedOut(_ key: LinkKey) {
        guard world.links[key] == nil, world.attempts[key] != nil else { return }
        world.attempts[key] = nil
        world.schedule.removeAll { $0 == .linkEstablished(key) }
        let error = CoreBluetoothError(.connectionTimeout)
        world.record(.connectionFailed, central: key.central, peripheral: key.peripheral, error: error)
        world.centrals[key.central]?.events.yield(.disconnected(world.remotePeripheral(key.peripheral), error))
        resumeWaiting(where: { $0.link == key && $0.kind == .connect }, with: .failure(error))
    }

    /// Cancels a pending attempt or disconnects; a no-op when neither.
    func cancelConnection(central: UUID, peripheral: UUID) throws {
        try requirePoweredOn(central: central, "cancelPeripheralConnection")
        let key = LinkKey(central: central, peripheral: peripheral)
        if world.links[key] != nil {
            tearDown(key, reason: nil, pendingError: CoreBluetoothError(.operationCancelled))
        } else if world.attempts[key] != nil {
            world.attempts[key] = nil
            world.schedule.removeAll { $0 == .connectionTimeout(key) || $0 == .linkEstablished(key) }
            world.record(.disconnected, central: central, peripheral: peripheral, detail: "attempt cancelled")
            resumeWaiting(where: { $0.link == key }, with: .failure(CoreBluetoothError(.operationCancelled)))
            world.centrals[central]!.events.yield(.disconnected(world.remotePeripheral(peripheral), nil))
        }
    }

    /// Ends a link: the peripheral sees the central unsubscribe from everything, operations
    /// waiting on the link fail with `pendingError`, the central's discovered attributes of
    /// the peripheral become invalid, and the central gets a disconnect event with `reason`.
    func tearDown(_ key: LinkKey, reason: CoreBluetoothError?, pendingError: CoreBluetoothError) {
        guard let link = world.links.removeValue(forKey: key) else { return }
        world.record(.disconnected, central: key.central, peripheral: key.peripheral, error: reason)
        if let peripheral = world.peripherals[key.peripheral] {
            let central = RemoteCentral(identifier: key.central, maximumUpdateValueLength: link.mtu - 3)
            for handle in link.subscriptions.keys.sorted() {
                guard let characteristic = peripheral.database.characteristic(at: handle) else { continue }
                world.record(
                    .unsubscribe, central: key.central, peripheral: key.peripheral,
                    attribute: characteristic.local.uuid,
                    handle: handle, detail: "disconnected")
                peripheral.events.yield(.unsubscribed(central, characteristic.local))
            }
        }
        for (id, request) in openRequests where request.link == key { openRequests[id] = nil }
        resumeWaiting(where: { $0.link == key }, with: .failure(pendingError))
        if var central = world.centrals[key.central] {
            let stale = central.services.removeValue(forKey: key.peripheral) ?? []
            for service in stale { central.characteristics[service] = nil }
            world.centrals[key.central] = central
            central.events.yield(.disconnected(world.remotePeripheral(key.peripheral), reason))
        }
    }

    /// Simulates the peripheral side dropping a link (a reset, a crash, a supervision
    /// timeout): the central sees a disconnect with `error` (peripheralDisconnected by
    /// default) and its waiting operations fail with the same error.
    public func simulateDisconnection(
        central: UUID, peripheral: UUID, error: CoreBluetoothError = CoreBluetoothError(.peripheralDisconnected)
    ) {
        tearDown(LinkKey(central: central, peripheral: peripheral), reason: error, pendingError: error)
    }

    // MARK: Waiting operations

    /// Suspends the caller as a waiting operation on a link; `serve` runs after it is
    /// registered (to drive the schedule toward its completion).
    func suspend(
        _ kind: WaitingOperation.Kind, on link: LinkKey, serve: @escaping (UInt64) -> Void = { _ in }
    ) async throws -> any Sendable {
        let id = nextWaitingID
        nextWaitingID += 1
        return try await withCheckedThrowingContinuation { continuation in
            waiting[id] = WaitingOperation(link: link, kind: kind, continuation: continuation)
            serve(id)
        }
    }

    /// Completes the waiting operations that match, in the order they started.
    func resumeWaiting(where matches: (WaitingOperation) -> Bool, with result: Result<any Sendable, any Error>) {
        for id in waiting.keys.sorted() where matches(waiting[id]!) {
            completions[id] = nil
            waiting.removeValue(forKey: id)!.continuation.resume(with: result)
        }
    }

    /// Completes one waiting operation.
    func resume(_ id: UInt64, with result: Result<any Sendable, any Error>) {
        completions[id] = nil
        waiting.removeValue(forKey: id)?.continuation.resume(with: result)
    }

    /// Runs scheduled events due by `limit` until `done` holds; then moves time to `limit`
    /// only if not done.
    func runEvents(through limit: VirtualClock.Instant, until done: () -> Bool) {
        while !done(), let entry = world.schedule.popFirst(dueBy: limit) {
            setTime(entry.deadline)
            handle(entry.event)
        }
        if !done() { setTime(limit) }
    }
}
