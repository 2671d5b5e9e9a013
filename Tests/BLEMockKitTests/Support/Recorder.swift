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
