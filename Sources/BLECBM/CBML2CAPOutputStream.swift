import Foundation

/// The output stream of an L2CAP channel on a bridge (``CBML2CAPChannel/outputStream``): bytes
/// written go to the other end, in order, through the simulated channel.
///
/// It behaves as CoreBluetooth's does for an app: `open()`, then the delegate hears
/// `.openCompleted` and `.hasSpaceAvailable`; `write(_:maxLength:)` never waits: it takes as
/// many bytes as its buffer has room for (``L2CAPStreamLink`` sends them; they cross at the
/// link's pace, waiting for credits in realistic mode) and returns that count (0 when full, -1
/// when the stream is not open, closed or at its end, or `maxLength` is negative). When sends
/// have crossed and freed room, the delegate hears `.hasSpaceAvailable` again (after a write:
/// a delegate that writes nothing, or writes zero bytes, hears no more until it writes; else
/// one that answers each event with a zero-length write would hear it again at once, forever,
/// and a run's virtual time would never move on). `.endEncountered` comes when
/// the channel closes (at the other end, or with its link); bytes accepted and not yet sent
/// then are lost, as on a device. Polled (scheduled in no run loop, or in one nobody runs), it
/// sees the room its crossed sends have freed, as Foundation's streams do.
final class CBML2CAPOutputStream: OutputStream, StreamDelegate {
    // (Not Sendable, as Foundation's streams are not; its state is in `core`, behind a lock.)

    /// The buffer's size in SDUs of the channel's MTU.
    static let bufferedSDUs = 4

    let core: L2CAPStreamCore<L2CAPOutputMachine>

    init(link: L2CAPStreamLink) {
        core = L2CAPStreamCore(
            machine: L2CAPOutputMachine(capacity: link.channel.mtu * Self.bufferedSDUs), link: link)
        super.init(toMemory: ())
        core.attach(self)
    }

    #if !canImport(Darwin)
        /// A stream over no channel (Foundation's `toMemory()` on Linux makes one through this
        /// initializer): it never opens to writing.
        required init(toMemory: ()) {
            core = L2CAPStreamCore(machine: L2CAPOutputMachine(capacity: 0), link: nil)
            super.init(toMemory: ())
            core.attach(self)
        }
    #endif

    /// Takes what the simulation reports (on the bridge's executor).
    func arrived(_ item: L2CAPOutputMachine.Item) { core.arrived(item) }

    override func open() { core.open() }

    override func close() { core.close(input: false) }

    /// The delegate set, or the stream itself when none is (Foundation's default: setting `nil`
    /// restores it).
    override var delegate: (any StreamDelegate)? {
        get { core.delegate }
        set { core.delegate = newValue }
    }

    /// The stream as its own delegate: it ignores its events (read, or write, by polling).
    func stream(_ aStream: Stream, handle eventCode: Stream.Event) {}

    override var streamStatus: Stream.Status { core.polled { $0.status } }

    /// Always `nil`: a simulated channel ends (`.endEncountered`) rather than fails.
    override var streamError: (any Error)? { nil }

    override var hasSpaceAvailable: Bool { core.polled { $0.hasSpaceAvailable } }

    override func write(_ buffer: UnsafePointer<UInt8>, maxLength len: Int) -> Int {
        guard let link = core.link else { return -1 }
        // The bytes taken go out in the order they were taken: the send is queued while the
        // stream's lock is held.
        let count = core.polled { machine -> Int in
            let count = machine.accept(len)
            guard count > 0 else { return count }
            let data = Data(bytes: buffer, count: count)
            link.send(data) { [weak core] in core?.arrived(.sent(count)) }
            return count
        }
        if count >= 0 { core.requestPass() }
        return count
    }

    override func schedule(in aRunLoop: RunLoop, forMode mode: RunLoop.Mode) {
        core.schedule(in: aRunLoop, forMode: mode)
    }

    override func remove(from aRunLoop: RunLoop, forMode mode: RunLoop.Mode) {
        core.remove(from: aRunLoop, forMode: mode)
    }

    #if canImport(Darwin)
        /// `nil`: the stream has no properties.
        override func property(forKey key: Stream.PropertyKey) -> Any? { nil }

        /// `false`: the stream has no properties.
        override func setProperty(_ property: Any?, forKey key: Stream.PropertyKey) -> Bool { false }
    #else
        /// `nil`: the stream has no properties.
        override func property(forKey key: Stream.PropertyKey) -> AnyObject? { nil }

        /// `false`: the stream has no properties.
        override func setProperty(_ property: AnyObject?, forKey key: Stream.PropertyKey) -> Bool { false }
    #endif
}
