import BLECore
import BLEMockKit
import Foundation

/// What a recording ``CBMCentralManager`` keeps besides its ``SessionRecorder``: the calls
/// whose results arrive later without saying which call they answer — the reads still
/// waiting (so `peripheral(_:didUpdateValueFor:error:)` tells a read's value from a
/// notification), and the values of writes with response still waiting (so
/// `peripheral(_:didWriteValueFor:error:)` records the value written).
final class CentralRecording: @unchecked Sendable {
    // @unchecked Sendable: `pendingReads` and `pendingWrites` are only read and written with
    // `lock` held; `recorder` is immutable and Sendable.
    let recorder: SessionRecorder
    private let lock = Lock()
    private var pendingReads: [UUID: [UInt16: Int]] = [:]
    private var pendingWrites: [UUID: [UInt16: [Data]]] = [:]

    init(recorder: SessionRecorder) {
        self.recorder = recorder
    }

    /// The app asked to read the attribute at `handle`.
    func readRequested(_ peripheral: UUID, _ handle: UInt16) {
        lock.withLock { pendingReads[peripheral, default: [:]][handle, default: 0] += 1 }
    }

    /// Whether a value of the attribute at `handle` answers a read (else it is a
    /// notification or indication); takes the read off the waiting list.
    func answersRead(_ peripheral: UUID, _ handle: UInt16) -> Bool {
        lock.withLock {
            guard let count = pendingReads[peripheral]?[handle], count > 0 else { return false }
            pendingReads[peripheral]?[handle] = count - 1
            return true
        }
    }

    /// The app asked to write `value` with response to the attribute at `handle`.
    func writeRequested(_ peripheral: UUID, _ handle: UInt16, _ value: Data) {
        lock.withLock { pendingWrites[peripheral, default: [:]][handle, default: []].append(value) }
    }

    /// The value of the oldest write with response to `handle` still waiting, taken off the list.
    func writeAnswered(_ peripheral: UUID, _ handle: UInt16) -> Data? {
        lock.withLock {
            guard var values = pendingWrites[peripheral]?[handle], !values.isEmpty else { return nil }
            let first = values.removeFirst()
            pendingWrites[peripheral]?[handle] = values
            return first
        }
    }

    /// The link went down: nothing waiting on it will be answered.
    func linkEnded(_ peripheral: UUID) {
        lock.withLock {
            pendingReads[peripheral] = nil
            pendingWrites[peripheral] = nil
        }
    }

    /// A recorded error for an error a delegate callback carries.
    static func recorded(_ error: (any Error)?) -> RecordedError? {
        guard let error else { return nil }
        if let error = error as? CBMError { return RecordedError(domain: .coreBluetooth, code: error.code.rawValue) }
        if let error = error as? CBMATTError { return RecordedError(domain: .att, code: error.errorCode) }
        let bridged = error as NSError
        switch bridged.domain {
        case CBMErrorDomain: return RecordedError(domain: .coreBluetooth, code: bridged.code)
        case CBMATTErrorDomain: return RecordedError(domain: .att, code: bridged.code)
        default: return RecordedError(error)
        }
    }
}
