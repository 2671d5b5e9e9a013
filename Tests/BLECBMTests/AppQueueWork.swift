import BLEMockKit
import Foundation

extension MockBLEBridge {
    /// Hands `work` to an app's `queue`, as a test driving an app on its own queue does, and
    /// waits, the simulation paused, until it has run: the calls it made are applied before
    /// this returns (see `waitForApp(pausingSimulation:)`).
    func runOnAppQueue(
        _ queue: DispatchQueue, isolation: isolated (any Actor)? = #isolation, _ work: @escaping @Sendable () -> Void
    ) async throws {
        let ran = LockedValue(false)
        queue.async {
            work()
            ran.value = true
        }
        try await waitForApp(pausingSimulation: true) { ran.value }
    }
}
