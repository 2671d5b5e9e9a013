#if canImport(Darwin)
    import Darwin
#elseif canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// A small non-recursive lock over `pthread_mutex_t`, for the few pieces of state the
/// adapter must reach synchronously from CoreBluetooth's queue and from actors alike.
///
/// Callers never suspend while holding it (``withLock(_:)`` takes a synchronous closure) and
/// never resume a continuation inside it: they return the continuation from the closure and
/// resume it after the lock is released, so a resumed task can never contend with the lock.
final class Lock: @unchecked Sendable {
    // @unchecked Sendable: the only stored property is a pointer fixed at init to a mutex that
    // is only ever used through pthread_mutex_lock/unlock, which are thread-safe. The mutex is
    // heap-allocated so its address never moves, as pthread requires.
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>

    /// Creates an unlocked lock.
    init() {
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        let status = pthread_mutex_init(mutex, nil)
        precondition(status == 0, "pthread_mutex_init failed with \(status)")
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deinitialize(count: 1)
        mutex.deallocate()
    }

    /// Runs `body` while holding the lock and returns its result.
    func withLock<Result>(_ body: () throws -> Result) rethrows -> Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body()
    }
}
