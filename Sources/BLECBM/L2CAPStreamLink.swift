import BLECore
import BLEMockKit
import Foundation

/// What the two streams of one simulated L2CAP channel end share (a ``CBML2CAPChannel`` on a
/// bridge): the way to the bridge for their sends and the channel's closing, and the way back
/// to the app's thread for their events.
///
/// No task of its own: sends are front-end commands (applied on the bridge in the app's order,
/// as its other calls are), their ends and the bytes that arrive come back on the bridge's
/// executor, in the simulation's order, and are handed to the stream's run loop through the
/// same delivery as the delegate callbacks (see ``FrontEndLane/deliver(_:)``): a run
/// (`MockBLEBridge.run`) waits for them, and counts them as outside activity.
final class L2CAPStreamLink: @unchecked Sendable {
    // @unchecked Sendable: `inputClosed`, `outputClosed`, `sendsInFlight`, `closing` and
    // `ended` are only read and written with `lock` held; the rest is immutable.

    /// Where a stream's events run.
    enum Home {
        /// A dispatch queue: the main queue for a stream scheduled in the main run loop, the
        /// manager's queue for a stream scheduled nowhere (its state still follows the
        /// simulation there, with no events).
        case queue(DispatchQueue)
        /// Another run loop, in these modes.
        case runLoop(RunLoop, [RunLoop.Mode])
    }

    let channel: L2CAPChannel
    /// Whether this is the central's end.
    let atCentral: Bool
    /// The manager's queue (where a stream scheduled nowhere follows the simulation).
    let appQueue: DispatchQueue
    /// Weak: the streams may outlive the test's bridge (then they hear nothing more).
    private weak var bridge: MockBLEBridge?
    private let commands: CommandQueue
    let outside: OutsideWork
    /// Runs a body on the bridge's executor, as a command of the manager's lane.
    private let command: @Sendable (@escaping @Sendable (isolated MockBLEBridge) -> Void) -> Void
    private let lock = Lock()
    private var inputClosed = false
    private var outputClosed = false
    private var sendsInFlight = 0
    /// Whether the channel closes once the sends in flight have crossed (both streams closed).
    private var closing = false
    /// Whether the channel has closed (or this end asked it to).
    private var ended = false

    init(
        channel: L2CAPChannel, atCentral: Bool, bridge: MockBLEBridge, appQueue: DispatchQueue,
        command: @escaping @Sendable (@escaping @Sendable (isolated MockBLEBridge) -> Void) -> Void
    ) {
        self.channel = channel
        self.atCentral = atCentral
        self.bridge = bridge
        self.appQueue = appQueue
        commands = CommandQueue.of(bridge)
        outside = bridge.outside
        self.command = command
    }

    /// Sends `data` (bytes an output stream accepted): `ended` runs on the bridge's executor
    /// once they have crossed, or once the channel closed under them.
    func send(_ data: Data, ended: @escaping @Sendable () -> Void) {
        lock.withLock { sendsInFlight += 1 }
        let (channel, atCentral) = (channel, atCentral)
        command { [self] bridge in
            bridge.beginL2CAPSend(data, on: channel, fromCentral: atCentral) { _ in
                // (A send fails only when the channel has closed: its streams hear of the end.)
                ended()
                self.sendEnded()
            }
        }
    }

    private func sendEnded() {
        let close = lock.withLock { () -> Bool in
            sendsInFlight -= 1
            guard closing, sendsInFlight == 0, !ended else { return false }
            ended = true
            return true
        }
        if close { closeChannel() }
    }

    /// The app closed one of the streams: once both are, the channel closes (after the bytes
    /// the output stream accepted have crossed), as CoreBluetooth's does.
    func streamClosed(input: Bool) {
        let close = lock.withLock { () -> Bool in
            if input { inputClosed = true } else { outputClosed = true }
            guard inputClosed, outputClosed, !ended else { return false }
            closing = true
            guard sendsInFlight == 0 else { return false }
            ended = true
            return true
        }
        if close { closeChannel() }
    }

    /// The app let go of the channel object (`CBML2CAPChannel`): the channel closes now, as
    /// CoreBluetooth's does when its `CBL2CAPChannel` goes (the app must keep it), whatever its
    /// streams are doing (bytes they still hold are not sent).
    func channelReleased() {
        let close = lock.withLock { () -> Bool in
            guard !ended else { return false }
            ended = true
            return true
        }
        if close { closeChannel() }
    }

    /// The channel closed (at either end, or with its link).
    func channelEnded() {
        lock.withLock { ended = true }
    }

    private func closeChannel() {
        let channel = channel
        command { bridge in bridge.closeL2CAPChannelNow(channel) }
    }

    /// Runs `body` at `home`, after what was handed there before; it counts as outside activity
    /// once it has run, and `MockBLEBridge.current` is the bridge meanwhile (so
    /// ``KitCallback/isRunning`` is true).
    func deliver(on home: Home, _ body: @escaping @Sendable () -> Void) {
        let bridge = bridge
        switch home {
        case .queue(let queue):
            // (Held in `bridge` for the call: the command queue holds it unowned.)
            if bridge != nil { commands.deliver(on: queue, body) } else { queue.async(execute: body) }
        case .runLoop(let runLoop, let modes):
            let outside = outside
            // A timer wakes a run loop that sleeps (a performed block would wait for another
            // reason to wake it); the body keeps the order by itself (see `L2CAPStreamCore`).
            let timer = Timer(timeInterval: 0, repeats: false) { _ in
                if let bridge { MockBLEBridge.$current.withValue(bridge) { body() } } else { body() }
                outside.noteActivity()
            }
            for mode in modes { runLoop.add(timer, forMode: mode) }
        }
    }
}
