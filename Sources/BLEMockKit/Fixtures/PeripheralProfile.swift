import BLECore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A simulated device described by a fixture file: its GATT database, what it advertises,
/// and how it appears on the air (the "Peripheral profile" of `Fixtures/README.md`).
///
/// Load a bundled profile, a file or inline JSON, then put it on a bridge:
///
/// ```swift
/// let profile = PeripheralProfile.bundled(.heartRate)   // or try PeripheralProfile.load(contentsOf: url)
/// let loaded = try await profile.makePeripheral(on: bridge)
/// let measurement = loaded.characteristic(id: "hrm")
/// ```
///
/// Parsing is strict: unknown fields, wrong types, bad UUIDs, unknown property or
/// permission names, out-of-range numbers and duplicate characteristic ids are
/// ``FixtureError``s naming the file, line, column and path.
public struct PeripheralProfile: Sendable, Hashable {
    /// The fields a profile object may have.
    public static let fields = ["name", "advertisement", "advertisingInterval", "rssi", "preferredMTU", "services"]
    /// The RSSI values a profile may give, in dBm.
    public static let rssiRange = -127...0
    /// The ATT_MTU values a preference is clamped to when read (a file may give any integer).
    public static let preferredMTURange = 23...517
    /// The advertising intervals a profile may give (Bluetooth Core Specification, Vol 6,
    /// Part B, 4.4.2.2: 20 ms to 10.24 s).
    public static let advertisingIntervalRange = Duration.milliseconds(20)...Duration.milliseconds(10_240)
    /// The longest value an attribute holds (Bluetooth Core Specification, Vol 3, Part F, 3.2.9).
    public static let maximumAttributeLength = 512

    /// The device's GAP name (the manager configuration's `name`), if given.
    public var name: String?
    /// What the device advertises; `nil` advertises ``defaultAdvertisement``.
    public var advertisement: AdvertisementData?
    /// The time between advertisements, if given (20 ms…10.24 s).
    public var advertisingInterval: Duration?
    /// The signal strength centrals see, in dBm, if given (−127…0).
    public var rssi: Int?
    /// The ATT_MTU the device prefers, if given (23…517: a file's value outside that range is
    /// clamped to it when read); it fixes the peripheral's side of the MTU negotiation.
    public var preferredMTU: Int?
    /// The services, in database order.
    public var services: [Service]

    /// Creates a profile.
    public init(
        name: String? = nil, advertisement: AdvertisementData? = nil, advertisingInterval: Duration? = nil,
        rssi: Int? = nil, preferredMTU: Int? = nil, services: [Service] = []
    ) {
        self.name = name
        self.advertisement = advertisement
        self.advertisingInterval = advertisingInterval
        self.rssi = rssi
        self.preferredMTU = preferredMTU
        self.services = services
    }

    /// What the device advertises when the profile has no `advertisement`: its name as the
    /// local name and the UUIDs of its primary services.
    public var defaultAdvertisement: AdvertisementData {
        AdvertisementData(localName: name, serviceUUIDs: services.filter(\.isPrimary).map(\.uuid))
    }

    /// The characteristic with an `id`, if any.
    public func characteristic(id: String) -> Characteristic? {
        for service in services {
            if let match = service.characteristics.first(where: { $0.id == id }) { return match }
        }
        return nil
    }

    /// The ids of the characteristics that have one, in database order.
    public var characteristicIDs: [String] {
        services.flatMap { $0.characteristics.compactMap(\.id) }
    }

    /// The manager configuration for this device: `base` with the profile's `name`,
    /// `rssi`, `advertisingInterval` and `preferredMTU` (as `mtu: .fixed(n)`) where given.
    public func configuration(
        overriding base: MockPeripheralManager.Configuration = .init()
    ) -> MockPeripheralManager.Configuration {
        var configuration = base
        if let name { configuration.name = name }
        if let rssi { configuration.rssi = rssi }
        if let advertisingInterval { configuration.advertisingInterval = advertisingInterval }
        if let preferredMTU { configuration.mtu = .fixed(preferredMTU) }
        return configuration
    }

    /// Creates a peripheral manager on `bridge` from the profile: the configuration is
    /// ``configuration(overriding:)`` of `configuration`; once it is powered on, it adds
    /// the services in order (giving dynamic characteristics their `initialValue`) and starts
    /// advertising the profile's advertisement.
    ///
    /// If adding a service or advertising fails, the manager is shut down and the error
    /// thrown (e.g. `APIMisuseError.notPoweredOn(operation:state:)` when `configuration`
    /// keeps it powered off, or an injected failure).
    public func makePeripheral(
        on bridge: MockBLEBridge, configuration: MockPeripheralManager.Configuration = .init()
    ) async throws -> LoadedPeripheral {
        let manager = MockPeripheralManager(
            configuration: self.configuration(overriding: configuration), bridge: bridge)
        _ = await manager.waitForPoweredOn()
        do {
            var published: [LocalService] = []
            for service in services {
                let local = try await manager.add(service.gattService)
                for (characteristic, publishedCharacteristic) in zip(service.characteristics, local.characteristics) {
                    if let initial = characteristic.initialValue {
                        try await manager.setValue(initial, for: publishedCharacteristic)
                    }
                }
                published.append(local)
            }
            try await manager.startAdvertising(advertisement ?? defaultAdvertisement)
            return LoadedPeripheral(manager: manager, profile: self, services: published)
        } catch {
            await manager.shutDown()
            throw error
        }
    }
}
