import Testing

@testable import BLEMockKit

@Suite("Lock", .timeLimit(.minutes(10)))
struct LockTests {
    /// A count only ever changed under a lock.
    final class Count: @unchecked Sendable {
        // @unchecked Sendable: `value` is only read and written with the test's lock held.
        var value = 0
    }

    struct Refused: Error, Equatable {}

    @Test("Increments from many tasks under the lock, through copies of it, are all kept")
    func copiesShareOneMutex() async {
        let lock = Lock()
        let copy = lock
        let count = Count()
        await withTaskGroup(of: Void.self) { group in
            for task in 0..<8 {
                // Half the tasks take the lock through a copy: a copy is the same mutex.
                let taken = task.isMultiple(of: 2) ? lock : copy
                group.addTask {
                    for _ in 0..<5_000 { taken.withLock { count.value += 1 } }
                }
            }
        }
        #expect(lock.withLock { count.value } == 40_000)
    }

    @Test("withLock returns the body's value, and a body that throws releases the lock with its error")
    func withLockReturnsAndRethrows() {
        let lock = Lock()
        #expect(lock.withLock { 42 } == 42)
        #expect(throws: Refused()) { try lock.withLock { () throws(Refused) -> Int in throw Refused() } }
        // Released after the throw: taking it again does not block.
        #expect(lock.withLock { "again" } == "again")
        lock.lock()
        lock.unlock()
    }
}
