#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A descriptor of a characteristic in a GATT database description.
///
/// Peripherals publish descriptors with a fixed value, such as the Characteristic User
/// Description (`2901`) or Presentation Format (`2904`). The Client Characteristic
/// Configuration descriptor (`2902`) is managed by the stack for characteristics that
/// can notify or indicate, as CoreBluetooth does; do not add it yourself.
public struct GATTDescriptor: Hashable, Sendable {
    /// The descriptor type.
    public var uuid: BluetoothUUID
    /// The descriptor's value.
    public var value: Data

    /// Creates a descriptor with a value.
    public init(uuid: BluetoothUUID, value: Data) {
        self.uuid = uuid
        self.value = value
    }

    /// A Characteristic User Description (`2901`) holding `text` as UTF-8.
    public static func userDescription(_ text: String) -> GATTDescriptor {
        GATTDescriptor(uuid: .characteristicUserDescription, value: Data(text.utf8))
    }
}

extension BluetoothUUID {
    /// Characteristic Extended Properties descriptor (`2900`).
    public static let characteristicExtendedProperties = BluetoothUUID(UInt16(0x2900))
    /// Characteristic User Description descriptor (`2901`).
    public static let characteristicUserDescription = BluetoothUUID(UInt16(0x2901))
    /// Client Characteristic Configuration descriptor (`2902`), managed by the stack.
    public static let clientCharacteristicConfiguration = BluetoothUUID(UInt16(0x2902))
    /// Server Characteristic Configuration descriptor (`2903`).
    public static let serverCharacteristicConfiguration = BluetoothUUID(UInt16(0x2903))
    /// Characteristic Presentation Format descriptor (`2904`).
    public static let characteristicFormat = BluetoothUUID(UInt16(0x2904))
    /// Characteristic Aggregate Format descriptor (`2905`).
    public static let characteristicAggregateFormat = BluetoothUUID(UInt16(0x2905))
}
