import BLEMockKit
import Foundation

/// The process-wide simulated Bluetooth system: one bridge that every CoreBluetooth-shaped
/// manager joins when no test's bridge is current, wherever it is created (on the app's own
/// dispatch queue, in a delegate callback, in a `Task {}`).
///
/// CoreBluetooth is one system per process, and code written for it (or for Nordic's
/// CoreBluetoothMock, whose simulation lives in statics) creates its managers wherever it likes.
/// A test of such code installs the system, runs, and uninstalls it:
///
/// ```swift
/// override func setUpWithError() throws {
///     system = try SimulatedSystem.install(.realistic(seed: 7))
/// }
/// override func tearDownWithError() throws {
///     system.uninstall()
/// }
/// ```
///
/// (`BLEMockKitXCTest`'s `installSimulatedSystem()` and `BLEMockKitTesting`'s
/// `.simulatedSystem` trait do both; CoreBluetoothMock's statics, such as
/// ``CBMCentralManagerMock/simulatePeripherals(_:)``, install one themselves when none is: realistic
/// timing with seed 0, time following the wall clock, Bluetooth off until a test turns it on.)
///
/// **One at a time.** Like real Bluetooth, the system is shared by everything in the process:
/// tests that use it must not run in parallel. Installing a second one while one is installed
/// throws ``InstallError``. Run such tests one at a time: XCTest runs a class's tests in turn (do
/// not turn on parallel testing for them). In Swift Testing, tests with the `.simulatedSystem`
/// trait take turns by themselves (a test whose system is installed waits for the other's test
/// to end); tests that install it otherwise (CoreBluetoothMock's statics in a suite's `init`)
/// must not run beside them or each other: `.serialized` orders the tests of one suite only, so
/// put every such suite inside one `.serialized` parent suite (the trait is recursive).
/// Tests that can each have a bridge of their own (`.mockBridge` trait, `runOnMockBridge`,
/// `bridge.run { }`) stay parallel: a bridge that is current (`MockBLEBridge.current`) always
/// wins over the system, and nothing but the CoreBluetooth-shaped API reads the system.
///
/// **Time.** With ``Time/wallClock`` (the default) virtual time follows the wall clock, as
/// CoreBluetoothMock's timers do: a test that waits two seconds on the wall clock (XCTest's
/// `wait(for:timeout:)`) sees two seconds of simulation, so "connected within 3 s" and "nothing
/// found within 2 s" mean what they say. With ``Time/virtual`` time moves only as the bridge's
/// runs and advances move it: run the test in `system.bridge.run { }` and it is deterministic and
/// takes no wall time (MIGRATION.md shows the path from one to the other).
public final class SimulatedSystem: @unchecked Sendable {
    // @unchecked Sendable: `installed` is only read and written with `lock` held; the other
    // stored properties are immutable.

    /// How the system's virtual time moves.
    public enum Time: Sendable, Hashable {
        /// Virtual time follows the wall clock, one second per second: events scheduled in the
        /// simulation happen when the wall clock reaches them. Not deterministic across runs
        /// (when a call is made depends on threads), and a test takes as long as it waits.
        case wallClock
        /// Virtual time moves only when the bridge moves it: inside `bridge.run { }` it drives
        /// itself, deterministically, in no wall time; elsewhere with `advance(by:)`.
        case virtual
    }

    /// Installing a system while another is installed.
    public struct InstallError: Error, Hashable, Sendable, CustomStringConvertible {
        /// Who installed the system that is installed.
        public var installedBy: String
        /// Who tried to install another.
        public var requestedBy: String

        public var description: String {
            // (A suite moving from CoreBluetoothMock that calls the statics before installing.)
            let statics =
                installedBy.hasPrefix("CBMCentralManagerMock.") || installedBy.hasPrefix("CBMPeripheralSpec.")
                ? "CoreBluetoothMock's statics install the system when none is installed: install it before "
                    + "calling them (they then act on it), or let them install it and do not install another. "
                : ""
            return "SimulatedSystem.install (\(requestedBy)): a simulated system is already installed, by "
                + "\(installedBy). " + statics
                + "The system is process-wide, like CoreBluetooth: tests that use it must run one at a time "
                + "(in Swift Testing, the `.simulatedSystem` trait's tests take turns by themselves; suites that "
                + "install it otherwise must all be inside one `.serialized` parent suite, as `.serialized` orders "
                + "one suite's tests only; no parallel testing for those XCTest classes; an "
                + "Exploration that installs it on its runs' bridges needs `parallelism: 1`), and each "
                + "must uninstall it when it ends (tearDown: `system.uninstall()`, or "
                + "`CBMCentralManagerMock.tearDownSimulation()` for CoreBluetoothMock's statics; the "
                + "`.simulatedSystem` trait does it). Tests that can have "
                + "a bridge of their own (`.mockBridge`, `runOnMockBridge`) run in parallel without it."
        }
    }

    /// The system's bridge: the simulation itself (its log, its `finish()`, its runs).
    public let bridge: MockBLEBridge
    /// How the system's time moves.
    public let time: Time
    /// Who installed it (for messages).
    public let installedBy: String

    private let driver: WallClockDriver?
    /// Whether the system made its bridge (not a test's, given to ``install(on:initialState:installedBy:)``).
    private let ownsBridge: Bool
    private let lock = Lock()
    private var installed = true

    /// The installed system, if any.
    public static var current: SimulatedSystem? { slot.system }

    /// Installs the process-wide system.
    ///
    /// - Parameters:
    ///   - configuration: The bridge's configuration (fast by default; `.realistic(seed:)` for
    ///     realistic timing).
    ///   - time: How virtual time moves; the wall clock by default.
    ///   - initialState: The state managers created on it start in (`poweredOn` by default;
    ///     CoreBluetoothMock's statics install one starting `poweredOff`, as CoreBluetoothMock
    ///     does).
    ///   - installedBy: Who installs it, named in messages (the calling function by default).
    /// - Returns: The system.
    /// - Throws: ``InstallError`` when a system is installed already.
    @discardableResult
    public static func install(
        _ configuration: MockBLEBridge.Configuration = .fast, time: Time = .wallClock,
        initialState: CBMManagerState = .poweredOn, installedBy: String = #function
    ) throws -> SimulatedSystem {
        try install(configuration, time: time, initialState: initialState, installedBy: installedBy, turn: nil)
    }

    /// Installs the process-wide system for a test's ``Turn`` (the XCTest helper's): as
    /// ``install(_:time:initialState:installedBy:)``, and the turn's ``Turn/end()`` uninstalls it.
    /// With time following the wall clock, a `waitUntil` on its bridge that has waited
    /// `waitPatience` is reported (``waitReports``).
    package static func install(
        _ configuration: MockBLEBridge.Configuration, time: Time, initialState: CBMManagerState,
        installedBy: String, turn: Turn?, waitPatience: Duration = WallClockDriver.waitPatience
    ) throws -> SimulatedSystem {
        try slot.install(by: installedBy, turn: turn) {
            SimulatedSystem(
                configuration, time: time, initialState: initialState, by: installedBy, waitPatience: waitPatience)
        }
    }

    /// Installs the process-wide system on a bridge of the test's: the bridge of an
    /// `Exploration` run (`run.bridge`), or one the test made. A CoreBluetooth-shaped app
    /// that creates its managers wherever it likes (on its own queue in `queue.async`, say)
    /// then joins that bridge, so an exploration can try such an app, unchanged, under its
    /// faults and conditions (<doc:TestingCoreBluetoothApps>, "Exploring such apps", has an
    /// example).
    ///
    /// The system is process-wide: explore with `parallelism: 1`, and uninstall it as each run
    /// ends. Its time is the bridge's own (``Time/virtual``): it moves in the bridge's runs.
    /// Uninstalling leaves the managers on it invalid, as ``uninstall()`` says, and the bridge
    /// the test's.
    ///
    /// - Parameters:
    ///   - bridge: The bridge the system's managers join.
    ///   - initialState: The state CoreBluetooth-shaped managers created on it start in
    ///     (`poweredOn` by default).
    ///   - installedBy: Who installs it, named in messages (the calling function by default).
    /// - Returns: The system.
    /// - Throws: ``InstallError`` when a system is installed already.
    @discardableResult
    public static func install(
        on bridge: MockBLEBridge, initialState: CBMManagerState = .poweredOn, installedBy: String = #function
    ) throws -> SimulatedSystem {
        try slot.install(by: installedBy, turn: nil) {
            SimulatedSystem(
                bridge: bridge, ownsBridge: false, time: .virtual, initialState: initialState, by: installedBy)
        }
    }

    /// A test's hold on the process-wide system, from the test's start to its end (the XCTest
    /// helper's, the `.simulatedSystem` trait's). Every system installed while the turn is held
    /// is the test's: the one installed for it, and one CoreBluetoothMock's statics install
    /// after the test tore the simulation down midway (`tearDownSimulation()`, then
    /// `simulatePeripherals(_:)`). ``end()`` uninstalls the one installed then, so the next
    /// test starts with none; until then, no other test's turn starts.
    package final class Turn: Sendable {
        /// Who holds it (for messages).
        let holder: String
        /// Whether another test's scope waits for this turn to end (the trait's tests, which may
        /// run in parallel) rather than failing at once.
        let othersWait: Bool

        package init(holder: String, othersWait: Bool) {
            self.holder = holder
            self.othersWait = othersWait
        }

        /// The system installed in this turn now, if any.
        package var system: SimulatedSystem? { SimulatedSystem.slot.system(in: self) }

        /// Ends the turn: uninstalls the system installed in it, if any, and lets the next
        /// test's turn start.
        package func end() { SimulatedSystem.slot.end(self) }
    }

    /// The turn of the current task's scope (the trait's), while the scope runs.
    @TaskLocal package static var scopeTurn: Turn?

    /// Installs the process-wide system for `turn`, a scope's that ends it as it ends, whatever
    /// happens (the `.simulatedSystem` trait): when another such scope's turn is held, waits until
    /// it ends, so such scopes take turns even when they run in parallel (tests in different
    /// suites); when a system installed otherwise is (one CoreBluetoothMock's statics installed,
    /// or ``install(_:time:initialState:installedBy:)``, which may never be uninstalled), or in
    /// a turn nobody waits for (the XCTest helper's), throws ``InstallError`` at once.
    ///
    /// - Throws: ``InstallError`` as said; `CancellationError` when the calling task is cancelled
    ///   while it waits.
    package static func installTakingTurns(
        _ configuration: MockBLEBridge.Configuration, time: Time, initialState: CBMManagerState, installedBy: String,
        turn: Turn
    ) async throws -> SimulatedSystem {
        while true {
            try Task.checkCancellation()
            let attempt = try slot.installOrWait(by: installedBy, turn: turn, scope: scopeTurn) {
                SimulatedSystem(configuration, time: time, initialState: initialState, by: installedBy)
            }
            switch attempt {
            case .installed(let system): return system
            case .wait(let holding): await slot.untilEnded(holding)
            }
        }
    }

    private convenience init(
        _ configuration: MockBLEBridge.Configuration, time: Time, initialState: CBMManagerState, by: String,
        waitPatience: Duration = WallClockDriver.waitPatience
    ) {
        self.init(
            bridge: MockBLEBridge(configuration: configuration), ownsBridge: true, time: time,
            initialState: initialState, by: by, waitPatience: waitPatience)
    }

    /// The report of the waits the system's uninstalling left suspended, if it left any.
    private let uninstallReports = LockedValue<[String]>([])

    private init(
        bridge: MockBLEBridge, ownsBridge: Bool, time: Time, initialState: CBMManagerState, by: String,
        waitPatience: Duration = WallClockDriver.waitPatience
    ) {
        self.bridge = bridge
        self.ownsBridge = ownsBridge
        self.time = time
        installedBy = by
        // (A bridge a system was uninstalled from, installed on again: the system's again.)
        bridge.frontEndSettings[SpecSimulation.retiredKey] = nil
        MockCentralEngine.setInitialState(initialState, on: bridge)
        // (A test awaits this bridge while apps call it from their queues.)
        CommandQueue.of(bridge).applyOffAppQueues()
        driver = time == .wallClock ? WallClockDriver(bridge: bridge, system: by, waitPatience: waitPatience) : nil
    }

    /// The reports of `waitUntil` calls on the bridge that waited longer than the patience with
    /// time following the wall clock (each also written to standard error): with that time nothing
    /// reports a stall, so a wait whose condition cannot hold would keep a test waiting for ever
    /// without a word.
    /// A wait the system's uninstalling leaves suspended is reported there too (see
    /// ``WaitReport/leftWaiting(_:seed:system:)``).
    package var waitReports: [String] { (driver?.waitReports ?? []) + uninstallReports.value }

    /// Whether the system is still installed.
    public var isInstalled: Bool { lock.withLock { installed } }

    /// The calls app code made on this system that got no callback, as with CoreBluetooth, in
    /// the order they were noted, each naming its manager (one the app has let go of too): those
    /// it ignored (the lines of its managers' `apiMisuses`), operations a link that went down,
    /// or Bluetooth turning off, ended (CoreBluetooth reports only the disconnection or the state
    /// change), operations still waiting when the app let go of their central manager (they
    /// end with it), and connection attempts still waiting when the app let go of the peripheral
    /// (with why they had not completed: a peripheral out of range, say). When a test waited for
    /// a callback that never came, the call that would have brought it is often here.
    public var unansweredCalls: [String] { bridge.outside.unansweredCalls }

    /// What a failed test says of the calls its app made that got no callback, or `nil` when
    /// there were none.
    package var unansweredCallsNote: String? { bridge.outside.unansweredCallsNote(madeOn: "the simulated system") }

    /// What a failed test says of the simulation, or `nil` when there is nothing to say: the
    /// operations its app started that were still waiting for their callback (a connection to a
    /// peripheral out of range, which never times out, as with CoreBluetooth; a read the link
    /// has not answered), the calls it made that got no callback (``unansweredCalls``), and what
    /// may explain the wait, as a stall report says it (a connection attempt or a scan for a
    /// peripheral out of range, a link lost and not made again, a failed operation), and the misuses
    /// CoreBluetooth lets pass quietly that the apps made (a write without response cut to what
    /// the link carries, say: `MockBLEBridge.misuses`). With
    /// time following the wall clock nothing reports a stall: a test that waits for ever ends
    /// with its expectation's timeout, and this is where the call it waited on is named. With
    /// ``Time/virtual`` time that never moved while something was scheduled, and no run on the
    /// bridge, first that: the test waited outside the bridge's run (on expectations, say), where
    /// virtual time stands still.
    /// A note ends with the system's seed.
    package func failureNote() async -> String? {
        let waiting = await bridge.waitingOperations
        var notes: [String] = []
        // (A run that held time itself, with a pausing wait, is named by its stall instead.)
        if time == .virtual, !bridge.runs.hasBegun, await bridge.now == .zero,
            let next = await bridge.nextScheduledDeadline
        {
            notes.append(
                "the simulated system's time is virtual and never moved: what the apps did waits for it (the next "
                    + "scheduled event, at \(next), never happened). Virtual time moves only in the system bridge's "
                    + "`run { }`, where it drives itself, or with its `advance(by:)`: run the test's body in "
                    + "`system.bridge.run { }`, or install the system with time following the wall clock (the "
                    + "default).")
        }
        if !waiting.isEmpty {
            notes.append(
                "operations the app started on the simulated system that were still waiting for their callback "
                    + "(a connection attempt does not time out, as with CoreBluetooth):\n"
                    + waiting.map { "- \($0)" }.joined(separator: "\n"))
        }
        if let unanswered = unansweredCallsNote { notes.append(unanswered) }
        // What CoreBluetooth lets pass quietly (a write without response cut to what the link
        // carries, say): the test waited on data that never arrived whole, perhaps.
        let misuses = await bridge.misuses
        if !misuses.isEmpty {
            notes.append(
                "misuses CoreBluetooth lets pass quietly, which the apps made (the bridge's `misuses`):\n"
                    + misuses.map { "- \($0)" }.joined(separator: "\n"))
        }
        let hints = await bridge.waitHints
        if !hints.isEmpty {
            notes.append("what may explain it:\n" + hints.map { "- \($0)" }.joined(separator: "\n"))
        }
        guard !notes.isEmpty else { return nil }
        // The seed fixes the identifiers the notes give and what the simulation draws; on the wall
        // clock the timing still differs from run to run.
        let seed = bridge.configuration.seed
        notes.append(
            time == .virtual
                ? "the simulated system's seed is \(seed): installed with it, the system draws the same again"
                : "the simulated system's seed is \(seed) (it fixes identifiers and draws; its time follows the "
                    + "wall clock, so timings differ from run to run)")
        return notes.joined(separator: "\n")
    }

    /// Uninstalls the system (nothing happens if it is not installed). Managers on it become
    /// invalid, as CoreBluetoothMock's `tearDownSimulation()` leaves them: their delegates hear the
    /// state `unknown`, and later calls on them are ignored. So is a manager that found the system
    /// as it was uninstalled (an app's queue that made one just as the test ended), and one made
    /// on the bridge the system made: its delegate hears only `unknown`. (In a delegate callback of
    /// one of its managers, where its bridge is still current, a manager made or a static called
    /// after the uninstall acts on the installed system, or installs a fresh one, as elsewhere.)
    /// Its time stops. Its ``bridge`` stays readable (log, `finish()`). A test's bridge
    /// it was installed on (``install(on:initialState:installedBy:)``) stays the test's: a manager
    /// made on it explicitly (`CBMCentralManager(bridge:delegate:queue:)`) is a live one, and a
    /// system installed on it again is joined as the first was. A `waitUntil` still
    /// suspended on the bridge then ends only
    /// if its task is cancelled: the uninstall says so on standard error, naming the system and
    /// its seed.
    public func uninstall() {
        let wasInstalled = lock.withLock { () -> Bool in
            defer { installed = false }
            return installed
        }
        guard wasInstalled else { return }
        Self.slot.remove(self)
        bridge.frontEndSettings[SpecSimulation.retiredKey] =
            ownsBridge ? SpecSimulation.retiredSystemsOwn : SpecSimulation.retiredTestsOwn
        driver?.stop()
        let centrals = MockCentralEngine.engines(on: bridge)
        let peripherals = MockPeripheralEngine.engines(on: bridge)
        // A run of the bridge that goes on (the uninstall came from a callback in it) and stalls,
        // or a test that then fails, is told why its apps went quiet.
        if !centrals.isEmpty || !peripherals.isEmpty {
            let count = centrals.count + peripherals.count
            UnansweredCallLog.of(bridge).note(
                "the simulated system installed by \(installedBy) was uninstalled (tearDownSimulation(), or "
                    + "SimulatedSystem.uninstall()): "
                    + (count == 1
                        ? "its manager is invalid and hears nothing more"
                        : "its \(count) managers are invalid and hear nothing more"))
        }
        for engine in centrals { engine.invalidate() }
        for engine in peripherals { engine.invalidate() }
        // Its time has stopped and its managers are invalid: a wait still suspended on its bridge
        // ends only if its task is cancelled. Said, not left to wait in silence.
        let waits = bridge.suspendedWaits
        if waits > 0 {
            let report = WaitReport.leftWaiting(waits, seed: bridge.configuration.seed, system: installedBy)
            uninstallReports.value.append(report)
            Warning.emit(report)
        }
    }

    // MARK: The one process-wide variable

    /// The installed system: the one piece of process-wide state in the kit (CoreBluetooth is one
    /// system per process). Nothing but the CoreBluetooth-shaped API reads it, and only when no
    /// test's bridge is current.
    private static let slot = Slot()

    /// The slot holding the installed system, and the turn of the test it belongs to.
    private final class Slot: @unchecked Sendable {
        // @unchecked Sendable: `installed`, `turn`, `waiters` and `nextWaiter` are only read and
        // written with `lock` held; continuations are resumed after it is released.
        private let lock = Lock()
        private var installed: SimulatedSystem?
        /// The test whose turn it is, if any: the installed system is its (also one installed
        /// after the test uninstalled its first), and no other test's turn starts until it ends.
        private var turn: Turn?
        /// Scopes waiting for the turn to end (see `installTakingTurns`).
        private var waiters: [Int: CheckedContinuation<Void, Never>] = [:]
        private var nextWaiter = 0

        var system: SimulatedSystem? { lock.withLock { installed } }

        func system(in turn: Turn) -> SimulatedSystem? {
            lock.withLock { self.turn === turn ? installed : nil }
        }

        /// Installs the system `make` makes, for `requested` (a test's turn) or, with none, in
        /// the turn that is held, if one is (the test whose turn it is made the call).
        func install(by requester: String, turn requested: Turn?, _ make: () -> SimulatedSystem) throws
            -> SimulatedSystem
        {
            try lock.withLock { try installHoldingLock(by: requester, turn: requested, make) }
        }

        /// What a scope's attempt to install for its turn came to (see `installTakingTurns`).
        enum Attempt {
            case installed(SimulatedSystem)
            /// Another scope holds its turn: try again once it has ended.
            case wait(Turn)
        }

        /// Installs the system `make` makes for `requested`, or, when another scope that others
        /// wait for holds the turn, names that turn (`scope`, the caller's own enclosing scope's
        /// turn, is never waited for: it would wait for itself). Both are decided under one hold
        /// of the lock: a turn that ends between a failed install and a look at the turn held would
        /// leave the caller with neither a system nor a turn to wait for.
        func installOrWait(by requester: String, turn requested: Turn, scope: Turn?, _ make: () -> SimulatedSystem)
            throws -> Attempt
        {
            try lock.withLock {
                do {
                    return .installed(try installHoldingLock(by: requester, turn: requested, make))
                } catch {
                    guard let held = turn, held.othersWait, held !== scope else { throw error }
                    return .wait(held)
                }
            }
        }

        /// ``install(by:turn:_:)`` with the lock held.
        private func installHoldingLock(by requester: String, turn requested: Turn?, _ make: () -> SimulatedSystem)
            throws(InstallError) -> SimulatedSystem
        {
            if let installed { throw InstallError(installedBy: installed.installedBy, requestedBy: requester) }
            // Another test's turn, whose system it tore down: a scope that others wait for is
            // still running; an XCTest's is over (XCTest runs one test at a time).
            if let held = turn, let requested, held !== requested, held.othersWait {
                throw InstallError(installedBy: held.holder, requestedBy: requester)
            }
            let system = make()
            installed = system
            if let requested { turn = requested }
            return system
        }

        /// The installed system, installing one with `make` if none is (in the turn that is
        /// held, if one is).
        func installedOrInstall(_ make: () -> SimulatedSystem) -> SimulatedSystem {
            lock.withLock {
                if let installed { return installed }
                let system = make()
                installed = system
                return system
            }
        }

        /// `system` is uninstalled: the slot is empty; if no test's turn is held, scopes waiting
        /// may install theirs.
        func remove(_ system: SimulatedSystem) {
            let waking = lock.withLock { () -> [CheckedContinuation<Void, Never>] in
                guard installed === system else { return [] }
                installed = nil
                guard turn == nil else { return [] }
                defer { waiters.removeAll() }
                return Array(waiters.values)
            }
            for waiter in waking { waiter.resume() }
        }

        /// Ends `turn`, if it is held: uninstalls the system installed in it, then wakes the
        /// scopes waiting.
        func end(_ turn: Turn) {
            let (system, waking) = lock.withLock { () -> (SimulatedSystem?, [CheckedContinuation<Void, Never>]) in
                guard self.turn === turn else { return (nil, []) }
                self.turn = nil
                defer {
                    installed = nil
                    waiters.removeAll()
                }
                return (installed, Array(waiters.values))
            }
            system?.uninstall()
            for waiter in waking { waiter.resume() }
        }

        /// Returns once `turn` is no longer held (or the calling task is cancelled).
        func untilEnded(_ turn: Turn) async {
            let token = lock.withLock { () -> Int in
                defer { nextWaiter += 1 }
                return nextWaiter
            }
            await withTaskCancellationHandler {
                await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                    let waiting = lock.withLock { () -> Bool in
                        guard self.turn === turn, !Task.isCancelled else { return false }
                        waiters[token] = continuation
                        return true
                    }
                    if !waiting { continuation.resume() }
                }
            } onCancel: {
                lock.withLock { waiters.removeValue(forKey: token) }?.resume()
            }
        }
    }

    /// The installed system, or one installed now the way CoreBluetoothMock's statics find their
    /// simulation: time following the wall clock, Bluetooth off until a test turns it on, and
    /// realistic timing (seed 0), since CoreBluetoothMock's simulation takes time too (its
    /// peripherals advertise at their intervals, and each request takes a connection interval).
    /// `call` names it, with its type (`CBMCentralManagerMock.simulatePeripherals(_:)`).
    static func currentOrInstalledForCoreBluetoothMock(_ call: String) -> SimulatedSystem {
        slot.installedOrInstall {
            SimulatedSystem(.realistic(seed: 0), time: .wallClock, initialState: .poweredOff, by: call)
        }
    }
}
