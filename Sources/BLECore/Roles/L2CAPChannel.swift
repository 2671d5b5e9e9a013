#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// One end of an L2CAP connection-oriented channel (as `CBL2CAPChannel`): a bidirectional,
/// ordered byte stream between a central and a peripheral, identified by the peripheral's
/// PSM (protocol/service multiplexer).
///
/// Read what the other end sends from ``incoming``; send with ``send(_:)``, which returns
/// once the bytes were accepted by the channel (waiting for flow-control credits when the
/// channel is busy); ``close()`` ends the channel at both ends.
public struct L2CAPChannel: Sendable, Hashable, CustomStringConvertible {
    /// The PSM the channel was opened to.
    public let psm: UInt16
    /// The other end: the peripheral's identifier on the central's end, the central's on the
    /// peripheral's end.
    public let peer: UUID
    /// Distinguishes channel ends (two channels to one PSM differ).
    public let id: UInt64
    /// The largest service data unit the channel carries in one piece (its MTU).
    public let mtu: Int
    private let endpoint: any L2CAPEndpoint

    /// Creates a channel end served by `endpoint` (implementations of the role protocols do).
    public init(psm: UInt16, peer: UUID, id: UInt64, mtu: Int, endpoint: any L2CAPEndpoint) {
        self.psm = psm
        self.peer = peer
        self.id = id
        self.mtu = mtu
        self.endpoint = endpoint
    }

    /// The bytes the other end sends, in order, as they arrive; the stream finishes when the
    /// channel closes or its link drops. Meant for one reader.
    ///
    /// Over the kit's mocks, each access is a new stream over the bytes not yet read: a read
    /// whose task is cancelled (a read with a timeout, say) returns `nil` and ends its own stream
    /// only, and the bytes that arrive later wait for the next read, from `incoming` again.
    public var incoming: AsyncStream<Data> { endpoint.incoming }

    /// Sends bytes to the other end.
    ///
    /// Returns when the send is done: over the kit's simulated link (the mocks), once all of
    /// `data` has arrived at the other end; over CoreBluetooth, once the channel's output stream
    /// has taken its last byte (CoreBluetooth confirms no delivery).
    ///
    /// - Throws: ``CoreBluetoothError/Code/notConnected`` when the channel is closed before the
    ///   call, or closes before the send returns (by either end's ``close()``, or by the
    ///   peripheral unpublishing its PSM): the bytes that had not arrived are lost, and the other
    ///   end's ``incoming`` does not get them. `CoreBluetoothError` with the link's error when
    ///   the link drops first.
    public func send(_ data: Data) async throws { try await endpoint.send(data) }

    /// Closes the channel at both ends.
    public func close() async { await endpoint.close() }

    public static func == (lhs: L2CAPChannel, rhs: L2CAPChannel) -> Bool {
        lhs.id == rhs.id && lhs.psm == rhs.psm && lhs.peer == rhs.peer
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(id)
        hasher.combine(psm)
    }

    /// E.g. `L2CAP channel 0x0080 #3`.
    public var description: String {
        "L2CAP channel 0x" + String(psm, radix: 16, uppercase: true).leftPadded(to: 4) + " #\(id)"
    }
}

/// What serves an ``L2CAPChannel`` end: a mock's simulated channel, or CoreBluetooth's streams.
public protocol L2CAPEndpoint: Sendable {
    /// The bytes received, in order (see ``L2CAPChannel/incoming``).
    var incoming: AsyncStream<Data> { get }
    /// Sends bytes.
    func send(_ data: Data) async throws
    /// Closes the channel.
    func close() async
}

/// Why an L2CAP channel could not be opened: the result codes of the LE credit-based
/// connection response (Bluetooth Core Specification, Vol 3, Part A, 4.23), with their raw
/// values.
public struct L2CAPError: Error, Hashable, Sendable, CustomStringConvertible {
    /// A connection result code.
    public enum Code: UInt16, Sendable, Hashable, CaseIterable {
        /// No channel is published at the PSM ("SPSM not supported").
        case psmNotSupported = 0x0002
        /// The peripheral has no resources for another channel.
        case noResourcesAvailable = 0x0004
        /// The channel needs encryption and the central has no keys (pair first).
        case insufficientAuthentication = 0x0005
        /// The channel needs encryption and the link is not encrypted.
        case insufficientEncryption = 0x0008
    }

    /// The result code.
    public var code: Code

    /// Creates an error.
    public init(_ code: Code) {
        self.code = code
    }

    /// E.g. `L2CAP connection refused (0x0002 psmNotSupported): no channel is published at this PSM`.
    public var description: String {
        let raw = "0x" + String(code.rawValue, radix: 16, uppercase: true).leftPadded(to: 4)
        let why: String
        switch code {
        case .psmNotSupported: why = "no channel is published at this PSM; check the PSM the peripheral published"
        case .noResourcesAvailable: why = "the peripheral cannot open another channel"
        case .insufficientAuthentication: why = "the channel needs encryption; pair with the peripheral, then retry"
        case .insufficientEncryption: why = "the channel needs an encrypted link; encrypt it, then retry"
        }
        return "L2CAP connection refused (\(raw) \(code)): \(why)"
    }
}

extension String {
    fileprivate func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}
