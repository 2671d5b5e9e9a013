import BLECore
import Foundation

/// Maps errors between CoreBluetooth's domains and the kit's error types, from plain domain
/// names and codes, so the mapping works (and is tested) where CoreBluetooth does not exist.
///
/// - `CBErrorDomain` codes become `CoreBluetoothError` with the same code (unknown codes
///   become `CoreBluetoothError.Code.unknown`).
/// - `CBATTErrorDomain` codes 0…255 become `ATTError` with the same code.
/// - The kit's errors pass through unchanged; errors of other domains (including Swift's
///   `CancellationError`) pass through unchanged too, so nothing is lost.
///
/// The reverse direction is ``domainAndCode(of:)``; on Apple platforms BLECore's
/// `ATTError.nsError` and `CoreBluetoothError.nsError` build the `NSError`s.
public enum CoreBluetoothErrorMapping {
    /// The domain of `CBError` (the value of CoreBluetooth's `CBErrorDomain`).
    public static let errorDomain = "CBErrorDomain"
    /// The domain of `CBATTError` (the value of CoreBluetooth's `CBATTErrorDomain`).
    public static let attErrorDomain = "CBATTErrorDomain"

    /// The kit's error for a CoreBluetooth domain and code; `nil` for other domains and for
    /// ATT codes outside 0…255.
    public static func kitError(domain: String, code: Int) -> (any Error)? {
        switch domain {
        case errorDomain:
            return CoreBluetoothError(CoreBluetoothError.Code(rawValue: code) ?? .unknown)
        case attErrorDomain:
            return UInt8(exactly: code).map { ATTError(ATTError.Code(rawValue: $0)) }
        default:
            return nil
        }
    }

    /// The kit's error for any error a CoreBluetooth callback reports: errors in CoreBluetooth's
    /// domains are mapped by ``kitError(domain:code:)``; anything else is returned unchanged.
    public static func kitError(from error: any Error) -> any Error {
        if error is ATTError || error is CoreBluetoothError || error is APIMisuseError || error is CancellationError {
            return error
        }
        let nsError = error as NSError
        return kitError(domain: nsError.domain, code: nsError.code) ?? error
    }

    /// The reason a link ended, as `CentralEvent.disconnected(_:_:)` carries it: `nil` stays
    /// `nil` (this central cancelled the connection), a `CBErrorDomain` error keeps its code, and
    /// any other error becomes `CoreBluetoothError.Code.unknown`.
    public static func linkError(from error: (any Error)?) -> CoreBluetoothError? {
        guard let error else { return nil }
        return kitError(from: error) as? CoreBluetoothError ?? CoreBluetoothError(.unknown)
    }

    /// The error to fail a waiting call with: ``kitError(from:)`` of `error`, or `fallback`
    /// when CoreBluetooth reported a failure without an error.
    public static func operationError(from error: (any Error)?, fallback: CoreBluetoothError.Code = .unknown)
        -> any Error
    {
        error.map(kitError(from:)) ?? CoreBluetoothError(fallback)
    }

    /// The CoreBluetooth domain and code of one of the kit's errors, as an `NSError` (and
    /// on Apple platforms a `CBError` or `CBATTError`) would carry them; `nil` for other errors.
    public static func domainAndCode(of error: any Error) -> (domain: String, code: Int)? {
        switch error {
        case let error as CoreBluetoothError: (errorDomain, error.code.rawValue)
        case let error as ATTError: (attErrorDomain, Int(error.code.rawValue))
        default: nil
        }
    }

    /// An `NSError` in CoreBluetooth's domain with the same code as one of the kit's errors;
    /// `nil` for other errors.
    public static func nsError(for error: any Error) -> NSError? {
        domainAndCode(of: error).map { NSError(domain: $0.domain, code: $0.code, userInfo: nil) }
    }
}
