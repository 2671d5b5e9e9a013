import Foundation

/// Answers a simulated peripheral's requests (CoreBluetoothMock's `CBMPeripheralSpecDelegate`).
/// Every method has CoreBluetoothMock's default answer: connections and discoveries succeed,
/// reads fail with `readNotPermitted`, writes with `writeNotPermitted`, notifications can be
/// turned on where the characteristic notifies or indicates (with or without encryption).
///
/// The device has one connection, which the phone's apps share (every central manager, and
/// another app's of a spec built `.connected(…)`), as in CoreBluetoothMock:
/// `peripheralDidReceiveConnectionRequest` is asked only when it is not connected yet, and
/// `peripheral(_:didDisconnect:)` is called once when it ends: when the last app's link does,
/// or at once, in the call, for `simulateDisconnection(withError:)` (its error) and
/// `simulateProximityChange(.outOfRange)` (`connectionTimeout`). `simulateReset()` calls
/// `reset()` alone.
///
/// Called on the bridge as the simulation reaches each request; keep the answers quick.
public protocol CBMPeripheralSpecDelegate {
    func reset()
    func peripheralDidReceiveConnectionRequest(_ peripheral: CBMPeripheralSpec) -> Result<Void, any Error>
    func peripheral(_ peripheral: CBMPeripheralSpec, didDisconnect error: (any Error)?)
    func peripheral(_ peripheral: CBMPeripheralSpec, didReceiveServiceDiscoveryRequest serviceUUIDs: [CBMUUID]?)
        -> Result<Void, any Error>
    func peripheral(
        _ peripheral: CBMPeripheralSpec, didReceiveIncludedServiceDiscoveryRequest serviceUUIDs: [CBMUUID]?,
        for service: CBMServiceMock
    ) -> Result<Void, any Error>
    func peripheral(
        _ peripheral: CBMPeripheralSpec, didReceiveCharacteristicsDiscoveryRequest characteristicUUIDs: [CBMUUID]?,
        for service: CBMServiceMock
    ) -> Result<Void, any Error>
    func peripheral(
        _ peripheral: CBMPeripheralSpec, didReceiveDescriptorsDiscoveryRequestFor characteristic: CBMCharacteristicMock
    ) -> Result<Void, any Error>
    func peripheral(_ peripheral: CBMPeripheralSpec, didReceiveReadRequestFor characteristic: CBMCharacteristicMock)
        -> Result<Data, any Error>
    func peripheral(_ peripheral: CBMPeripheralSpec, didReceiveReadRequestFor descriptor: CBMDescriptorMock)
        -> Result<Data, any Error>
    func peripheral(
        _ peripheral: CBMPeripheralSpec, didReceiveWriteRequestFor characteristic: CBMCharacteristicMock, data: Data
    ) -> Result<Void, any Error>
    func peripheral(
        _ peripheral: CBMPeripheralSpec, didReceiveWriteCommandFor characteristic: CBMCharacteristicMock, data: Data)
    func peripheral(
        _ peripheral: CBMPeripheralSpec, didReceiveWriteRequestFor descriptor: CBMDescriptorMock, data: Data
    ) -> Result<Void, any Error>
    func peripheral(
        _ peripheral: CBMPeripheralSpec, didReceiveSetNotifyRequest enabled: Bool,
        for characteristic: CBMCharacteristicMock
    ) -> Result<Void, any Error>
    func peripheral(
        _ peripheral: CBMPeripheralSpec, didUpdateNotificationStateFor characteristic: CBMCharacteristicMock,
        error: (any Error)?)
}

extension CBMPeripheralSpecDelegate {
    public func reset() {}
    public func peripheralDidReceiveConnectionRequest(_ peripheral: CBMPeripheralSpec) -> Result<Void, any Error> {
        .success(())
    }
    public func peripheral(_ peripheral: CBMPeripheralSpec, didDisconnect error: (any Error)?) {}
    public func peripheral(_ peripheral: CBMPeripheralSpec, didReceiveServiceDiscoveryRequest serviceUUIDs: [CBMUUID]?)
        -> Result<Void, any Error>
    { .success(()) }
    public func peripheral(
        _ peripheral: CBMPeripheralSpec, didReceiveIncludedServiceDiscoveryRequest serviceUUIDs: [CBMUUID]?,
        for service: CBMServiceMock
    ) -> Result<Void, any Error> { .success(()) }
    public func peripheral(
        _ peripheral: CBMPeripheralSpec, didReceiveCharacteristicsDiscoveryRequest characteristicUUIDs: [CBMUUID]?,
        for service: CBMServiceMock
    ) -> Result<Void, any Error> { .success(()) }
    public func peripheral(
        _ peripheral: CBMPeripheralSpec, didReceiveDescriptorsDiscoveryRequestFor characteristic: CBMCharacteristicMock
    ) -> Result<Void, any Error> { .success(()) }
    public func peripheral(
        _ peripheral: CBMPeripheralSpec, didReceiveReadRequestFor characteristic: CBMCharacteristicMock
    )
        -> Result<Data, any Error>
    { .failure(CBMATTError(.readNotPermitted)) }
    public func peripheral(_ peripheral: CBMPeripheralSpec, didReceiveReadRequestFor descriptor: CBMDescriptorMock)
        -> Result<Data, any Error>
    { .failure(CBMATTError(.readNotPermitted)) }
    public func peripheral(
        _ peripheral: CBMPeripheralSpec, didReceiveWriteRequestFor characteristic: CBMCharacteristicMock, data: Data
    ) -> Result<Void, any Error> { .failure(CBMATTError(.writeNotPermitted)) }
    public func peripheral(
        _ peripheral: CBMPeripheralSpec, didReceiveWriteCommandFor characteristic: CBMCharacteristicMock, data: Data
    ) {}
    public func peripheral(
        _ peripheral: CBMPeripheralSpec, didReceiveWriteRequestFor descriptor: CBMDescriptorMock, data: Data
    ) -> Result<Void, any Error> { .failure(CBMATTError(.writeNotPermitted)) }
    public func peripheral(
        _ peripheral: CBMPeripheralSpec, didReceiveSetNotifyRequest enabled: Bool,
        for characteristic: CBMCharacteristicMock
    ) -> Result<Void, any Error> {
        characteristic.properties.isDisjoint(with: [
            .notify, .indicate, .notifyEncryptionRequired, .indicateEncryptionRequired,
        ])
            ? .failure(CBMError(.invalidHandle)) : .success(())
    }
    public func peripheral(
        _ peripheral: CBMPeripheralSpec, didUpdateNotificationStateFor characteristic: CBMCharacteristicMock,
        error: (any Error)?
    ) {}
}
