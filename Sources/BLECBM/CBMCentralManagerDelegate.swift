// swift-format-ignore-file: AlwaysUseLowerCamelCase
// (These names mirror CoreBluetooth's API.)

import Foundation

#if !canImport(Darwin)
    #if canImport(Glibc)
        import Glibc
    #elseif canImport(Musl)
        import Musl
    #endif

    /// Seconds since 1 January 2001 (CoreFoundation's `CFAbsoluteTime`, which Foundation on
    /// Linux does not export), for delegate methods with CoreBluetooth's signatures.
    public typealias CFAbsoluteTime = Double

    /// The current time as CoreFoundation's `CFAbsoluteTimeGetCurrent()` reports it (seconds
    /// since 1 January 2001, from the system's real-time clock), for code written for Apple
    /// platforms (CoreBluetoothMock's delegate proxies call it).
    public func CFAbsoluteTimeGetCurrent() -> CFAbsoluteTime {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return Double(now.tv_sec) - 978_307_200 + Double(now.tv_nsec) / 1e9
    }
#endif

/// What a central manager tells its delegate (`CBCentralManagerDelegate`), on the manager's
/// queue. Every method but ``centralManagerDidUpdateState(_:)`` has a default that does
/// nothing, as CoreBluetooth's optional methods do.
public protocol CBMCentralManagerDelegate: AnyObject {
    /// The manager's state changed; also called once after the manager is created.
    func centralManagerDidUpdateState(_ central: CBMCentralManager)
    /// The system restored this manager's state after relaunching the app (called before
    /// ``centralManagerDidUpdateState(_:)``).
    func centralManager(_ central: CBMCentralManager, willRestoreState dict: [String: Any])
    /// A scan found a peripheral.
    func centralManager(
        _ central: CBMCentralManager, didDiscover peripheral: CBMPeripheral, advertisementData: [String: Any],
        rssi RSSI: NSNumber)
    /// A connection was made.
    func centralManager(_ central: CBMCentralManager, didConnect peripheral: CBMPeripheral)
    /// A connection attempt failed.
    func centralManager(_ central: CBMCentralManager, didFailToConnect peripheral: CBMPeripheral, error: (any Error)?)
    /// A connection ended: `error` is `nil` when the app cancelled it.
    func centralManager(
        _ central: CBMCentralManager, didDisconnectPeripheral peripheral: CBMPeripheral, error: (any Error)?)
    /// A connection ended (the newer form, with the time and whether the system reconnects).
    /// Its default calls ``centralManager(_:didDisconnectPeripheral:error:)``, so an app that
    /// implements either one gets it.
    func centralManager(
        _ central: CBMCentralManager, didDisconnectPeripheral peripheral: CBMPeripheral, timestamp: CFAbsoluteTime,
        isReconnecting: Bool, error: (any Error)?)
    /// A connection event matching ``CBMCentralManager/registerForConnectionEvents(options:)``.
    func centralManager(
        _ central: CBMCentralManager, connectionEventDidOccur event: CBMConnectionEvent, for peripheral: CBMPeripheral)
    /// A peripheral's ANCS authorization changed.
    func centralManager(_ central: CBMCentralManager, didUpdateANCSAuthorizationFor peripheral: CBMPeripheral)
}

extension CBMCentralManagerDelegate {
    public func centralManager(_ central: CBMCentralManager, willRestoreState dict: [String: Any]) {}
    public func centralManager(
        _ central: CBMCentralManager, didDiscover peripheral: CBMPeripheral, advertisementData: [String: Any],
        rssi RSSI: NSNumber
    ) {}
    public func centralManager(_ central: CBMCentralManager, didConnect peripheral: CBMPeripheral) {}
    public func centralManager(
        _ central: CBMCentralManager, didFailToConnect peripheral: CBMPeripheral, error: (any Error)?
    ) {}
    public func centralManager(
        _ central: CBMCentralManager, didDisconnectPeripheral peripheral: CBMPeripheral, error: (any Error)?
    ) {}
    public func centralManager(
        _ central: CBMCentralManager, didDisconnectPeripheral peripheral: CBMPeripheral, timestamp: CFAbsoluteTime,
        isReconnecting: Bool, error: (any Error)?
    ) {
        centralManager(central, didDisconnectPeripheral: peripheral, error: error)
    }
    public func centralManager(
        _ central: CBMCentralManager, connectionEventDidOccur event: CBMConnectionEvent, for peripheral: CBMPeripheral
    ) {}
    public func centralManager(_ central: CBMCentralManager, didUpdateANCSAuthorizationFor peripheral: CBMPeripheral) {}
}

/// What a peripheral tells its delegate (`CBPeripheralDelegate`), on its central manager's
/// queue. Every method has a default that does nothing, as CoreBluetooth's optional methods do.
public protocol CBMPeripheralDelegate: AnyObject {
    func peripheralDidUpdateName(_ peripheral: CBMPeripheral)
    func peripheral(_ peripheral: CBMPeripheral, didModifyServices invalidatedServices: [CBMService])
    func peripheral(_ peripheral: CBMPeripheral, didReadRSSI RSSI: NSNumber, error: (any Error)?)
    func peripheral(_ peripheral: CBMPeripheral, didDiscoverServices error: (any Error)?)
    func peripheral(
        _ peripheral: CBMPeripheral, didDiscoverIncludedServicesFor service: CBMService, error: (any Error)?)
    func peripheral(
        _ peripheral: CBMPeripheral, didDiscoverCharacteristicsFor service: CBMService, error: (any Error)?)
    func peripheral(
        _ peripheral: CBMPeripheral, didUpdateValueFor characteristic: CBMCharacteristic, error: (any Error)?)
    func peripheral(
        _ peripheral: CBMPeripheral, didWriteValueFor characteristic: CBMCharacteristic, error: (any Error)?)
    func peripheral(
        _ peripheral: CBMPeripheral, didUpdateNotificationStateFor characteristic: CBMCharacteristic,
        error: (any Error)?)
    func peripheral(
        _ peripheral: CBMPeripheral, didDiscoverDescriptorsFor characteristic: CBMCharacteristic, error: (any Error)?)
    func peripheral(_ peripheral: CBMPeripheral, didUpdateValueFor descriptor: CBMDescriptor, error: (any Error)?)
    func peripheral(_ peripheral: CBMPeripheral, didWriteValueFor descriptor: CBMDescriptor, error: (any Error)?)
    func peripheralIsReady(toSendWriteWithoutResponse peripheral: CBMPeripheral)
    func peripheral(_ peripheral: CBMPeripheral, didOpen channel: CBML2CAPChannel?, error: (any Error)?)
}

extension CBMPeripheralDelegate {
    public func peripheralDidUpdateName(_ peripheral: CBMPeripheral) {}
    public func peripheral(_ peripheral: CBMPeripheral, didModifyServices invalidatedServices: [CBMService]) {}
    public func peripheral(_ peripheral: CBMPeripheral, didReadRSSI RSSI: NSNumber, error: (any Error)?) {}
    public func peripheral(_ peripheral: CBMPeripheral, didDiscoverServices error: (any Error)?) {}
    public func peripheral(
        _ peripheral: CBMPeripheral, didDiscoverIncludedServicesFor service: CBMService, error: (any Error)?
    ) {}
    public func peripheral(
        _ peripheral: CBMPeripheral, didDiscoverCharacteristicsFor service: CBMService, error: (any Error)?
    ) {}
    public func peripheral(
        _ peripheral: CBMPeripheral, didUpdateValueFor characteristic: CBMCharacteristic, error: (any Error)?
    ) {}
    public func peripheral(
        _ peripheral: CBMPeripheral, didWriteValueFor characteristic: CBMCharacteristic, error: (any Error)?
    ) {}
    public func peripheral(
        _ peripheral: CBMPeripheral, didUpdateNotificationStateFor characteristic: CBMCharacteristic,
        error: (any Error)?
    ) {}
    public func peripheral(
        _ peripheral: CBMPeripheral, didDiscoverDescriptorsFor characteristic: CBMCharacteristic, error: (any Error)?
    ) {}
    public func peripheral(
        _ peripheral: CBMPeripheral, didUpdateValueFor descriptor: CBMDescriptor, error: (any Error)?
    ) {}
    public func peripheral(
        _ peripheral: CBMPeripheral, didWriteValueFor descriptor: CBMDescriptor, error: (any Error)?
    ) {}
    public func peripheralIsReady(toSendWriteWithoutResponse peripheral: CBMPeripheral) {}
    public func peripheral(_ peripheral: CBMPeripheral, didOpen channel: CBML2CAPChannel?, error: (any Error)?) {}
}
