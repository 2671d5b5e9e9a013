import BLECore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A call CoreBluetooth accepts and quietly does less with than the app asked: it logs a
/// console warning at most, and the app carries on as if all went well. The kit does the
/// same, so app code behaves in tests as on a device, and records each one here:
/// ``MockBLEBridge/misuses`` lists them and ``MockBLEBridge/finish()`` reports them, so a
/// test catches what a device would hide. A manager configured with `strictMisuse` throws
/// ``error`` at the call instead (and one with `strictLengths` an `APIMisuseError.valueTooLong`
/// rather than cutting the value). Called through the CoreBluetooth-shaped API (BLECBM), whose
/// calls cannot throw, a strict manager's refusal is recorded here with the kind of what it
/// refused (a ``Kind/valueTruncated`` whose value was not sent at all, say): nothing was sent.
public struct Misuse: Hashable, Sendable, CustomStringConvertible {
    /// What the app did.
    public enum Kind: String, Hashable, Sendable, CaseIterable {
        /// A write without response to a characteristic without the `writeWithoutResponse`
        /// property: nothing was sent.
        case writeWithoutResponseNotSupported
        /// A write without response while the queue was full (`canSendWriteWithoutResponse`
        /// was `false`): the write was dropped.
        case writeWithoutResponseDropped
        /// A write without response, notification or indication longer than the link carries
        /// (ATT_MTU − 3, at most 512 bytes), or a peripheral's answer to a read request longer
        /// than an attribute holds from the request's offset on (512 bytes in all): the value
        /// was cut.
        case valueTruncated
        /// An error response to a write command: the central expects no answer and never
        /// learns of the error.
        case responseToCommand
    }

    /// What the app did.
    public var kind: Kind
    /// When, in virtual time.
    public var time: VirtualClock.Instant
    /// The central involved: the caller, or the peer of a peripheral's call.
    public var central: UUID?
    /// The peripheral involved: the caller, or the peer of a central's call.
    public var peripheral: UUID?
    /// The characteristic involved.
    public var characteristic: BluetoothUUID?
    /// The characteristic's value handle.
    public var handle: UInt16?
    /// The error a strict manager throws for it, which says what went wrong and how to fix it.
    public var error: APIMisuseError

    /// Creates a record of a misuse.
    public init(
        kind: Kind, time: VirtualClock.Instant, central: UUID?, peripheral: UUID?, characteristic: BluetoothUUID?,
        handle: UInt16?, error: APIMisuseError
    ) {
        self.kind = kind
        self.time = time
        self.central = central
        self.peripheral = peripheral
        self.characteristic = characteristic
        self.handle = handle
        self.error = error
    }

    /// A line naming the time, the managers involved and what went wrong.
    public var description: String {
        let central = central.map { " central \($0.uuidString.prefix(8))" } ?? ""
        let peripheral = peripheral.map { " peripheral \($0.uuidString.prefix(8))" } ?? ""
        return "\(time)\(central)\(peripheral): \(kind.rawValue): \(error)"
    }
}

extension World {
    /// Records a misuse CoreBluetooth lets pass, or throws `error` when the manager that made
    /// the call asked for strict misuse and the misuse was made by a call (`throwing`; a request
    /// handler's answer is none, so it is recorded whatever the manager asked for).
    mutating func misused(
        _ kind: Misuse.Kind, by caller: Manager, central: UUID?, peripheral: UUID?, characteristic: BluetoothUUID?,
        handle: UInt16?, error: APIMisuseError, throwing: Bool = true
    ) throws {
        let strict: Bool =
            switch caller {
            case .central(let identifier): centrals[identifier]?.configuration.strictMisuse ?? false
            case .peripheral(let identifier): peripherals[identifier]?.configuration.strictMisuse ?? false
            }
        if strict, throwing { throw error }
        misuses.append(
            Misuse(
                kind: kind, time: now, central: central, peripheral: peripheral, characteristic: characteristic,
                handle: handle, error: error))
    }

    /// Records what a strict manager refused with `error` (see ``misused(_:by:central:peripheral:characteristic:handle:error:throwing:)``)
    /// when the call came through a front end that cannot throw it to the app: the call did
    /// nothing, and ``MockBLEBridge/finish()`` reports it. An error of no misuse kind (see
    /// ``Misuse/Kind/init(refused:)``) is not recorded: the front end notes it itself.
    mutating func recordUnthrown(
        _ error: APIMisuseError, central: UUID?, peripheral: UUID?, characteristic: BluetoothUUID?, handle: UInt16?
    ) {
        guard let kind = Misuse.Kind(refused: error) else { return }
        misuses.append(
            Misuse(
                kind: kind, time: now, central: central, peripheral: peripheral, characteristic: characteristic,
                handle: handle, error: error))
    }
}

extension Misuse.Kind {
    /// The kind of misuse a strict manager refused with `error`, if it is one.
    package init?(refused error: APIMisuseError) {
        switch error {
        case .valueTooLong: self = .valueTruncated
        case .writeWithoutResponseNotSupported: self = .writeWithoutResponseNotSupported
        case .writeWithoutResponseQueueFull: self = .writeWithoutResponseDropped
        default: return nil
        }
    }
}
