extension CoreBluetoothError.Code: CustomStringConvertible {
    /// The case name, e.g. `"connectionTimeout"`.
    public var description: String {
        switch self {
        case .unknown: "unknown"
        case .invalidParameters: "invalidParameters"
        case .invalidHandle: "invalidHandle"
        case .notConnected: "notConnected"
        case .outOfSpace: "outOfSpace"
        case .operationCancelled: "operationCancelled"
        case .connectionTimeout: "connectionTimeout"
        case .peripheralDisconnected: "peripheralDisconnected"
        case .uuidNotAllowed: "uuidNotAllowed"
        case .alreadyAdvertising: "alreadyAdvertising"
        case .connectionFailed: "connectionFailed"
        case .connectionLimitReached: "connectionLimitReached"
        case .unknownDevice: "unknownDevice"
        case .operationNotSupported: "operationNotSupported"
        case .peerRemovedPairingInformation: "peerRemovedPairingInformation"
        case .encryptionTimedOut: "encryptionTimedOut"
        case .tooManyLEPairedDevices: "tooManyLEPairedDevices"
        case .leGattExceededBackgroundNotificationLimit: "leGattExceededBackgroundNotificationLimit"
        case .leGattNearBackgroundNotificationLimit: "leGattNearBackgroundNotificationLimit"
        }
    }

    /// Creates a code from its case name; `nil` for unknown names.
    public init?(name: String) {
        guard let code = Self.allCases.first(where: { $0.description == name }) else { return nil }
        self = code
    }
}

extension CoreBluetoothError: CustomStringConvertible {
    /// What went wrong and how to fix it, starting with the code, e.g.
    /// `"CoreBluetooth error 7 peripheralDisconnected: …"`.
    public var description: String {
        "CoreBluetooth error \(code.rawValue) \(code): \(explanation)" + (reason.map { " " + $0 } ?? "")
    }

    /// The explanation and suggested fix for this code, without the code itself.
    public var explanation: String {
        switch code {
        case .unknown: "an unknown error occurred."
        case .invalidParameters: "the parameters are invalid; check UUIDs, lengths and options."
        case .invalidHandle: "the attribute is not known on this link; rediscover services and use a current handle."
        case .notConnected: "the peripheral is not connected; connect before using it."
        case .outOfSpace: "the device ran out of space for the operation."
        case .operationCancelled: "the operation was cancelled."
        case .connectionTimeout: "the connection timed out; move closer or retry."
        case .peripheralDisconnected: "the peripheral disconnected; reconnect and retry pending operations."
        case .uuidNotAllowed: "this UUID is reserved and may not be used."
        case .alreadyAdvertising: "the peripheral manager is already advertising; stop advertising first."
        case .connectionFailed: "the connection failed; retry."
        case .connectionLimitReached: "too many connections; disconnect another peripheral first."
        case .unknownDevice: "the device is unknown; discover or retrieve it first."
        case .operationNotSupported: "the operation is not supported here."
        case .peerRemovedPairingInformation: "the peer removed its pairing information; remove the bond and pair again."
        case .encryptionTimedOut: "encrypting the link timed out; retry pairing."
        case .tooManyLEPairedDevices: "too many LE devices are paired; remove an old pairing."
        case .leGattExceededBackgroundNotificationLimit: "the background notification limit was exceeded."
        case .leGattNearBackgroundNotificationLimit: "the background notification limit is near."
        }
    }
}
