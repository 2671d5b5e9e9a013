import BLECore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// What the simulated stack did with a write without response: CoreBluetooth tells the app
/// none of it, but a session recording must not keep a write the peripheral never got as sent.
package enum WriteWithoutResponseOutcome: Equatable, Sendable {
    /// Queued for the peripheral, with the value as it crosses (cut to the link's length when
    /// it was longer).
    case queued(Data)
    /// Dropped: the link's write-without-response queue was full.
    case dropped
    /// Not sent: the characteristic does not have the write-without-response property.
    case notSent

    /// The write as a session recording keeps it: the value that crossed, or, for a write that
    /// never crossed, the app's value with the error the bridge's log gives it (CoreBluetooth's
    /// `outOfSpace` for a full queue; the kit's own for a characteristic without the property).
    package func recordedEvent(peripheral: UUID, handle: UInt16, value: Data) -> RecordedEvent {
        let (sent, error): (Data, RecordedError?) =
            switch self {
            case .queued(let crossed): (crossed, nil)
            case .dropped: (value, RecordedError(CoreBluetoothError(.outOfSpace)))
            case .notSent: (value, RecordedError(domain: .kit, code: 0))
            }
        return .write(peripheral: peripheral, handle: handle, value: .bytes(sent), withResponse: false, error: error)
    }
}
