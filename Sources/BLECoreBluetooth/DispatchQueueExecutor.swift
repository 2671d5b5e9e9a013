import Dispatch

/// A serial executor that runs jobs on a `DispatchQueue`: the queue the CoreBluetooth
/// managers deliver their delegate callbacks on.
///
/// The CoreBluetooth-backed managers use it as their actor executor, so the actor's code
/// and CoreBluetooth's callbacks run on the same serial queue: CoreBluetooth objects (which
/// are not `Sendable`) are only ever touched on that queue, and no CoreBluetooth object is
/// shared across threads. (`DispatchSerialQueue` would do the same, but it needs macOS 14 /
/// iOS 17 and does not exist in Linux's Dispatch; this type works on every platform the
/// package supports and is unit-tested on Linux.)
final class DispatchQueueExecutor: SerialExecutor {
    /// The queue jobs run on. It must be serial.
    let queue: DispatchQueue

    /// Creates an executor on a serial queue.
    init(queue: DispatchQueue) {
        self.queue = queue
    }

    /// Creates an executor on a new serial queue with a label.
    convenience init(label: String) {
        self.init(queue: DispatchQueue(label: label))
    }

    /// Runs the job on the queue, after the jobs enqueued before it.
    func enqueue(_ job: UnownedJob) {
        let executor = asUnownedSerialExecutor()
        queue.async { job.runSynchronously(on: executor) }
    }

    /// Traps unless called on the queue (used by `assumeIsolated` on recent runtimes).
    func checkIsolated() {
        dispatchPrecondition(condition: .onQueue(queue))
    }
}
