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
