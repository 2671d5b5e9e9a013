import BLEMockKit

/// Objects held weakly, each once, in the order they were added; safe from any thread. (The
/// managers on a bridge, the simulations of a spec: what the front end must reach without
/// keeping alive.)
final class WeakList<Element: AnyObject>: @unchecked Sendable {
    // @unchecked Sendable: `entries` is only read and written with `lock` held.
    private struct Weak { weak var object: Element? }
    private let lock = Lock()
    private var entries: [Weak] = []

    /// Adds `object` unless it is there already (and forgets those released since).
    func add(_ object: Element) {
        lock.withLock {
            entries.removeAll { $0.object == nil }
            if !entries.contains(where: { $0.object === object }) { entries.append(Weak(object: object)) }
        }
    }

    /// The objects still alive, oldest first.
    var all: [Element] { lock.withLock { entries.compactMap(\.object) } }
}

/// One object held weakly, for the closures the bridge keeps (an operation's completion):
/// capturing the holder costs a retain, where capturing the object weakly makes a weak reference
/// for each closure and destroys it with the closure.
final class WeakHolder<Object: AnyObject>: @unchecked Sendable {
    // @unchecked Sendable: `object` is set once, before the holder is handed to anything, and
    // only read after (a weak load is safe from any thread).
    weak var object: Object?
}
