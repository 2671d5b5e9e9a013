/// Who may read and write an attribute's value on a local GATT server, as an option set
/// whose bits equal `CBAttributePermissions`'.
public struct AttributePermissions: OptionSet, Sendable, Hashable, Codable {
    public let rawValue: UInt

    /// Creates a set from its raw bits.
    public init(rawValue: UInt) { self.rawValue = rawValue }

    /// The value can be read (0x01).
    public static let readable = AttributePermissions(rawValue: 0x01)
    /// The value can be written (0x02).
    public static let writeable = AttributePermissions(rawValue: 0x02)
    /// Reading needs an encrypted link (0x04); an unencrypted read fails with ATT 0x05
    /// (insufficient authentication) when the server has no keys for the central, or 0x0F
    /// (insufficient encryption) when it has (Bluetooth Core Specification, Vol 3, Part C,
    /// 10.3.1), unless the central pairs.
    public static let readEncryptionRequired = AttributePermissions(rawValue: 0x04)
    /// Writing needs an encrypted link (0x08); an unencrypted write fails as an unencrypted
    /// read of ``readEncryptionRequired`` does.
    public static let writeEncryptionRequired = AttributePermissions(rawValue: 0x08)

    /// Each named permission with its name as used by fixtures, in bit order.
    public static let named: [(name: String, permission: AttributePermissions)] = [
        ("readable", .readable), ("writeable", .writeable),
        ("readEncryptionRequired", .readEncryptionRequired), ("writeEncryptionRequired", .writeEncryptionRequired),
    ]

    /// The names of the permissions in this set, in bit order; unknown bits are omitted.
    public var names: [String] { Self.named.filter { contains($0.permission) }.map(\.name) }

    /// Creates a set from permission names; returns `nil` if any name is unknown.
    public init?(names: some Sequence<String>) {
        var result: AttributePermissions = []
        for name in names {
            guard let entry = Self.named.first(where: { $0.name == name }) else { return nil }
            result.insert(entry.permission)
        }
        self = result
    }

    /// Whether reading is allowed at all (readable or read-encryption-required).
    public var allowsRead: Bool { !intersection([.readable, .readEncryptionRequired]).isEmpty }
    /// Whether writing is allowed at all (writeable or write-encryption-required).
    public var allowsWrite: Bool { !intersection([.writeable, .writeEncryptionRequired]).isEmpty }
}

extension AttributePermissions: CustomStringConvertible {
    /// The permission names in brackets, e.g. `[readable, writeable]`.
    public var description: String { "[" + names.joined(separator: ", ") + "]" }
}
