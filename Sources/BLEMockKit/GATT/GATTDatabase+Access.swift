import BLECore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

extension GATTDatabase {
    /// How a read of a characteristic value is answered.
    enum ReadPlan: Equatable, Sendable {
        /// The stack answers from the static value: these bytes, from the requested offset.
        case answered(Data)
        /// The peripheral manager must answer (a dynamic characteristic).
        case askPeripheral(LocalCharacteristic)
    }

    /// How a read of a descriptor is answered.
    enum DescriptorReadPlan: Equatable, Sendable {
        /// The stack answers with this value.
        case answered(Data)
        /// The Client Characteristic Configuration of this characteristic: its value depends
        /// on the reading central's subscription.
        case clientConfiguration(LocalCharacteristic)
    }

    /// Checks a Read (or Read Blob at `offset`) of a characteristic value.
    ///
    /// Errors: 0x01 unknown handle; 0x02 not readable (needs the `.read` property and a read
    /// permission); 0x05 or 0x0F encryption required on an unencrypted link (see
    /// `LinkSecurity.encryptionError`); 0x07 offset past the end
    /// of a static value (an offset equal to its length reads empty).
    func planRead(handle: UInt16, offset: Int, security: LinkSecurity) throws(ATTError) -> ReadPlan {
        guard let characteristic = characteristic(at: handle) else { throw ATTError(.invalidHandle) }
        let local = characteristic.local
        guard local.properties.contains(.read), local.permissions.allowsRead else {
            throw ATTError(.readNotPermitted)
        }
        if !local.permissions.contains(.readable), let error = security.encryptionError { throw error }
        guard characteristic.isStatic else { return .askPeripheral(local) }
        return .answered(try Self.slice(characteristic.value, from: offset))
    }

    /// Checks a write of `length` bytes to a characteristic value.
    ///
    /// Errors: 0x01 unknown handle; 0x03 the property for this write type (`.write` or
    /// `.writeWithoutResponse`) or a write permission is missing; 0x05 or 0x0F encryption required on
    /// an unencrypted link; 0x0D a value longer than 512 bytes.
    func planWrite(handle: UInt16, length: Int, type: WriteType, security: LinkSecurity) throws(ATTError)
        -> LocalCharacteristic
    {
        guard let characteristic = characteristic(at: handle) else { throw ATTError(.invalidHandle) }
        let local = characteristic.local
        let property: CharacteristicProperties = type == .withResponse ? .write : .writeWithoutResponse
        guard local.properties.contains(property), local.permissions.allowsWrite else {
            throw ATTError(.writeNotPermitted)
        }
        if !local.permissions.contains(.writeable), let error = security.encryptionError { throw error }
        guard length <= Self.maximumValueLength else { throw ATTError(.invalidAttributeValueLength) }
        return local
    }

    /// Checks enabling notifications or indications and says which one the stack enables
    /// (notifications when the characteristic supports both).
    ///
    /// Errors: 0x01 unknown handle; 0x06 the characteristic can neither notify nor indicate;
    /// 0x05 or 0x0F on an unencrypted link when it has an encryption-required property: its one
    /// CCCD then needs an encrypted link to write, whatever plain `notify` or `indicate` it also
    /// has (CoreBluetooth: "only trusted devices can enable notifications").
    func planSubscribe(handle: UInt16, security: LinkSecurity) throws(ATTError) -> SubscriptionKind {
        guard let characteristic = characteristic(at: handle) else { throw ATTError(.invalidHandle) }
        let properties = characteristic.local.properties
        guard properties.supportsSubscription else { throw ATTError(.requestNotSupported) }
        let trusted = !properties.intersection([.notifyEncryptionRequired, .indicateEncryptionRequired]).isEmpty
        if trusted, let error = security.encryptionError { throw error }
        return properties.contains(.notify) || properties.contains(.notifyEncryptionRequired) ? .notify : .indicate
    }

    /// Checks a read of a descriptor at `offset`.
    ///
    /// Errors: 0x01 unknown handle; 0x07 offset past the end.
    func planDescriptorRead(handle: UInt16, offset: Int) throws(ATTError) -> DescriptorReadPlan {
        guard let owner = descriptorOwner(handle: handle) else { throw ATTError(.invalidHandle) }
        guard let descriptor = owner.descriptor else { return .clientConfiguration(owner.characteristic.local) }
        return .answered(try Self.slice(descriptor.value, from: offset))
    }

    /// Checks a write to a descriptor. Descriptors published through a peripheral manager
    /// are read-only (as in CoreBluetooth), so this fails with 0x03 for them and 0x01 for
    /// unknown handles; the CCCD is written only through subscribing.
    func planDescriptorWrite(handle: UInt16) throws(ATTError) -> Never {
        guard descriptorOwner(handle: handle) != nil else { throw ATTError(.invalidHandle) }
        throw ATTError(.writeNotPermitted)
    }

    /// The bytes of `value` from `offset` on; 0x07 past the end (offset == count is empty).
    static func slice(_ value: Data, from offset: Int) throws(ATTError) -> Data {
        guard offset >= 0, offset <= value.count else { throw ATTError(.invalidOffset) }
        return offset == 0 ? value : Data(value.dropFirst(offset))
    }
}
