import BLECore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

extension MockBLEBridge {
    /// The operations waiting right now (a connection, a read a peripheral has not answered,
    /// an operation injected never to answer), described one per line. Tests use it to wait
    /// until an operation started in another task has reached the bridge.
    public var waitingOperations: [String] {
        waiting.keys.sorted().map { id in
            let operation = waiting[id]!
            return "central \(operation.link.central.uuidString.prefix(8)): \(operation.kind) on peripheral "
                + "\(operation.link.peripheral.uuidString.prefix(8)) was still waiting"
        }
    }

    /// Ends the simulation: operations still waiting fail with
    /// `CoreBluetoothError.Code.operationCancelled`, scheduled events are dropped, every
    /// event stream finishes, and the report lists what was left over — waiting operations,
    /// requests a peripheral never answered, events no stream read, and error injections that
    /// never fired (so a test that scripted a failure learns when its code never reached it) —
    /// or ``FinishReport/clean``. A report with leftovers ends with the bridge's seed.
    ///
    /// Call it at the end of a test to learn about work the code under test left undone:
    ///
    /// ```swift
    /// #expect(await bridge.finish() == .clean)
    /// ```
    public func finish() -> FinishReport {
        var leftovers = waitingOperations
        for id in openRequests.keys.sorted() {
            let open = openRequests[id]!
            leftovers.append(
                "peripheral \(open.link.peripheral.uuidString.prefix(8)): request \(id) (\(open.request.characteristic.uuid), "
                    + "offset \(open.request.offset)) was never answered")
        }
        for central in world.centralOrder {
            let unread = world.centrals[central]!.events.unreadEvents
            if !unread.isEmpty {
                leftovers.append(
                    "central \(central.uuidString.prefix(8)): \(unread.count) unread events, first \(unread[0])")
            }
        }
        for peripheral in world.peripheralOrder {
            let unread = world.peripherals[peripheral]!.events.unreadEvents
            if !unread.isEmpty {
                leftovers.append(
                    "peripheral \(peripheral.uuidString.prefix(8)): \(unread.count) unread events, first \(unread[0])")
            }
        }
        for entry in world.injections.unfired {
            let owner = entry.owner.map { " (installed for \($0.uuidString.prefix(8)))" } ?? ""
            leftovers.append("error injection never fired: \(entry.injection)\(owner)")
        }
        resumeWaiting(where: { _ in true }, with: .failure(CoreBluetoothError(.operationCancelled)))
        openRequests.removeAll()
        world.attempts.removeAll()
        completions.removeAll()
        world.schedule.removeAll { _ in true }
        for central in world.centralOrder { world.centrals[central]!.events.finish() }
        for peripheral in world.peripheralOrder { world.peripherals[peripheral]!.events.finish() }
        guard !leftovers.isEmpty else { return .clean }
        // Failures name the seed, so the run can be reproduced exactly.
        leftovers.append("bridge seed \(configuration.seed): rerun with the same seed and steps to reproduce")
        return .leftovers(leftovers)
    }
}
