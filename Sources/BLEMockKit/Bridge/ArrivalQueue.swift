import BLECore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Managers created on a bridge and not yet on the air.
///
/// A manager is created synchronously, anywhere; the bridge is an actor. So a new manager
/// leaves its arrival here, and the bridge puts it on the air at its next turn (its next call,
/// an advance, a run's next step), in the order managers were created: a realistic manager's
/// power-on starts then, and its first state event goes to the streams already open.
final class ArrivalQueue: @unchecked Sendable {
    // @unchecked Sendable: `waiting` is only read and written with `lock` held.
    enum Arrival: Sendable {
        case central(UUID, EventBroadcaster<CentralEvent>, MockCentralManager.Configuration)
        case peripheral(UUID, EventBroadcaster<PeripheralEvent>, MockPeripheralManager.Configuration)
    }

    private let lock: Lock
    // `@exclusivity(unchecked)`: the lock keeps accesses apart; the runtime's checks would
    // cost a call on every manager call, which takes the arrivals.
    @exclusivity(unchecked) private var waiting: [Arrival] = []
    @exclusivity(unchecked) private var isEmpty = true

    init(lock: Lock = Lock()) {
        self.lock = lock
    }

    func add(_ arrival: Arrival) {
        lock.withLock {
            waiting.append(arrival)
            isEmpty = false
        }
    }

    /// The arrivals since the last call, in order.
    func take() -> [Arrival] {
        lock.withLock {
            guard !isEmpty else { return [] }
            defer {
                waiting.removeAll()
                isEmpty = true
            }
            return waiting
        }
    }
}
