import BLECore
import Foundation
import Testing

@testable import BLECoreBluetooth

@Suite("CoreBluetoothErrorMapping", .timeLimit(.minutes(10)))
struct CoreBluetoothErrorMappingTests {
    @Test("Every CBError code maps to the CoreBluetoothError with the same code")
    func cbErrorCodesKeepTheirValues() {
        for code in CoreBluetoothError.Code.allCases {
            let mapped = CoreBluetoothErrorMapping.kitError(domain: "CBErrorDomain", code: code.rawValue)
            #expect(mapped as? CoreBluetoothError == CoreBluetoothError(code))
        }
    }

    @Test("A CBError code the kit does not name maps to unknown")
    func unknownCBErrorCode() {
        let mapped = CoreBluetoothErrorMapping.kitError(domain: "CBErrorDomain", code: 99)
        #expect(mapped as? CoreBluetoothError == CoreBluetoothError(.unknown))
    }

    @Test("Every ATT code maps to the ATTError with the same code, and out-of-range codes do not")
    func attCodesKeepTheirValues() {
        for raw in 0...255 {
            let mapped = CoreBluetoothErrorMapping.kitError(domain: "CBATTErrorDomain", code: raw)
            #expect(mapped as? ATTError == ATTError(ATTError.Code(rawValue: UInt8(raw))))
        }
        #expect(CoreBluetoothErrorMapping.kitError(domain: "CBATTErrorDomain", code: 256) == nil)
        #expect(CoreBluetoothErrorMapping.kitError(domain: "CBATTErrorDomain", code: -1) == nil)
    }

    @Test("NSErrors in CoreBluetooth's domains become the kit's errors")
    func nsErrorsAreMapped() {
        let disconnected = NSError(domain: "CBErrorDomain", code: 7)
        let readNotPermitted = NSError(domain: "CBATTErrorDomain", code: 2)
        #expect(
            CoreBluetoothErrorMapping.kitError(from: disconnected) as? CoreBluetoothError
                == CoreBluetoothError(.peripheralDisconnected))
        #expect(CoreBluetoothErrorMapping.kitError(from: readNotPermitted) as? ATTError == ATTError(.readNotPermitted))
    }

    @Test("Errors of other domains and the kit's own errors pass through unchanged")
    func otherErrorsPassThrough() {
        let posix = NSError(domain: NSPOSIXErrorDomain, code: 1)
        #expect((CoreBluetoothErrorMapping.kitError(from: posix) as NSError).domain == NSPOSIXErrorDomain)
        #expect(CoreBluetoothErrorMapping.kitError(from: CancellationError()) is CancellationError)
        let att = ATTError(.insufficientEncryption)
        #expect(CoreBluetoothErrorMapping.kitError(from: att) as? ATTError == att)
    }

    @Test("A disconnection reason keeps its CBError code, nil stays nil, and anything else is unknown")
    func linkErrors() {
        #expect(CoreBluetoothErrorMapping.linkError(from: nil) == nil)
        #expect(
            CoreBluetoothErrorMapping.linkError(from: NSError(domain: "CBErrorDomain", code: 6))
                == CoreBluetoothError(.connectionTimeout))
        #expect(
            CoreBluetoothErrorMapping.linkError(from: NSError(domain: "CBATTErrorDomain", code: 2))
                == CoreBluetoothError(.unknown))
    }

    @Test("A failure reported without an error uses the fallback code")
    func operationErrorFallback() {
        let error = CoreBluetoothErrorMapping.operationError(from: nil, fallback: .connectionFailed)
        #expect(error as? CoreBluetoothError == CoreBluetoothError(.connectionFailed))
    }

    @Test("The kit's errors convert back to the same domain and code")
    func roundTrip() {
        for code in CoreBluetoothError.Code.allCases {
            let ns = CoreBluetoothErrorMapping.nsError(for: CoreBluetoothError(code))!
            #expect(ns.domain == CoreBluetoothErrorMapping.errorDomain && ns.code == code.rawValue)
            #expect(CoreBluetoothErrorMapping.kitError(from: ns) as? CoreBluetoothError == CoreBluetoothError(code))
        }
        for code in ATTError.Code.allNamed {
            let ns = CoreBluetoothErrorMapping.nsError(for: ATTError(code))!
            #expect(CoreBluetoothErrorMapping.kitError(from: ns) as? ATTError == ATTError(code))
        }
        #expect(CoreBluetoothErrorMapping.domainAndCode(of: CancellationError()) == nil)
    }
}
