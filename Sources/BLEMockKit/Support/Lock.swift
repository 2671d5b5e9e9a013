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
/// The mutex lives in the tail of a heap object (a `ManagedBuffer`), so its address never
/// changes (a `pthread_mutex_t` must not be moved after initialisation, which a stored
/// property would not guarantee). A lock made alone costs one allocation; a ``LockGroup``
/// holds several locks in one. Copies of a `Lock` share its mutex.
package struct Lock: @unchecked Sendable {
    // Why `@unchecked Sendable` is safe: the stored properties are a reference to the object
    // holding the `pthread_mutex_t`s, initialised once when it is created, destroyed once when
    // it goes, and otherwise only passed to `pthread_mutex_lock`/`pthread_mutex_unlock`, which
    // are thread-safe by definition, and the immutable index of this lock's mutex there.
    private let storage: LockStorage
    private let index: Int

    /// Creates an unlocked lock.
    package init() {
        self.init(storage: LockStorage.make(count: 1), index: 0)
    }

    fileprivate init(storage: LockStorage, index: Int) {
        self.storage = storage
        self.index = index
    }

    /// The mutex.
    private var mutex: UnsafeMutablePointer<pthread_mutex_t> {
        // The pointer stays valid after the closure returns: the element is tail-allocated in
        // `storage`, which this lock keeps alive.
        storage.withUnsafeMutablePointerToElements { $0 } + index
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

/// Locks that share one allocation: each is a mutex of its own (taking one never waits for
/// another), for an object that makes several lock-guarded parts at once (a bridge makes
/// nine), where a lock each would cost an allocation each.
package struct LockGroup: @unchecked Sendable {
    // @unchecked Sendable: as ``Lock``'s; the group only hands out locks.
    private let storage: LockStorage

    /// Creates `count` unlocked locks.
    package init(count: Int) {
        precondition(count > 0, "a lock group needs at least one lock")
        storage = LockStorage.make(count: count)
    }

    /// How many locks the group holds.
    package var count: Int { storage.header }

    /// The lock at `index` (`0..<count`).
    package subscript(index: Int) -> Lock {
        precondition((0..<count).contains(index), "lock \(index) is outside the group's 0..<\(count)")
        return Lock(storage: storage, index: index)
    }
}

/// The heap object holding the mutexes of a ``Lock`` or a ``LockGroup``; its header is how
/// many.
private final class LockStorage: ManagedBuffer<Int, pthread_mutex_t> {
    static func make(count: Int) -> LockStorage {
        let storage = unsafeDowncast(create(minimumCapacity: count) { _ in count }, to: LockStorage.self)
        storage.withUnsafeMutablePointerToElements { mutexes in
            var attributes = pthread_mutexattr_t()
            pthread_mutexattr_init(&attributes)
            #if DEBUG
                // Catch recursive locking and unlocking from the wrong thread in debug builds.
                pthread_mutexattr_settype(&attributes, Int32(PTHREAD_MUTEX_ERRORCHECK))
            #endif
            for index in 0..<count {
                (mutexes + index).initialize(to: pthread_mutex_t())
                let status = pthread_mutex_init(mutexes + index, &attributes)
                precondition(status == 0, "pthread_mutex_init failed with \(status)")
            }
            pthread_mutexattr_destroy(&attributes)
        }
        return storage
    }

    deinit {
        withUnsafeMutablePointers { count, mutexes in
            for index in 0..<count.pointee {
                let status = pthread_mutex_destroy(mutexes + index)
                assert(status == 0, "pthread_mutex_destroy failed with \(status); was the lock held?")
            }
            mutexes.deinitialize(count: count.pointee)
        }
    }
}
