// swift-format-ignore-file: AlwaysUseLowerCamelCase
// (These names mirror CoreBluetooth's API.)

import Foundation

// Uses every name the typealias file brings, in Swift 6 language mode, as app code would: the
// roles' classes and delegates, the attribute types, the errors, and every key.

/// Each type name the file aliases, with the BLECBM type it must be.
let typeAliases: [(name: String, aliased: Any.Type, expected: Any.Type)] = [
    ("CBManager", CBManager.self, CBMManager.self),
    ("CBManagerState", CBManagerState.self, CBMManagerState.self),
    ("CBManagerAuthorization", CBManagerAuthorization.self, CBMManagerAuthorization.self),
    ("CBCentralManager", CBCentralManager.self, CBMCentralManager.self),
    ("CBCentralManagerDelegate", (any CBCentralManagerDelegate).self, (any CBMCentralManagerDelegate).self),
    ("CBPeripheralManager", CBPeripheralManager.self, CBMPeripheralManager.self),
    ("CBPeripheralManagerDelegate", (any CBPeripheralManagerDelegate).self, (any CBMPeripheralManagerDelegate).self),
    (
        "CBPeripheralManagerConnectionLatency", CBPeripheralManagerConnectionLatency.self,
        CBMPeripheralManagerConnectionLatency.self
    ),
    (
        "CBPeripheralManagerAuthorizationStatus", CBPeripheralManagerAuthorizationStatus.self,
        CBMPeripheralManagerAuthorizationStatus.self
    ),
    ("CBConnectionEvent", CBConnectionEvent.self, CBMConnectionEvent.self),
    ("CBConnectionEventMatchingOption", CBConnectionEventMatchingOption.self, CBMConnectionEventMatchingOption.self),
    ("CBPeer", CBPeer.self, CBMPeer.self),
    ("CBPeripheral", CBPeripheral.self, CBMPeripheral.self),
    ("CBPeripheralDelegate", (any CBPeripheralDelegate).self, (any CBMPeripheralDelegate).self),
    ("CBPeripheralState", CBPeripheralState.self, CBMPeripheralState.self),
    ("CBCentral", CBCentral.self, CBMCentral.self),
    ("CBAttribute", CBAttribute.self, CBMAttribute.self),
    ("CBService", CBService.self, CBMService.self),
    ("CBCharacteristic", CBCharacteristic.self, CBMCharacteristic.self),
    ("CBDescriptor", CBDescriptor.self, CBMDescriptor.self),
    ("CBMutableService", CBMutableService.self, CBMMutableService.self),
    ("CBMutableCharacteristic", CBMutableCharacteristic.self, CBMMutableCharacteristic.self),
    ("CBMutableDescriptor", CBMutableDescriptor.self, CBMMutableDescriptor.self),
    ("CBCharacteristicProperties", CBCharacteristicProperties.self, CBMCharacteristicProperties.self),
    ("CBCharacteristicWriteType", CBCharacteristicWriteType.self, CBMCharacteristicWriteType.self),
    ("CBAttributePermissions", CBAttributePermissions.self, CBMAttributePermissions.self),
    ("CBATTRequest", CBATTRequest.self, CBMATTRequest.self),
    ("CBUUID", CBUUID.self, CBMUUID.self),
    ("CBL2CAPChannel", CBL2CAPChannel.self, CBML2CAPChannel.self),
    ("CBL2CAPPSM", CBL2CAPPSM.self, UInt16.self),
    ("CBError", CBError.self, CBMError.self),
    ("CBATTError", CBATTError.self, CBMATTError.self),
]

/// Each key and string constant the file defines, with BLECBM's.
let constants: [(name: String, value: String, expected: String)] = [
    ("CBErrorDomain", CBErrorDomain, CBMErrorDomain),
    ("CBATTErrorDomain", CBATTErrorDomain, CBMATTErrorDomain),
    ("CBAdvertisementDataLocalNameKey", CBAdvertisementDataLocalNameKey, CBMAdvertisementDataLocalNameKey),
    ("CBAdvertisementDataTxPowerLevelKey", CBAdvertisementDataTxPowerLevelKey, CBMAdvertisementDataTxPowerLevelKey),
    ("CBAdvertisementDataServiceUUIDsKey", CBAdvertisementDataServiceUUIDsKey, CBMAdvertisementDataServiceUUIDsKey),
    ("CBAdvertisementDataServiceDataKey", CBAdvertisementDataServiceDataKey, CBMAdvertisementDataServiceDataKey),
    (
        "CBAdvertisementDataManufacturerDataKey", CBAdvertisementDataManufacturerDataKey,
        CBMAdvertisementDataManufacturerDataKey
    ),
    (
        "CBAdvertisementDataOverflowServiceUUIDsKey", CBAdvertisementDataOverflowServiceUUIDsKey,
        CBMAdvertisementDataOverflowServiceUUIDsKey
    ),
    ("CBAdvertisementDataIsConnectable", CBAdvertisementDataIsConnectable, CBMAdvertisementDataIsConnectable),
    (
        "CBAdvertisementDataSolicitedServiceUUIDsKey", CBAdvertisementDataSolicitedServiceUUIDsKey,
        CBMAdvertisementDataSolicitedServiceUUIDsKey
    ),
    (
        "CBCentralManagerScanOptionAllowDuplicatesKey", CBCentralManagerScanOptionAllowDuplicatesKey,
        CBMCentralManagerScanOptionAllowDuplicatesKey
    ),
    (
        "CBCentralManagerScanOptionSolicitedServiceUUIDsKey", CBCentralManagerScanOptionSolicitedServiceUUIDsKey,
        CBMCentralManagerScanOptionSolicitedServiceUUIDsKey
    ),
    (
        "CBCentralManagerOptionShowPowerAlertKey", CBCentralManagerOptionShowPowerAlertKey,
        CBMCentralManagerOptionShowPowerAlertKey
    ),
    (
        "CBCentralManagerOptionRestoreIdentifierKey", CBCentralManagerOptionRestoreIdentifierKey,
        CBMCentralManagerOptionRestoreIdentifierKey
    ),
    (
        "CBCentralManagerOptionDeviceAccessForMedia", CBCentralManagerOptionDeviceAccessForMedia,
        CBMCentralManagerOptionDeviceAccessForMedia
    ),
    (
        "CBCentralManagerRestoredStatePeripheralsKey", CBCentralManagerRestoredStatePeripheralsKey,
        CBMCentralManagerRestoredStatePeripheralsKey
    ),
    (
        "CBCentralManagerRestoredStateScanServicesKey", CBCentralManagerRestoredStateScanServicesKey,
        CBMCentralManagerRestoredStateScanServicesKey
    ),
    (
        "CBCentralManagerRestoredStateScanOptionsKey", CBCentralManagerRestoredStateScanOptionsKey,
        CBMCentralManagerRestoredStateScanOptionsKey
    ),
    (
        "CBConnectPeripheralOptionNotifyOnConnectionKey", CBConnectPeripheralOptionNotifyOnConnectionKey,
        CBMConnectPeripheralOptionNotifyOnConnectionKey
    ),
    (
        "CBConnectPeripheralOptionNotifyOnDisconnectionKey", CBConnectPeripheralOptionNotifyOnDisconnectionKey,
        CBMConnectPeripheralOptionNotifyOnDisconnectionKey
    ),
    (
        "CBConnectPeripheralOptionNotifyOnNotificationKey", CBConnectPeripheralOptionNotifyOnNotificationKey,
        CBMConnectPeripheralOptionNotifyOnNotificationKey
    ),
    (
        "CBConnectPeripheralOptionStartDelayKey", CBConnectPeripheralOptionStartDelayKey,
        CBMConnectPeripheralOptionStartDelayKey
    ),
    (
        "CBConnectPeripheralOptionRequiresANCS", CBConnectPeripheralOptionRequiresANCS,
        CBMConnectPeripheralOptionRequiresANCS
    ),
    (
        "CBConnectPeripheralOptionEnableAutoReconnect", CBConnectPeripheralOptionEnableAutoReconnect,
        CBMConnectPeripheralOptionEnableAutoReconnect
    ),
    (
        "CBConnectPeripheralOptionEnableTransportBridgingKey", CBConnectPeripheralOptionEnableTransportBridgingKey,
        CBMConnectPeripheralOptionEnableTransportBridgingKey
    ),
    (
        "CBPeripheralManagerOptionShowPowerAlertKey", CBPeripheralManagerOptionShowPowerAlertKey,
        CBMPeripheralManagerOptionShowPowerAlertKey
    ),
    (
        "CBPeripheralManagerOptionRestoreIdentifierKey", CBPeripheralManagerOptionRestoreIdentifierKey,
        CBMPeripheralManagerOptionRestoreIdentifierKey
    ),
    (
        "CBPeripheralManagerRestoredStateServicesKey", CBPeripheralManagerRestoredStateServicesKey,
        CBMPeripheralManagerRestoredStateServicesKey
    ),
    (
        "CBPeripheralManagerRestoredStateAdvertisementDataKey", CBPeripheralManagerRestoredStateAdvertisementDataKey,
        CBMPeripheralManagerRestoredStateAdvertisementDataKey
    ),
    ("CBUUIDCharacteristicExtendedPropertiesString", CBUUIDCharacteristicExtendedPropertiesString, "2900"),
    ("CBUUIDCharacteristicUserDescriptionString", CBUUIDCharacteristicUserDescriptionString, "2901"),
    ("CBUUIDClientCharacteristicConfigurationString", CBUUIDClientCharacteristicConfigurationString, "2902"),
    ("CBUUIDServerCharacteristicConfigurationString", CBUUIDServerCharacteristicConfigurationString, "2903"),
    ("CBUUIDCharacteristicFormatString", CBUUIDCharacteristicFormatString, "2904"),
    ("CBUUIDCharacteristicAggregateFormatString", CBUUIDCharacteristicAggregateFormatString, "2905"),
    ("CBUUIDCharacteristicValidRangeString", CBUUIDCharacteristicValidRangeString, "2906"),
    ("CBUUIDCharacteristicObservationScheduleString", CBUUIDCharacteristicObservationScheduleString, "2910"),
    (
        "CBUUIDL2CAPPSMCharacteristicString", CBUUIDL2CAPPSMCharacteristicString,
        "ABDD3056-28FA-441D-A470-55A75A52553A"
    ),
]

/// A peripheral role written in Swift 6 mode with the file's names: a service with a dynamic,
/// notifying characteristic that answers reads.
final class ThermometerPeripheral: NSObject, CBPeripheralManagerDelegate, @unchecked Sendable {
    // @unchecked Sendable: only touched on its manager's queue.
    static let service = CBUUID(string: "1809")
    private(set) var manager: CBPeripheralManager?
    private(set) var reads = 0

    init(queue: DispatchQueue) {
        super.init()
        manager = CBPeripheralManager(delegate: self, queue: queue)
    }

    func peripheralManagerDidUpdateState(_ peripheral: CBPeripheralManager) {
        guard peripheral.state == .poweredOn else { return }
        let temperature = CBMutableCharacteristic(
            type: CBUUID(string: "2A1C"), properties: [.read, .notify], value: nil, permissions: [.readable])
        let service = CBMutableService(type: Self.service, primary: true)
        service.characteristics = [temperature]
        peripheral.add(service)
        peripheral.startAdvertising([CBAdvertisementDataServiceUUIDsKey: [Self.service]])
    }

    func peripheralManager(_ peripheral: CBPeripheralManager, didReceiveRead request: CBATTRequest) {
        reads += 1
        request.value = Data([36, 6])
        peripheral.respond(to: request, withResult: CBATTError.Code.success)
    }
}

/// What an app makes of an error in CoreBluetooth's shapes: matched by code in `catch` clauses
/// and `switch` cases, ATT codes named as static members, the peripheral role's authorization
/// under its pre-iOS 13 name.
func describe(_ failure: any Error) -> String {
    do {
        throw failure
    } catch CBError.connectionTimeout {
        return "timed out"
    } catch CBATTError.insufficientAuthentication {
        return "needs pairing"
    } catch {
        switch error {
        case CBATTError.readNotPermitted: return "not readable"
        default:
            let answer: CBATTError.Code = CBATTError.invalidOffset
            let allowed = CBPeripheralManager.authorizationStatus() == .authorized
            return "other (\(answer.rawValue), \(allowed))"
        }
    }
}
