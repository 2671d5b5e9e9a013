#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A call the Bluetooth stack refuses because of how it was made rather than what happened on
/// the radio (CoreBluetooth logs these as "API MISUSE" and ignores the call; the role
/// protocols throw instead, so tests see them).
public enum APIMisuseError: Error, Hashable, Sendable {
    /// The operation needs the manager to be powered on.
    case notPoweredOn(operation: String, state: ManagerState)
    /// The manager was shut down (`shutDown()`); it refuses every call from then on, whatever
    /// its state. Make a new manager instead.
    case managerShutDown(operation: String)
    /// A write without response to a characteristic without the `writeWithoutResponse`
    /// property: CoreBluetooth warns and sends nothing (a Write Command is never answered, so
    /// no ATT error could come back).
    case writeWithoutResponseNotSupported(BluetoothUUID, handle: UInt16)
    /// A direct write to the Client Characteristic Configuration descriptor (2902), which
    /// CoreBluetooth refuses: subscriptions are changed with `setNotifyValue(_:for:)`.
    case clientConfigurationWrite(characteristic: BluetoothUUID, handle: UInt16)
    /// No discovered characteristic of the peripheral has this UUID (in this service, if given).
    case characteristicNotFound(BluetoothUUID, service: BluetoothUUID?, peripheral: UUID)
    /// Several discovered characteristics have this UUID; pick one by service or handle.
    case ambiguousCharacteristic(BluetoothUUID, peripheral: UUID, handles: [UInt16])
    /// No pending request has this id.
    case unknownRequest(id: UInt64)
    /// The characteristic is not part of a service this peripheral manager published.
    case characteristicNotPublished(BluetoothUUID, handle: UInt16)
    /// The service is not published by this peripheral manager.
    case serviceNotPublished(BluetoothUUID, handle: UInt16)
    /// `updateValue` on a characteristic that supports neither notify nor indicate.
    case characteristicCannotNotify(BluetoothUUID, handle: UInt16)
    /// A service description CoreBluetooth would reject.
    case invalidService(BluetoothUUID, reason: InvalidServiceReason)
    /// A value longer than the operation can carry: a write without response or an update
    /// beyond ATT_MTU − 3 when lengths are strict (its description names the link's limit), or
    /// a value an attribute cannot hold, beyond 512 bytes (`setValue`, and from a read
    /// request's offset an answer to it; its description names the attribute's limit).
    case valueTooLong(operation: String, length: Int, maximum: Int)
    /// The characteristic has a cached (static) value, which the stack serves and no one
    /// can change.
    case staticCharacteristic(BluetoothUUID, handle: UInt16)
    /// A configuration value is out of range.
    case invalidConfiguration(String)
    /// A write without response while the central's queue was full
    /// (`canSendWriteWithoutResponse` was `false`): CoreBluetooth drops it. Thrown only with
    /// strict misuse; otherwise the write is dropped and recorded as a misuse.
    case writeWithoutResponseQueueFull(BluetoothUUID, handle: UInt16)
    /// An error response to a write command (an `ATTRequest` whose `isCommand` is `true`):
    /// a Write Command has no response, so the central never learns of the error.
    /// CoreBluetooth ignores the call. Thrown only with strict misuse; otherwise it is
    /// ignored and recorded as a misuse.
    case responseToCommand(id: UInt64, result: ATTError.Code)
    /// `unpublishL2CAPChannel(_:)` of a PSM this peripheral manager has not published (or
    /// unpublished already): there is nothing to unpublish.
    case l2capChannelNotPublished(psm: UInt16)
    /// An argument of the call is out of range (a timeout or time limit that is not above
    /// zero, say): the message names the call, the argument, its value and the range.
    case invalidArgument(String)

    /// Why a service description cannot be published.
    public enum InvalidServiceReason: Hashable, Sendable {
        /// A characteristic has a cached value but can be written or subscribed to;
        /// a static (cached) characteristic must be read-only.
        case staticValueNotReadOnly(BluetoothUUID)
        /// A value is longer than the 512 bytes an attribute can hold.
        case valueTooLong(BluetoothUUID, length: Int)
        /// The Client Characteristic Configuration descriptor (2902) is managed by the stack.
        case managedDescriptor(BluetoothUUID)
        /// An included service is not published by this peripheral manager.
        case includedServiceNotPublished(BluetoothUUID)
        /// The database has no handles left (at most 65,535 attributes).
        case outOfHandles
    }
}

extension APIMisuseError: CustomStringConvertible {
    /// What was wrong with the call and how to fix it.
    public var description: String {
        switch self {
        case .notPoweredOn(let operation, let state):
            return "\(operation) needs the manager to be poweredOn, but it is \(state). "
                + "Await waitForPoweredOn() and check its result before using the radio."
        case .managerShutDown(let operation):
            return "\(operation) was called on a manager that was shut down. "
                + "A shut-down manager refuses every call; make a new manager instead."
        case .writeWithoutResponseNotSupported(let uuid, let handle):
            return "Characteristic \(uuid) (handle \(handle)) does not have the writeWithoutResponse property, "
                + "so nothing was sent. Write with response, or check the characteristic's properties first."
        case .clientConfigurationWrite(let uuid, let handle):
            return "The Client Characteristic Configuration descriptor of characteristic \(uuid) "
                + "(handle \(handle)) cannot be written directly. Use setNotifyValue(_:for:)."
        case .characteristicNotFound(let uuid, let service, let peripheral):
            let place = service.map { "service \($0) of " } ?? ""
            return "No discovered characteristic \(uuid) in \(place)peripheral \(peripheral). "
                + "Discover services and characteristics first, and check the UUIDs."
        case .ambiguousCharacteristic(let uuid, let peripheral, let handles):
            return "Characteristic \(uuid) appears \(handles.count) times on peripheral \(peripheral) "
                + "(value handles \(handles.map(String.init).joined(separator: ", "))). "
                + "Name the service, or use the RemoteCharacteristic from discovery."
        case .unknownRequest(let id):
            return "No pending request has id \(id): it was already answered, its central disconnected, or its "
                + "service was removed. Answer each read request, and the first request of each write batch, exactly "
                + "once."
        case .characteristicNotPublished(let uuid, let handle):
            return "Characteristic \(uuid) (handle \(handle)) is not published by this peripheral manager. "
                + "Use a LocalCharacteristic returned by add(_:)."
        case .serviceNotPublished(let uuid, let handle):
            return "Service \(uuid) (handle \(handle)) is not published by this peripheral manager."
        case .characteristicCannotNotify(let uuid, let handle):
            return "Characteristic \(uuid) (handle \(handle)) has neither the notify nor the indicate property, "
                + "so updateValue cannot send it. Add .notify or .indicate to its properties."
        case .invalidService(let uuid, let reason):
            return "Service \(uuid) cannot be published: \(reason.explanation)"
        case .valueTooLong(let operation, let length, let maximum):
            guard Self.sendsOverALink(operation) else {
                return "\(operation) was given \(length) bytes, but the attribute takes at most \(maximum) there: "
                    + "an attribute value holds at most 512 bytes, whatever the link. Give at most \(maximum) bytes; "
                    + "spread more data over several characteristics, or frame it with the Transport module."
            }
            // (Each role's length: a peripheral's app reads the central's, a central's app its peripheral's.)
            let source =
                operation.hasPrefix("updateValue")
                ? "the central's maximumUpdateValueLength" : "maximumWriteValueLength(for: .withoutResponse)"
            return "\(operation) was given \(length) bytes but can carry at most \(maximum) on this link. "
                + "Split the data into parts of at most \(maximum) bytes (\(source)), or frame it with the Transport "
                + "module."
        case .staticCharacteristic(let uuid, let handle):
            return "Characteristic \(uuid) (handle \(handle)) was created with a value, so the stack serves that "
                + "cached value and it cannot change. Create it with value nil to serve a changing value."
        case .invalidConfiguration(let problem):
            return "Invalid configuration: \(problem)."
        case .writeWithoutResponseQueueFull(let uuid, let handle):
            return "A write without response to \(uuid) (handle \(handle)) was dropped: the queue was full "
                + "(canSendWriteWithoutResponse was false). Wait for peripheralIsReady(toSendWriteWithoutResponse:) "
                + "before writing again."
        case .responseToCommand(let id, let result):
            return "Request \(id) is a write command (a write without response): the central expects no answer, "
                + "so the \(result.name) response goes nowhere. Check ATTRequest.isCommand before responding."
        case .invalidArgument(let problem):
            return "Invalid argument: \(problem)."
        case .l2capChannelNotPublished(let psm):
            let hex = String(psm, radix: 16, uppercase: true)
            let padded = String(repeating: "0", count: max(0, 4 - hex.count)) + hex
            return "No L2CAP channel is published at PSM 0x\(padded) "
                + "by this peripheral manager, so there is nothing to unpublish. Unpublish a PSM that "
                + "publishL2CAPChannel returned, once."
        }
    }
}

extension APIMisuseError {
    /// Whether a ``valueTooLong(operation:length:maximum:)`` operation sends the value over a
    /// link in one packet (an update, a write without response), so that the link's ATT_MTU
    /// bounds it, rather than storing it as an attribute's value (`setValue`, an answer to a
    /// read request), which 512 bytes bound whatever the link.
    static func sendsOverALink(_ operation: String) -> Bool {
        operation.hasPrefix("updateValue") || operation.contains(".withoutResponse")
    }
}

extension APIMisuseError.InvalidServiceReason {
    /// What is wrong with the service description and how to fix it.
    public var explanation: String {
        switch self {
        case .staticValueNotReadOnly(let uuid):
            "characteristic \(uuid) has a cached value but is writable or can notify; a characteristic with a "
                + "value must be read-only. Create it with value nil to serve it dynamically."
        case .valueTooLong(let uuid, let length):
            "the value of \(uuid) is \(length) bytes; an attribute holds at most 512."
        case .managedDescriptor(let uuid):
            "characteristic \(uuid) lists a Client Characteristic Configuration descriptor (2902), which the "
                + "stack adds itself for characteristics that notify or indicate. Remove it."
        case .includedServiceNotPublished(let uuid):
            "the included service \(uuid) is not published. Add it (usually as a secondary service) first."
        case .outOfHandles:
            "the database has no attribute handles left (65,535 at most). Remove services first."
        }
    }
}
