import Testing

@testable import BLECoreBluetooth

/// Starts a task waiting on `key` and returns once its request was issued (its `start` ran),
/// so the test can answer it without sleeping.
private func startWaiting<Key, Value>(_ pending: PendingOperations<Key, Value>, for key: Key) async -> Task<
    Value, any Error
> {
    let (started, signal) = AsyncStream.makeStream(of: Void.self)
    let task = Task { try await pending.wait(for: key) { signal.yield() } }
    for await _ in started { break }
    return task
}

private struct LinkDropped: Error, Equatable {}

@Suite("PendingOperations", .timeLimit(.minutes(10)))
struct PendingOperationsTests {
    @Test("A result resumes the call that waits for its key")
    func resultResumesTheWaiter() async throws {
        let pending = PendingOperations<String, Int>()
        let waiter = await startWaiting(pending, for: "read")
        #expect(pending.isWaiting(for: "read"))
        #expect(pending.resume("read", with: .success(42)))
        #expect(try await waiter.value == 42)
        #expect(pending.count == 0)
    }

    @Test("A second answer for the same request finds nothing to resume")
    func secondAnswerIsIgnored() async throws {
        let pending = PendingOperations<String, Int>()
        let waiter = await startWaiting(pending, for: "read")
        #expect(pending.resume("read", with: .success(1)))
        #expect(!pending.resume("read", with: .success(2)))
        #expect(!pending.resume("read", with: .failure(LinkDropped())))
        #expect(try await waiter.value == 1)
    }

    @Test("An answer nobody waits for is reported as unsolicited")
    func unsolicitedAnswer() {
        let pending = PendingOperations<String, Int>()
        #expect(!pending.resume("read", with: .success(1)))
        #expect(pending.count == 0)
    }

    @Test("Waiters of one key are answered in the order they asked")
    func waitersOfOneKeyAreFIFO() async throws {
        let pending = PendingOperations<String, Int>()
        let first = await startWaiting(pending, for: "write")
        let second = await startWaiting(pending, for: "write")
        pending.resume("write", with: .success(1))
        pending.resume("write", with: .success(2))
        #expect(try await first.value == 1)
        #expect(try await second.value == 2)
    }

    @Test("An error answer fails only the waiter it belongs to")
    func errorAnswerFailsOneWaiter() async throws {
        let pending = PendingOperations<String, Int>()
        let failing = await startWaiting(pending, for: "a")
        let other = await startWaiting(pending, for: "b")
        pending.resume("a", with: .failure(LinkDropped()))
        await #expect(throws: LinkDropped.self) { try await failing.value }
        #expect(pending.isWaiting(for: "b"))
        pending.resume("b", with: .success(7))
        #expect(try await other.value == 7)
    }

    @Test("A link drop fails every call on that link with its error and leaves the others waiting")
    func linkDropFailsThatLinkOnly() async throws {
        let pending = PendingOperations<CentralOperation, Int>()
        let dropped = UUIDs.first, kept = UUIDs.second
        let read = await startWaiting(pending, for: .readCharacteristic(peripheral: dropped, characteristic: 3))
        let rssi = await startWaiting(pending, for: .readRSSI(peripheral: dropped))
        let survivor = await startWaiting(pending, for: .readRSSI(peripheral: kept))
        let failed = pending.failAll(where: { $0.peripheral == dropped }, with: LinkDropped())
        #expect(failed == 2)
        await #expect(throws: LinkDropped.self) { try await read.value }
        await #expect(throws: LinkDropped.self) { try await rssi.value }
        #expect(pending.isWaiting(for: .readRSSI(peripheral: kept)))
        pending.resume(.readRSSI(peripheral: kept), with: .success(-60))
        #expect(try await survivor.value == -60)
    }

    @Test("Powering off fails every waiter, and a late answer afterwards resumes nothing")
    func failAllThenLateAnswer() async throws {
        let pending = PendingOperations<String, Int>()
        let waiters = [
            await startWaiting(pending, for: "a"), await startWaiting(pending, for: "a"),
            await startWaiting(pending, for: "b"),
        ]
        #expect(pending.failAll(with: LinkDropped()) == 3)
        for waiter in waiters { await #expect(throws: LinkDropped.self) { try await waiter.value } }
        #expect(!pending.resume("a", with: .success(1)))
        #expect(pending.count == 0)
    }

    @Test("Cancelling a waiting task ends its call with CancellationError at once")
    func cancellationResumesWithCancellationError() async throws {
        let pending = PendingOperations<String, Int>()
        let waiter = await startWaiting(pending, for: "read")
        waiter.cancel()
        await #expect(throws: CancellationError.self) { try await waiter.value }
        #expect(!pending.isWaiting(for: "read"))
    }

    @Test("The answer to a cancelled call is absorbed instead of reaching the next caller")
    func cancelledCallAbsorbsItsAnswer() async throws {
        let pending = PendingOperations<String, Int>()
        let cancelled = await startWaiting(pending, for: "read")
        cancelled.cancel()
        await #expect(throws: CancellationError.self) { try await cancelled.value }
        let next = await startWaiting(pending, for: "read")
        #expect(pending.count == 2)
        #expect(pending.resume("read", with: .success(1)))  // the cancelled call's answer
        #expect(pending.isWaiting(for: "read"))
        pending.resume("read", with: .success(2))
        #expect(try await next.value == 2)
        #expect(pending.count == 0)
    }

    @Test("A task cancelled before it waits does not issue its request")
    func cancelledBeforeWaitingDoesNotStart() async throws {
        let pending = PendingOperations<String, Int>()
        let started = Counter()
        let task = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await pending.wait(for: "read") { started.increment() }
        }
        await #expect(throws: CancellationError.self) { try await task.value }
        #expect(started.value == 0)
        #expect(pending.count == 0)
    }

    @Test("Cancelling after the answer arrived changes nothing")
    func cancellationAfterAnswerIsHarmless() async throws {
        let pending = PendingOperations<String, Int>()
        let waiter = await startWaiting(pending, for: "read")
        pending.resume("read", with: .success(5))
        #expect(try await waiter.value == 5)
        waiter.cancel()
        #expect(pending.count == 0)
    }
}

@Suite("PendingOperations.resumeAll", .timeLimit(.minutes(10)))
struct PendingOperationsResumeAllTests {
    @Test("One connection answer completes every call waiting to connect to that peripheral")
    func resumeAllCompletesEveryWaiter() async throws {
        let pending = PendingOperations<CentralOperation, Void>()
        let key = CentralOperation.connect(peripheral: UUIDs.first)
        let first = await startWaiting(pending, for: key)
        let second = await startWaiting(pending, for: key)
        let other = await startWaiting(pending, for: .connect(peripheral: UUIDs.second))
        #expect(pending.resumeAll(key, with: .failure(LinkDropped())) == 2)
        await #expect(throws: LinkDropped.self) { try await first.value }
        await #expect(throws: LinkDropped.self) { try await second.value }
        #expect(pending.resumeAll(key, with: .success(())) == 0)
        pending.resumeAll(.connect(peripheral: UUIDs.second), with: .success(()))
        try await other.value
        #expect(pending.count == 0)
    }

    @Test("Waiting keys list exactly the keys with a request waiting")
    func waitingKeysListTheWaitingRequests() async throws {
        let pending = PendingOperations<String, Int>()
        #expect(pending.waitingKeys.isEmpty)
        let first = await startWaiting(pending, for: "open 0x0080")
        let second = await startWaiting(pending, for: "open 0x0081")
        #expect(Set(pending.waitingKeys) == ["open 0x0080", "open 0x0081"])
        #expect(pending.resume("open 0x0080", with: .success(1)))
        #expect(pending.waitingKeys == ["open 0x0081"])
        #expect(pending.resume("open 0x0081", with: .success(2)))
        #expect(try await first.value == 1)
        #expect(try await second.value == 2)
        #expect(pending.waitingKeys.isEmpty)
    }
}
