#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The contents of an advertisement, with a field for every CoreBluetooth advertisement
/// data key (`CBAdvertisementData…Key`).
///
/// A peripheral manager advertises one of these; a scanning central receives one with each
/// discovery. Fields a peripheral does not advertise are `nil` or empty.
public struct AdvertisementData: Hashable, Sendable {
    /// The local name (`CBAdvertisementDataLocalNameKey`).
    public var localName: String?
    /// Service UUIDs in the advertisement (`CBAdvertisementDataServiceUUIDsKey`).
    public var serviceUUIDs: [BluetoothUUID]
    /// Service UUIDs in the overflow area, which only iOS devices scanning for them see
    /// (`CBAdvertisementDataOverflowServiceUUIDsKey`).
    public var overflowServiceUUIDs: [BluetoothUUID]
    /// Service UUIDs the peripheral solicits (`CBAdvertisementDataSolicitedServiceUUIDsKey`).
    public var solicitedServiceUUIDs: [BluetoothUUID]
    /// Manufacturer-specific data, starting with the company identifier in little-endian
    /// order (`CBAdvertisementDataManufacturerDataKey`).
    public var manufacturerData: Data?
    /// Service-specific data keyed by service UUID (`CBAdvertisementDataServiceDataKey`).
    public var serviceData: [BluetoothUUID: Data]
    /// The transmit power level in dBm (`CBAdvertisementDataTxPowerLevelKey`).
    public var txPowerLevel: Int?
    /// Whether the peripheral accepts connections (`CBAdvertisementDataIsConnectable`).
    public var isConnectable: Bool?

    /// Creates advertisement data; every field defaults to absent.
    public init(
        localName: String? = nil,
        serviceUUIDs: [BluetoothUUID] = [],
        overflowServiceUUIDs: [BluetoothUUID] = [],
        solicitedServiceUUIDs: [BluetoothUUID] = [],
        manufacturerData: Data? = nil,
        serviceData: [BluetoothUUID: Data] = [:],
        txPowerLevel: Int? = nil,
        isConnectable: Bool? = nil
    ) {
        self.localName = localName
        self.serviceUUIDs = serviceUUIDs
        self.overflowServiceUUIDs = overflowServiceUUIDs
        self.solicitedServiceUUIDs = solicitedServiceUUIDs
        self.manufacturerData = manufacturerData
        self.serviceData = serviceData
        self.txPowerLevel = txPowerLevel
        self.isConnectable = isConnectable
    }

    /// Whether a scan for `services` matches this advertisement: an empty filter matches
    /// everything; otherwise a service UUID must appear among the advertised or overflow
    /// service UUIDs (as CoreBluetooth matches `scanForPeripherals(withServices:)`).
    public func matches(services: [BluetoothUUID]) -> Bool {
        services.isEmpty || services.contains { serviceUUIDs.contains($0) || overflowServiceUUIDs.contains($0) }
    }

    /// Whether the advertisement solicits any of `services`.
    public func solicits(anyOf services: [BluetoothUUID]) -> Bool {
        services.contains { solicitedServiceUUIDs.contains($0) }
    }
}
