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

    @Test("Locks of a group are separate mutexes: holding one does not hold another, and each guards its own count")
    func groupLocksAreSeparate() async {
        let group = LockGroup(count: 3)
        #expect(group.count == 3)
        // Nested on one thread: a second lock of the group is free while the first is held
        // (the same lock taken twice would trap in debug builds, which check recursion).
        let nested = group[0].withLock { group[1].withLock { group[2].withLock { "all three" } } }
        #expect(nested == "all three")
        let counts = [Count(), Count(), Count()]
        await withTaskGroup(of: Void.self) { tasks in
            for task in 0..<9 {
                let index = task % 3
                // Each task takes its lock through its own copy of the group's lock.
                let lock = group[index]
                tasks.addTask {
                    for _ in 0..<2_000 { lock.withLock { counts[index].value += 1 } }
                }
            }
        }
        for index in 0..<3 {
            #expect(group[index].withLock { counts[index].value } == 6_000)
        }
    }

    @Test("A group's lock taken through two subscripts is one mutex")
    func groupSubscriptsShareMutex() async {
        let group = LockGroup(count: 2)
        let count = Count()
        await withTaskGroup(of: Void.self) { tasks in
            for _ in 0..<6 {
                tasks.addTask {
                    for _ in 0..<3_000 { group[1].withLock { count.value += 1 } }
                }
            }
        }
        #expect(group[1].withLock { count.value } == 18_000)
    }
}
