/// An L2CAP basic frame (B-frame): the channel and payload after reassembly (Bluetooth Core
/// Specification, Vol 3, Part A, 3.1).
public struct L2CAPFrame: Sendable, Hashable {
    /// The LE fixed channel of the Attribute Protocol.
    public static let attChannel: UInt16 = 0x0004
    /// The LE signaling channel.
    public static let leSignalingChannel: UInt16 = 0x0005
    /// The Security Manager's channel.
    public static let securityManagerChannel: UInt16 = 0x0006

    /// The connection handle it came on.
    public var handle: UInt16
    /// Which way it went.
    public var direction: HCIPacket.Direction
    /// The channel identifier (CID).
    public var channel: UInt16
    /// The information payload.
    public var payload: [UInt8]

    /// Creates a frame.
    public init(handle: UInt16, direction: HCIPacket.Direction, channel: UInt16, payload: [UInt8]) {
        self.handle = handle
        self.direction = direction
        self.channel = channel
        self.payload = payload
    }
}

/// Rebuilds L2CAP frames from ACL fragments, per connection handle and direction.
///
/// A frame starts with a fragment whose boundary flag says so; its 4-byte basic header gives
/// the payload length, and continuing fragments add bytes until it is complete. Anything that
/// does not fit — a continuation with no frame open, a new frame while one is incomplete
/// (fragments lost), more bytes than the header announced — is reported and dropped, never
/// glued onto another frame.
public struct L2CAPReassembler: Sendable {
    /// A fragment or partial frame that was dropped, and why.
    public enum Problem: Sendable, Hashable, CustomStringConvertible {
        /// A continuing fragment arrived with no frame open (its start was lost).
        case continuationWithoutStart(handle: UInt16, direction: HCIPacket.Direction, bytes: Int)
        /// A new frame started before the open one had all its bytes (fragments were lost).
        case interrupted(handle: UInt16, direction: HCIPacket.Direction, expected: Int, received: Int)
        /// A frame received more bytes than its header announced.
        case overrun(handle: UInt16, direction: HCIPacket.Direction, expected: Int, received: Int)
        /// A partial frame was abandoned (the capture lost packets, or the connection ended).
        case abandoned(handle: UInt16, direction: HCIPacket.Direction, expected: Int?, received: Int)

        public var description: String {
            switch self {
            case .continuationWithoutStart(let handle, let direction, let bytes):
                "a continuing ACL fragment of \(bytes) bytes on handle 0x\(hex(handle)) (\(direction.label)) "
                    + "had no frame to continue (its first fragment was lost)"
            case .interrupted(let handle, let direction, let expected, let received):
                "an L2CAP frame on handle 0x\(hex(handle)) (\(direction.label)) was cut off after \(received) "
                    + "of \(expected) bytes by the next frame (fragments were lost)"
            case .overrun(let handle, let direction, let expected, let received):
                "an L2CAP frame on handle 0x\(hex(handle)) (\(direction.label)) received \(received) bytes, "
                    + "more than the \(expected) its header announced"
            case .abandoned(let handle, let direction, let expected, let received):
                "an incomplete L2CAP frame on handle 0x\(hex(handle)) (\(direction.label)) was dropped after "
                    + "\(received)\(expected.map { " of \($0)" } ?? "") bytes"
            }
        }
    }

    /// What one fragment produced.
    public enum Output: Sendable, Hashable {
        /// A whole frame.
        case frame(L2CAPFrame)
        /// Something dropped.
        case problem(Problem)
    }

    private struct Key: Hashable {
        var handle: UInt16
        var direction: HCIPacket.Direction
    }

    /// The bytes of each open frame, header included.
    private var open: [Key: [UInt8]] = [:]

    /// Creates a reassembler with no open frames.
    public init() {}

    /// The length a buffer's frame will have, header included, once its header is there.
    private static func expectedLength(_ buffer: [UInt8]) -> Int? {
        guard buffer.count >= 4 else { return nil }
        return 4 + (Int(buffer[0]) | Int(buffer[1]) << 8)
    }

    /// Adds a fragment; returns the frames it completed and the problems it revealed.
    public mutating func append(_ fragment: ACLFragment, direction: HCIPacket.Direction) -> [Output] {
        let key = Key(handle: fragment.handle, direction: direction)
        var outputs: [Output] = []
        var buffer: [UInt8]
        if fragment.boundary.startsFrame {
            if let partial = open.removeValue(forKey: key) {
                outputs.append(
                    .problem(
                        .interrupted(
                            handle: key.handle, direction: direction,
                            expected: (Self.expectedLength(partial) ?? 4) - 4,
                            received: max(0, partial.count - 4))))
            }
            buffer = fragment.data
        } else {
            guard let partial = open.removeValue(forKey: key) else {
                return [
                    .problem(
                        .continuationWithoutStart(handle: key.handle, direction: direction, bytes: fragment.data.count))
                ]
            }
            buffer = partial + fragment.data
        }
        guard let expected = Self.expectedLength(buffer) else {
            open[key] = buffer
            return outputs
        }
        if buffer.count < expected {
            open[key] = buffer
        } else if buffer.count > expected {
            outputs.append(
                .problem(
                    .overrun(
                        handle: key.handle, direction: direction, expected: expected - 4, received: buffer.count - 4)))
        } else {
            let channel = UInt16(buffer[2]) | UInt16(buffer[3]) << 8
            outputs.append(
                .frame(
                    L2CAPFrame(handle: key.handle, direction: direction, channel: channel, payload: Array(buffer[4...]))
                ))
        }
        return outputs
    }

    /// Drops the open frames of `handle` (every handle when `nil`), reporting each.
    public mutating func abandon(handle: UInt16? = nil) -> [Problem] {
        var problems: [Problem] = []
        for (key, buffer) in open.sorted(by: {
            ($0.key.handle, $0.key.direction.rawValue) < ($1.key.handle, $1.key.direction.rawValue)
        })
        where handle == nil || key.handle == handle {
            open[key] = nil
            problems.append(
                .abandoned(
                    handle: key.handle, direction: key.direction, expected: Self.expectedLength(buffer).map { $0 - 4 },
                    received: max(0, buffer.count - 4)))
        }
        return problems
    }

    /// Whether a frame is open on `handle`.
    public func hasOpenFrame(handle: UInt16) -> Bool {
        open.keys.contains { $0.handle == handle }
    }
}

extension HCIPacket.Direction {
    /// `sent` or `received`, from the capturing host's point of view.
    var label: String { self == .hostToController ? "sent" : "received" }
}
