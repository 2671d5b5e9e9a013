import BLECore
import BLEMockKit
import Foundation

/// A remote device (`CBPeer`): its identifier.
open class CBMPeer: NSObject, @unchecked Sendable {
    // @unchecked Sendable: immutable here; subclasses keep their state behind a lock.

    /// The peer's identifier: the same for the same device on this system.
    public let identifier: UUID

    init(identifier: UUID) {
        self.identifier = identifier
        super.init()
    }
}

/// A remote peripheral as a central sees it (`CBPeripheral`): one object per peripheral per
/// central manager, with its services, and the GATT calls whose results arrive at its
/// ``delegate``.
///
/// Keep the objects you connect, as with CoreBluetooth: a ``CBMCentralManager`` holds them
/// weakly, and letting go of one whose link is up or being made cancels the link (no callback
/// follows), noted in ``CBMCentralManager/apiMisuses`` as CoreBluetooth's "API MISUSE:
/// Cancelling connection for unused peripheral". (CoreBluetoothMock's ``CBMCentralManagerMock``
/// keeps the objects it hands out, and they keep their delegates, as CoreBluetoothMock's do.)
open class CBMPeripheral: CBMPeer, @unchecked Sendable {
    // @unchecked Sendable: every mutable property is only read and written with `lock` held.
    let lock: Lock
    /// The manager's backend. Weak: the backend keeps its peripheral objects, and a peripheral
    /// must not keep its manager alive (an app that lets go of its manager ends its scans and
    /// connections, as with CoreBluetooth); calls on a peripheral whose manager is gone do
    /// nothing.
    private(set) weak var backend: (any CentralBackend)?
    private weak var storedDelegate: (any CBMPeripheralDelegate)?
    /// The delegate again, held strongly, when the peripheral keeps it (``keepsDelegate``).
    private var keptDelegate: (any CBMPeripheralDelegate)?
    /// Whether the peripheral keeps its delegate alive: a ``CBMCentralManagerMock``'s does, as
    /// CoreBluetoothMock's peripheral holds its delegate strongly (apps tested with it may set a
    /// delegate nothing else keeps); CoreBluetooth's peripheral holds it weakly, as does a
    /// ``CBMCentralManager``'s here. Set by the manager when it makes the object.
    var keepsDelegate = false
    var storedName: String?
    var storedState: CBMPeripheralState = .disconnected
    var storedServices: [CBMService]?
    var storedANCSAuthorized = false
    var storedRSSI: NSNumber?
    /// Whether the system reconnects the peripheral when its link drops
    /// (``CBMConnectPeripheralOptionEnableAutoReconnect``), until the app cancels.
    var reconnectsAutomatically = false
    /// Attribute objects of the current connection, by handle.
    var serviceObjects: [UInt16: CBMService] = [:]
    var characteristicObjects: [UInt16: CBMCharacteristic] = [:]
    var descriptorObjects: [UInt16: CBMDescriptor] = [:]

    init(_ remote: RemotePeripheral, backend: any CentralBackend, lock: Lock) {
        self.backend = backend
        self.lock = lock
        self.storedName = remote.name
        super.init(identifier: remote.identifier)
    }

    deinit {
        // CoreBluetooth cancels the connection (or the attempt) of a peripheral the app did not
        // keep: the manager keeps none itself. Only a peripheral the app connected, or is
        // connecting, can have one. (Read without the lock: nothing else holds the object now,
        // and the manager's lock may be held by the code dropping it.)
        guard storedState != .disconnected else { return }
        backend?.peripheralReleased(identifier)
    }

    /// Receives the results of this peripheral's calls, on the manager's queue. Held weakly, as
    /// CoreBluetooth holds it, but by a ``CBMCentralManagerMock``'s peripheral, which keeps it
    /// alive, as CoreBluetoothMock's peripheral does, until its manager goes (it hears nothing more
    /// then) or the test is over: the simulated system it is on torn down (the object is invalid
    /// then), a seed's run of the `.mockBridge` trait or of `runOnMockBridge` ended, or `finish()`
    /// called on the test's own bridge. (An app that keeps it and is its delegate would otherwise
    /// keep itself alive.)
    open var delegate: (any CBMPeripheralDelegate)? {
        get { lock.withLock { storedDelegate } }
        set {
            lock.withLock {
                storedDelegate = newValue
                keptDelegate = keepsDelegate ? newValue : nil
            }
        }
    }

    /// With the lock held: stops keeping the delegate alive, for an object of a simulation that
    /// has ended (it gets no callback again). Returns the delegate it kept: let go of it once the
    /// lock is released (the app may go with it, and its deinit is the app's code).
    func releaseKeptDelegate() -> (any CBMPeripheralDelegate)? {
        keepsDelegate = false
        defer { keptDelegate = nil }
        return keptDelegate
    }

    /// The delegate the backends call: the app's, or a recording stand-in for it while the
    /// manager records.
    var deliveryDelegate: (any CBMPeripheralDelegate)? {
        let delegate = self.delegate
        guard let recording = backend?.recording else { return delegate }
        return RecordingPeripheralDelegate(wrapping: delegate, recording: recording)
    }

    /// The peripheral's name, as the system knows it: the local name it last advertised until
    /// the system has connected to it (`nil` when it advertised none), then its GAP device name,
    /// which the system keeps from then on (read `CBMAdvertisementDataLocalNameKey` in
    /// `centralManager(_:didDiscover:advertisementData:rssi:)` for the name it advertises now).
    open var name: String? { lock.withLock { storedName } }
    /// The state of the connection to the app.
    open var state: CBMPeripheralState { lock.withLock { storedState } }
    /// The services discovered on this connection, or `nil` before discovery (and after a
    /// disconnection).
    open var services: [CBMService]? { lock.withLock { storedServices } }
    /// The RSSI of the last ``readRSSI()`` (deprecated in CoreBluetooth; use the callback).
    open var rssi: NSNumber? { lock.withLock { storedRSSI } }
    /// Whether the peripheral may receive ANCS notifications through this system.
    open var ancsAuthorized: Bool { lock.withLock { storedANCSAuthorized } }

    /// Whether a write without response sent now would be queued: `false` while the queue of
    /// writes without response is full (the delegate is told with
    /// `peripheralIsReady(toSendWriteWithoutResponse:)` when there is room again) and while not
    /// connected.
    open var canSendWriteWithoutResponse: Bool { backend?.canSendWriteWithoutResponse(self) ?? false }

    /// The longest value a write of this type may carry: ATT_MTU − 3 without response, 512
    /// with response (the stack writes longer values in parts itself).
    open func maximumWriteValueLength(for type: CBMCharacteristicWriteType) -> Int {
        backend?.maximumWriteValueLength(self, type: type) ?? Self.maximumWriteValueLengthWithoutLink(for: type)
    }

    /// ``maximumWriteValueLength(for:)`` of a peripheral with no link to go by: 512 with
    /// response (the stack writes longer values in parts), 20 without (the default ATT_MTU, 23,
    /// less 3).
    static func maximumWriteValueLengthWithoutLink(for type: CBMCharacteristicWriteType) -> Int {
        type == .withResponse ? 512 : 20
    }

    /// Discovers services (all when `serviceUUIDs` is `nil`); the delegate gets
    /// `peripheral(_:didDiscoverServices:)`.
    open func discoverServices(_ serviceUUIDs: [CBMUUID]?) {
        backend?.discoverServices(serviceUUIDs, for: self)
    }

    /// Discovers a service's included services; the delegate gets
    /// `peripheral(_:didDiscoverIncludedServicesFor:error:)`.
    open func discoverIncludedServices(_ includedServiceUUIDs: [CBMUUID]?, for service: CBMService) {
        backend?.discoverIncludedServices(includedServiceUUIDs, for: service, of: self)
    }

    /// Discovers a service's characteristics; the delegate gets
    /// `peripheral(_:didDiscoverCharacteristicsFor:error:)`.
    open func discoverCharacteristics(_ characteristicUUIDs: [CBMUUID]?, for service: CBMService) {
        backend?.discoverCharacteristics(characteristicUUIDs, for: service, of: self)
    }

    /// Discovers a characteristic's descriptors; the delegate gets
    /// `peripheral(_:didDiscoverDescriptorsFor:error:)`.
    open func discoverDescriptors(for characteristic: CBMCharacteristic) {
        backend?.discoverDescriptors(for: characteristic, of: self)
    }

    /// Reads a characteristic; the delegate gets `peripheral(_:didUpdateValueFor:error:)`.
    open func readValue(for characteristic: CBMCharacteristic) {
        guard let backend else { return }
        backend.recording?.readRequested(identifier, characteristic.remote.handle)
        backend.readValue(for: characteristic, of: self)
    }

    /// Reads a descriptor; the delegate gets `peripheral(_:didUpdateValueFor:error:)` for it.
    open func readValue(for descriptor: CBMDescriptor) {
        guard let backend else { return }
        backend.recording?.readRequested(identifier, descriptor.remote.handle)
        backend.readValue(for: descriptor, of: self)
    }

    /// Writes a characteristic. With response, the delegate gets
    /// `peripheral(_:didWriteValueFor:error:)`; without, nothing (check
    /// ``canSendWriteWithoutResponse`` first: a write sent while the queue is full is dropped).
    open func writeValue(_ data: Data, for characteristic: CBMCharacteristic, type: CBMCharacteristicWriteType) {
        guard let backend else { return }
        if let recording = backend.recording {
            let handle = characteristic.remote.handle
            if type == .withResponse {
                recording.writeRequested(identifier, handle, data)
            } else if !backend.recordsWritesWithoutResponse {
                recording.recorder.record(
                    .write(peripheral: identifier, handle: handle, value: .bytes(data), withResponse: false, error: nil)
                )
            }
        }
        backend.writeValue(data, for: characteristic, type: type, of: self)
    }

    /// Writes a descriptor; the delegate gets `peripheral(_:didWriteValueFor:error:)` for it.
    open func writeValue(_ data: Data, for descriptor: CBMDescriptor) {
        guard let backend else { return }
        backend.recording?.writeRequested(identifier, descriptor.remote.handle, data)
        backend.writeValue(data, for: descriptor, of: self)
    }

    /// Turns notifications (or indications) on or off; the delegate gets
    /// `peripheral(_:didUpdateNotificationStateFor:error:)`.
    open func setNotifyValue(_ enabled: Bool, for characteristic: CBMCharacteristic) {
        backend?.setNotifyValue(enabled, for: characteristic, of: self)
    }

    /// Reads the link's RSSI; the delegate gets `peripheral(_:didReadRSSI:error:)`.
    open func readRSSI() {
        backend?.readRSSI(of: self)
    }

    /// Opens an L2CAP channel; the delegate gets `peripheral(_:didOpen:error:)`.
    open func openL2CAPChannel(_ psm: UInt16) {
        backend?.openL2CAPChannel(psm, on: self)
    }

    public override var description: String {
        "<CBMPeripheral: \(identifier.uuidString), name: \(name ?? "nil"), state: \(state)>"
    }
}

/// An L2CAP channel (`CBL2CAPChannel`): the PSM, the peer, and the channel's input and output
/// streams.
///
/// On a bridge the streams are Foundation streams over the simulated channel, for both roles:
/// open them, schedule them in a run loop and read and write as with CoreBluetooth's (see
/// ``inputStream`` and ``outputStream``). The kit's own ``channel`` is there too, for tests
/// that read its `incoming` stream or call `send(_:)` themselves.
///
/// Keep a reference to the object while the channel is in use, as with CoreBluetooth: letting
/// go of it closes the channel (on a bridge at once, bytes the output stream still holds
/// unsent; both ends' streams then end), as CoreBluetooth closes a channel whose
/// `CBL2CAPChannel` the app did not keep.
open class CBML2CAPChannel: NSObject, @unchecked Sendable {
    // @unchecked Sendable: immutable after init (the streams guard their own state).

    /// The PSM the channel was opened on.
    public let psm: UInt16
    /// The peer at the other end.
    public let peer: CBMPeer
    /// On a bridge, the simulated channel: send with `send(_:)`, read `incoming` (`nil` on
    /// CoreBluetooth).
    ///
    /// Its `incoming` stream gets the same bytes as ``inputStream``: read one of them (the bytes
    /// of the other wait in memory until the channel object goes away).
    public let channel: L2CAPChannel?
    /// The bytes the other end sends, in order (CoreBluetooth's `inputStream`).
    ///
    /// On a bridge: open it and schedule it in a run loop (`RunLoop.main` or the current one);
    /// its delegate hears `.openCompleted`, `.hasBytesAvailable` while bytes wait to be read, and
    /// `.endEncountered` once the channel has closed (at either end, or as the link dropped) and
    /// every byte has been read. `read(_:maxLength:)` never waits: it returns the bytes buffered,
    /// 0 when there are none or at the end (`streamStatus` is then `.atEnd`), -1 when the stream
    /// is not open or `maxLength` is negative. Bytes that arrived before the stream was opened or
    /// scheduled are there when it is, and their event comes then.
    ///
    /// Events of a stream scheduled in `RunLoop.main` come on the main queue (which the main run
    /// loop serves, on Apple platforms, on Linux and in XCTest's `wait(for:)`), and so do those
    /// of a stream scheduled in `RunLoop.current` on the main queue, as on a device (on Linux a
    /// worker thread may serve the main queue, whose own run loop nobody runs); in another run
    /// loop, when that run loop runs (a dispatch queue's thread does not run its own; a thread
    /// that runs its run loop with `run()` keeps running while the stream is scheduled there and
    /// not closed, as with CoreBluetooth's stream, whose source keeps it running; what was on
    /// its way there reaches the stream when it moves to another); in none, not at all. A
    /// `MockBLEBridge.run` waits for those on the main queue before moving virtual time.
    ///
    /// Polled instead, wherever it is scheduled (in no run loop, or in one nobody runs), as
    /// Foundation allows: `hasBytesAvailable`, `read` and `streamStatus` see every byte that has
    /// arrived; in a callback of the kit (a stream event, a delegate call), the stream is as of
    /// that point in the simulation, so every run of a seed reads the same. The stream is its own
    /// delegate until one is set (and again once `nil` is set), and `close()` before `open()`
    /// does nothing, as with Foundation's streams.
    public let inputStream: InputStream!
    /// Where the app writes bytes for the other end (CoreBluetooth's `outputStream`).
    ///
    /// On a bridge: open it and schedule it in a run loop; its delegate hears `.openCompleted`
    /// and `.hasSpaceAvailable`. `write(_:maxLength:)` never waits: it takes as many bytes as its
    /// buffer holds (four SDUs of the channel's MTU in all, until they have crossed the link) and
    /// returns that count, 0 when the buffer is full, -1 when the stream is not open, closed or at
    /// its end, or `maxLength` is negative; `.hasSpaceAvailable` comes again once sends have
    /// crossed (at the link's pace: waiting for credits in realistic mode), after a write of one
    /// byte or more (a delegate that writes nothing, or zero bytes, hears no more until it does).
    /// The bytes arrive in the order written. `.endEncountered` comes when the channel closes at
    /// the other end or its link drops. Closing both streams (once opened: `close()` before
    /// `open()` does nothing) closes the channel, once the bytes written have crossed. Polled,
    /// wherever it is scheduled, `hasSpaceAvailable` and `write` see the room the crossed sends
    /// freed (in a callback of the kit, as of that point in the simulation), as with
    /// ``inputStream``.
    public let outputStream: OutputStream!

    /// What letting go of the object does (on a bridge: close the channel).
    private let released: (@Sendable () -> Void)?

    init(
        psm: UInt16, peer: CBMPeer, channel: L2CAPChannel?, inputStream: InputStream? = nil,
        outputStream: OutputStream? = nil, released: (@Sendable () -> Void)? = nil
    ) {
        self.psm = psm
        self.peer = peer
        self.channel = channel
        self.inputStream = inputStream
        self.outputStream = outputStream
        self.released = released
        super.init()
    }

    deinit {
        released?()
    }
}
