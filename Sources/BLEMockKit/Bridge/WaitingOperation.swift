import BLECore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// An operation suspended until something else happens: a connection being established, or
/// a manual peripheral answering a request.
struct WaitingOperation {
    enum Kind: Hashable, Sendable, CustomStringConvertible {
        case connect
        case read(BluetoothUUID, handle: UInt16)
        case write(BluetoothUUID, handle: UInt16)
        /// Any other operation that takes virtual time (discovery, subscribing, RSSI).
        case operation(String)

        var description: String {
            switch self {
            case .connect: "connect"
            case .read(let uuid, let handle): "read \(uuid)@\(handle)"
            case .write(let uuid, let handle): "write \(uuid)@\(handle)"
            case .operation(let name): name
            }
        }
    }

    var link: SimulationWorld.LinkKey
    var kind: Kind
    var continuation: CheckedContinuation<any Sendable, any Error>
}

/// A request delivered to a manual peripheral and not answered yet.
struct OpenRequest: Sendable {
    enum Kind: Sendable {
        /// A read (or the next Read Blob of a long read): what was read so far.
        case read(soFar: Data, remote: RemoteCharacteristic)
        /// A write batch, answered through its first request.
        case write(value: Data, remote: RemoteCharacteristic, batch: [ATTRequest])
        /// A single Read Blob (a scenario's `readRequest`): its answer completes the call.
        case blob(remote: RemoteCharacteristic)
        /// A write without response: delivered, never answered.
        case command
    }

    var request: ATTRequest
    var link: SimulationWorld.LinkKey
    /// The waiting central operation, if any.
    var waiting: UInt64?
    var kind: Kind
}

/// What finishing a bridge found: nothing left over, or the list of what was.
public enum FinishReport: Hashable, Sendable, CustomStringConvertible {
    /// Nothing was pending or unread.
    case clean
    /// Something was left over; each string describes one item.
    case leftovers([String])

    /// Whether nothing was left over.
    public var isClean: Bool { self == .clean }

    public var description: String {
        switch self {
        case .clean: "clean"
        case .leftovers(let items): "leftovers:\n" + items.map { "- " + $0 }.joined(separator: "\n")
        }
    }
}
