import Foundation
import Testing

@testable import BLEMockKit

/// A gate a task waits at until another opens it (opened before the wait, the wait returns at
/// once).
private final class Gate: @unchecked Sendable {
    // @unchecked Sendable: `isOpen` and `waiter` are only read and written with `lock` held.
    private let lock = NSLock()
    private var isOpen = false
    private var waiter: CheckedContinuation<Void, Never>?

    func open() {
        let waiting = lock.withLock { () -> CheckedContinuation<Void, Never>? in
            isOpen = true
            defer { waiter = nil }
            return waiter
        }
        waiting?.resume()
    }

    func wait() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let ready = lock.withLock { () -> Bool in
                if isOpen { return true }
                waiter = continuation
                return false
            }
            if ready { continuation.resume() }
        }
    }
}

@Suite("A self-driving scope as its body ends", .timeLimit(.minutes(10)))
struct SelfDrivingScopeEndTests {
    /// A body that ended while the driver was taking a step that then found nothing scheduled:
    /// the driver waited for outside work for the whole stall patience before it noticed (the
    /// body's end woke nothing), so a run cost its patience in wall time at its end. Seen with
    /// bodies on the main actor, whose last steps run off the executor: a replay of an L2CAP
    /// exchange took 30 s (its patience) instead of milliseconds, now and then. Here the step
    /// waits for the body's end, every time, and the patience (20 minutes) outlasts the suite's
    /// time limit (10): before the change the test failed at that limit (with a 90 s patience and
    /// a one-minute limit, at 60 s); after it, it passes in a millisecond (two minutes under the
    /// thread sanitizer in a loaded parallel run, which a one-minute limit did not allow).
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test("A scope returns once its body has ended, not after its stall patience")
    func aScopeEndsWithItsBody() async throws {
        let executor = SimulationExecutor()
        defer { executor.stop() }
        let bodyMayEnd = Gate()
        let bodyEnded = Gate()
        let value = try await SelfDrivingScope.run(
            on: executor, patience: .seconds(1_200),
            step: {
                // The body ends during this step; the step then finds nothing scheduled.
                bodyMayEnd.open()
                await bodyEnded.wait()
                return .nothingScheduled
            },
            stall: { _ in CancellationError() },
            body: { () async -> Int in
                await bodyMayEnd.wait()
                bodyEnded.open()
                return 42
            })
        #expect(value == 42)
    }
}
