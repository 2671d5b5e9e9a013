import BLEMockKit
import Foundation

/// The two-way lane between app code on a dispatch queue and a simulated manager on a bridge:
/// the app's calls become commands applied on the bridge in the order they were made, and what
/// the simulation decides comes back as blocks on the app's queue, in the simulation's order.
///
/// Every lane of a bridge feeds one ``CommandQueue``, so commands from different managers and
/// from test hooks (a spec's `simulateReset()`) reach the simulation in the order they were
/// issued, not in the order their lanes happen to drain.
///
/// A run (`MockBLEBridge.run`) sees the lane: its commands are applied by a task the run tracks,
/// its queue is registered as a probe, and every command and callback counts as outside
/// activity, so the run moves virtual time only once the app has reacted to what it was told.
final class FrontEndLane<Target: Actor>: Sendable {
    let bridge: MockBLEBridge
    let target: Target
    let queue: DispatchQueue
    private let commands: CommandQueue
    private let probe: Int?

    /// Creates a lane to `queue` (the main queue when `nil`) for commands on `target` (a
    /// manager on `bridge`'s executor). A lane that never delivers (`delivers: false`: test
    /// hooks called from the test) registers no probe.
    init(bridge: MockBLEBridge, target: Target, queue: DispatchQueue?, delivers: Bool = true) {
        self.bridge = bridge
        self.target = target
        let queue = queue ?? .main
        self.queue = queue
        commands = CommandQueue.of(bridge)
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

    /// Queues a command for the target, after every command issued before it on this bridge.
    func command(_ body: @escaping @Sendable (isolated Target) -> Void) {
        let target = target
        commands.enqueue { target.assumeIsolated { body($0) } }
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

/// The front ends' commands on one bridge, applied in the order they were issued by one task
/// at a time (one the active run tracks).
final class CommandQueue: @unchecked Sendable {
    // @unchecked Sendable: `inbox` and `draining` are only read and written with `lock` held.
    private let bridge: MockBLEBridge
    private let lock = Lock()
    private var inbox: [@Sendable () -> Void] = []
    private var draining = false

    private init(bridge: MockBLEBridge) { self.bridge = bridge }

    /// The bridge's queue.
    static func of(_ bridge: MockBLEBridge) -> CommandQueue {
        bridge.frontEndSettings.object(for: ObjectIdentifier(CommandQueue.self)) { CommandQueue(bridge: bridge) }
    }

    /// Queues a command (to run on the bridge's executor).
    func enqueue(_ command: @escaping @Sendable () -> Void) {
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
            let batch = lock.withLock { () -> [@Sendable () -> Void]? in
                guard !inbox.isEmpty else {
                    draining = false
                    return nil
                }
                defer { inbox.removeAll() }
                return inbox
            }
            guard let batch else { return }
            await bridge.applyFrontEndCommands(batch)
            // What the batch changed (a peripheral now retrievable, say) may be what an app's
            // `waitForApp` waits for: it checks again.
            bridge.outside.noteActivity()
        }
    }
}
