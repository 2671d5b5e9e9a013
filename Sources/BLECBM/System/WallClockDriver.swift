import BLEMockKit
import Foundation

/// Where a bridge's disconnection timestamps start (`CFAbsoluteTime` at virtual time zero): 0
/// unless its time follows the wall clock.
enum TimestampOrigin {}

/// Moves a bridge's virtual time along with the wall clock (``SimulatedSystem/Time/wallClock``):
/// a task that runs the bridge's schedule up to the wall clock's elapsed time whenever the next
/// event falls due, and at least every few milliseconds. Events still happen at their exact
/// virtual times (the log's timestamps are those); only when they happen on the wall clock
/// follows it, up to a tick late.
///
/// This is the one place the kit waits on the wall clock outside demo pacing: it is what the
/// mode is for (tests that wait on the wall clock, as CoreBluetoothMock's timers make them).
final class WallClockDriver: Sendable {
    /// The longest the driver sleeps before looking at the schedule again (a call from the app
    /// may have scheduled something sooner than what it was waiting for).
    static let tick: Duration = .milliseconds(2)

    /// How long a `waitUntil` on the bridge waits, in wall time, before it is reported.
    static let waitPatience: Duration = .seconds(10)

    /// How often the driver looks for waits to report.
    static let waitCheckInterval: Duration = .seconds(1)

    private let bridge: MockBLEBridge
    private let task: Task<Void, Never>
    private let start: ContinuousClock.Instant
    private let origin: VirtualClock.Instant
    private let reports: LockedValue<[String]>

    /// The reports of `waitUntil` calls that waited longer than the patience, so far (each is
    /// also written to standard error as it is made).
    var waitReports: [String] { reports.value }

    /// Starts moving `bridge`'s time along with the wall clock; `waitPatience` is how long a
    /// `waitUntil` on it may wait before it is reported (see ``WaitReport``), named by `system`.
    init(bridge: MockBLEBridge, system: String, waitPatience: Duration = WallClockDriver.waitPatience) {
        let clock = ContinuousClock()
        let start = clock.now
        let origin = bridge.clockNow
        self.bridge = bridge
        self.start = start
        self.origin = origin
        bridge.setTimeOwner("the wall clock (SimulatedSystem with wall-clock time)")
        CommandQueue.of(bridge).followTime { origin.advanced(by: clock.now - start) }
        // Disconnection timestamps are the wall clock's, as CoreBluetooth's are.
        LockedValue.on(bridge, key: TimestampOrigin.self, initial: 0).value =
            CFAbsoluteTimeGetCurrent() - MockCentralEngine.seconds(origin)
        let reports = LockedValue<[String]>([])
        self.reports = reports
        let checkInterval = min(Self.waitCheckInterval, waitPatience)
        task = Task.detached { [weak bridge] in
            var reported: Set<Int> = []
            var lastCheck = clock.now
            while !Task.isCancelled {
                guard let bridge else { return }
                let next = await bridge.followTime(to: origin.advanced(by: clock.now - start))
                if clock.now - lastCheck >= checkInterval {
                    lastCheck = clock.now
                    let now = origin.advanced(by: clock.now - start)
                    for report in await WaitReport.due(
                        on: bridge, at: now, patience: waitPatience, skipping: &reported, system: system)
                    {
                        reports.value.append(report)
                        Warning.emit(report)
                    }
                }
                var wait = Self.tick
                if let next {
                    let due = origin.duration(to: next) - (clock.now - start)
                    wait = min(wait, max(due, .zero))
                }
                if wait > .zero { try? await clock.sleep(for: wait) }
            }
        }
    }

    /// The virtual time that corresponds to the wall clock now.
    var now: VirtualClock.Instant { origin.advanced(by: ContinuousClock.now - start) }

    /// Stops moving time: the bridge's time is its own again.
    func stop() {
        task.cancel()
        CommandQueue.of(bridge).followTime(nil)
        bridge.setTimeOwner(nil)
    }
}

/// A report of a `waitUntil` (or `waitForApp`) on a simulated system's bridge whose condition has not held after
/// the patience, in wall time. With time following the wall clock no stall is reported (a
/// test may wait on the wall clock for as long as it likes, for an app's timer say), and
/// nothing ends such a wait but its condition or its task's cancellation: a wait that cannot
/// end would keep an XCTest waiting for ever without a word. So it is reported, once per
/// wait, with what the simulation still waits on; the wait goes on.
package enum WaitReport {
    /// The reports of the waits on `bridge` that have waited `patience` or longer at `now` and
    /// are not in `reported` (their tokens are added to it).
    static func due(
        on bridge: MockBLEBridge, at now: VirtualClock.Instant, patience: Duration, skipping reported: inout Set<Int>,
        system: String
    ) async -> [String] {
        // `waitUntil` calls by their tokens, `waitForApp` calls by theirs below zero.
        let conditions = await bridge.waitsStarted.map { (key: $0.token, since: $0.since, what: condition) }
        let apps = bridge.outside.appWaitsStarted.map {
            (key: -1 - $0.token, since: $0.since, what: "a bridge.waitForApp { … } at \($0.site)")
        }
        let due = (conditions + apps).filter { !reported.contains($0.key) && $0.since.duration(to: now) >= patience }
        guard !due.isEmpty else { return [] }
        let waiting = await bridge.waitingOperations
        let seed = bridge.configuration.seed
        return due.map { wait in
            reported.insert(wait.key)
            return message(what: wait.what, since: wait.since, now: now, waiting: waiting, seed: seed, system: system)
        }
    }

    /// How a report names a `waitUntil`.
    static let condition = "a bridge.waitUntil { … }"

    /// The report of a wait that started at `since` and still waits at `now`, while the
    /// operations `waiting` wait in the simulation of a bridge with `seed`, on the system
    /// installed by `system`.
    package static func message(
        what: String = condition, since: VirtualClock.Instant, now: VirtualClock.Instant, waiting: [String],
        seed: UInt64, system: String
    ) -> String {
        var text =
            "\(what) on the simulated system (installed by \(system); seed \(seed)) has waited "
            + "\(WaitReporting.tenths(since.duration(to: now))) s of wall time (since \(since)) and its condition still does not "
            + "hold. With time following the wall clock nothing ends it but its condition or cancelling its task: "
            + "if the condition cannot hold, the test waits for ever. "
        if waiting.isEmpty {
            text += "No operation is waiting in the simulation."
        } else {
            text += "Still waiting in the simulation: " + waiting.joined(separator: "; ") + "."
        }
        return text
            + " Bound the wait (await it in a task that fulfils an expectation, and cancel the task when the "
            + "expectation times out)."
    }

    /// The report of `count` `waitUntil` calls still suspended on the bridge of a system (with
    /// `seed`, installed by `system`) as it is uninstalled: its time has stopped and its managers
    /// are invalid, so nothing the system does will end them.
    package static func leftWaiting(_ count: Int, seed: UInt64, system: String) -> String {
        let calls = count == 1 ? "1 bridge.waitUntil { … } call" : "\(count) bridge.waitUntil { … } calls"
        return "the simulated system (installed by \(system); seed \(seed)) was uninstalled while \(calls) on its "
            + "bridge still waited. Its time has stopped and its managers are invalid, so \(count == 1 ? "it ends" : "they end") "
            + "only if \(count == 1 ? "its task is" : "their tasks are") cancelled. Await or cancel such waits before the "
            + "system is uninstalled (in the test, before tearDown)."
    }
}
