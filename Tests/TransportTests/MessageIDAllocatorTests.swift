import Testing
import Transport

@Suite("Message id allocators", .timeLimit(.minutes(10)))
struct MessageIDAllocatorTests {
    @Test("Ids are handed out sequentially and wrap from 65,535 to 0")
    func sequentialAndWrapping() throws {
        var ids = MessageIDAllocator(firstID: 65_534)
        #expect(try ids.allocate() == 65_534)
        #expect(try ids.allocate() == 65_535)
        #expect(try ids.allocate() == 0)
        #expect(try ids.allocate() == 1)
        #expect(ids.inUseCount == 4)
    }

    @Test("An id still in use is skipped after wrapping")
    func skipsIdsInUse() throws {
        var ids = MessageIDAllocator()
        let first = try ids.allocate()
        #expect(first == 0)
        for _ in 1..<65_536 {
            ids.release(try ids.allocate())
        }
        #expect(ids.nextID == 0)
        #expect(ids.isInUse(0))
        #expect(try ids.allocate() == 1)
    }

    @Test("All 65,536 ids in use is the exact exhaustion error, and a released id comes back")
    func exhaustion() throws {
        var ids = MessageIDAllocator()
        var seen = Set<UInt16>()
        for _ in 0..<65_536 {
            seen.insert(try ids.allocate())
        }
        #expect(seen.count == 65_536)
        #expect(throws: TransportError.messageIDsExhausted(inUse: 65_536)) { try ids.allocate() }
        ids.release(4_242)
        ids.release(4_242)
        #expect(ids.inUseCount == 65_535)
        #expect(try ids.allocate() == 4_242)
    }

    @Test("A shared allocator never hands the same id to concurrent senders")
    func sharedAllocatorIsUniqueUnderConcurrency() async throws {
        let ids = SharedMessageIDAllocator(firstID: 65_000)
        let batches = try await withThrowingTaskGroup(of: [UInt16].self) { group in
            for _ in 0..<4 {
                group.addTask {
                    var mine: [UInt16] = []
                    for _ in 0..<2_000 { mine.append(try ids.allocate()) }
                    return mine
                }
            }
            return try await group.reduce(into: []) { $0 += $1 }
        }
        #expect(Set(batches).count == 8_000)
        #expect(ids.inUseCount == 8_000)
        ids.release(batches[0])
        #expect(!ids.isInUse(batches[0]))
        #expect(ids.inUseCount == 7_999)
    }
}
