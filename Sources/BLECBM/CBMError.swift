// swift-format-ignore-file: AlwaysUseLowerCamelCase
// (These names mirror CoreBluetooth's API.)

import BLECore
import Foundation

/// CoreBluetooth's error domain for its own errors (`CBErrorDomain`).
public let CBMErrorDomain = "CBErrorDomain"
/// CoreBluetooth's error domain for ATT errors (`CBATTErrorDomain`).
public let CBMATTErrorDomain = "CBATTErrorDomain"

/// A CoreBluetooth error (`CBError`): domain `CBErrorDomain`, CoreBluetooth's codes. Bridged to
/// `NSError` with that domain and code, so `(error as NSError).code` and `error as? CBMError`
/// both work, as with CoreBluetooth's errors.
public struct CBMError: CustomNSError, Hashable, Sendable, CustomStringConvertible {
    /// CoreBluetooth's error codes (`CBError.Code`), with their raw values.
    public enum Code: Int, Sendable, Hashable {
        case unknown = 0
        case invalidParameters = 1
        case invalidHandle = 2
        case notConnected = 3
        case outOfSpace = 4
        case operationCancelled = 5
        case connectionTimeout = 6
        case peripheralDisconnected = 7
        case uuidNotAllowed = 8
        case alreadyAdvertising = 9
        case connectionFailed = 10
        case connectionLimitReached = 11
        case unknownDevice = 12
        case operationNotSupported = 13
        case peerRemovedPairingInformation = 14
        case encryptionTimedOut = 15
        case tooManyLEPairedDevices = 16
        case leGattExceededBackgroundNotificationLimit = 17
        case leGattNearBackgroundNotificationLimit = 18
    }

    /// The error's code.
    public var code: Code

    /// Creates an error with a code.
    public init(_ code: Code) { self.code = code }

    public static var errorDomain: String { CBMErrorDomain }
    public var errorCode: Int { code.rawValue }
    public var errorUserInfo: [String: Any] { [NSLocalizedDescriptionKey: description] }
    public var description: String { CoreBluetoothError(.init(rawValue: code.rawValue) ?? .unknown).description }

    public static let unknown = Code.unknown
    public static let invalidParameters = Code.invalidParameters
    public static let invalidHandle = Code.invalidHandle
    public static let notConnected = Code.notConnected
    public static let outOfSpace = Code.outOfSpace
    public static let operationCancelled = Code.operationCancelled
    public static let connectionTimeout = Code.connectionTimeout
    public static let peripheralDisconnected = Code.peripheralDisconnected
    public static let uuidNotAllowed = Code.uuidNotAllowed
    public static let alreadyAdvertising = Code.alreadyAdvertising
    public static let connectionFailed = Code.connectionFailed
    public static let connectionLimitReached = Code.connectionLimitReached
    public static let unknownDevice = Code.unknownDevice
    public static let operationNotSupported = Code.operationNotSupported
    public static let peerRemovedPairingInformation = Code.peerRemovedPairingInformation
    public static let encryptionTimedOut = Code.encryptionTimedOut
    public static let tooManyLEPairedDevices = Code.tooManyLEPairedDevices
}

/// An ATT error (`CBATTError`): domain `CBATTErrorDomain`, the ATT error code as its code.
public struct CBMATTError: CustomNSError, Hashable, Sendable, CustomStringConvertible {
    /// ATT's error codes (`CBATTError.Code`), with their raw values.
    ///
    /// Open as CoreBluetooth's imported enumeration is: any raw value makes a code, so an app
    /// can answer a request with one of its own (ATT's application errors, 0x80–0x9F):
    /// `respond(to: request, withResult: CBMATTError.Code(rawValue: 0x80)!)`. A `switch` over
    /// codes needs a `default`, as it does over CoreBluetooth's.
    public struct Code: RawRepresentable, Sendable, Hashable {
        /// The ATT error code.
        public let rawValue: Int

        /// The code with this raw value: never `nil` (failable as CoreBluetooth's imported
        /// initializer is, so the same code compiles against both).
        public init?(rawValue: Int) { self.rawValue = rawValue }

        private init(_ rawValue: Int) { self.rawValue = rawValue }

        public static let success = Code(0x00)
        public static let invalidHandle = Code(0x01)
        public static let readNotPermitted = Code(0x02)
        public static let writeNotPermitted = Code(0x03)
        public static let invalidPdu = Code(0x04)
        public static let insufficientAuthentication = Code(0x05)
        public static let requestNotSupported = Code(0x06)
        public static let invalidOffset = Code(0x07)
        public static let insufficientAuthorization = Code(0x08)
        public static let prepareQueueFull = Code(0x09)
        public static let attributeNotFound = Code(0x0A)
        public static let attributeNotLong = Code(0x0B)
        public static let insufficientEncryptionKeySize = Code(0x0C)
        public static let invalidAttributeValueLength = Code(0x0D)
        public static let unlikelyError = Code(0x0E)
        public static let insufficientEncryption = Code(0x0F)
        public static let unsupportedGroupType = Code(0x10)
        public static let insufficientResources = Code(0x11)
    }

    /// The error's code as ATT numbers it (application errors 0x80–0x9F included).
    public var errorCode: Int
    /// The error's code (an application's own included).
    public var code: Code { Code(rawValue: errorCode)! }

    /// Creates an error with a code.
    public init(_ code: Code) { errorCode = code.rawValue }

    /// Creates an error with any ATT code (an application error, say).
    public init(rawCode: UInt8) { errorCode = Int(rawCode) }

    public static var errorDomain: String { CBMATTErrorDomain }
    public var errorUserInfo: [String: Any] { [NSLocalizedDescriptionKey: description] }
    public var description: String { ATTError(.init(rawValue: UInt8(truncatingIfNeeded: errorCode))).description }

    public static let success = Code.success
    public static let invalidHandle = Code.invalidHandle
    public static let readNotPermitted = Code.readNotPermitted
    public static let writeNotPermitted = Code.writeNotPermitted
    public static let invalidPdu = Code.invalidPdu
    public static let insufficientAuthentication = Code.insufficientAuthentication
    public static let requestNotSupported = Code.requestNotSupported
    public static let invalidOffset = Code.invalidOffset
    public static let insufficientAuthorization = Code.insufficientAuthorization
    public static let prepareQueueFull = Code.prepareQueueFull
    public static let attributeNotFound = Code.attributeNotFound
    public static let attributeNotLong = Code.attributeNotLong
    public static let insufficientEncryptionKeySize = Code.insufficientEncryptionKeySize
    public static let invalidAttributeValueLength = Code.invalidAttributeValueLength
    public static let unlikelyError = Code.unlikelyError
    public static let insufficientEncryption = Code.insufficientEncryption
    public static let unsupportedGroupType = Code.unsupportedGroupType
    public static let insufficientResources = Code.insufficientResources
}

/// Whether `error` is a CoreBluetooth error with this code, so that an error is matched by its
/// code as with CoreBluetooth's `CBError`: `catch CBMError.connectionTimeout`, or
/// `case CBMError.peripheralDisconnected` in a `switch` over an error. An `NSError` of domain
/// `CBErrorDomain` with the code matches too.
public func ~= (code: CBMError.Code, error: any Error) -> Bool {
    if let error = error as? CBMError { return error.code == code }
    let bridged = error as NSError
    return bridged.domain == CBMErrorDomain && bridged.code == code.rawValue
}

/// Whether `error` is an ATT error with this code, so that an error is matched by its code as
/// with CoreBluetooth's `CBATTError`: `catch CBMATTError.readNotPermitted`, or
/// `case CBMATTError.insufficientAuthentication` in a `switch` over an error. An `NSError` of
/// domain `CBATTErrorDomain` with the code matches too.
public func ~= (code: CBMATTError.Code, error: any Error) -> Bool {
    if let error = error as? CBMATTError { return error.errorCode == code.rawValue }
    let bridged = error as NSError
    return bridged.domain == CBMATTErrorDomain && bridged.code == code.rawValue
}

extension CBMError {
    /// The error an app sees for an error of the kit: CoreBluetooth's and ATT's errors as
    /// ``CBMError`` and ``CBMATTError``; a misuse the kit refuses as `invalidParameters`
    /// (CoreBluetooth reports an API misuse the same way or ignores the call); cancellation
    /// as `operationCancelled`.
    static func bridging(_ error: any Error) -> any Error {
        switch error {
        case let error as CoreBluetoothError: CBMError(Code(rawValue: error.code.rawValue) ?? .unknown)
        case let error as ATTError: CBMATTError(rawCode: error.code.rawValue)
        case is CancellationError: CBMError(.operationCancelled)
        case is APIMisuseError: CBMError(.invalidParameters)
        default: error
        }
    }
}

/// An L2CAP channel's refusal, as delegates get it (`peripheral(_:didOpen:error:)`, and a
/// peripheral manager's channel callbacks): CoreBluetooth reports these with codes of its own
/// that it does not document, so the kit hands over its ``L2CAPError``; bridged to `NSError`,
/// its code is the L2CAP result code (0x0002: no channel is published at the PSM; 0x0004: no
/// resources; 0x0005: insufficient authentication; 0x0008: insufficient encryption).
extension L2CAPError: CustomNSError {
    public static var errorDomain: String { "BLECore.L2CAPError" }
    public var errorCode: Int { Int(code.rawValue) }
    public var errorUserInfo: [String: Any] { [NSLocalizedDescriptionKey: description] }
}
