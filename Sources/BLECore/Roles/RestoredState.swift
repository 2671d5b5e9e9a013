#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// What CoreBluetooth restores to a central manager created with the restore identifier of
/// one the system kept alive after the app was terminated (the `willRestoreState` dictionary).
public struct RestoredCentralState: Hashable, Sendable {
    /// The peripherals the manager was connected or connecting to
    /// (`CBCentralManagerRestoredStatePeripheralsKey`). Services and characteristics it had
    /// discovered are still known: ``CentralManaging/services(of:)`` lists them.
    public var peripherals: [RemotePeripheral]
    /// The services it was scanning for, if it was scanning
    /// (`CBCentralManagerRestoredStateScanServicesKey`; an empty array for a scan of all).
    public var scanServices: [BluetoothUUID]?
    /// The options of that scan (`CBCentralManagerRestoredStateScanOptionsKey`).
    public var scanOptions: ScanOptions?

    /// Creates a restored state.
    public init(peripherals: [RemotePeripheral], scanServices: [BluetoothUUID]? = nil, scanOptions: ScanOptions? = nil)
    {
        self.peripherals = peripherals
        self.scanServices = scanServices
        self.scanOptions = scanOptions
    }
}

/// What CoreBluetooth restores to a peripheral manager created with the restore identifier
/// of one the system kept alive after the app was terminated.
public struct RestoredPeripheralState: Hashable, Sendable {
    /// The services it had published (`CBPeripheralManagerRestoredStateServicesKey`), still
    /// published.
    public var services: [LocalService]
    /// What it was advertising, if it was (`CBPeripheralManagerRestoredStateAdvertisementDataKey`).
    public var advertisement: AdvertisementData?

    /// Creates a restored state.
    public init(services: [LocalService], advertisement: AdvertisementData? = nil) {
        self.services = services
        self.advertisement = advertisement
    }
}
