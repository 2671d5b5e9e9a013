#if canImport(Darwin)
    import Darwin
#elseif canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Android)
    import Android
#endif

/// The executor a bridge's ``MockBLEBridge/run(_:)`` scope runs the code under test on: one
/// thread of its own, jobs first in, first out, so the scope's tasks take turns in an order
/// that depends only on what they do.
///
/// Because every job of the scope passes through it, it knows when they are all waiting:
/// its queue is empty and nothing runs. ``untilIdle()`` returns at that moment, which is when
/// the bridge moves virtual time on by itself.
///
/// Once stopped, its thread gone, it hands a job that still arrives (a task of the scope
/// resumed after the scope ended: a continuation of the code's own that the stall's
/// cancellation could not end, say) to the global concurrent executor: the task then ends and
/// lets go of what it holds, instead of waiting for a thread that will never run it.
@available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
final class SimulationExecutor: TaskExecutor, @unchecked Sendable {
    // @unchecked Sendable: `queue`, `idleWaiters`, `stopped`, `ended` and `poked` are only
    // read and written with `condition` held; continuations are resumed, and jobs run,
    // after it is released. `thread` is written once before the thread starts and read after
    // it stops.

    private let condition = Condition()
    private var queue: [UnownedJob] = []
    private var queueHead = 0
    private var idleWaiters: [CheckedContinuation<Void, Never>] = []
    /// Waiters that also return once the executor has run this many jobs in all, idle or not.
    private var boundedIdleWaiters: [(continuation: CheckedContinuation<Void, Never>, jobs: UInt64)] = []
    /// The jobs run so far.
    private var jobsRun: UInt64 = 0
    private var stopped = false
    /// The thread has returned: nothing will run what is queued here any more.
    private var ended = false
    /// Outside activity arrived since ``waitForOutsideWork(timeout:)`` last looked.
    private var poked = false
    private var thread: pthread_t?

    /// Starts the executor's thread.
    init() {
        let box = Unmanaged.passRetained(ThreadStart(executor: self))
        var handle = pthread_t()
        let result = pthread_create(
            &handle, nil,
            { argument in
                #if canImport(Darwin)
                    let start = Unmanaged<ThreadStart>.fromOpaque(argument).takeRetainedValue()
                #else
                    let start = Unmanaged<ThreadStart>.fromOpaque(argument!).takeRetainedValue()
                #endif
                start.executor?.runLoop()
                return nil
            }, box.toOpaque())
        precondition(result == 0, "BLEMockKit: could not start the simulation thread (\(result))")
        thread = handle
    }

    /// Stops the thread and waits for it to end (unless called from a job of its own, which
    /// ends the thread once it returns). Jobs still queued (a task of the scope that never
    /// stops) go to the global executor, as jobs enqueued later do.
    func stop() {
        condition.withLock {
            stopped = true
            condition.signal()
        }
        if let thread {
            // Stopped from a job of its own (the caller's task went on, in line, on this
            // thread): the thread ends once that job returns, and cannot wait for itself.
            if pthread_equal(thread, pthread_self()) != 0 {
                pthread_detach(thread)
            } else {
                pthread_join(thread, nil)
            }
        }
        thread = nil
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let unowned = UnownedJob(job)
        let late = condition.withLock { () -> Bool in
            if ended { return true }
            queue.append(unowned)
            condition.signal()
            return false
        }
        if late {
            globalConcurrentExecutor.enqueue(ExecutorJob(unowned))
        }
    }

    /// Returns once the executor has nothing to run: every task of the scope is suspended.
    /// (Called from a job of this executor: the caller itself is then suspended too.)
    func untilIdle() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            condition.withLock {
                idleWaiters.append(continuation)
                condition.signal()
            }
        }
    }

    /// Returns once the executor has nothing to run, or once it has run `jobs` more jobs
    /// (a task that never waits, such as a cancelled one swallowing its `CancellationError`
    /// in a loop, would otherwise keep it busy for ever). (Called from a job of this executor.)
    func untilIdle(orAfterJobs jobs: UInt64) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            condition.withLock {
                boundedIdleWaiters.append((continuation, jobsRun &+ jobs))
                condition.signal()
            }
        }
    }

    /// Waits up to `timeout` of wall-clock time for a job to arrive from outside the scope
    /// (a task it cannot see calling in); returns whether one did.
    func waitForOutsideWork(timeout: Duration) -> Bool {
        condition.withLock {
            defer { poked = false }
            if queueHead < queue.count || poked { return true }
            condition.wait(for: timeout)
            return queueHead < queue.count || poked
        }
    }

    /// Outside activity (a callback on an app queue): wakes ``waitForOutsideWork(timeout:)``.
    func poke() {
        condition.withLock {
            poked = true
            condition.signal()
        }
    }

    /// Whether the caller runs on this executor's thread.
    var isCurrentThread: Bool {
        guard let thread else { return false }
        return pthread_equal(thread, pthread_self()) != 0
    }

    /// How many jobs the executor has started so far (read from any thread).
    var jobsStarted: UInt64 { condition.withLock { jobsRun } }

    /// Whether the executor started no job since it had started `jobs` and has none queued (read
    /// from any thread, under one lock).
    func isIdle(sinceStarting jobs: UInt64) -> Bool {
        condition.withLock { jobsRun == jobs && queueHead == queue.count }
    }

    /// Whether jobs wait to run (read from a job of this executor: others queued behind it).
    var hasQueuedJobs: Bool { condition.withLock { queueHead < queue.count } }

    private func runLoop() {
        while true {
            enum Next {
                case job(UnownedJob)
                case idle([CheckedContinuation<Void, Never>])
                case stop([UnownedJob])
            }
            let next: Next = condition.withLock {
                while true {
                    // Stopped with jobs still queued (a task of the scope that never stops):
                    // the global executor runs them from now on, as it runs later ones.
                    if stopped, queueHead < queue.count {
                        ended = true
                        defer {
                            queue.removeAll()
                            queueHead = 0
                        }
                        return .stop(Array(queue[queueHead...]))
                    }
                    if !boundedIdleWaiters.isEmpty, boundedIdleWaiters.contains(where: { $0.jobs <= jobsRun }) {
                        let due = boundedIdleWaiters.filter { $0.jobs <= jobsRun }.map(\.continuation)
                        boundedIdleWaiters.removeAll { $0.jobs <= jobsRun }
                        return .idle(due)
                    }
                    if queueHead < queue.count {
                        jobsRun &+= 1
                        let job = queue[queueHead]
                        queueHead += 1
                        if queueHead == queue.count {
                            queue.removeAll(keepingCapacity: true)
                            queueHead = 0
                        }
                        return .job(job)
                    }
                    if !idleWaiters.isEmpty || !boundedIdleWaiters.isEmpty {
                        defer {
                            idleWaiters.removeAll()
                            boundedIdleWaiters.removeAll()
                        }
                        return .idle(idleWaiters + boundedIdleWaiters.map(\.continuation))
                    }
                    if stopped {
                        ended = true
                        return .stop([])
                    }
                    condition.wait()
                }
            }
            switch next {
            case .job(let job):
                job.runSynchronously(on: asUnownedTaskExecutor())
            case .idle(let waiters):
                for waiter in waiters { waiter.resume() }
            case .stop(let left):
                for job in left { globalConcurrentExecutor.enqueue(ExecutorJob(job)) }
                return
            }
        }
    }

    /// What the new thread needs: the executor, held weakly so an abandoned executor can go.
    private final class ThreadStart {
        weak var executor: SimulationExecutor?
        init(executor: SimulationExecutor) { self.executor = executor }
    }
}
