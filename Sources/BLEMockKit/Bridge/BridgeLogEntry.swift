import BLECore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// One thing that happened on a bridge: who did what to which attribute, with which bytes,
/// and how it ended, at which virtual time. ``MockBLEBridge/log`` holds them in order, so
/// tests can check interactions without spies of their own, and scenario traces print them.
public struct BridgeLogEntry: Hashable, Sendable {
    /// What happened.
    public enum Kind: String, Hashable, Sendable, CaseIterable {
        case stateChanged, scanStarted, scanStopped, discovered
        case advertisingStarted, advertisingStopped, serviceAdded, serviceRemoved
        case connecting, connected, connectionFailed, disconnected
        case servicesDiscovered, includedServicesDiscovered, characteristicsDiscovered, descriptorsDiscovered
        case read, readDescriptor, write, writeDescriptor, subscribe, unsubscribe
        case readRequest, writeRequest, response, notification, indication, truncated, rssiRead
        /// A central paired with a peripheral (or failed to: see `error`).
        case paired
        /// One side removed its bond; `detail` says which.
        case bondRemoved
        /// A registered central was told of a connection event; `detail` names it.
        case connectionEvent
        /// A central's user changed a peripheral's ANCS access; `detail` says how.
        case ancsAuthorization
        /// An L2CAP channel was published, unpublished, opened, used or closed; `detail` says
        /// which, `value` holds bytes sent.
        case l2cap
        /// A call the stack refused before it reached the air (not powered on, not connected,
        /// a stale attribute, an invalid configuration); `detail` names the operation.
        case refused
        /// A central whose write-without-response queue to `peripheral` was full (a write was
        /// dropped, or `canSendWriteWithoutResponse` went false) was told it has room again
        /// (CoreBluetooth's `peripheralIsReady(toSendWriteWithoutResponse:)`).
        case readyToSendWriteWithoutResponse
        /// A peripheral manager whose `updateValue` returned `false` was told its update queue
        /// has room again (CoreBluetooth's `peripheralManagerIsReady(toUpdateSubscribers:)`).
        case readyToUpdateSubscribers
    }

    /// Where the entry stands in the log, from 0.
    public var index: Int
    /// The virtual time it happened at.
    public var time: VirtualClock.Instant
    /// What happened.
    public var kind: Kind
    /// The central involved, if any.
    public var central: UUID?
    /// The peripheral involved, if any.
    public var peripheral: UUID?
    /// The attribute's type (service, characteristic or descriptor UUID), if any.
    public var attribute: BluetoothUUID?
    /// The attribute's handle, if any.
    public var handle: UInt16?
    /// The bytes read, written or sent, if any.
    public var value: Data?
    /// The write type, for writes.
    public var writeType: WriteType?
    /// How it failed, if it did.
    public var error: LoggedError?
    /// Further detail: a state, an MTU, the UUIDs discovered, a truncation.
    public var detail: String?
    /// The bridge's ``MockBLEBridge/attPDUCount`` when the entry was logged: the ATT PDUs its
    /// links had carried so far. The difference between two entries counts the PDUs that
    /// crossed between them (a response is counted before the entry that reports it).
    public var attPDUCount: Int = 0

    /// Whether the operation succeeded.
    public var succeeded: Bool { error == nil }
}

/// An error as recorded in the log: an ATT error, a CoreBluetooth error or an API misuse.
public enum LoggedError: Hashable, Sendable, CustomStringConvertible {
    /// The peripheral answered with an ATT error.
    case att(ATTError)
    /// A link or stack failure.
    case coreBluetooth(CoreBluetoothError)
    /// A call the stack refused.
    case misuse(APIMisuseError)
    /// The peripheral refused an L2CAP channel.
    case l2cap(L2CAPError)

    /// Wraps an error thrown by the kit; other errors are recorded as CoreBluetooth `unknown`.
    public init(_ error: any Error) {
        switch error {
        case let error as ATTError: self = .att(error)
        case let error as CoreBluetoothError: self = .coreBluetooth(error)
        case let error as APIMisuseError: self = .misuse(error)
        case let error as L2CAPError: self = .l2cap(error)
        default: self = .coreBluetooth(CoreBluetoothError(.unknown))
        }
    }

    /// The wrapped error.
    public var error: any Error {
        switch self {
        case .att(let error): error
        case .coreBluetooth(let error): error
        case .misuse(let error): error
        case .l2cap(let error): error
        }
    }

    public var description: String {
        switch self {
        case .att(let error): error.description
        case .coreBluetooth(let error): error.description
        case .misuse(let error): error.description
        case .l2cap(let error): error.description
        }
    }
}

extension BridgeLogEntry: CustomStringConvertible {
    /// A one-line summary, e.g. `"0.03s write 2A39@8 01 withResponse central=1A2B3C4D peripheral=… ok"`.
    public var description: String {
        var parts = ["\(time)", kind.rawValue]
        if let attribute { parts.append(handle.map { "\(attribute)@\($0)" } ?? attribute.description) }
        if let value { parts.append(value.isEmpty ? "<empty>" : value.map { Self.hex($0) }.joined()) }
        if let writeType { parts.append(writeType.description) }
        if let detail { parts.append(detail) }
        if let central { parts.append("central=\(central.uuidString.prefix(8))") }
        if let peripheral { parts.append("peripheral=\(peripheral.uuidString.prefix(8))") }
        parts.append(error.map { "failed: \($0)" } ?? "ok")
        return parts.joined(separator: " ")
    }

    static func hex(_ byte: UInt8) -> String {
        let digits = String(byte, radix: 16, uppercase: true)
        return digits.count == 1 ? "0" + digits : digits
    }
}
