import Dispatch
import Testing

@testable import BLECoreBluetooth

/// An actor whose executor is a dispatch queue, as the CoreBluetooth-backed managers are.
private actor QueueBound {
    let executor: DispatchQueueExecutor
    private(set) var log: [Int] = []

    nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }

    init(queue: DispatchQueue) {
        executor = DispatchQueueExecutor(queue: queue)
    }

    func append(_ value: Int) {
        dispatchPrecondition(condition: .onQueue(executor.queue))
        log.append(value)
    }
}

@Suite("DispatchQueueExecutor", .timeLimit(.minutes(10)))
struct DispatchQueueExecutorTests {
    @Test("An actor on the executor runs its code on the queue")
    func actorRunsOnTheQueue() async {
        let actor = QueueBound(queue: DispatchQueue(label: "executor"))
        for value in 0..<50 { await actor.append(value) }
        #expect(await actor.log == Array(0..<50))
    }

    @Test("Work already queued on the queue runs before the actor's next job")
    func queueOrderIsShared() async {
        let queue = DispatchQueue(label: "shared")
        let actor = QueueBound(queue: queue)
        let gate = DispatchSemaphore(value: 0)
        let ran = Counter()
        queue.async {
            gate.wait()
            ran.increment()
        }
        let job = Task { await actor.append(1) }
        gate.signal()
        await job.value
        #expect(ran.value == 1)
        #expect(await actor.log == [1])
    }

    @Test("The executor recognises its own queue")
    func checkIsolatedOnTheQueue() {
        let executor = DispatchQueueExecutor(label: "check")
        executor.queue.sync { executor.checkIsolated() }
    }
}
