// swift-format-ignore-file: AlwaysUseLowerCamelCase
// (These names mirror CoreBluetooth's API.)

import Foundation

// CoreBluetooth's dictionary keys. On Apple platforms they are CoreBluetooth's own constants,
// so dictionaries pass between the two unchanged; elsewhere, the same strings.

#if canImport(CoreBluetooth)
    import CoreBluetooth

    /// The local name of a peripheral (a `String`).
    public let CBMAdvertisementDataLocalNameKey = CBAdvertisementDataLocalNameKey
    /// The transmit power of a peripheral (an `NSNumber`).
    public let CBMAdvertisementDataTxPowerLevelKey = CBAdvertisementDataTxPowerLevelKey
    /// The advertised service UUIDs (`[CBMUUID]`).
    public let CBMAdvertisementDataServiceUUIDsKey = CBAdvertisementDataServiceUUIDsKey
    /// Service data (`[CBMUUID: Data]`).
    public let CBMAdvertisementDataServiceDataKey = CBAdvertisementDataServiceDataKey
    /// Manufacturer data (`Data`).
    public let CBMAdvertisementDataManufacturerDataKey = CBAdvertisementDataManufacturerDataKey
    /// Service UUIDs in the overflow area (`[CBMUUID]`).
    public let CBMAdvertisementDataOverflowServiceUUIDsKey = CBAdvertisementDataOverflowServiceUUIDsKey
    /// Whether the advertisement is connectable (an `NSNumber` holding a Bool).
    public let CBMAdvertisementDataIsConnectable = CBAdvertisementDataIsConnectable
    /// Solicited service UUIDs (`[CBMUUID]`).
    public let CBMAdvertisementDataSolicitedServiceUUIDsKey = CBAdvertisementDataSolicitedServiceUUIDsKey

    /// Scan without duplicate filtering (an `NSNumber` holding a Bool).
    public let CBMCentralManagerScanOptionAllowDuplicatesKey = CBCentralManagerScanOptionAllowDuplicatesKey
    /// Also report peripherals soliciting these services (`[CBMUUID]`).
    public let CBMCentralManagerScanOptionSolicitedServiceUUIDsKey = CBCentralManagerScanOptionSolicitedServiceUUIDsKey
    /// Show a power alert when Bluetooth is off at creation (an `NSNumber` holding a Bool).
    public let CBMCentralManagerOptionShowPowerAlertKey = CBCentralManagerOptionShowPowerAlertKey
    /// The restore identifier of a central manager (a `String`).
    public let CBMCentralManagerOptionRestoreIdentifierKey = CBCentralManagerOptionRestoreIdentifierKey
    /// Alert on connection while suspended (an `NSNumber` holding a Bool).
    public let CBMConnectPeripheralOptionNotifyOnConnectionKey = CBConnectPeripheralOptionNotifyOnConnectionKey
    /// Alert on disconnection while suspended (an `NSNumber` holding a Bool).
    public let CBMConnectPeripheralOptionNotifyOnDisconnectionKey = CBConnectPeripheralOptionNotifyOnDisconnectionKey
    /// Alert on notification while suspended (an `NSNumber` holding a Bool).
    public let CBMConnectPeripheralOptionNotifyOnNotificationKey = CBConnectPeripheralOptionNotifyOnNotificationKey
    /// The peripherals restored to a central manager (`[CBMPeripheral]`).
    public let CBMCentralManagerRestoredStatePeripheralsKey = CBCentralManagerRestoredStatePeripheralsKey
    /// The services a restored scan looked for (`[CBMUUID]`).
    public let CBMCentralManagerRestoredStateScanServicesKey = CBCentralManagerRestoredStateScanServicesKey
    /// The options of a restored scan (`[String: Any]`).
    public let CBMCentralManagerRestoredStateScanOptionsKey = CBCentralManagerRestoredStateScanOptionsKey
    /// Show an alert when the peripheral manager is created while Bluetooth is off (an `NSNumber`
    /// holding a Bool). The simulation shows nothing.
    public let CBMPeripheralManagerOptionShowPowerAlertKey = CBPeripheralManagerOptionShowPowerAlertKey
    /// The peripheral manager's restore identifier (a `String`): on a bridge, the simulated
    /// peripheral keeps its identity across a simulated app termination with it.
    public let CBMPeripheralManagerOptionRestoreIdentifierKey = CBPeripheralManagerOptionRestoreIdentifierKey
    /// In a peripheral manager's restored state: the services it had published.
    public let CBMPeripheralManagerRestoredStateServicesKey = CBPeripheralManagerRestoredStateServicesKey
    /// In a peripheral manager's restored state: the advertisement it was sending.
    public let CBMPeripheralManagerRestoredStateAdvertisementDataKey =
        CBPeripheralManagerRestoredStateAdvertisementDataKey
    /// Bridge a Bluetooth Classic connection of the peripheral (an `NSNumber` holding a Bool).
    /// The simulation ignores it.
    public let CBMConnectPeripheralOptionEnableTransportBridgingKey =
        CBConnectPeripheralOptionEnableTransportBridgingKey
    /// Ask for access to a media device (an `NSNumber` holding a Bool). The simulation ignores it.
    public let CBMCentralManagerOptionDeviceAccessForMedia = CBCentralManagerOptionDeviceAccessForMedia
#else
    /// The local name of a peripheral (a `String`).
    public let CBMAdvertisementDataLocalNameKey = "kCBAdvDataLocalName"
    /// The transmit power of a peripheral (an `NSNumber`).
    public let CBMAdvertisementDataTxPowerLevelKey = "kCBAdvDataTxPowerLevel"
    /// The advertised service UUIDs (`[CBMUUID]`).
    public let CBMAdvertisementDataServiceUUIDsKey = "kCBAdvDataServiceUUIDs"
    /// Service data (`[CBMUUID: Data]`).
    public let CBMAdvertisementDataServiceDataKey = "kCBAdvDataServiceData"
    /// Manufacturer data (`Data`).
    public let CBMAdvertisementDataManufacturerDataKey = "kCBAdvDataManufacturerData"
    /// Service UUIDs in the overflow area (`[CBMUUID]`).
    public let CBMAdvertisementDataOverflowServiceUUIDsKey = "kCBAdvDataOverflowServiceUUIDs"
    /// Whether the advertisement is connectable (an `NSNumber` holding a Bool).
    public let CBMAdvertisementDataIsConnectable = "kCBAdvDataIsConnectable"
    /// Solicited service UUIDs (`[CBMUUID]`).
    public let CBMAdvertisementDataSolicitedServiceUUIDsKey = "kCBAdvDataSolicitedServiceUUIDs"

    /// Scan without duplicate filtering (an `NSNumber` holding a Bool).
    public let CBMCentralManagerScanOptionAllowDuplicatesKey = "kCBScanOptionAllowDuplicates"
    /// Also report peripherals soliciting these services (`[CBMUUID]`).
    public let CBMCentralManagerScanOptionSolicitedServiceUUIDsKey = "kCBScanOptionSolicitedServiceUUIDs"
    /// Show a power alert when Bluetooth is off at creation (an `NSNumber` holding a Bool).
    public let CBMCentralManagerOptionShowPowerAlertKey = "kCBInitOptionShowPowerAlert"
    /// The restore identifier of a central manager (a `String`).
    public let CBMCentralManagerOptionRestoreIdentifierKey = "kCBInitOptionRestoreIdentifier"
    /// Alert on connection while suspended (an `NSNumber` holding a Bool).
    public let CBMConnectPeripheralOptionNotifyOnConnectionKey = "kCBConnectOptionNotifyOnConnection"
    /// Alert on disconnection while suspended (an `NSNumber` holding a Bool).
    public let CBMConnectPeripheralOptionNotifyOnDisconnectionKey = "kCBConnectOptionNotifyOnDisconnection"
    /// Alert on notification while suspended (an `NSNumber` holding a Bool).
    public let CBMConnectPeripheralOptionNotifyOnNotificationKey = "kCBConnectOptionNotifyOnNotification"
    /// The peripherals restored to a central manager (`[CBMPeripheral]`).
    public let CBMCentralManagerRestoredStatePeripheralsKey = "kCBRestoredPeripherals"
    /// The services a restored scan looked for (`[CBMUUID]`).
    public let CBMCentralManagerRestoredStateScanServicesKey = "kCBRestoredScanServices"
    /// The options of a restored scan (`[String: Any]`).
    public let CBMCentralManagerRestoredStateScanOptionsKey = "kCBRestoredScanOptions"
    /// Show an alert when the peripheral manager is created while Bluetooth is off (an `NSNumber`
    /// holding a Bool). The simulation shows nothing.
    public let CBMPeripheralManagerOptionShowPowerAlertKey = "kCBInitOptionShowPowerAlert"
    /// The peripheral manager's restore identifier (a `String`): on a bridge, the simulated
    /// peripheral keeps its identity across a simulated app termination with it.
    public let CBMPeripheralManagerOptionRestoreIdentifierKey = "kCBInitOptionRestoreIdentifier"
    /// In a peripheral manager's restored state: the services it had published.
    public let CBMPeripheralManagerRestoredStateServicesKey = "kCBRestoredServices"
    /// In a peripheral manager's restored state: the advertisement it was sending.
    public let CBMPeripheralManagerRestoredStateAdvertisementDataKey = "kCBRestoredAdvertisement"
    /// Bridge a Bluetooth Classic connection of the peripheral (an `NSNumber` holding a Bool).
    /// The simulation ignores it.
    public let CBMConnectPeripheralOptionEnableTransportBridgingKey = "kCBConnectOptionEnableTransportBridging"
    /// Ask for access to a media device (an `NSNumber` holding a Bool). The simulation ignores it.
    public let CBMCentralManagerOptionDeviceAccessForMedia = "kCBManagerOptionDeviceAccessForMedia"
#endif

/// A delay before connecting (an `NSNumber` of seconds). The simulation connects without it.
public let CBMConnectPeripheralOptionStartDelayKey = "kCBConnectOptionStartDelay"
/// Ask the peripheral for ANCS authorization when connecting (an `NSNumber` holding a Bool).
public let CBMConnectPeripheralOptionRequiresANCS = "kCBConnectOptionRequiresANCS"
/// Let the system reconnect after a disconnection (an `NSNumber` holding a Bool).
public let CBMConnectPeripheralOptionEnableAutoReconnect = "kCBConnectOptionEnableAutoReconnect"

/// An L2CAP protocol/service multiplexer (`CBL2CAPPSM`).
public typealias CBML2CAPPSM = UInt16
