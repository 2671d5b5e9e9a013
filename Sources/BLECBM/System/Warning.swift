import BLEMockKit

/// A warning for the person running the tests, on standard error (as CoreBluetoothMock logs its
/// own with `NSLog`): a call the kit ignored, and why.
enum Warning {
    static func emit(_ message: String) {
        WaitReporting.writeToStandardError("BLECBM warning: \(message)\n")
    }
}
