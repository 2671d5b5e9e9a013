import BLEMockKit
import Foundation

/// The two-way lane between app code on a dispatch queue and a simulated manager on a bridge:
/// the app's calls become commands applied on the bridge in the order they were made, and what
/// the simulation decides comes back as blocks on the app's queue, in the simulation's order.
///
/// A run (`MockBLEBridge.run(timeLimit:stallPatience:_:)`) sees the lane: its commands are
/// applied by a task the run tracks, its queue is registered as a probe, and every command and
/// callback counts as outside activity, so the run moves virtual time only once the app has
/// reacted to what it was told.
final class FrontEndLane<Command: Sendable>: @unchecked Sendable {
    // @unchecked Sendable: `inbox` and `draining` are only read and written with `lock` held.
    let bridge: MockBLEBridge
    let queue: DispatchQueue
    private let lock = Lock()
    private var inbox: [Command] = []
    private var draining = false
    private let apply: @Sendable ([Command]) async -> Void
    private let probe: Int?

    /// Creates a lane to `queue` (the main queue when `nil`); `apply` applies a batch of
    /// commands on the bridge. A lane that never delivers (`delivers: false`: test hooks
    /// called from the test) registers no probe.
    init(
        bridge: MockBLEBridge, queue: DispatchQueue?, delivers: Bool = true,
        apply: @escaping @Sendable ([Command]) async -> Void
    ) {
        self.bridge = bridge
        let queue = queue ?? .main
        self.queue = queue
        self.apply = apply
        probe =
            delivers
            ? bridge.outside.addProbe {
                await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                    queue.async { continuation.resume() }
                }
            } : nil
    }

    deinit {
        if let probe { bridge.outside.removeProbe(probe) }
    }

    /// Queues a command for the bridge, after every command queued before it.
    func command(_ command: Command) {
        let start = lock.withLock { () -> Bool in
            inbox.append(command)
            if draining { return false }
            draining = true
            return true
        }
        bridge.outside.noteActivity()
        if start { bridge.startTracked { await self.drain() } }
    }

    /// Applies queued commands on the bridge until none are left.
    private func drain() async {
        while true {
            let batch = lock.withLock { () -> [Command]? in
                guard !inbox.isEmpty else {
                    draining = false
                    return nil
                }
                defer { inbox.removeAll() }
                return inbox
            }
            guard let batch else { return }
            await apply(batch)
        }
    }

    /// Runs `body` on the app's queue, after every block handed over before it.
    func deliver(_ body: @escaping @Sendable () -> Void) {
        let outside = bridge.outside
        outside.noteActivity()
        queue.async {
            body()
            outside.noteActivity()
        }
    }
}
