/// An HCI ACL data packet: one fragment of an L2CAP frame on a connection (Bluetooth Core
/// Specification, Vol 4, Part E, 5.4.2).
public struct ACLFragment: Sendable, Hashable {
    /// The Packet_Boundary_Flag.
    public enum Boundary: UInt8, Sendable, Hashable {
        /// 00: the first fragment of a non-flushable L2CAP frame (host to controller).
        case firstNonFlushable = 0
        /// 01: a continuing fragment.
        case continuing = 1
        /// 10: the first fragment of a flushable L2CAP frame (the controller sends LE data so).
        case firstFlushable = 2
        /// 11: a complete L2CAP frame (deprecated, AMP).
        case complete = 3

        /// Whether this fragment starts an L2CAP frame.
        public var startsFrame: Bool { self != .continuing }
    }

    /// The connection handle (12 bits).
    public var handle: UInt16
    /// Where the fragment falls in its L2CAP frame.
    public var boundary: Boundary
    /// The Broadcast_Flag (0 for LE).
    public var broadcast: UInt8
    /// The fragment's bytes.
    public var data: [UInt8]

    /// Creates a fragment.
    public init(handle: UInt16, boundary: Boundary, broadcast: UInt8 = 0, data: [UInt8]) {
        self.handle = handle
        self.boundary = boundary
        self.broadcast = broadcast
        self.data = data
    }
}
