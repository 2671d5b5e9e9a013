import BLECore

#if canImport(Darwin)
    import Darwin
#elseif canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// How a clock watches waits outside runs that nothing may end (see ``QuietWaits``). Guarded by
/// the clock's `lock`.
struct QuietWaitWatch {
    /// The waits, and when to report them.
    var waits = QuietWaits()
    /// How long a wait may stand still, in wall time, before it is reported.
    var patience: Duration = QuietWaitWatch.defaultPatience
    /// The reports made so far (each also written to standard error).
    var reports: [String] = []
    /// Tasks waiting for a number of reports, by token.
    var watchers: [Int: (count: Int, continuation: CheckedContinuation<[String], Never>)] = [:]
    var nextWatcher = 0
    /// A bridge's clock: the bridge's seed and whether its timing is fast, for the reports.
    var bridge: (seed: UInt64, fast: Bool)?
    /// A bridge's clock: whether a run drives the bridge's time now, and whether something else
    /// owns it (the wall clock of a simulated system).
    var bridgeRunActive = false
    var bridgeTimeOwned = false

    /// A wait outside runs is reported after standing still this long: as long as a wait on a
    /// simulated system's bridge (`SimulatedSystem`) is.
    static let defaultPatience: Duration = .seconds(10)
}

extension VirtualClock {
    /// A wait that nothing outside may end begins (a task suspends reading a manager's events,
    /// sleeping, or in `waitUntil`): watched while no run drives the clock, and reported once it
    /// has stood still for the patience. Returns its token for ``endQuietWait(_:)``, or `nil`
    /// when a run (or the wall clock) drives time now: such a wait is the run's to report.
    func beginQuietWait(_ wait: QuietWaits.Wait) -> Int? {
        let begun = lock.withLock { () -> (token: Int, armAfter: Duration?)? in
            guard !lockedIsDriven else { return nil }
            return quiet.waits.begin(
                wait, now: lockedNow, wall: ContinuousClock.now, patience: quiet.patience)
        }
        guard let begun else { return nil }
        if let delay = begun.armAfter { armQuietCheck(after: delay) }
        return begun.token
    }

    /// A wait begun with ``beginQuietWait(_:)`` ended.
    func endQuietWait(_ token: Int?) {
        guard let token else { return }
        lock.withLock { quiet.waits.end(token) }
    }

    /// The reports of quiet waits so far.
    package var quietWaitReports: [String] { lock.withLock { quiet.reports } }

    /// Returns the reports of quiet waits once there are at least `count` (at once if there
    /// are): a test waits here for a report instead of polling.
    package func quietWaitReports(atLeast count: Int) async -> [String] {
        await withCheckedContinuation { continuation in
            let ready = lock.withLock { () -> [String]? in
                if quiet.reports.count >= count { return quiet.reports }
                quiet.watchers[quiet.nextWatcher] = (count, continuation)
                quiet.nextWatcher += 1
                return nil
            }
            if let ready { continuation.resume(returning: ready) }
        }
    }

    /// Sets how long a wait outside runs may stand still, in wall time, before it is reported
    /// (tests shorten it).
    package func setQuietWaitPatience(_ patience: Duration) {
        lock.withLock { quiet.patience = max(patience, .zero) }
    }

    /// A bridge's clock: what the reports say of the bridge.
    func describeBridge(seed: UInt64, fast: Bool) {
        lock.withLock { quiet.bridge = (seed, fast) }
    }

    /// A bridge's clock: whether a run drives the bridge's time.
    func setBridgeRunActive(_ active: Bool) {
        lock.withLock { quiet.bridgeRunActive = active }
    }

    /// A bridge's clock: whether something outside the bridge owns its time.
    func setBridgeTimeOwned(_ owned: Bool) {
        lock.withLock { quiet.bridgeTimeOwned = owned }
    }

    /// Whether something moves the clock's time by itself now. Call it holding `lock`.
    private var lockedIsDriven: Bool {
        isBridged ? quiet.bridgeRunActive || quiet.bridgeTimeOwned : driving
    }

    /// The clock's time. Call it holding `lock`.
    private var lockedNow: Instant { isBridged ? bridged.now : schedule.now }

    /// Checks the quiet waits after `delay` of wall time, on a task of its own (outside any run:
    /// no run waits for it). The task holds the clock, not its bridge, until it has checked.
    private func armQuietCheck(after delay: Duration) {
        Task.detached { [self] in
            try? await Task.sleep(for: delay)
            checkQuietWaits()
        }
    }

    /// Reports the waits that stood still for the patience, and arms the next check.
    private func checkQuietWaits() {
        let (messages, armAfter, satisfied) = lock.withLock {
            () -> ([String], Duration?, [(CheckedContinuation<[String], Never>, [String])]) in
            let (due, armAfter) = quiet.waits.check(
                now: lockedNow, wall: ContinuousClock.now, driven: lockedIsDriven, patience: quiet.patience)
            let messages = due.map { QuietWaits.message($0, bridge: quiet.bridge) }
            quiet.reports += messages
            var satisfied: [(CheckedContinuation<[String], Never>, [String])] = []
            for (token, watcher) in quiet.watchers where quiet.reports.count >= watcher.count {
                quiet.watchers.removeValue(forKey: token)
                satisfied.append((watcher.continuation, quiet.reports))
            }
            return (messages, armAfter, satisfied)
        }
        for message in messages { WaitReporting.writeToStandardError("BLEMockKit warning: \(message)\n") }
        for (continuation, reports) in satisfied { continuation.resume(returning: reports) }
        if let armAfter { armQuietCheck(after: armAfter) }
    }
}

/// What the kit's reports of long waits share: how they write a duration, and where they go.
package enum WaitReporting {
    /// `duration` (not negative) in seconds, to a tenth ("0.3", "12.0"), rounded down.
    package static func tenths(_ duration: Duration) -> String {
        let (seconds, attoseconds) = max(duration, .zero).saturatingComponents
        return "\(seconds).\(attoseconds / 100_000_000_000_000_000)"
    }

    /// Writes `text` to standard error (file descriptor 2: the C library's `stderr` is a global
    /// variable, which strict concurrency does not let code read).
    package static func writeToStandardError(_ text: String) {
        var text = text
        text.withUTF8 { bytes in
            var rest = UnsafeRawBufferPointer(bytes)
            while !rest.isEmpty {
                let written = write(2, rest.baseAddress, rest.count)
                guard written > 0 else { return }
                rest = UnsafeRawBufferPointer(rebasing: rest[written...])
            }
        }
    }
}
