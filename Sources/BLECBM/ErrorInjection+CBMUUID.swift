import BLECore
import BLEMockKit
import Foundation

extension ErrorInjection {
    /// An injection narrowed to the characteristic a CoreBluetooth-shaped app names with
    /// `characteristic` (the `CBMUUID` it discovers or publishes it by): the same injection as
    /// ``ErrorInjection/init(_:failure:frequency:peripheral:characteristic:)`` given the UUID's
    /// `bluetoothUUID`.
    ///
    /// - Parameters:
    ///   - operation: The operation that fails.
    ///   - failure: How it fails.
    ///   - frequency: How often it fails. Defaults to once.
    ///   - peripheral: The peripheral whose operations fail, or `nil` for any.
    ///   - characteristic: The characteristic whose operations fail.
    public init(
        _ operation: Operation, failure: Failure, frequency: Frequency = .once, peripheral: UUID? = nil,
        characteristic: CBMUUID
    ) {
        self.init(
            operation, failure: failure, frequency: frequency, peripheral: peripheral,
            characteristic: characteristic.bluetoothUUID)
    }
}
