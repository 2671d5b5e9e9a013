// swift-format-ignore-file: AlwaysUseLowerCamelCase
// (These names mirror CoreBluetooth's API.)

// CoreBluetoothTypeAliases.swift — BLEMockKit's typealias file for apps written against
// CoreBluetooth, both roles (central and peripheral).
//
// Copy this file into the app target whose Bluetooth code you test, and in that code replace
// `import CoreBluetooth` with nothing: this file brings CoreBluetooth's names, backed by BLECBM.
// The code then uses them unchanged (`CBCentralManager(delegate: self, queue: queue)`,
// `CBPeripheralManagerDelegate`, `CBMutableCharacteristic`, `CBATTError.Code`, the option keys).
// The aliases are internal: code of that module that is `public` and names them (a Bluetooth
// layer in a package of its own) does not compile ("uses an internal type") until its copy says
// `public typealias`.
//
// Where it runs:
//   - on a test's MockBLEBridge, when one is current (inside `bridge.run { }`, the `.mockBridge`
//     trait, `runOnMockBridge`, or a delegate callback of a manager on a bridge);
//   - else on the installed SimulatedSystem (created on any thread or queue);
//   - else on CoreBluetooth itself (Apple platforms), so the app ships with this file in place;
//     on Linux such a manager reports `unsupported`.
//
// It compiles in Swift 5 and Swift 6 language modes (BLEMockKit's tests compile it both ways).
// The file ships in BLECBM's documentation catalog: Sources/BLECBM/BLECBM.docc/Resources.

@_exported import BLECBM

// MARK: Managers

typealias CBManager = CBMManager
typealias CBManagerState = CBMManagerState
typealias CBManagerAuthorization = CBMManagerAuthorization
typealias CBCentralManager = CBMCentralManager
typealias CBCentralManagerDelegate = CBMCentralManagerDelegate
typealias CBPeripheralManager = CBMPeripheralManager
typealias CBPeripheralManagerDelegate = CBMPeripheralManagerDelegate
typealias CBPeripheralManagerConnectionLatency = CBMPeripheralManagerConnectionLatency
typealias CBPeripheralManagerAuthorizationStatus = CBMPeripheralManagerAuthorizationStatus
typealias CBConnectionEvent = CBMConnectionEvent
typealias CBConnectionEventMatchingOption = CBMConnectionEventMatchingOption

// MARK: Peers

typealias CBPeer = CBMPeer
typealias CBPeripheral = CBMPeripheral
typealias CBPeripheralDelegate = CBMPeripheralDelegate
typealias CBPeripheralState = CBMPeripheralState
typealias CBCentral = CBMCentral

// MARK: Attributes

typealias CBAttribute = CBMAttribute
typealias CBService = CBMService
typealias CBCharacteristic = CBMCharacteristic
typealias CBDescriptor = CBMDescriptor
typealias CBMutableService = CBMMutableService
typealias CBMutableCharacteristic = CBMMutableCharacteristic
typealias CBMutableDescriptor = CBMMutableDescriptor
typealias CBCharacteristicProperties = CBMCharacteristicProperties
typealias CBCharacteristicWriteType = CBMCharacteristicWriteType
typealias CBAttributePermissions = CBMAttributePermissions
typealias CBATTRequest = CBMATTRequest
typealias CBUUID = CBMUUID
typealias CBL2CAPChannel = CBML2CAPChannel
typealias CBL2CAPPSM = CBML2CAPPSM

// MARK: Errors

typealias CBError = CBMError
typealias CBATTError = CBMATTError

let CBErrorDomain = CBMErrorDomain
let CBATTErrorDomain = CBMATTErrorDomain

// MARK: Advertisement data

let CBAdvertisementDataLocalNameKey = CBMAdvertisementDataLocalNameKey
let CBAdvertisementDataTxPowerLevelKey = CBMAdvertisementDataTxPowerLevelKey
let CBAdvertisementDataServiceUUIDsKey = CBMAdvertisementDataServiceUUIDsKey
let CBAdvertisementDataServiceDataKey = CBMAdvertisementDataServiceDataKey
let CBAdvertisementDataManufacturerDataKey = CBMAdvertisementDataManufacturerDataKey
let CBAdvertisementDataOverflowServiceUUIDsKey = CBMAdvertisementDataOverflowServiceUUIDsKey
let CBAdvertisementDataIsConnectable = CBMAdvertisementDataIsConnectable
let CBAdvertisementDataSolicitedServiceUUIDsKey = CBMAdvertisementDataSolicitedServiceUUIDsKey

// MARK: Central manager options and restored state

let CBCentralManagerScanOptionAllowDuplicatesKey = CBMCentralManagerScanOptionAllowDuplicatesKey
let CBCentralManagerScanOptionSolicitedServiceUUIDsKey = CBMCentralManagerScanOptionSolicitedServiceUUIDsKey
let CBCentralManagerOptionShowPowerAlertKey = CBMCentralManagerOptionShowPowerAlertKey
let CBCentralManagerOptionRestoreIdentifierKey = CBMCentralManagerOptionRestoreIdentifierKey
let CBCentralManagerOptionDeviceAccessForMedia = CBMCentralManagerOptionDeviceAccessForMedia
let CBCentralManagerRestoredStatePeripheralsKey = CBMCentralManagerRestoredStatePeripheralsKey
let CBCentralManagerRestoredStateScanServicesKey = CBMCentralManagerRestoredStateScanServicesKey
let CBCentralManagerRestoredStateScanOptionsKey = CBMCentralManagerRestoredStateScanOptionsKey

// MARK: Connection options

let CBConnectPeripheralOptionNotifyOnConnectionKey = CBMConnectPeripheralOptionNotifyOnConnectionKey
let CBConnectPeripheralOptionNotifyOnDisconnectionKey = CBMConnectPeripheralOptionNotifyOnDisconnectionKey
let CBConnectPeripheralOptionNotifyOnNotificationKey = CBMConnectPeripheralOptionNotifyOnNotificationKey
let CBConnectPeripheralOptionStartDelayKey = CBMConnectPeripheralOptionStartDelayKey
let CBConnectPeripheralOptionRequiresANCS = CBMConnectPeripheralOptionRequiresANCS
let CBConnectPeripheralOptionEnableAutoReconnect = CBMConnectPeripheralOptionEnableAutoReconnect
let CBConnectPeripheralOptionEnableTransportBridgingKey = CBMConnectPeripheralOptionEnableTransportBridgingKey

// MARK: Peripheral manager options and restored state

let CBPeripheralManagerOptionShowPowerAlertKey = CBMPeripheralManagerOptionShowPowerAlertKey
let CBPeripheralManagerOptionRestoreIdentifierKey = CBMPeripheralManagerOptionRestoreIdentifierKey
let CBPeripheralManagerRestoredStateServicesKey = CBMPeripheralManagerRestoredStateServicesKey
let CBPeripheralManagerRestoredStateAdvertisementDataKey = CBMPeripheralManagerRestoredStateAdvertisementDataKey

// MARK: Descriptor UUID strings

let CBUUIDCharacteristicExtendedPropertiesString = CBMUUIDCharacteristicExtendedPropertiesString
let CBUUIDCharacteristicUserDescriptionString = CBMUUIDCharacteristicUserDescriptionString
let CBUUIDClientCharacteristicConfigurationString = CBMUUIDClientCharacteristicConfigurationString
let CBUUIDServerCharacteristicConfigurationString = CBMUUIDServerCharacteristicConfigurationString
let CBUUIDCharacteristicFormatString = CBMUUIDCharacteristicFormatString
let CBUUIDCharacteristicAggregateFormatString = CBMUUIDCharacteristicAggregateFormatString
let CBUUIDCharacteristicValidRangeString = CBMUUIDCharacteristicValidRangeString
let CBUUIDCharacteristicObservationScheduleString = CBMUUIDCharacteristicObservationScheduleString
let CBUUIDL2CAPPSMCharacteristicString = CBMUUIDL2CAPPSMCharacteristicString
