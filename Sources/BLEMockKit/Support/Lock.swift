#if canImport(Darwin)
    import Darwin
#elseif canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Android)
    import Android
#endif

/// A minimal non-recursive mutual-exclusion lock over `pthread_mutex_t`.
///
/// The kit uses it to guard the small amount of shared mutable state that must be reachable
/// synchronously (for example ``VirtualClock/now``, which an actor could not provide). It is
/// deliberately tiny: `lock`, `unlock`, and the scoped ``withLock(_:)`` that callers should
/// prefer.
///
/// Rules for callers:
/// - Never suspend (`await`) while holding the lock; the closure given to ``withLock(_:)`` is
///   synchronous, which enforces this.
/// - Never resume a continuation while holding the lock: return it from the closure and resume
///   it afterwards, so the resumed task cannot contend with (or re-enter) the lock.
/// - The lock is not recursive: taking it again on the same thread deadlocks.
///
/// The mutex lives in the tail of one heap object (a `ManagedBuffer`), so its address never
/// changes (a `pthread_mutex_t` must not be moved after initialisation, which a stored
/// property would not guarantee), and a lock costs one allocation. Copies of a `Lock` share
/// its mutex.
package struct Lock: @unchecked Sendable {
    // Why `@unchecked Sendable` is safe: the only stored property is a reference to the
    // object holding a `pthread_mutex_t` that is initialised once when it is created, destroyed
    // once when it goes, and otherwise only passed to `pthread_mutex_lock`/`pthread_mutex_unlock`,
    // which are thread-safe by definition.
    private let storage: LockStorage

    /// Creates an unlocked lock.
    package init() {
        storage = unsafeDowncast(LockStorage.create(minimumCapacity: 1) { _ in }, to: LockStorage.self)
        storage.withUnsafeMutablePointerToElements { mutex in
            mutex.initialize(to: pthread_mutex_t())
            var attributes = pthread_mutexattr_t()
            pthread_mutexattr_init(&attributes)
            #if DEBUG
                // Catch recursive locking and unlocking from the wrong thread in debug builds.
                pthread_mutexattr_settype(&attributes, Int32(PTHREAD_MUTEX_ERRORCHECK))
            #endif
            let status = pthread_mutex_init(mutex, &attributes)
            pthread_mutexattr_destroy(&attributes)
            precondition(status == 0, "pthread_mutex_init failed with \(status)")
        }
    }

    /// The mutex.
    private var mutex: UnsafeMutablePointer<pthread_mutex_t> {
        // The pointer stays valid after the closure returns: the element is tail-allocated in
        // `storage`, which this lock keeps alive.
        storage.withUnsafeMutablePointerToElements { $0 }
    }

    /// Acquires the lock, blocking the current thread until it is available.
    package func lock() {
        let status = pthread_mutex_lock(mutex)
        precondition(status == 0, "pthread_mutex_lock failed with \(status) (recursive locking?)")
    }

    /// Releases the lock. Must be called on the thread that acquired it.
    package func unlock() {
        let status = pthread_mutex_unlock(mutex)
        precondition(status == 0, "pthread_mutex_unlock failed with \(status)")
    }

    /// Runs `body` while holding the lock and returns its result.
    ///
    /// The lock is released when `body` returns or throws.
    ///
    /// - Parameter body: Synchronous work to perform under the lock. Keep it short, do not
    ///   resume continuations in it, and do not take this lock again from it.
    /// - Returns: Whatever `body` returns.
    @inline(__always)
    package func withLock<Result, Failure: Error>(
        _ body: () throws(Failure) -> Result
    ) throws(Failure) -> Result {
        lock()
        defer { unlock() }
        return try body()
    }
}

/// The heap object holding a ``Lock``'s mutex.
private final class LockStorage: ManagedBuffer<Void, pthread_mutex_t> {
    deinit {
        withUnsafeMutablePointerToElements { mutex in
            let status = pthread_mutex_destroy(mutex)
            assert(status == 0, "pthread_mutex_destroy failed with \(status); was the lock held?")
            mutex.deinitialize(count: 1)
        }
    }
}
