import Foundation

/// Wall-clock instants marked from inside a run, on the run's own thread: a check of how long
/// the kit took to notice a stall then measures the kit, not how long a busy parallel test
/// run took to get back to the test's own task afterwards.
final class WallInstants: @unchecked Sendable {
    // @unchecked Sendable: `instants` is only read and written with `lock` held.
    private let lock = NSLock()
    private var instants: [ContinuousClock.Instant] = []

    /// Records the current instant.
    func mark() {
        lock.lock()
        defer { lock.unlock() }
        instants.append(.now)
    }

    /// The time from the first mark to the second, once both were made.
    var elapsed: Duration? {
        lock.lock()
        defer { lock.unlock() }
        return instants.count >= 2 ? instants[1] - instants[0] : nil
    }
}
