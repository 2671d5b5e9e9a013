extension VirtualClock {
    /// Moves the clock forward by `duration`, waking every sleeper that falls due.
    ///
    /// Equivalent to `advance(to: now.advanced(by: duration))`. A negative duration does
    /// nothing to ``now`` and wakes nobody. On a bridge's clock this is the bridge's
    /// ``MockBLEBridge/advance(by:)``: it runs everything on the bridge's schedule due by then.
    public func advance(by duration: Duration) async {
        if isBridged {
            await bridge?.advance(by: duration)
            return
        }
        let target = lock.withLock { schedule.now.advanced(by: duration) }
        await advance(to: target)
    }

    /// Moves the clock forward to `target`, waking every sleeper whose deadline is at or
    /// before it, in (deadline, sequence) order, with ``now`` set to each one's deadline as it
    /// wakes; then ``now`` lands exactly on `target`.
    ///
    /// Inside ``run(timeLimit:stallPatience:_:)`` the run's driver does the waking, letting
    /// each woken task run before the next, and this call returns when time reaches
    /// `target`: a task that sleeps in a loop wakes every time its deadline falls by then.
    /// Outside a run the sleepers due wake here, and run after this call returns.
    ///
    /// If `target` is before ``now``, ``now`` is left unchanged and nobody wakes: time never
    /// goes backwards. Cancelling the calling task inside a run returns at once, wherever the
    /// driver has got to.
    ///
    /// On a bridge's clock this is the bridge's ``MockBLEBridge/advance(to:)``: it runs
    /// everything on the bridge's schedule due by `target` (link events, faults, sleepers).
    public func advance(to target: Instant) async {
        if isBridged {
            await bridge?.advance(to: target)
            return
        }
        let waiting: (AdvanceWaiters, Int)? = lock.withLock {
            guard driving, target > schedule.now else { return nil }
            let waiters = advanceWaiters ?? AdvanceWaiters()
            advanceWaiters = waiters
            return (waiters, waiters.add(target))
        }
        if let (waiters, token) = waiting {
            // The run's driver resumes it at `target`; cancelling the caller resumes it at once
            // (and the driver no longer stops there).
            await waiters.wait(token)
            return
        }
        advanceSynchronously(to: target)
    }

    /// Wakes every sleeper pending now (moving to the latest deadline among them), again
    /// while new sleeps due by then appear, at most `maximumSteps` times; returns whether no
    /// sleeper is left.
    ///
    /// Outside a run, tasks woken here run after this call returns, so a task that sleeps in
    /// a loop is still pending afterwards (use ``run(timeLimit:stallPatience:_:)`` for such
    /// code).
    ///
    /// On a bridge's clock each step is the bridge's ``MockBLEBridge/advance(to:)`` to the
    /// latest sleeper's deadline, running everything on the bridge's schedule due by then.
    ///
    /// - Parameter maximumSteps: The most times to move to the latest deadline. Defaults to 1000.
    /// - Returns: `true` if no sleepers remain.
    @discardableResult
    public func run(maximumSteps: Int = 1000) async -> Bool {
        var steps = 0
        if isBridged {
            while steps < maximumSteps, let bridge, let last = lock.withLock({ bridged.sleepers.last?.deadline }) {
                steps += 1
                await bridge.advance(to: last)
            }
            return sleeperCount == 0
        }
        while steps < maximumSteps, let last = lock.withLock({ schedule.lastDeadline }) {
            steps += 1
            advanceSynchronously(to: last)
        }
        return lock.withLock { schedule.count == 0 }
    }

    /// Moves the clock forward to `target` synchronously, resuming every due sleeper in
    /// (deadline, sequence) order with ``now`` set to its deadline.
    ///
    /// The resumed tasks run later, on their executors, and may observe any ``now`` up to
    /// `target`; sleeps they register are not woken by this call. Does nothing to ``now`` if
    /// `target` is in the past.
    func advanceSynchronously(to target: Instant) {
        while let waiter = lock.withLock({ schedule.popNext(through: target) }) {
            waiter.resume(returning: .advanced)
        }
    }
}
