import BLECore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A peripheral made from a ``PeripheralProfile`` by
/// ``PeripheralProfile/makePeripheral(on:configuration:)``: its manager, published
/// services, and the characteristics by the names the profile gave them.
///
/// ```swift
/// let loaded = try await PeripheralProfile.load(contentsOf: url).makePeripheral(on: bridge)
/// let measurement = try #require(loaded.characteristic(id: "hrm"))
/// _ = try await loaded.manager.updateValue(Data([0x06, 0x48]), for: measurement, onSubscribedCentrals: nil)
/// ```
public struct LoadedPeripheral: Sendable {
    /// The peripheral manager, powered on, with the services added and advertising.
    public let manager: MockPeripheralManager
    /// The profile it was made from.
    public let profile: PeripheralProfile
    /// The published services, in profile order.
    public let services: [LocalService]
    /// The published characteristics with an `id` in the profile, by id.
    public let characteristicsByID: [String: LocalCharacteristic]

    /// Creates a loaded peripheral, pairing each profile characteristic with its published
    /// counterpart (`services` must be the profile's services as published, in order).
    init(manager: MockPeripheralManager, profile: PeripheralProfile, services: [LocalService]) {
        self.manager = manager
        self.profile = profile
        self.services = services
        var byID: [String: LocalCharacteristic] = [:]
        for (described, published) in zip(profile.services, services) {
            for (characteristic, local) in zip(described.characteristics, published.characteristics) {
                if let id = characteristic.id { byID[id] = local }
            }
        }
        self.characteristicsByID = byID
    }

    /// The peripheral's identifier, which centrals connect to.
    public var identifier: UUID { manager.identifier }

    /// Every published characteristic, in database order.
    public var characteristics: [LocalCharacteristic] { services.flatMap(\.characteristics) }

    /// The characteristic the profile named `id`, or `nil` if no characteristic has that id.
    public func characteristic(id: String) -> LocalCharacteristic? {
        characteristicsByID[id]
    }

    /// The characteristic with a UUID, when exactly one has it.
    ///
    /// - Returns: the characteristic, or `nil` if none has the UUID.
    /// - Throws: `APIMisuseError.ambiguousCharacteristic(_:peripheral:handles:)` listing the
    ///   handles when several do (name it by `id` instead).
    public func characteristic(uuid: BluetoothUUID) throws(APIMisuseError) -> LocalCharacteristic? {
        let matches = characteristics.filter { $0.uuid == uuid }
        guard matches.count <= 1 else {
            throw .ambiguousCharacteristic(uuid, peripheral: identifier, handles: matches.map(\.handle))
        }
        return matches.first
    }

    /// The characteristic a scenario step names: by `id` first, then — if `reference` is
    /// a UUID string — by UUID when unambiguous.
    ///
    /// - Returns: the characteristic, or `nil` if nothing matches.
    /// - Throws: `APIMisuseError.ambiguousCharacteristic(_:peripheral:handles:)` when
    ///   `reference` is a UUID several characteristics have.
    public func characteristic(named reference: String) throws(APIMisuseError) -> LocalCharacteristic? {
        if let match = characteristicsByID[reference] { return match }
        guard let uuid = try? BluetoothUUID(string: reference) else { return nil }
        return try characteristic(uuid: uuid)
    }

    /// Sets the current value of the dynamic characteristic named `id` (what automatic
    /// request handling answers reads with).
    ///
    /// - Returns: `false` if no characteristic has that id.
    /// - Throws: what ``MockPeripheralManager/setValue(_:for:)`` throws, e.g. for a static
    ///   characteristic.
    @discardableResult
    public func setValue(_ value: Data, forCharacteristicID id: String) async throws -> Bool {
        guard let characteristic = characteristicsByID[id] else { return false }
        try await manager.setValue(value, for: characteristic)
        return true
    }
}
