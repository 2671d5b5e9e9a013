#if canImport(CoreBluetooth)
    import BLECore
    @preconcurrency import CoreBluetooth

    extension CoreBluetoothErrorMapping {
        /// The kit's error for an error CoreBluetooth reported: a `CBATTError` (or `NSError` in
        /// `CBATTErrorDomain`) becomes `ATTError` and a `CBError` (or `NSError` in
        /// `CBErrorDomain`) becomes `CoreBluetoothError`, with the same codes, through BLECore's
        /// `init?(coreBluetooth:)`; anything else goes through ``kitError(from:)``.
        ///
        /// Only type-checked on Linux (the stub's errors do not bridge from `NSError`).
        public static func kitError(fromCoreBluetooth error: any Error) -> any Error {
            if let att = ATTError(coreBluetooth: error) { return att }
            if let cb = CoreBluetoothError(coreBluetooth: error) { return cb }
            return kitError(from: error)
        }

        /// The `CBATTError.Code` to answer a request with; codes CoreBluetooth does not name
        /// (application errors on SDKs whose enum is closed) become `unlikelyError`.
        public static func cbATTErrorCode(for code: ATTError.Code) -> CBATTError.Code {
            ATTError(code).cbATTErrorCode ?? .unlikelyError
        }
    }
#endif
