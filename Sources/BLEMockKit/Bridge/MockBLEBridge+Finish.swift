import BLECore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

extension MockBLEBridge {
    /// The operations in progress, described one per line (a connection, a read a peripheral
    /// has not answered, an operation injected never to answer). Tests use it to wait until an
    /// operation started in another task has reached the bridge.
    public var waitingOperations: [String] {
        pendingOperations.map(\.description)
    }

    /// The misuses CoreBluetooth lets pass quietly that the managers on this bridge made so
    /// far, in order: a write without response cut, dropped by a full queue or sent to a
    /// characteristic without the property, a notification cut, an error response to a write
    /// command. ``finish()`` reports them; a manager configured with `strictMisuse` throws
    /// them instead.
    public var misuses: [Misuse] { world.misuses }

    /// The operations in progress, oldest first.
    public var pendingOperations: [Leftover] {
        world.pending.values.sorted { $0.id < $1.id }.filter { !$0.isCancelled }.map { operation in
            let key = operation.link
            // An operation of a manager without a link (waiting for its state) names its owner.
            var central = key?.central
            var peripheral = key?.peripheral
            if key == nil {
                switch operation.owner {
                case .central(let owner): central = owner
                case .peripheral(let owner): peripheral = owner
                }
            }
            return .operation(
                operation.summary, central: central, peripheral: peripheral,
                characteristic: operation.procedure?.characteristic?.uuid, since: operation.since)
        }
    }

    /// Ends the simulation: operations still in progress fail with
    /// `CoreBluetoothError.Code.operationCancelled`, scheduled events are dropped, every
    /// event stream finishes, and the report lists what was left over — operations in
    /// progress, requests a peripheral never answered, events no stream read, and error
    /// injections that never fired (so a test that scripted a failure learns when its code
    /// never reached it), ``waitUntil(_:)`` calls whose condition never held (finishing does not
    /// end them: such a call ends when its task is cancelled), and misuses
    /// CoreBluetooth would have let pass quietly (``misuses``)
    /// — or ``FinishReport/clean``. A report with leftovers ends with the
    /// bridge's seed. Calls CoreBluetooth-shaped managers made before it that have not reached
    /// the simulation yet (a manager let go of, shutting down) are applied first, and
    /// CoreBluetoothMock-style peripheral objects (`CBMCentralManagerMock`'s) stop keeping
    /// their delegates once it has ended, so an app that is its peripheral's delegate does not
    /// keep itself and this bridge alive after the test.
    ///
    /// Call it at the end of a test to learn about work the code under test left undone:
    ///
    /// ```swift
    /// #expect(await bridge.finish() == .clean)
    /// ```
    ///
    /// What it ends is what was under way. The bridge does not refuse what comes after: a call
    /// made later runs on it as before (a connection, a scan, an injection firing), and a
    /// second `finish()` reports what is left over then (an injection it listed is listed again
    /// unless it fired meanwhile). A test that goes on after finishing tests a bridge whose
    /// schedule was emptied: make a new bridge instead.
    public func finish() -> FinishReport {
        admitArrivals()
        applyHeldCalls()
        forgetCancelled()
        var leftovers = pendingOperations
        for operation in world.pending.values.sorted(by: { $0.id < $1.id }) {
            guard case .awaitingAnswer(let request) = operation.stage, let key = operation.link,
                let characteristic = operation.procedure?.characteristic
            else { continue }
            leftovers.append(
                .unansweredRequest(
                    id: request, peripheral: key.peripheral, characteristic: characteristic.uuid,
                    offset: operation.procedure?.requestOffset ?? 0))
        }
        // Requests the app never answered whose transactions timed out (the link went with them).
        leftovers += world.timedOutRequests
        // A `waitUntil` still waiting: nothing will change once the simulation has ended, so it
        // ends only if its task is cancelled.
        leftovers += unendedConditionWaits
        for central in world.centralOrder {
            let unread = centralStreams[central]?.unreadEvents ?? []
            if let first = unread.first {
                leftovers.append(.unreadEvents(manager: central, count: unread.count, first: "\(first)"))
            }
        }
        for peripheral in world.peripheralOrder {
            let unread = peripheralStreams[peripheral]?.unreadEvents ?? []
            if let first = unread.first {
                leftovers.append(.unreadEvents(manager: peripheral, count: unread.count, first: "\(first)"))
            }
        }
        for entry in world.injections.unfired {
            leftovers.append(.unfiredInjection(entry.injection, owner: entry.owner))
        }
        leftovers += world.misuses.map { .misuse($0) }
        leftovers += untrackedCalls.map { .untrackedCall($0) }
        leftovers += world.unknownTargets.map { .unknownTarget($0) }
        mutate { world in
            world.failOperations(CoreBluetoothError(.operationCancelled)) { _ in true }
            world.attempts.removeAll()
            // Sleepers on the clock stay: the code under test owns them (finishing never did).
            world.schedule.removeAll { !$0.isWake }
        }
        for central in world.centralOrder { centralStreams[central]?.finish() }
        for peripheral in world.peripheralOrder { peripheralStreams[peripheral]?.finish() }
        for finisher in frontEndSettings.finishers { finisher(self) }
        guard !leftovers.isEmpty else { return .clean }
        // Failures name the seed, so the run can be reproduced exactly.
        leftovers.append(.seed(configuration.seed))
        return .leftovers(leftovers)
    }
}

/// What finishing a bridge found: nothing left over, or the list of what was.
public enum FinishReport: Hashable, Sendable, CustomStringConvertible {
    /// Nothing was pending or unread.
    case clean
    /// Something was left over; the last item names the bridge's seed.
    case leftovers([Leftover])

    /// Whether nothing was left over.
    public var isClean: Bool { self == .clean }

    public var description: String {
        switch self {
        case .clean: "clean"
        case .leftovers(let items): "leftovers:\n" + items.map { "- \($0)" }.joined(separator: "\n")
        }
    }
}

/// One thing a simulation left undone.
public enum Leftover: Hashable, Sendable, CustomStringConvertible {
    /// An operation still in progress: what it is, on which central, peripheral and
    /// characteristic, since which virtual instant.
    case operation(
        String, central: UUID?, peripheral: UUID?, characteristic: BluetoothUUID?, since: VirtualClock.Instant)
    /// A request a peripheral's app was handed and never answered.
    case unansweredRequest(id: UInt64, peripheral: UUID, characteristic: BluetoothUUID, offset: Int)
    /// Events a manager's stream received and nobody read.
    case unreadEvents(manager: UUID, count: Int, first: String)
    /// An error injection that never fired, or one scripted for several times that did not
    /// fire them all (installed for one manager, or `nil` for all).
    case unfiredInjection(ErrorInjection, owner: UUID?)
    /// The bridge's seed, to reproduce the run.
    case seed(UInt64)
    /// A manager's event stream being awaited (reported when a run stalls).
    case eventWait(manager: UUID, since: VirtualClock.Instant)
    /// Tasks sleeping on the bridge's clock (reported when a run stalls).
    case sleepers(count: Int)
    /// A call into the kit, or a sleep on the bridge's clock, during a run, from a task the run
    /// cannot see (a plain `Task {}`): time may have moved while that task ran (before its sleep
    /// began, so its deadline may differ from run to run). Start it with ``MockBLEBridge/task(_:)``.
    case untrackedCall(String)
    /// A misuse CoreBluetooth lets pass quietly (see ``MockBLEBridge/misuses``).
    case misuse(Misuse)
    /// A fault or test hook that named a manager not on this bridge (a mistyped identifier,
    /// or another bridge's), so it did nothing: which call, and what it named.
    case unknownTarget(String)

    public var description: String {
        func short(_ identifier: UUID) -> String { String(identifier.uuidString.prefix(8)) }
        switch self {
        case .operation(let name, let central, let peripheral, _, let since):
            let owner = central.map { "central \(short($0)): " } ?? ""
            let target = peripheral.map { " on peripheral \(short($0))" } ?? ""
            return "\(owner)\(name)\(target) was still waiting (since \(since))"
        case .unansweredRequest(let id, let peripheral, let characteristic, let offset):
            return
                "peripheral \(short(peripheral)): request \(id) (\(characteristic), offset \(offset)) was never answered"
        case .unreadEvents(let manager, let count, let first):
            return "\(short(manager)): \(count) unread events, first \(first)"
        case .unfiredInjection(let injection, let owner):
            // (One scripted for several times is listed until it has fired them all.)
            let verdict =
                if case .times(let count) = injection.frequency, count > 1 {
                    "error injection fired fewer than \(count) times"
                } else {
                    "error injection never fired"
                }
            return "\(verdict): \(injection)" + (owner.map { " (installed for \(short($0)))" } ?? "")
        case .seed(let seed):
            return "bridge seed \(seed): rerun with the same seed and steps to reproduce"
        case .eventWait(let manager, let since):
            return "\(short(manager)): its event stream was awaited (since \(since))"
        case .sleepers(let count):
            return "\(count) task\(count == 1 ? "" : "s") sleeping on the bridge's clock"
        case .untrackedCall(let call):
            return "\(call) was called during a run from a task the run cannot see (a plain Task {}): "
                + "time may have moved while it ran; start it with bridge.task { }"
        case .misuse(let misuse):
            return "misuse CoreBluetooth would let pass: \(misuse)"
        case .unknownTarget(let call):
            return "\(call), so it did nothing (a mistyped identifier, or another bridge's?)"
        }
    }
}
