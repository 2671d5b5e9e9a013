import Foundation

/// The input stream of an L2CAP channel on a bridge (``CBML2CAPChannel/inputStream``): the
/// bytes the other end sends, in order, as Foundation's `InputStream` hands them out.
///
/// It behaves as CoreBluetooth's does for an app: `open()`, then the delegate hears
/// `.openCompleted`, `.hasBytesAvailable` whenever bytes wait to be read (again after each
/// read that leaves some; a read of zero bytes does not count), and `.endEncountered` once the channel has closed (at either end, or
/// with its link) and every byte has been read; the events come on the run loop it is scheduled
/// in (see ``L2CAPStreamCore``). `read(_:maxLength:)` never waits: it returns the bytes
/// buffered (0 when there are none, or at the end; -1 when the stream is not open or
/// `maxLength` is negative). Polled (scheduled in no run loop, or in one nobody runs), it sees
/// the bytes that have arrived, as Foundation's streams do.
final class CBML2CAPInputStream: InputStream, StreamDelegate {
    // (Not Sendable, as Foundation's streams are not; its state is in `core`, behind a lock.)

    let core: L2CAPStreamCore<L2CAPInputMachine>

    init(link: L2CAPStreamLink?) {
        core = L2CAPStreamCore(machine: L2CAPInputMachine(), link: link)
        super.init(data: Data())
        core.attach(self)
    }

    /// Takes what the simulation reports (on the bridge's executor).
    func arrived(_ item: L2CAPInputMachine.Item) { core.arrived(item) }

    override func open() { core.open() }

    override func close() { core.close(input: true) }

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

    override var hasBytesAvailable: Bool { core.polled { $0.hasBytesAvailable } }

    override func read(_ buffer: UnsafeMutablePointer<UInt8>, maxLength len: Int) -> Int {
        let count = core.polled { $0.read(into: buffer, maxLength: len) }
        if count >= 0 { core.requestPass() }
        return count
    }

    /// `false`: the bytes are not kept in one buffer (read them with `read(_:maxLength:)`).
    override func getBuffer(
        _ buffer: UnsafeMutablePointer<UnsafeMutablePointer<UInt8>?>, length len: UnsafeMutablePointer<Int>
    ) -> Bool { false }

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
