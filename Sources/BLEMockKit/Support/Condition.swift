import BLECore

#if canImport(Darwin)
    import Darwin
#elseif canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Android)
    import Android
#endif

/// A mutex with a condition variable, over `pthread_mutex_t` and `pthread_cond_t`: the
/// simulation executor's thread sleeps on it while it has nothing to run.
///
/// Same rules as ``Lock``: never suspend or resume a continuation while holding it, and do
/// not take it twice on one thread.
final class Condition: @unchecked Sendable {
    // Why `@unchecked Sendable` is safe: the two pointers are set once in `init`, released
    // once in `deinit`, and otherwise only passed to the thread-safe pthread calls.
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private let variable: UnsafeMutablePointer<pthread_cond_t>

    init() {
        mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        variable = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
        variable.initialize(to: pthread_cond_t())
        precondition(pthread_mutex_init(mutex, nil) == 0, "pthread_mutex_init failed")
        precondition(pthread_cond_init(variable, nil) == 0, "pthread_cond_init failed")
    }

    deinit {
        pthread_cond_destroy(variable)
        pthread_mutex_destroy(mutex)
        variable.deinitialize(count: 1)
        variable.deallocate()
        mutex.deinitialize(count: 1)
        mutex.deallocate()
    }

    /// Runs `body` holding the mutex.
    @inline(__always)
    func withLock<Result, Failure: Error>(_ body: () throws(Failure) -> Result) throws(Failure) -> Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body()
    }

    /// Wakes one thread waiting on the condition. Call it holding the mutex.
    func signal() {
        pthread_cond_signal(variable)
    }

    /// Releases the mutex until signalled (or woken spuriously), then takes it again. Call it
    /// holding the mutex, in a loop that checks what it waits for.
    func wait() {
        pthread_cond_wait(variable, mutex)
    }

    /// Like ``wait()``, giving up after `timeout` of wall-clock time. A deadline past what a
    /// `timespec` holds (a timeout of `Int64.max` seconds, as a run's stall patience may be) is
    /// taken as the latest one it holds: the wait is in effect unbounded, rather than trapping.
    func wait(for timeout: Duration) {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        let (seconds, attoseconds) = timeout.saturatingComponents
        var nanoseconds = Int(now.tv_nsec) + Int(attoseconds / 1_000_000_000)
        var deadline = timespec()
        let (whole, overflow) = now.tv_sec.addingReportingOverflow(Int(seconds))
        let (sum, carryOverflow) = whole.addingReportingOverflow(nanoseconds / 1_000_000_000)
        deadline.tv_sec = overflow || carryOverflow ? .max : sum
        nanoseconds %= 1_000_000_000
        deadline.tv_nsec = numericCast(nanoseconds)
        pthread_cond_timedwait(variable, mutex, &deadline)
    }
}
