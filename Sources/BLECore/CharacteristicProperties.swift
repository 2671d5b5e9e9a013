/// What a characteristic supports, as an option set whose bits equal
/// `CBCharacteristicProperties`' (and, for the low eight bits, the Characteristic
/// Properties field of the Bluetooth Core Specification, Vol 3, Part G, 3.3.1.1).
public struct CharacteristicProperties: OptionSet, Sendable, Hashable, Codable {
    public let rawValue: UInt

    /// Creates a set from its raw bits.
    public init(rawValue: UInt) { self.rawValue = rawValue }

    /// The value may be broadcast in advertisements (0x01).
    public static let broadcast = CharacteristicProperties(rawValue: 0x01)
    /// The value can be read (0x02).
    public static let read = CharacteristicProperties(rawValue: 0x02)
    /// The value can be written without a response (0x04).
    public static let writeWithoutResponse = CharacteristicProperties(rawValue: 0x04)
    /// The value can be written with a response (0x08).
    public static let write = CharacteristicProperties(rawValue: 0x08)
    /// The value can be notified, without acknowledgement (0x10).
    public static let notify = CharacteristicProperties(rawValue: 0x10)
    /// The value can be indicated, with acknowledgement (0x20).
    public static let indicate = CharacteristicProperties(rawValue: 0x20)
    /// Signed writes without response are permitted (0x40).
    public static let authenticatedSignedWrites = CharacteristicProperties(rawValue: 0x40)
    /// Extended properties are in the Characteristic Extended Properties descriptor (0x80).
    public static let extendedProperties = CharacteristicProperties(rawValue: 0x80)
    /// Only trusted devices may enable notifications (CoreBluetooth-only, 0x100): a property a
    /// peripheral publishes. A central never sees it: the declaration carries one byte of
    /// properties, so it sees ``notify``, and writing the CCCD needs an encrypted link.
    public static let notifyEncryptionRequired = CharacteristicProperties(rawValue: 0x100)
    /// Only trusted devices may enable indications (CoreBluetooth-only, 0x200): as
    /// ``notifyEncryptionRequired``, a central sees ``indicate``.
    public static let indicateEncryptionRequired = CharacteristicProperties(rawValue: 0x200)

    /// Each named property with its name as used by fixtures, in bit order.
    public static let named: [(name: String, property: CharacteristicProperties)] = [
        ("broadcast", .broadcast), ("read", .read), ("writeWithoutResponse", .writeWithoutResponse),
        ("write", .write), ("notify", .notify), ("indicate", .indicate),
        ("authenticatedSignedWrites", .authenticatedSignedWrites), ("extendedProperties", .extendedProperties),
        ("notifyEncryptionRequired", .notifyEncryptionRequired),
        ("indicateEncryptionRequired", .indicateEncryptionRequired),
    ]

    /// The names of the properties in this set, in bit order; unknown bits are omitted.
    public var names: [String] { Self.named.filter { contains($0.property) }.map(\.name) }

    /// Creates a set from property names; returns `nil` naming nothing if any name is unknown.
    public init?(names: some Sequence<String>) {
        var result: CharacteristicProperties = []
        for name in names {
            guard let entry = Self.named.first(where: { $0.name == name }) else { return nil }
            result.insert(entry.property)
        }
        self = result
    }

    /// Whether centrals can subscribe (notify or indicate, with or without encryption).
    public var supportsSubscription: Bool {
        !intersection([.notify, .indicate, .notifyEncryptionRequired, .indicateEncryptionRequired]).isEmpty
    }
}

extension CharacteristicProperties: CustomStringConvertible {
    /// The property names in brackets, e.g. `[read, notify]`.
    public var description: String { "[" + names.joined(separator: ", ") + "]" }
}

extension CharacteristicProperties {
    /// The properties a central sees: those of the characteristic's declaration, whose
    /// properties field is one byte (Vol 3, Part G, 3.3.1.1). The two encryption-required
    /// properties a peripheral may publish (CoreBluetooth's) are not in it: they are the notify
    /// and indicate bits, with a CCCD that needs an encrypted link to write.
    public var declared: CharacteristicProperties {
        var declared = CharacteristicProperties(rawValue: rawValue & 0xFF)
        if contains(.notifyEncryptionRequired) { declared.insert(.notify) }
        if contains(.indicateEncryptionRequired) { declared.insert(.indicate) }
        return declared
    }
}
