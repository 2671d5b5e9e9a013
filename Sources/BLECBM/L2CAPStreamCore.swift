import BLEMockKit
import Foundation

/// One stream of a simulated L2CAP channel: its state machine behind a lock, the run loops it
/// is scheduled in, its delegate, and the delivery of its events.
///
/// **Order.** What the simulation reports (an SDU arrived, a send crossed, the channel closed)
/// is numbered as it arrives on the bridge's executor, and handed to the stream's home (see
/// ``L2CAPStreamLink/Home``) with its number; there the items up to that number are applied in
/// order, then the events due are delivered. So nothing is lost or reordered, even when the app
/// moves the stream to another run loop while items are on their way (the new home applies
/// those first, in case the old one never runs), and what a delegate reads in a callback is the
/// state as of that point in the simulation, on every run of a seed.
///
/// **Polling.** What the app asks the stream itself (``polled(_:)``: `hasBytesAvailable`,
/// `read`, `hasSpaceAvailable`, `write`, `streamStatus`) sees every item that has arrived,
/// applied first, wherever the stream is scheduled: a stream scheduled in a run loop nobody runs,
/// or in none, is used by polling, as Foundation documents (`schedule(in:forMode:)`: "Unless the
/// client is polling the stream…"). Except in a callback of the kit (a stream event, a manager's
/// delegate call: see ``KitCallback/isRunning``), where the stream stays as of that point in the
/// simulation, so that what a callback reads is the same on every run of a seed.
///
/// **Events.** They are delivered only while the stream is open and scheduled in a run loop,
/// each at most once a pass; one due again because of what the delegate did (read part of the
/// bytes, wrote with room left) comes in a later pass. A stream opened or scheduled late gets
/// the events due then (bytes that arrived before it was opened, say).
final class L2CAPStreamCore<Machine: L2CAPStreamMachine>: @unchecked Sendable {
    // @unchecked Sendable: every stored `var` is only read and written with `lock` held, and
    // delegates are called with it released; `link` is immutable.

    let link: L2CAPStreamLink?
    private let lock = Lock()
    private var machine: Machine
    private var inbox: [(sequence: UInt64, item: Machine.Item)] = []
    private var nextSequence: UInt64 = 0
    private var scheduled: [(runLoop: RunLoop, mode: RunLoop.Mode)] = []
    /// Counts changes of the run loops (a pass queued for an earlier home delivers nothing).
    private var homeGeneration: UInt64 = 0
    private weak var storedDelegate: (any StreamDelegate)?
    /// The stream (weak: it owns this core).
    private weak var stream: Stream?
    private var passQueued = false
    /// The probe a run passes through the main queue while the stream's events go there.
    private var probe: Int?
    /// A timer that never fires in each run loop and mode the stream is scheduled in, other than
    /// the main run loop (see ``schedule(in:forMode:)``).
    private var keepAlives: [(runLoop: RunLoop, mode: RunLoop.Mode, timer: KeepAlive)] = []

    init(machine: Machine, link: L2CAPStreamLink?) {
        self.machine = machine
        self.link = link
    }

    deinit {
        if let probe { link?.outside.removeProbe(probe) }
        for entry in keepAlives { entry.timer.end(in: entry.runLoop, mode: entry.mode) }
    }

    /// Sets the stream the delegate hears about.
    func attach(_ stream: Stream) {
        lock.withLock { self.stream = stream }
    }

    /// Reads or changes the state machine (with the lock held).
    func withMachine<T>(_ body: (inout Machine) -> T) -> T {
        lock.withLock { body(&machine) }
    }

    /// Reads or changes the state machine for the app's own call (a poll, a read, a write):
    /// outside a callback of the kit, after applying every item that has arrived (see
    /// **Polling** above).
    func polled<T>(_ body: (inout Machine) -> T) -> T {
        let catchUp = !KitCallback.isRunning
        return lock.withLock {
            if catchUp, !inbox.isEmpty {
                for (_, item) in inbox { machine.apply(item) }
                inbox.removeAll()
            }
            return body(&machine)
        }
    }

    /// The delegate set, or else the stream itself: as Foundation documents for `Stream`, a
    /// stream is its own delegate by default, and setting `nil` makes it so again.
    var delegate: (any StreamDelegate)? {
        get { lock.withLock { storedDelegate ?? (stream as? any StreamDelegate) } }
        set { lock.withLock { storedDelegate = newValue } }
    }

    // MARK: The app's calls both streams share

    /// The app opened the stream: the events due come in a pass at its home.
    func open() {
        withMachine { $0.open() }
        updateProbe()
        requestPass()
    }

    /// The app closed the stream (the `input` one, or the output one): no more events; once
    /// both are closed the channel closes (see ``L2CAPStreamLink/streamClosed(input:)``).
    ///
    /// A stream not opened yet, or closed already, is left as it is, as CFStream leaves it: a
    /// stream never opened stays `.notOpen` (it may still be opened) and does not count toward
    /// closing the channel.
    func close(input: Bool) {
        let closes = withMachine { machine -> Bool in
            guard machine.status != .notOpen, machine.status != .closed else { return false }
            machine.close()
            return true
        }
        guard closes else { return }
        closed()
        link?.streamClosed(input: input)
    }

    // MARK: The simulation's news (on the bridge's executor)

    /// Takes an item from the simulation: applied at the stream's home, in order.
    func arrived(_ item: Machine.Item) {
        guard let link else { return }
        let (sequence, home, generation) = lock.withLock { () -> (UInt64, L2CAPStreamLink.Home, UInt64) in
            defer { nextSequence += 1 }
            inbox.append((nextSequence, item))
            return (nextSequence, currentHome(for: link), homeGeneration)
        }
        link.deliver(on: home) { [self] in settle(upTo: sequence, generation: generation) }
    }

    /// Where the events go now (with the lock held).
    private func currentHome(for link: L2CAPStreamLink) -> L2CAPStreamLink.Home {
        if scheduled.contains(where: { $0.runLoop === RunLoop.main }) { return .queue(.main) }
        guard let first = scheduled.first else { return .queue(link.appQueue) }
        return .runLoop(first.runLoop, scheduled.filter { $0.runLoop === first.runLoop }.map(\.mode))
    }

    /// At the home it was handed to (`generation`): applies the items up to `limit`, then
    /// delivers the events due.
    private func settle(upTo limit: UInt64, generation: UInt64) {
        lock.withLock {
            var applied = 0
            for (sequence, item) in inbox {
                guard sequence <= limit else { break }
                machine.apply(item)
                applied += 1
            }
            inbox.removeFirst(applied)
        }
        pass(generation)
    }

    // MARK: Events

    /// Queues a pass of event delivery at the stream's home (after the app opened, scheduled,
    /// read or wrote), unless one is queued already.
    func requestPass() {
        guard let link else { return }
        let target = lock.withLock { () -> (L2CAPStreamLink.Home, UInt64)? in
            guard !passQueued, !scheduled.isEmpty, machine.status.isOpened else { return nil }
            passQueued = true
            return (currentHome(for: link), homeGeneration)
        }
        guard let (home, generation) = target else { return }
        link.deliver(on: home) { [self] in
            lock.withLock { passQueued = false }
            pass(generation)
        }
    }

    /// Delivers the events due, each once; queues another pass if the delegate made one due
    /// again. Nothing when the stream moved to another home since the pass was queued (the move
    /// queued a pass there).
    private func pass(_ generation: UInt64) {
        var delivered: Stream.Event = []
        while true {
            let next = lock.withLock { () -> (Stream.Event, (any StreamDelegate)?, Stream?)? in
                guard generation == homeGeneration, !scheduled.isEmpty,
                    let event = machine.dueEvent(excluding: delivered)
                else { return nil }
                machine.delivered(event)
                return (event, storedDelegate, stream)
            }
            guard let (event, delegate, stream) = next else { break }
            delivered.insert(event)
            guard let stream, let delegate else { continue }
            #if canImport(Darwin)
                delegate.stream?(stream, handle: event)
            #else
                delegate.stream(stream, handle: event)
            #endif
        }
        let again = lock.withLock { generation == homeGeneration && machine.dueEvent(excluding: []) != nil }
        if again { requestPass() }
    }

    // MARK: Run loops

    /// Schedules the stream in `runLoop` (the main one when `runLoop` is the current run loop of
    /// code on the main queue: see ``L2CAPStreamHome/runLoop(for:)``).
    ///
    /// In a run loop other than the main one the stream keeps the run loop running, as
    /// CoreBluetooth's stream does with the source it adds (a thread that schedules it and calls
    /// `RunLoop.current.run()` waits there for its events), until it is removed from the run
    /// loop or closed.
    func schedule(in runLoop: RunLoop, forMode mode: RunLoop.Mode) {
        let runLoop = L2CAPStreamHome.runLoop(for: runLoop)
        let keepAlive = runLoop === RunLoop.main ? nil : KeepAlive()
        let added = lock.withLock { () -> Bool in
            guard !scheduled.contains(where: { $0.runLoop === runLoop && $0.mode == mode }) else { return false }
            scheduled.append((runLoop, mode))
            homeGeneration += 1
            passQueued = false
            guard let keepAlive, machine.status != .closed else { return false }
            keepAlives.append((runLoop, mode, keepAlive))
            return true
        }
        if added, let keepAlive { keepAlive.start(in: runLoop, mode: mode) }
        updateProbe()
        settleAtNewHome()
    }

    func remove(from runLoop: RunLoop, forMode mode: RunLoop.Mode) {
        let runLoop = L2CAPStreamHome.runLoop(for: runLoop)
        let ended = lock.withLock { () -> [(runLoop: RunLoop, mode: RunLoop.Mode, timer: KeepAlive)] in
            let before = scheduled.count
            scheduled.removeAll { $0.runLoop === runLoop && $0.mode == mode }
            if scheduled.count != before {
                homeGeneration += 1
                passQueued = false
            }
            let ended = keepAlives.filter { $0.runLoop === runLoop && $0.mode == mode }
            keepAlives.removeAll { $0.runLoop === runLoop && $0.mode == mode }
            return ended
        }
        for entry in ended { entry.timer.end(in: entry.runLoop, mode: entry.mode) }
        updateProbe()
        settleAtNewHome()
    }

    /// After the stream moved: applies, at its new home, the items handed to the old one before
    /// the move (which may never run them: a run loop nobody runs, a thread that ended), then
    /// delivers the events due. The items after the move come to the new home after this.
    private func settleAtNewHome() {
        guard let link else { return }
        let (home, generation, limit) = lock.withLock { (currentHome(for: link), homeGeneration, nextSequence) }
        guard limit > 0 else { return requestPass() }
        link.deliver(on: home) { [self] in settle(upTo: limit - 1, generation: generation) }
    }

    /// The app closed the stream: it no longer keeps run loops running (CFStream detaches its
    /// source as it closes).
    private func closed() {
        let ended = lock.withLock { () -> [(runLoop: RunLoop, mode: RunLoop.Mode, timer: KeepAlive)] in
            defer { keepAlives = [] }
            return keepAlives
        }
        for entry in ended { entry.timer.end(in: entry.runLoop, mode: entry.mode) }
        updateProbe()
    }

    /// Keeps a probe on the main queue while the events go there and the stream is open, so a
    /// run waits for them before moving time (the manager's queue has its own).
    func updateProbe() {
        guard let link else { return }
        let change = lock.withLock { () -> (add: Bool, remove: Int?) in
            let wanted =
                machine.status.isOpened && !CommandQueue.isMain(link.appQueue)
                && scheduled.contains(where: { $0.runLoop === RunLoop.main })
            if wanted, probe == nil { return (true, nil) }
            if !wanted, let token = probe {
                probe = nil
                return (false, token)
            }
            return (false, nil)
        }
        if let token = change.remove { link.outside.removeProbe(token) }
        guard change.add else { return }
        let token = link.outside.addProbe {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                DispatchQueue.main.async { continuation.resume() }
            }
        }
        let extra = lock.withLock { () -> Int? in
            guard probe == nil else { return token }
            probe = token
            return nil
        }
        if let extra { link.outside.removeProbe(extra) }
    }
}

/// Whether the code running is a callback of the kit on the app's side: a delegate call of a
/// manager or a peripheral, or a stream's event pass.
enum KitCallback {
    /// True while the kit runs a callback: the kit runs each as a block of its own (on the app's
    /// queue, or in a run loop the stream is scheduled in) with `MockBLEBridge.current` bound, and
    /// outside any task. (The app's own blocks have no bridge bound; a test's body, and tasks,
    /// run in a task. Told this way rather than by a task-local of its own, which would cost every
    /// callback a push and a pop.)
    static var isRunning: Bool {
        MockBLEBridge.current != nil && withUnsafeCurrentTask { $0 == nil }
    }
}

/// A timer that never fires, in a run loop a stream is scheduled in: a run loop with no timer
/// and no source returns from `run()` at once, and a stream's events come to that run loop as
/// timers of their own (see ``L2CAPStreamLink/deliver(on:_:)``).
final class KeepAlive: @unchecked Sendable {
    // @unchecked Sendable: `timer` is immutable; it is only invalidated on its run loop's thread.
    private let timer = Timer(fire: .distantFuture, interval: 0, repeats: false) { _ in }

    func start(in runLoop: RunLoop, mode: RunLoop.Mode) {
        runLoop.add(timer, forMode: mode)
    }

    /// Removes the timer from its run loop: at once on the run loop's thread, else when that run
    /// loop next runs in `mode` (a timer wakes it; a timer may only be invalidated on the thread
    /// it was added on).
    func end(in runLoop: RunLoop, mode: RunLoop.Mode) {
        if runLoop === RunLoop.current {
            timer.invalidate()
            return
        }
        let hop = Timer(timeInterval: 0, repeats: false) { [self] _ in timer.invalidate() }
        runLoop.add(hop, forMode: mode)
    }
}

/// Where a stream scheduled in a run loop has its events.
enum L2CAPStreamHome {
    /// The run loop a stream scheduled in `runLoop` has its events in: the main run loop when
    /// `runLoop` is the current run loop of code on the main queue.
    ///
    /// On a device the main queue runs on the main thread, whose run loop is the main one, so an
    /// app that schedules its streams in `RunLoop.current` from a callback on the main queue gets
    /// its events in the main run loop. On Linux, once the main thread has called
    /// `dispatchMain()` (as Swift's test runners do), a worker thread serves the main queue, and
    /// its current run loop is one nobody runs.
    static func runLoop(for runLoop: RunLoop) -> RunLoop {
        guard runLoop !== RunLoop.main, runLoop === RunLoop.current, isOnMainQueue else { return runLoop }
        return .main
    }

    /// Whether the caller runs on the main queue (on its thread, or on a worker thread serving it).
    private static var isOnMainQueue: Bool {
        if Thread.isMainThread { return true }
        _ = mainQueueTagged
        return DispatchQueue.getSpecific(key: mainQueueKey) != nil
    }

    /// What the main queue carries to tell it apart from other queues (under ``mainQueueKey``).
    private final class MainQueueTag: Sendable {}

    /// The key of the main queue's ``MainQueueTag`` (a constant: the key's identity).
    private static let mainQueueKey = DispatchSpecificKey<MainQueueTag>()

    /// Tags the main queue, once (an immutable mark: every bridge's streams read the same).
    private static let mainQueueTagged: Bool = {
        DispatchQueue.main.setSpecific(key: mainQueueKey, value: MainQueueTag())
        return true
    }()
}
