import Foundation

/// Fixed identifiers for tests.
enum UUIDs {
    static let first = UUID(uuidString: "00000000-0000-0000-0000-000000000001")!
    static let second = UUID(uuidString: "00000000-0000-0000-0000-000000000002")!
}

/// A thread-safe counter for callbacks that may run on any thread.
final class Counter: @unchecked Sendable {
    // @unchecked Sendable: `count` is only touched while holding `lock`.
    private let lock = NSLock()
    private var count = 0

    func increment() {
        lock.lock()
        count += 1
        lock.unlock()
    }

    var value: Int {
        lock.lock()
        defer { lock.unlock() }
        return count
    }
}

/// Records values in the order they arrive, from any task.
actor Recorder<Value: Sendable> {
    private(set) var values: [Value] = []

    func record(_ value: Value) { values.append(value) }
}
