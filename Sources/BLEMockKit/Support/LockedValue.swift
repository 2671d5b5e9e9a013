/// A value read and written under a lock, from any thread: a setting a test gave a bridge, a
/// flag one part of a scope sets and another reads (a test's failure, a scope's end).
package final class LockedValue<Value: Sendable>: @unchecked Sendable {
    // @unchecked Sendable: `stored` is only read and written with `lock` held.
    private let lock = Lock()
    private var stored: Value

    package init(_ value: Value) { stored = value }

    /// The value.
    package var value: Value {
        get { lock.withLock { stored } }
        set { lock.withLock { stored = newValue } }
    }
}
