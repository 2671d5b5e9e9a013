import Foundation

/// A task executor that runs every job on one dedicated thread, first in, first out.
///
/// Tests that assert the exact order in which woken tasks run use it: with a single FIFO
/// thread, a task resumed by ``BLEMockKit/VirtualClock`` runs before the yield that follows
/// its resumption, so the order of effects equals the order of resumptions. Each test makes
/// its own executor, so tests stay parallel-safe. Call ``shutdown()`` when done.
@available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, *)
final class SerialTaskExecutor: TaskExecutor, @unchecked Sendable {
    // Why `@unchecked Sendable` is safe: `jobs` and `isStopping` are read and written only
    // while `condition` is locked; `condition` itself is thread-safe. Jobs are run on the
    // executor's own thread, outside the lock.
    private let condition = NSCondition()
    private var jobs: [UnownedJob] = []
    private var head = 0
    private var isStopping = false

    /// Starts the executor's thread.
    init() {
        let thread = Thread { [self] in runJobs() }
        thread.name = "SerialTaskExecutor"
        thread.start()
    }

    /// Queues a job to run after every job queued before it.
    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        condition.lock()
        jobs.append(job)
        condition.signal()
        condition.unlock()
    }

    /// Lets the thread finish the queued jobs and exit.
    func shutdown() {
        condition.lock()
        isStopping = true
        condition.signal()
        condition.unlock()
    }

    private func runJobs() {
        while let job = nextJob() {
            job.runSynchronously(on: asUnownedTaskExecutor())
        }
    }

    private func nextJob() -> UnownedJob? {
        condition.lock()
        defer { condition.unlock() }
        while head == jobs.count, !isStopping {
            condition.wait()
        }
        guard head < jobs.count else { return nil }
        let job = jobs[head]
        head += 1
        if head == jobs.count {
            jobs.removeAll(keepingCapacity: true)
            head = 0
        }
        return job
    }
}
