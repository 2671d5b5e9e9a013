/// A CoreBluetooth error (`CBError`), with CoreBluetooth's raw codes: connection, link and
/// API-level failures, as opposed to a peripheral's ``ATTError`` answers.
///
/// ```swift
/// catch let error as CoreBluetoothError where error.code == .peripheralDisconnected { ... }
/// ```
public struct CoreBluetoothError: Error, Hashable, Sendable {
    /// The error code.
    public var code: Code
    /// What the kit knows about this occurrence beyond the code (e.g. that a peripheral is on
    /// another bridge), for the people reading the error. Errors compare and hash by
    /// ``code`` alone: `CoreBluetoothError(.unknownDevice)` matches one with a reason.
    public var reason: String?

    /// Creates an error with a code.
    public init(_ code: Code) {
        self.code = code
    }

    /// Creates an error with a code and what the kit knows about why.
    public init(_ code: Code, reason: String?) {
        self.code = code
        self.reason = reason
    }

    public static func == (lhs: CoreBluetoothError, rhs: CoreBluetoothError) -> Bool {
        lhs.code == rhs.code
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(code)
    }

    /// CoreBluetooth's error codes, with `CBError.Code`'s raw values.
    public enum Code: Int, Sendable, Hashable, Codable, CaseIterable {
        /// An unknown error occurred.
        case unknown = 0
        /// The specified parameters are invalid.
        case invalidParameters = 1
        /// The specified attribute handle is invalid.
        case invalidHandle = 2
        /// The device is not currently connected.
        case notConnected = 3
        /// The device has run out of space to complete the operation.
        case outOfSpace = 4
        /// The operation was cancelled.
        case operationCancelled = 5
        /// The connection timed out.
        case connectionTimeout = 6
        /// The peripheral disconnected.
        case peripheralDisconnected = 7
        /// The specified UUID is not permitted.
        case uuidNotAllowed = 8
        /// The peripheral is already advertising.
        case alreadyAdvertising = 9
        /// The connection failed.
        case connectionFailed = 10
        /// The device already has the maximum number of connections.
        case connectionLimitReached = 11
        /// The device is unknown.
        case unknownDevice = 12
        /// The operation is not supported.
        case operationNotSupported = 13
        /// The peer removed its pairing information.
        case peerRemovedPairingInformation = 14
        /// The encryption timed out.
        case encryptionTimedOut = 15
        /// The device has too many LE paired devices.
        case tooManyLEPairedDevices = 16
        /// The app exceeded the background notification limit.
        case leGattExceededBackgroundNotificationLimit = 17
        /// The app is near the background notification limit.
        case leGattNearBackgroundNotificationLimit = 18
    }
}
