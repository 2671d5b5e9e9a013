import BLEMockKit
import Foundation

/// When a workflow's bridge was released: the workflow bench figures end there, so work a
/// workflow leaves behind (a CoreBluetooth-shaped manager's tear-down, which its front end
/// applies after the app lets go of it) counts toward that workflow, not the one timed after it.
final class BridgeRelease: @unchecked Sendable {
    // @unchecked Sendable: `instant`, `waiter` and `gaveUp` are only read and written with `lock` held.
    private let lock = NSLock()
    private var instant: ContinuousClock.Instant?
    private var waiter: CheckedContinuation<Void, Never>?
    private var gaveUp = false

    /// Kept on the bridge (in its front-end settings, which go with it): its deinit is the
    /// bridge's release.
    private final class Token: Sendable {
        let release: BridgeRelease
        init(_ release: BridgeRelease) { self.release = release }
        deinit { release.released() }
    }

    /// Notes the release of `bridge` (call it once, right after making the bridge).
    func watch(_ bridge: MockBLEBridge) {
        _ = bridge.frontEndSettings.object(for: ObjectIdentifier(Token.self)) { Token(self) }
    }

    private func released() { finish(leaked: false) }

    /// Records the release (or, `leaked`, that the wait gave up) and wakes the waiter.
    private func finish(leaked: Bool) {
        let now = ContinuousClock.now
        let waiter = lock.withLock { () -> CheckedContinuation<Void, Never>? in
            guard instant == nil, !gaveUp else { return nil }
            if leaked { gaveUp = true } else { instant = now }
            defer { self.waiter = nil }
            return self.waiter
        }
        waiter?.resume()
    }

    /// The instant the watched bridge was released, once it has been.
    ///
    /// - Throws: `BenchFailure` when `watchdog` gives up on it (it was still alive 10 to 20 s
    ///   later: something keeps it, a leak).
    func releaseInstant(watchdog: ReleaseWatchdog) async throws -> ContinuousClock.Instant {
        if let instant = lock.withLock({ instant }) { return instant }
        watchdog.watch(self)
        await withCheckedContinuation { continuation in
            let done = lock.withLock { () -> Bool in
                guard instant == nil, !gaveUp else { return true }
                waiter = continuation
                return false
            }
            if done { continuation.resume() }
        }
        watchdog.watch(nil)
        guard let instant = lock.withLock({ instant }) else {
            throw BenchFailure(description: "a workflow's bridge was still alive 10 s after the workflow (a leak)")
        }
        return instant
    }

    /// Gives up waiting (the watchdog's verdict).
    fileprivate func giveUp() { finish(leaked: true) }

    /// Seconds from now until the bridge `workflow` makes and watches is released (at least
    /// until `workflow` returns).
    static func seconds(
        watchdog: ReleaseWatchdog, _ workflow: (BridgeRelease) async throws -> Void
    ) async throws -> Double {
        let release = BridgeRelease()
        let start = ContinuousClock.now
        try await workflow(release)
        return (try await release.releaseInstant(watchdog: watchdog) - start).seconds
    }
}

/// Ends a wait for a bridge that is not released: every 10 s of wall time it gives up on the
/// wait that was already under way at its check before. (One for all the waits of a figure: a
/// timer per wait would be part of what is timed.)
final class ReleaseWatchdog: @unchecked Sendable {
    // @unchecked Sendable: `waiting` and `seen` are only read and written with `lock` held.
    private let lock = NSLock()
    private var waiting: BridgeRelease?
    private var seen: BridgeRelease?

    /// Notes the release being waited for (`nil`: none).
    func watch(_ release: BridgeRelease?) {
        lock.withLock { waiting = release }
    }

    private func check() {
        let stuck = lock.withLock { () -> BridgeRelease? in
            defer { seen = waiting }
            guard let waiting, waiting === seen else { return nil }
            return waiting
        }
        stuck?.giveUp()
    }

    /// Runs `body` with a watchdog checking its waits.
    static func watching<Result>(_ body: (ReleaseWatchdog) async throws -> Result) async throws -> Result {
        let watchdog = ReleaseWatchdog()
        let checks = Task {
            while !Task.isCancelled {
                try? await Task.sleep(for: .seconds(10))
                watchdog.check()
            }
        }
        defer { checks.cancel() }
        return try await body(watchdog)
    }
}
