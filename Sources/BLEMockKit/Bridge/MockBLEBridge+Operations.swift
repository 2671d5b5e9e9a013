import BLECore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

extension MockBLEBridge {
    /// Runs a central's operation on a link, taking `cost` of virtual time.
    ///
    /// This is the one path every timed operation takes, in fast and realistic mode alike:
    /// events already due run first; an operation with no cost then completes at once
    /// (`body` runs now); otherwise its completion is scheduled at `now + cost` and the
    /// schedule runs up to it, firing everything due before (advertisements, notifications,
    /// faults), and `body` runs at the completion time. If the link drops first, the
    /// operation fails with the link's error and `body` never runs. While the peripheral is
    /// out of range it answers nothing: the operation is served on until the peripheral is
    /// heard again (then `body` runs at once, as the link layer's retransmission gets
    /// through) or the supervision timeout ends the link. An injected
    /// ``ErrorInjection/Failure/neverAnswers`` leaves the operation waiting until the link
    /// drops or the bridge finishes.
    func perform<T: Sendable>(
        _ kind: WaitingOperation.Kind, on link: LinkKey, cost: Duration, injected: ErrorInjection.Failure? = nil,
        _ body: @escaping () throws -> T
    ) async throws -> T {
        runEvents(through: world.now)
        if injected == .neverAnswers {
            _ = try await suspend(kind, on: link)
            throw CoreBluetoothError(.operationCancelled)
        }
        if kind != .connect, world.peripherals[link.peripheral]?.isHeard == false {
            let value = try await suspend(kind, on: link) { id in
                self.completions[id] = { self.resume(id, with: Result { try body() }) }
                self.serveWhileUnheard(id, peripheral: link.peripheral)
            }
            guard let typed = value as? T else { throw CoreBluetoothError(.unknown) }
            return typed
        }
        let start = max(world.now, world.links[link]?.attBusyUntil ?? world.now)
        if cost == .zero, start == world.now, world.links[link] != nil || kind == .connect {
            return try body()
        }
        let deadline = start.advanced(by: cost)
        world.links[link]?.attBusyUntil = deadline
        let began = world.now
        let value: any Sendable
        do {
            value = try await suspend(kind, on: link) { id in
                let answer = { self.resume(id, with: Result { try body() }) }
                self.completions[id] = {
                    // The peripheral went out of range meanwhile: it answers once heard again.
                    guard self.world.peripherals[link.peripheral]?.isHeard != false else {
                        self.completions[id] = answer
                        return
                    }
                    answer()
                }
                self.world.schedule.schedule(.complete(id), at: deadline)
                self.runEvents(through: deadline, until: { self.waiting[id] == nil })
                self.serveWhileUnheard(id, peripheral: link.peripheral)
            }
        } catch {
            pace(from: began)
            await waitForPacing()
            throw error
        }
        pace(from: began)
        await waitForPacing()
        guard let typed = value as? T else { throw CoreBluetoothError(.unknown) }
        return typed
    }

    /// Serves waiting operation `id` while `peripheral` is out of range: runs the schedule
    /// until the peripheral is heard again (``setProximity(_:of:)`` then answers it) or its
    /// supervision timeout ends the link and fails it, so an operation never waits on a
    /// peripheral that has come back.
    func serveWhileUnheard(_ id: UInt64, peripheral: UUID) {
        while waiting[id] != nil, world.peripherals[peripheral]?.isHeard == false,
            let end = world.schedule.ordered.first(where: { $0.event == .supervisionTimeout(peripheral) })?.deadline
        {
            runEvents(through: end, until: { self.waiting[id] == nil })
        }
    }

    /// Checks the injections for a central's operation; throws an injected ATT or
    /// CoreBluetooth error later, at the operation's completion, via the returned failure.
    func injection(
        _ operation: ErrorInjection.Operation, central: UUID, peripheral: UUID?, characteristic: BluetoothUUID? = nil
    ) -> ErrorInjection.Failure? {
        guard var random = world.centrals[central]?.random else { return nil }
        defer { world.centrals[central]!.random = random }
        return world.injections.check(
            operation, owner: central, peripheral: peripheral, characteristic: characteristic, random: &random)
    }

    /// Checks the injections for a peripheral's operation.
    func injection(_ operation: ErrorInjection.Operation, peripheral: UUID, characteristic: BluetoothUUID? = nil)
        -> ErrorInjection.Failure?
    {
        guard var random = world.peripherals[peripheral]?.random else { return nil }
        defer { world.peripherals[peripheral]!.random = random }
        return world.injections.check(
            operation, owner: peripheral, peripheral: peripheral, characteristic: characteristic, random: &random)
    }

    /// Installs an injection for every manager on the bridge (optionally narrowed to one
    /// peripheral or characteristic by its own fields).
    public func inject(_ injection: ErrorInjection) {
        world.injections.add(injection, owner: nil)
    }

    /// Installs an injection for one manager's operations only.
    func inject(_ injection: ErrorInjection, owner: UUID) {
        world.injections.add(injection, owner: owner)
    }

    // MARK: Manual requests, one at a time per link

    /// Delivers a manual-mode request to the peripheral now, or after the one in flight on
    /// its link is answered (ATT allows one outstanding request per link).
    func deliverOrQueue(_ requestID: UInt64) {
        guard let open = openRequests[requestID], world.links[open.link] != nil else { return }
        if let inFlight = world.links[open.link]!.requestInFlight, inFlight != requestID {
            world.links[open.link]!.undeliveredRequests.append(requestID)
            return
        }
        world.links[open.link]!.requestInFlight = requestID
        switch open.kind {
        case .read, .blob:
            deliverReadRequest(open.request, link: open.link)
        case .write(_, _, let batch):
            world.peripherals[open.link.peripheral]?.events.yield(.writeRequests(batch))
        case .command:
            break
        }
    }

    /// The request in flight on a link was answered: deliver the next one.
    func requestAnswered(on key: LinkKey) {
        guard world.links[key] != nil else { return }
        world.links[key]!.requestInFlight = nil
        while world.links[key] != nil, !world.links[key]!.undeliveredRequests.isEmpty {
            let next = world.links[key]!.undeliveredRequests.removeFirst()
            guard openRequests[next] != nil else { continue }
            deliverOrQueue(next)
            return
        }
    }

    // MARK: ATT costs

    /// Round trips of a read of `length` bytes at `mtu`: one Read, then Read Blobs of
    /// ATT_MTU − 1 bytes until a shorter part arrives.
    static func readRoundTrips(length: Int, mtu: Int) -> Int { length / (mtu - 1) + 1 }

    /// Round trips of a write with response: one Write Request when the value fits in
    /// ATT_MTU − 3 bytes, else Prepare Writes of ATT_MTU − 5 bytes and an Execute Write.
    static func writeRoundTrips(length: Int, mtu: Int) -> Int {
        length <= mtu - 3 ? 1 : (length + mtu - 6) / (mtu - 5) + 1
    }

    /// Round trips of a discovery that lists `count` entries of `entrySize` bytes: responses
    /// of as many entries as fit in ATT_MTU − 2 bytes, and a final request answered with
    /// "attribute not found".
    static func discoveryRoundTrips(count: Int, entrySize: Int, mtu: Int) -> Int {
        let perResponse = max(1, (mtu - 2) / entrySize)
        return (count + perResponse - 1) / perResponse + 1
    }
}
