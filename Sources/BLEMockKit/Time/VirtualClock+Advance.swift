extension VirtualClock {
    /// Moves the clock forward by `duration`, waking every sleeper that falls due.
    ///
    /// Equivalent to `advance(to: now.advanced(by: duration))`. A negative duration does
    /// nothing to ``now`` and wakes nobody; a zero duration only gives other tasks a chance
    /// to run.
    public func advance(by duration: Duration) async {
        let target = lock.withLock { schedule.now.advanced(by: duration) }
        await advance(to: target)
    }

    /// Moves the clock forward to `target`, waking every sleeper whose deadline is at or
    /// before it, in (deadline, sequence) order.
    ///
    /// For each due sleeper in turn, ``now`` is set to its deadline, the sleeper is resumed,
    /// and the clock waits for the resumed task to run (see the type's documentation for
    /// the limits of that wait). Sleeps registered meanwhile with deadlines at or before
    /// `target` are woken in the same call. When no due sleeper remains, ``now`` is set to
    /// `target`, so it lands exactly on `target`.
    ///
    /// If `target` is before ``now``, ``now`` is left unchanged and nobody wakes: time never
    /// goes backwards.
    public func advance(to target: Instant) async {
        while true {
            await letResumedTasksRun()
            guard let waiter = lock.withLock({ schedule.popNext(through: target) }) else {
                return
            }
            waiter.resume(returning: .advanced)
        }
    }

    /// Advances the clock until no sleepers remain, and reports whether it got there.
    ///
    /// Each step advances to the *latest* pending deadline, waking everything pending and
    /// everything registered on the way with a deadline before it; steps repeat while new
    /// sleeps keep appearing. A task that sleeps forever in a loop (a periodic timer) never
    /// lets the clock drain: after `maximumSteps` steps `run` stops, leaves the remaining
    /// sleepers pending (``sleeperCount`` tells how many) and returns `false`. Cancel such
    /// tasks, or use ``advance(by:)``, to bound them.
    ///
    /// - Parameter maximumSteps: The most advance steps to take. Defaults to 1000.
    /// - Returns: `true` if no sleepers remain.
    @discardableResult
    public func run(maximumSteps: Int = 1000) async -> Bool {
        var steps = 0
        while true {
            await letResumedTasksRun()
            guard let last = lock.withLock({ schedule.lastDeadline }) else { return true }
            guard steps < maximumSteps else { return false }
            steps += 1
            await advance(to: last)
        }
    }

    /// Moves the clock forward to `target` synchronously, resuming every due sleeper in
    /// (deadline, sequence) order with ``now`` set to its deadline, without yielding.
    ///
    /// For the mock bridge, which drives time from inside its actor from its own ordered
    /// schedule. The resumed tasks run later, on their executors, and may observe any
    /// ``now`` up to `target`; sleeps they register are not woken by this call. Does
    /// nothing to ``now`` if `target` is in the past.
    func advanceSynchronously(to target: Instant) {
        while let waiter = lock.withLock({ schedule.popNext(through: target) }) {
            waiter.resume(returning: .advanced)
        }
    }

    /// Waits (boundedly) until every resumed sleeper is running again, then yields
    /// ``yieldsPerWake`` times so that resumed tasks can finish their step.
    private func letResumedTasksRun() async {
        var waited = 0
        while waited < Self.maximumAcknowledgementYields,
            lock.withLock({ schedule.unacknowledgedWakes > 0 })
        {
            await Task.yield()
            waited += 1
        }
        for _ in 0..<yieldsPerWake {
            await Task.yield()
        }
    }
}
