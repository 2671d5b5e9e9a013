// swift-format-ignore-file: AlwaysUseLowerCamelCase
// (These names mirror CoreBluetooth's API.)

import BLECore
import Foundation

/// A Bluetooth UUID with CoreBluetooth's `CBUUID` behaviour: 16-, 32- and 128-bit forms, the
/// short form for UUIDs built on the Bluetooth base UUID, and `uuidString` in upper case.
///
/// ```swift
/// let heartRate = CBMUUID(string: "180D")
/// heartRate.uuidString  // "180D"
/// CBMUUID(string: "0000180d-0000-1000-8000-00805f9b34fb") == heartRate  // true
/// ```
public final class CBMUUID: NSObject, NSCopying, @unchecked Sendable {
    // @unchecked Sendable: immutable after init.

    /// The kit's value behind this UUID.
    public let bluetoothUUID: BluetoothUUID

    /// Creates a UUID from the kit's value.
    public init(bluetoothUUID: BluetoothUUID) {
        self.bluetoothUUID = bluetoothUUID
        super.init()
    }

    /// Creates a UUID from a string of 4 or 8 hexadecimal digits (with or without a `0x` prefix:
    /// `"0x180D"` is `"180D"`), or a 128-bit UUID string with dashes, as `CBUUID(string:)` does.
    ///
    /// Like CoreBluetooth, which raises an exception, it stops the program on a string that is
    /// not a UUID, naming the string; use ``init(validating:)`` to get an error instead.
    public convenience init(string: String) {
        do {
            try self.init(validating: string)
        } catch {
            preconditionFailure("CBMUUID(string:): \(error) (use CBMUUID(validating:) to handle bad input)")
        }
    }

    /// Creates a UUID from a string as ``init(string:)`` does, throwing on a string that is not
    /// a UUID.
    public convenience init(validating string: String) throws(BluetoothUUID.ParseError) {
        self.init(bluetoothUUID: try Self.parse(string))
    }

    /// The UUID a `CBUUID` string stands for: the kit's forms, and a 16- or 32-bit UUID written
    /// with a `0x` prefix, which CoreBluetooth also takes (the kit's `BluetoothUUID` does not).
    /// A bad digit or hyphen after the prefix is named at its offset in the string given.
    static func parse(_ string: String) throws(BluetoothUUID.ParseError) -> BluetoothUUID {
        guard string.hasPrefix("0x"), [6, 10].contains(string.count) else { return try BluetoothUUID(string: string) }
        do {
            return try BluetoothUUID(string: String(string.dropFirst(2)))
        } catch {
            var reason = error.reason
            switch reason {
            case .invalidCharacter(let character, let offset): reason = .invalidCharacter(character, offset: offset + 2)
            case .misplacedHyphen(let offset): reason = .misplacedHyphen(offset: offset + 2)
            default: break
            }
            throw BluetoothUUID.ParseError(input: string, reason: reason)
        }
    }

    /// Creates a UUID from 2, 4 or 16 bytes, most significant first, as `CBUUID(data:)` does.
    /// Stops the program on another length, as CoreBluetooth does.
    public convenience init(data: Data) {
        do {
            self.init(bluetoothUUID: try BluetoothUUID(bytes: data))
        } catch {
            preconditionFailure("CBMUUID(data:): \(error)")
        }
    }

    /// Creates a 128-bit UUID from a Foundation UUID, as `CBUUID(nsuuid:)` does.
    public convenience init(nsuuid: UUID) {
        self.init(bluetoothUUID: BluetoothUUID(nsuuid))
    }

    /// The UUID as a string: 4 or 8 hexadecimal digits for UUIDs built on the Bluetooth base
    /// UUID, else the 128-bit form; upper case.
    public var uuidString: String { bluetoothUUID.uuidString }

    /// The UUID's bytes, most significant first: 2, 4 or 16 of them.
    public var data: Data { Data(bluetoothUUID.bytes) }

    public override var description: String { uuidString }

    public override var hash: Int { bluetoothUUID.hashValue }

    public override func isEqual(_ object: Any?) -> Bool {
        (object as? CBMUUID)?.bluetoothUUID == bluetoothUUID
    }

    public func copy(with zone: NSZone? = nil) -> Any { self }
}

extension CBMUUID {
    /// The Characteristic Extended Properties descriptor (0x2900).
    public static let characteristicExtendedPropertiesString = "2900"
    /// The Characteristic User Description descriptor (0x2901).
    public static let characteristicUserDescriptionString = "2901"
    /// The Client Characteristic Configuration descriptor (0x2902).
    public static let clientCharacteristicConfigurationString = "2902"
    /// The Server Characteristic Configuration descriptor (0x2903).
    public static let serverCharacteristicConfigurationString = "2903"
    /// The Characteristic Presentation Format descriptor (0x2904).
    public static let characteristicFormatString = "2904"
    /// The Characteristic Aggregate Format descriptor (0x2905).
    public static let characteristicAggregateFormatString = "2905"
    /// The Valid Range descriptor (0x2906).
    public static let characteristicValidRangeString = "2906"
    /// The Observation Schedule descriptor (0x2910).
    public static let characteristicObservationScheduleString = "2910"
    /// The L2CAP PSM characteristic (ABDD3056-28FA-441D-A470-55A75A52553A).
    public static let l2capPSMCharacteristicString = "ABDD3056-28FA-441D-A470-55A75A52553A"
}

/// CoreBluetooth's names for the descriptor UUID strings.
public let CBMUUIDCharacteristicExtendedPropertiesString = CBMUUID.characteristicExtendedPropertiesString
/// CoreBluetooth's name for the Characteristic User Description descriptor's UUID string.
public let CBMUUIDCharacteristicUserDescriptionString = CBMUUID.characteristicUserDescriptionString
/// CoreBluetooth's name for the Client Characteristic Configuration descriptor's UUID string.
public let CBMUUIDClientCharacteristicConfigurationString = CBMUUID.clientCharacteristicConfigurationString
/// CoreBluetooth's name for the Server Characteristic Configuration descriptor's UUID string.
public let CBMUUIDServerCharacteristicConfigurationString = CBMUUID.serverCharacteristicConfigurationString
/// CoreBluetooth's name for the Characteristic Presentation Format descriptor's UUID string.
public let CBMUUIDCharacteristicFormatString = CBMUUID.characteristicFormatString
/// CoreBluetooth's name for the Characteristic Aggregate Format descriptor's UUID string.
public let CBMUUIDCharacteristicAggregateFormatString = CBMUUID.characteristicAggregateFormatString
/// CoreBluetooth's name for the L2CAP PSM characteristic's UUID string.
public let CBMUUIDL2CAPPSMCharacteristicString = CBMUUID.l2capPSMCharacteristicString
/// CoreBluetooth's name for the Valid Range descriptor's UUID string.
public let CBMUUIDCharacteristicValidRangeString = CBMUUID.characteristicValidRangeString
/// CoreBluetooth's name for the Observation Schedule descriptor's UUID string.
public let CBMUUIDCharacteristicObservationScheduleString = CBMUUID.characteristicObservationScheduleString
