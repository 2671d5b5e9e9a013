#if canImport(CoreBluetooth)
    import CoreBluetooth

    // Conversions between the kit's value types and CoreBluetooth's, on platforms that have
    // CoreBluetooth. On Linux they are type-checked against a declaration-only copy of
    // CoreBluetooth's API (scripts/typecheck-corebluetooth.sh); they cannot run there, so
    // their logic lives in `CoreBluetoothForms.swift`, which is built and tested everywhere,
    // and these only supply CoreBluetooth's types and constants. The raw-value conversions
    // rely on the kit's raw values being CoreBluetooth's, which `ValueTypeTests` pins.

    extension BluetoothUUID {
        /// Creates a UUID from a `CBUUID` (whose `data` is always 2, 4 or 16 bytes).
        public init(_ cbUUID: CBUUID) {
            self.init(coreBluetoothBytes: [UInt8](cbUUID.data), string: cbUUID.uuidString)
        }

        /// The equivalent `CBUUID`.
        public var cbUUID: CBUUID { CBUUID(data: Data(bytes)) }
    }

    extension ManagerState {
        /// Creates a state from a `CBManagerState`; states this kit does not know become `.unknown`.
        public init(_ state: CBManagerState) {
            self = ManagerState(rawValue: state.rawValue) ?? .unknown
        }

        /// The equivalent `CBManagerState`.
        public var cbManagerState: CBManagerState { CBManagerState(rawValue: rawValue) ?? .unknown }
    }

    extension CharacteristicProperties {
        /// Creates properties from `CBCharacteristicProperties` (the raw bits are the same).
        public init(_ properties: CBCharacteristicProperties) { self.init(rawValue: properties.rawValue) }

        /// The equivalent `CBCharacteristicProperties`.
        public var cbProperties: CBCharacteristicProperties { CBCharacteristicProperties(rawValue: rawValue) }
    }

    extension AttributePermissions {
        /// Creates permissions from `CBAttributePermissions` (the raw bits are the same).
        public init(_ permissions: CBAttributePermissions) { self.init(rawValue: permissions.rawValue) }

        /// The equivalent `CBAttributePermissions`.
        public var cbPermissions: CBAttributePermissions { CBAttributePermissions(rawValue: rawValue) }
    }

    extension WriteType {
        /// Creates a write type from a `CBCharacteristicWriteType`.
        public init(_ type: CBCharacteristicWriteType) {
            self = WriteType(rawValue: type.rawValue) ?? .withResponse
        }

        /// The equivalent `CBCharacteristicWriteType`.
        public var cbWriteType: CBCharacteristicWriteType {
            CBCharacteristicWriteType(rawValue: rawValue) ?? .withResponse
        }
    }

    extension ATTError {
        /// Creates an ATT error from any error in `CBATTErrorDomain` (a `CBATTError` or an
        /// `NSError`); `nil` for errors of other domains or codes outside 0…255.
        public init?(coreBluetooth error: any Error) { self.init(nsError: error, domain: CBATTErrorDomain) }

        /// The error as an `NSError` in `CBATTErrorDomain` with the same code, which Swift code
        /// on Apple platforms can catch as `CBATTError`.
        public var nsError: NSError { nsError(domain: CBATTErrorDomain) }

        /// The equivalent `CBATTError.Code`, if CoreBluetooth names this code.
        public var cbATTErrorCode: CBATTError.Code? { CBATTError.Code(rawValue: Int(code.rawValue)) }
    }

    extension CoreBluetoothError {
        /// Creates an error from any error in `CBErrorDomain` (a `CBError` or an `NSError`);
        /// `nil` for other domains and unknown codes.
        public init?(coreBluetooth error: any Error) { self.init(nsError: error, domain: CBErrorDomain) }

        /// The error as an `NSError` in `CBErrorDomain` with the same code, which Swift code on
        /// Apple platforms can catch as `CBError`.
        public var nsError: NSError { nsError(domain: CBErrorDomain) }

        /// The equivalent `CBError.Code`.
        public var cbErrorCode: CBError.Code? { CBError.Code(rawValue: code.rawValue) }
    }
#endif
