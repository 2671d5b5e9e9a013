import BLEMockKit
import Foundation

/// Where a bridge's disconnection timestamps start (`CFAbsoluteTime` at virtual time zero): 0
/// unless its time follows the wall clock.
enum TimestampOrigin {}

/// Moves a bridge's virtual time along with the wall clock (``SimulatedSystem/Time/wallClock``):
/// a task that runs the bridge's schedule up to the wall clock's elapsed time whenever the next
/// event falls due, and at least every few milliseconds. Events still happen at their exact
/// virtual times (the log's timestamps are those); only when they happen on the wall clock
/// follows it, up to a tick late.
///
/// This is the one place the kit waits on the wall clock outside demo pacing: it is what the
/// mode is for (tests that wait on the wall clock, as CoreBluetoothMock's timers make them).
final class WallClockDriver: Sendable {
    /// The longest the driver sleeps before looking at the schedule again (a call from the app
    /// may have scheduled something sooner than what it was waiting for).
    static let tick: Duration = .milliseconds(2)

    private let bridge: MockBLEBridge
    private let task: Task<Void, Never>
    private let start: ContinuousClock.Instant
    private let origin: VirtualClock.Instant

    init(bridge: MockBLEBridge) {
        let clock = ContinuousClock()
        let start = clock.now
        let origin = bridge.clockNow
        self.bridge = bridge
        self.start = start
        self.origin = origin
        bridge.setTimeOwner("the wall clock (SimulatedSystem with wall-clock time)")
        CommandQueue.of(bridge).followTime { origin.advanced(by: clock.now - start) }
        // Disconnection timestamps are the wall clock's, as CoreBluetooth's are.
        LockedValue.on(bridge, key: TimestampOrigin.self, initial: 0).value =
            CFAbsoluteTimeGetCurrent() - MockCentralEngine.seconds(origin)
        task = Task.detached { [weak bridge] in
            while !Task.isCancelled {
                guard let bridge else { return }
                let next = await bridge.followTime(to: origin.advanced(by: clock.now - start))
                var wait = Self.tick
                if let next {
                    let due = origin.duration(to: next) - (clock.now - start)
                    wait = min(wait, max(due, .zero))
                }
                if wait > .zero { try? await clock.sleep(for: wait) }
            }
        }
    }

    /// The virtual time that corresponds to the wall clock now.
    var now: VirtualClock.Instant { origin.advanced(by: ContinuousClock.now - start) }

    /// Stops moving time: the bridge's time is its own again.
    func stop() {
        task.cancel()
        CommandQueue.of(bridge).followTime(nil)
        bridge.setTimeOwner(nil)
    }
}
