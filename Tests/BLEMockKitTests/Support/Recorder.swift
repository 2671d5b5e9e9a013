@testable import BLEMockKit

/// A thread-safe list that concurrent test tasks append to.
final class Recorder<Entry: Sendable>: @unchecked Sendable {
    // Why `@unchecked Sendable` is safe: `storage` is only accessed inside `lock.withLock`.
    private let lock = Lock()
    private var storage: [Entry] = []

    /// Appends an entry.
    func append(_ entry: Entry) {
        lock.withLock { storage.append(entry) }
    }

    /// A snapshot of the entries so far, in append order.
    var entries: [Entry] {
        lock.withLock { storage }
    }
}

/// Yields until `condition` holds, at most `maximumYields` times; returns whether it held.
///
/// Used instead of wall-clock timeouts: a test waiting for a sleeper to register fails
/// (rather than hangs) if it never does.
func eventually(maximumYields: Int = 100_000, _ condition: () -> Bool) async -> Bool {
    for _ in 0..<maximumYields {
        if condition() { return true }
        await Task.yield()
    }
    return condition()
}
