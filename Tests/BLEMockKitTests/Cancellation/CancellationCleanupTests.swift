import BLECore
import BLEMockKit
import Foundation
import Testing

/// A cancelled wait leaves the bridge a clean-up task: it must not keep a bridge nobody uses
/// alive (a test checking that its bridge went away would see it still there, at random, on a
/// busy machine).
@Suite("Cancellation clean-up does not keep the bridge", .timeLimit(.minutes(10)))
struct CancellationCleanupTests {
    /// A task executor that holds the jobs given to it until told to run them: the clean-up
    /// task stays queued, as it may on a busy machine.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    final class HeldExecutor: TaskExecutor, @unchecked Sendable {
        // @unchecked Sendable: `jobs` is only read and written with `lock` held.
        private let lock = NSLock()
        private var jobs: [UnownedJob] = []

        func enqueue(_ job: consuming ExecutorJob) {
            let job = UnownedJob(job)
            lock.withLock { jobs.append(job) }
        }

        var queued: Int { lock.withLock { jobs.count } }

        /// Runs the jobs held so far, and those they enqueue, until none is left.
        func runAll() {
            while true {
                let taken = lock.withLock {
                    defer { jobs.removeAll() }
                    return jobs
                }
                if taken.isEmpty { return }
                for job in taken { job.runSynchronously(on: asUnownedTaskExecutor()) }
            }
        }
    }

    enum Wait: String, CaseIterable, Sendable {
        /// A sleep on the bridge's clock.
        case sleep
        /// A connection to a peripheral that stopped advertising.
        case connect
    }

    /// Starts a wait on a new bridge, cancels it while its clean-up task is held, and returns
    /// the bridge weakly once nothing of the test holds it.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    static func cancelledWait(_ wait: Wait, cleanUpOn held: HeldExecutor) async throws -> WeakBridge {
        let bridge = MockBLEBridge()
        let waiting: Task<Void, any Error>
        switch wait {
        case .sleep:
            let clock = bridge.clock
            waiting = Task { try await clock.sleep(for: .seconds(10)) }
            await clock.untilSleeping(count: 1)
        case .connect:
            let sensor = MockPeripheralManager(bridge: bridge)
            try await sensor.startAdvertising(AdvertisementData(localName: "Sensor"))
            let central = MockCentralManager(bridge: bridge)
            try await central.scanForPeripherals(withServices: nil)
            await sensor.stopAdvertising()
            waiting = Task { try await central.connect(sensor.identifier) }
            await bridge.waitUntil { $0.pendingOperations.count == 1 }
        }
        HelperTask.$preferredExecutor.withValue(held) { waiting.cancel() }
        await #expect(throws: CancellationError.self) { try await waiting.value }
        return WeakBridge(bridge)
    }

    final class WeakBridge: Sendable {
        weak let bridge: MockBLEBridge?
        init(_ bridge: MockBLEBridge) { self.bridge = bridge }
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test("A bridge goes away while the clean-up of a cancelled wait has not run yet", arguments: Wait.allCases)
    func cleanUpHoldsTheBridgeWeakly(wait: Wait) async throws {
        let held = HeldExecutor()
        let weak = try await Self.cancelledWait(wait, cleanUpOn: held)
        #expect(held.queued == 1)
        #expect(weak.bridge == nil)
        // The clean-up then runs, finds no bridge, and ends.
        held.runAll()
        #expect(held.queued == 0)
    }
}
