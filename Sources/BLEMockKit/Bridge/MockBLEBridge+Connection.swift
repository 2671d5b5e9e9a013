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
    /// A connectable advertising peripheral connects at once (in fast mode). One that is not
    /// advertising keeps the attempt pending, as CoreBluetooth does, until it advertises or
    /// the timeout passes; a peripheral advertising as non-connectable fails the attempt.
    func connect(central: UUID, peripheral: UUID, options: ConnectOptions) async throws {
        try requirePoweredOn(central: central, "connect")
        guard world.known.contains(peripheral), world.peripherals[peripheral] != nil else {
            throw CoreBluetoothError(.unknownDevice)
        }
        let key = LinkKey(central: central, peripheral: peripheral)
        if world.links[key] != nil { return }
        let alreadyPending = waiting.values.contains { $0.link == key && $0.kind == .connect }
        if !alreadyPending {
            world.record(.connecting, central: central, peripheral: peripheral)
            if let record = world.peripherals[peripheral], record.advertisement?.isConnectable == false {
                let error = CoreBluetoothError(.connectionFailed)
                world.record(.connectionFailed, central: central, peripheral: peripheral, error: error)
                world.centrals[central]!.events.yield(.failedToConnect(world.remotePeripheral(peripheral), error))
                throw error
            }
            if canConnectNow(peripheral) {
                establishLink(key)
                return
            }
        }
        let deadline = options.timeout.map { world.now.advanced(by: max($0, .zero)) }
        if let deadline { world.schedule.schedule(.connectionTimeout(key), at: deadline) }
        _ = try await suspend(.connect, on: key) { id in
            // Serve the attempt: run the schedule up to its deadline, or until it completes.
            if let deadline { self.runEvents(through: deadline, until: { self.waiting[id] == nil }) }
        }
    }

    func canConnectNow(_ peripheral: UUID) -> Bool {
        guard let record = world.peripherals[peripheral] else { return false }
        return record.state == .poweredOn && record.isConnectable
    }

    /// Creates the link and completes every attempt waiting for it.
    func establishLink(_ key: LinkKey) {
        guard world.links[key] == nil, let central = world.centrals[key.central],
            let peripheral = world.peripherals[key.peripheral]
        else { return }
        let mtu = world.negotiatedMTU(central: central, peripheral: peripheral)
        world.links[key] = SimulationWorld.Link(mtu: mtu)
        world.known.insert(key.peripheral)
        world.schedule.removeAll { $0 == .connectionTimeout(key) }
        world.record(.connected, central: key.central, peripheral: key.peripheral, detail: "mtu=\(mtu)")
        central.events.yield(.connected(world.remotePeripheral(key.peripheral)))
        resumeWaiting(where: { $0.link == key && $0.kind == .connect }, with: .success(Data()))
    }

    /// Completes pending attempts to a peripheral that just became connectable.
    func connectPendingAttempts(to peripheral: UUID) {
        guard canConnectNow(peripheral) else { return }
        let keys = Set(waiting.values.filter { $0.kind == .connect && $0.link.peripheral == peripheral }.map(\.link))
        for key in keys.sorted(by: { $0.central.uuidString < $1.central.uuidString }) { establishLink(key) }
    }

    /// A pending attempt's timeout passed: cancel it and report the timeout.
    func connectionTimedOut(_ key: LinkKey) {
        guard world.links[key] == nil, waiting.values.contains(where: { $0.link == key && $0.kind == .connect })
        else { return }
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
        } else if waiting.values.contains(where: { $0.link == key && $0.kind == .connect }) {
            world.schedule.removeAll { $0 == .connectionTimeout(key) }
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
                    .unsubscribe, central: key.central, peripheral: key.peripheral, attribute: characteristic.local.uuid,
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
    func suspend(_ kind: WaitingOperation.Kind, on link: LinkKey, serve: @escaping (UInt64) -> Void = { _ in }) async throws
        -> Data
    {
        let id = nextWaitingID
        nextWaitingID += 1
        return try await withCheckedThrowingContinuation { continuation in
            waiting[id] = WaitingOperation(link: link, kind: kind, continuation: continuation)
            serve(id)
        }
    }

    /// Completes the waiting operations that match, in the order they started.
    func resumeWaiting(where matches: (WaitingOperation) -> Bool, with result: Result<Data, any Error>) {
        for id in waiting.keys.sorted() where matches(waiting[id]!) {
            waiting.removeValue(forKey: id)!.continuation.resume(with: result)
        }
    }

    /// Completes one waiting operation.
    func resume(_ id: UInt64, with result: Result<Data, any Error>) {
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
