import BLECore

/// An Attribute Protocol PDU (Bluetooth Core Specification, Vol 3, Part F, 3.4), decoded from
/// an L2CAP frame on the ATT channel.
public enum ATTPDU: Sendable, Hashable {
    /// A handle and a UUID (Find Information Response).
    public struct HandleUUID: Sendable, Hashable {
        /// The attribute handle.
        public var handle: UInt16
        /// The attribute type.
        public var uuid: BluetoothUUID
        /// Creates an entry.
        public init(handle: UInt16, uuid: BluetoothUUID) {
            self.handle = handle
            self.uuid = uuid
        }
    }

    /// A handle and a value (Read By Type Response, Multiple Handle Value Notification).
    public struct HandleValue: Sendable, Hashable {
        /// The attribute handle.
        public var handle: UInt16
        /// The attribute value (or as much of it as the PDU carries).
        public var value: [UInt8]
        /// Creates an entry.
        public init(handle: UInt16, value: [UInt8]) {
            self.handle = handle
            self.value = value
        }
    }

    /// A group of handles and, for Read By Group Type, the group's value.
    public struct Group: Sendable, Hashable {
        /// The group's first handle (a service declaration).
        public var handle: UInt16
        /// The group's last handle.
        public var endHandle: UInt16
        /// The group's value (a service UUID), when the PDU carries one.
        public var value: [UInt8]
        /// Creates a group.
        public init(handle: UInt16, endHandle: UInt16, value: [UInt8] = []) {
            self.handle = handle
            self.endHandle = endHandle
            self.value = value
        }
    }

    /// 0x01: a request failed — its opcode, the handle in error, the ATT error code.
    case errorResponse(request: UInt8, handle: UInt16, error: UInt8)
    /// 0x02: the client's receive MTU.
    case exchangeMTURequest(clientMTU: UInt16)
    /// 0x03: the server's receive MTU.
    case exchangeMTUResponse(serverMTU: UInt16)
    /// 0x04: the handles and types in a range, please.
    case findInformationRequest(start: UInt16, end: UInt16)
    /// 0x05: handles with their types.
    case findInformationResponse([HandleUUID])
    /// 0x06: the handles in a range whose type (16-bit) and value match.
    case findByTypeValueRequest(start: UInt16, end: UInt16, type: UInt16, value: [UInt8])
    /// 0x07: found handles with their group end handles.
    case findByTypeValueResponse([Group])
    /// 0x08: the values of attributes of a type in a range.
    case readByTypeRequest(start: UInt16, end: UInt16, type: BluetoothUUID)
    /// 0x09: handles with values.
    case readByTypeResponse([HandleValue])
    /// 0x0A: read a value.
    case readRequest(handle: UInt16)
    /// 0x0B: the value (at most ATT_MTU − 1 bytes).
    case readResponse(value: [UInt8])
    /// 0x0C: read a value from an offset.
    case readBlobRequest(handle: UInt16, offset: UInt16)
    /// 0x0D: part of the value.
    case readBlobResponse(value: [UInt8])
    /// 0x0E: read several values.
    case readMultipleRequest(handles: [UInt16])
    /// 0x0F: the values, concatenated.
    case readMultipleResponse(values: [UInt8])
    /// 0x10: the groups (services) of a type in a range.
    case readByGroupTypeRequest(start: UInt16, end: UInt16, type: BluetoothUUID)
    /// 0x11: groups with their end handles and values.
    case readByGroupTypeResponse([Group])
    /// 0x12: write a value, with a response.
    case writeRequest(handle: UInt16, value: [UInt8])
    /// 0x13: the write succeeded.
    case writeResponse
    /// 0x16: queue part of a long or reliable write.
    case prepareWriteRequest(handle: UInt16, offset: UInt16, value: [UInt8])
    /// 0x17: the queued part, echoed.
    case prepareWriteResponse(handle: UInt16, offset: UInt16, value: [UInt8])
    /// 0x18: write the queued parts (`commit`) or cancel them.
    case executeWriteRequest(commit: Bool)
    /// 0x19: the queued writes were done or cancelled.
    case executeWriteResponse
    /// 0x1B: a notification.
    case notification(handle: UInt16, value: [UInt8])
    /// 0x1D: an indication.
    case indication(handle: UInt16, value: [UInt8])
    /// 0x1E: the indication was received.
    case confirmation
    /// 0x20: read several values of variable length.
    case readMultipleVariableRequest(handles: [UInt16])
    /// 0x21: each value with its length. A server cuts the list at ATT_MTU − 1 octets
    /// (Bluetooth Core Specification, Vol 3, Part G, 4.8.5), so its last tuple can hold fewer
    /// octets than its length gives: then `lastIsPartial` is `true` and the last value holds the
    /// octets there are (none when the cut fell inside the length).
    case readMultipleVariableResponse(values: [[UInt8]], lastIsPartial: Bool = false)
    /// 0x23: several notifications in one PDU.
    case multipleNotification([HandleValue])
    /// 0x52: write a value, without a response.
    case writeCommand(handle: UInt16, value: [UInt8])
    /// 0xD2: write a value with a 12-byte signature, without a response.
    case signedWriteCommand(handle: UInt16, value: [UInt8], signature: [UInt8])

    /// The opcode.
    public var opcode: UInt8 {
        switch self {
        case .errorResponse: 0x01
        case .exchangeMTURequest: 0x02
        case .exchangeMTUResponse: 0x03
        case .findInformationRequest: 0x04
        case .findInformationResponse: 0x05
        case .findByTypeValueRequest: 0x06
        case .findByTypeValueResponse: 0x07
        case .readByTypeRequest: 0x08
        case .readByTypeResponse: 0x09
        case .readRequest: 0x0A
        case .readResponse: 0x0B
        case .readBlobRequest: 0x0C
        case .readBlobResponse: 0x0D
        case .readMultipleRequest: 0x0E
        case .readMultipleResponse: 0x0F
        case .readByGroupTypeRequest: 0x10
        case .readByGroupTypeResponse: 0x11
        case .writeRequest: 0x12
        case .writeResponse: 0x13
        case .prepareWriteRequest: 0x16
        case .prepareWriteResponse: 0x17
        case .executeWriteRequest: 0x18
        case .executeWriteResponse: 0x19
        case .notification: 0x1B
        case .indication: 0x1D
        case .confirmation: 0x1E
        case .readMultipleVariableRequest: 0x20
        case .readMultipleVariableResponse: 0x21
        case .multipleNotification: 0x23
        case .writeCommand: 0x52
        case .signedWriteCommand: 0xD2
        }
    }

    /// The opcodes a client sends that the server answers (requests), by value.
    public static let requestOpcodes: Set<UInt8> = [
        0x02, 0x04, 0x06, 0x08, 0x0A, 0x0C, 0x0E, 0x10, 0x12, 0x16, 0x18, 0x20,
    ]

    /// Whether this PDU is a request that waits for a response.
    public var isRequest: Bool { Self.requestOpcodes.contains(opcode) }

    /// Whether this PDU answers a request (a response or an Error Response).
    public var isResponse: Bool {
        switch self {
        case .errorResponse, .exchangeMTUResponse, .findInformationResponse, .findByTypeValueResponse,
            .readByTypeResponse, .readResponse, .readBlobResponse, .readMultipleResponse, .readByGroupTypeResponse,
            .writeResponse, .prepareWriteResponse, .executeWriteResponse, .readMultipleVariableResponse:
            true
        default: false
        }
    }

    /// Whether a server sends this PDU (responses, notifications and indications).
    public var isFromServer: Bool {
        switch self {
        case .notification, .indication, .multipleNotification: true
        default: isResponse
        }
    }
}
