/// An Attribute Protocol error, as a GATT server reports it in an ATT Error Response
/// (Bluetooth Core Specification, Vol 3, Part F, 3.4.1.1), and as CoreBluetooth reports it
/// in `CBATTError` — with the same raw values.
///
/// Match on ``code``:
///
/// ```swift
/// do { try await central.readValue(for: characteristic) }
/// catch let error as ATTError where error.code == .readNotPermitted { ... }
/// ```
public struct ATTError: Error, Hashable, Sendable {
    /// The error code carried on the link.
    public var code: Code

    /// Creates an error with a code.
    public init(_ code: Code) {
        self.code = code
    }

    /// An ATT error code: one byte, with the specification's raw values. Any byte is a valid
    /// code; the named ones are those of the Core Specification, the application range
    /// (0x80–0x9F) is for profiles and apps, and 0xE0–0xFF for common profile errors.
    public struct Code: RawRepresentable, Hashable, Sendable, Codable {
        public let rawValue: UInt8

        /// Creates a code from its raw byte.
        public init(rawValue: UInt8) { self.rawValue = rawValue }

        /// Not an error: the result a peripheral gives a request it grants (0x00).
        public static let success = Code(rawValue: 0x00)
        /// The attribute handle is not valid on this server (0x01).
        public static let invalidHandle = Code(rawValue: 0x01)
        /// The attribute cannot be read (0x02).
        public static let readNotPermitted = Code(rawValue: 0x02)
        /// The attribute cannot be written (0x03).
        public static let writeNotPermitted = Code(rawValue: 0x03)
        /// The request PDU was invalid (0x04).
        public static let invalidPdu = Code(rawValue: 0x04)
        /// The attribute needs an authenticated (paired with MITM protection) link (0x05).
        public static let insufficientAuthentication = Code(rawValue: 0x05)
        /// The server does not support the request (0x06).
        public static let requestNotSupported = Code(rawValue: 0x06)
        /// The offset is past the end of the attribute value (0x07).
        public static let invalidOffset = Code(rawValue: 0x07)
        /// The attribute needs authorization (0x08).
        public static let insufficientAuthorization = Code(rawValue: 0x08)
        /// Too many prepared writes are queued (0x09).
        public static let prepareQueueFull = Code(rawValue: 0x09)
        /// No attribute was found in the handle range (0x0A).
        public static let attributeNotFound = Code(rawValue: 0x0A)
        /// The attribute cannot be read or written with a blob/long request (0x0B).
        public static let attributeNotLong = Code(rawValue: 0x0B)
        /// The encryption key is too short (0x0C).
        public static let insufficientEncryptionKeySize = Code(rawValue: 0x0C)
        /// The value has the wrong length, e.g. longer than 512 bytes (0x0D).
        public static let invalidAttributeValueLength = Code(rawValue: 0x0D)
        /// The request could not be completed for an unlikely reason (0x0E).
        public static let unlikelyError = Code(rawValue: 0x0E)
        /// The attribute needs an encrypted link (0x0F).
        public static let insufficientEncryption = Code(rawValue: 0x0F)
        /// The attribute type is not a supported grouping type (0x10).
        public static let unsupportedGroupType = Code(rawValue: 0x10)
        /// The server lacks the resources to complete the request (0x11).
        public static let insufficientResources = Code(rawValue: 0x11)
        /// The client's view of the database is out of sync with the server's (0x12).
        public static let databaseOutOfSync = Code(rawValue: 0x12)
        /// The value is not allowed (0x13).
        public static let valueNotAllowed = Code(rawValue: 0x13)
        /// A write request was rejected (common profile error, 0xFC).
        public static let writeRequestRejected = Code(rawValue: 0xFC)
        /// A Client Characteristic Configuration descriptor is improperly configured (0xFD).
        public static let cccdImproperlyConfigured = Code(rawValue: 0xFD)
        /// A procedure is already in progress (0xFE).
        public static let procedureAlreadyInProgress = Code(rawValue: 0xFE)
        /// A value is out of range (0xFF).
        public static let outOfRange = Code(rawValue: 0xFF)

        /// The application range 0x80–0x9F, reserved for errors a profile or app defines.
        public static let applicationRange: ClosedRange<UInt8> = 0x80...0x9F

        /// An application error code: `0x80 + offset`, where `offset` is 0…31.
        ///
        /// Returns `nil` for offsets past the application range.
        public static func application(_ offset: UInt8) -> Code? {
            offset <= 0x1F ? Code(rawValue: 0x80 + offset) : nil
        }

        /// Whether the code is in the application range (0x80–0x9F).
        public var isApplicationError: Bool { Self.applicationRange.contains(rawValue) }

        /// The named codes in order of their raw value.
        public static let allNamed: [Code] =
            (0x00...0x13).map { Code(rawValue: $0) } + (0xFC...0xFF).map { Code(rawValue: $0) }
    }
}

extension ATTError.Code {
    /// Whether the server refused for want of an encrypted link: 0x05 Insufficient
    /// Authentication (no keys) or 0x0F Insufficient Encryption (keys not in use), the refusals
    /// a central pairs on (Vol 3, Part C, 10.3.1).
    package var asksForEncryption: Bool { self == .insufficientAuthentication || self == .insufficientEncryption }
}
