import BLECore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The bytes that arrived at one end of an L2CAP channel, and the reads of the end's
/// `incoming` waiting for more.
///
/// The bytes belong to the channel end, not to one iteration of it: each access to `incoming`
/// is a new stream over the inbox (``stream()``). A read whose task is cancelled returns `nil`,
/// which ends its stream, as a cancelled read of any `AsyncStream` does; the bytes that arrive
/// later wait here for the next read. Bytes handed to a read as it was being cancelled are that
/// read's: none is lost. Once the channel closes (``finish()``), reads get the bytes still held,
/// then `nil`.
///
/// A read that waits is named in a run's stall report (``waitingSince``, ``name``) and watched
/// as a quiet wait outside runs, as a read of a manager's events is.
final class ChannelInbox: @unchecked Sendable {
    // @unchecked Sendable: every stored `var` is read and written with `lock` held;
    // continuations are resumed after the lock is released.

    /// A read waiting for bytes.
    private struct Read {
        let token: Int
        let continuation: CheckedContinuation<Data?, Never>
        /// When it started waiting, in the simulation's time.
        let since: VirtualClock.Instant
        /// The clock's token for the wait, while it is watched (outside runs: see `QuietWaits`).
        var quietWait: Int?
    }

    /// The channel's link (for stall reports).
    let link: LinkKey
    /// What waits, as a stall report names it.
    let name: String
    private let clock: VirtualClock
    /// What a read that waits is, as a quiet wait names it (made once: a channel may be read
    /// chunk by chunk many times a second).
    private let wait: QuietWaits.Wait
    private let lock = Lock()
    // (`@exclusivity(unchecked)`: the lock already keeps accesses apart.)
    @exclusivity(unchecked) private var bytes = FIFO<Data>()
    /// The reads waiting, oldest first (a channel is meant for one reader: usually one).
    @exclusivity(unchecked) private var reads: [Read] = []
    @exclusivity(unchecked) private var nextToken = 0
    @exclusivity(unchecked) private var isFinished = false

    init(channel: UInt64, link: LinkKey, end: L2CAPChannelRecord.End, clock: VirtualClock) {
        self.link = link
        self.clock = clock
        let bytes =
            "the incoming bytes of L2CAP channel #\(channel) at the \(end == .central ? "central" : "peripheral")"
        wait = .operation(bytes, needs: "bytes sent from the other end, or the channel closing")
        name = "reading " + bytes
    }

    /// Since when the oldest read waiting has waited, if one does.
    var waitingSince: VirtualClock.Instant? { lock.withLock { reads.first?.since } }

    /// A stream of the bytes not yet read, in order: those held first, then those that arrive.
    func stream() -> AsyncStream<Data> {
        AsyncStream(unfolding: { [self] in await next() })
    }

    /// Hands `data` to the oldest read waiting, or holds it for the next read.
    func deliver(_ data: Data) {
        let read: Read? = lock.withLock {
            guard !isFinished else { return nil }
            guard !reads.isEmpty else {
                bytes.append(data)
                return nil
            }
            return reads.removeFirst()
        }
        guard let read else { return }
        clock.endQuietWait(read.quietWait)
        read.continuation.resume(returning: data)
    }

    /// The channel closed: the reads waiting end, and later reads get the bytes still held,
    /// then `nil`.
    func finish() {
        let waiting: [Read] = lock.withLock {
            isFinished = true
            defer { reads.removeAll() }
            return reads
        }
        for read in waiting {
            clock.endQuietWait(read.quietWait)
            read.continuation.resume(returning: nil)
        }
    }

    /// The next bytes; `nil` once the channel closed and its bytes were read, or when the
    /// calling task is cancelled while it waits.
    private func next() async -> Data? {
        // Bytes already held are handed over without suspending.
        if case .some(let ready) = lock.withLock({ takeReady() }) { return ready }
        let token = lock.withLock {
            defer { nextToken += 1 }
            return nextToken
        }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Data?, Never>) in
                let immediate: Data?? = lock.withLock {
                    if let ready = takeReady() { return ready }
                    // (A cancellation before this point found no read to end: it ends here.)
                    if Task.isCancelled { return .some(nil) }
                    reads.append(Read(token: token, continuation: continuation, since: clock.now))
                    return .none
                }
                if case .some(let data) = immediate {
                    continuation.resume(returning: data)
                } else {
                    watchQuietWait(of: token)
                }
            }
        } onCancel: {
            cancelRead(token)
        }
    }

    /// What a read gets at once (called with `lock` held): the oldest bytes held, or the end
    /// (`.some(nil)`); `nil` when it has to wait.
    private func takeReady() -> Data?? {
        if let data = bytes.popFirst() { return .some(data) }
        return isFinished ? .some(nil) : .none
    }

    /// Outside runs nothing may end the wait of read `token` that just began: the clock watches
    /// it, and reports it should it stand still. The token is kept with the read, unless the
    /// read has ended already (then the watch ends).
    private func watchQuietWait(of token: Int) {
        guard let quietWait = clock.beginQuietWait(wait) else { return }
        let kept = lock.withLock { () -> Bool in
            guard let index = reads.firstIndex(where: { $0.token == token }) else { return false }
            reads[index].quietWait = quietWait
            return true
        }
        if !kept { clock.endQuietWait(quietWait) }
    }

    /// The task of read `token` was cancelled: the read ends with `nil` (if it still waits),
    /// and takes nothing.
    private func cancelRead(_ token: Int) {
        let read: Read? = lock.withLock {
            guard let index = reads.firstIndex(where: { $0.token == token }) else { return nil }
            return reads.remove(at: index)
        }
        guard let read else { return }
        clock.endQuietWait(read.quietWait)
        read.continuation.resume(returning: nil)
    }
}
