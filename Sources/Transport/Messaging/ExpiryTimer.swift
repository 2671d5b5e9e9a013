import BLECore

/// The one timer a message channel keeps on its clock to expire partial messages when no
/// further packet arrives to trigger the ``Reassembler``'s own expiry.
///
/// A value the channel actor owns: ``schedule(for:on:fire:)`` starts (or keeps, or
/// replaces) a task that sleeps on the clock until the deadline and then calls `fire`
/// with a token; the actor passes the token to ``fired(_:)``, which accepts only the
/// current timer's token, so a timer that was replaced or cancelled while waking does
/// nothing.
struct ExpiryTimer<C: Clock>: Sendable where C.Duration == Swift.Duration {
    /// The pending timer's task, if any.
    private(set) var task: Task<Void, Never>?
    private var deadline: C.Instant?
    private var token: UInt64 = 0

    /// Whether a timer is pending.
    var isPending: Bool { task != nil }

    /// Makes the timer fire at `next`, or stops it when `next` is `nil`.
    ///
    /// A pending timer due at or before `next` is kept: the channel re-arms the timer
    /// after every firing, so an early firing costs one check and nothing is missed.
    mutating func schedule(
        for next: C.Instant?, on clock: C, fire: @escaping @Sendable (UInt64) async -> Void
    ) {
        guard let next else {
            cancel()
            return
        }
        if task != nil, let deadline, deadline <= next { return }
        cancel()
        let token = self.token
        deadline = next
        // The task lets go of the clock (and whatever it keeps alive) before it ends.
        task = HelperTask.start(holding: clock) { clock in
            do {
                try await clock.sleep(until: next, tolerance: nil)
            } catch {
                return
            }
            await fire(token)
        }
    }

    /// Whether `token` belongs to the pending timer; if so, the timer is no longer pending.
    mutating func fired(_ token: UInt64) -> Bool {
        guard task != nil, token == self.token else { return false }
        task = nil
        deadline = nil
        self.token &+= 1
        return true
    }

    /// Stops the pending timer, if any.
    mutating func cancel() {
        task?.cancel()
        task = nil
        deadline = nil
        token &+= 1
    }
}
