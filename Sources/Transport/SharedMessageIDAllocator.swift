#if canImport(Darwin)
    import Darwin
#elseif canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// A ``MessageIDAllocator`` that several tasks or threads sending on one link can share.
///
/// Every call takes a small `pthread_mutex_t` lock around the wrapped allocator, so the
/// ids it hands out are unique across all callers exactly as a single allocator's are.
///
/// ```swift
/// let ids = SharedMessageIDAllocator()   // one per link direction
/// let id = try ids.allocate()
/// defer { ids.release(id) }
/// ```
public final class SharedMessageIDAllocator: @unchecked Sendable {
    // @unchecked Sendable: `allocator` is only read or written while `mutex` is held, and
    // `mutex` itself is allocated once, never moved, and destroyed only in deinit.
    private var allocator: MessageIDAllocator
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>

    /// Creates a shared allocator whose first id is `firstID`.
    ///
    /// - Parameter firstID: The first id to hand out. Defaults to 0.
    public init(firstID: UInt16 = 0) {
        allocator = MessageIDAllocator(firstID: firstID)
        mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deinitialize(count: 1)
        mutex.deallocate()
    }

    /// Allocates the next id that is not in use.
    ///
    /// - Throws: ``TransportError/messageIDsExhausted(inUse:)`` when all 65,536 ids are
    ///   in use.
    public func allocate() throws(TransportError) -> UInt16 {
        try withLock { (allocator) throws(TransportError) in try allocator.allocate() }
    }

    /// Returns `id` to the pool. Releasing an id that is not in use does nothing.
    public func release(_ id: UInt16) {
        withLock { $0.release(id) }
    }

    /// Whether `id` is allocated and not yet released.
    public func isInUse(_ id: UInt16) -> Bool {
        withLock { $0.isInUse(id) }
    }

    /// How many ids are allocated and not yet released.
    public var inUseCount: Int {
        withLock { $0.inUseCount }
    }

    private func withLock<Result, Failure: Error>(
        _ body: (inout MessageIDAllocator) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&allocator)
    }
}
