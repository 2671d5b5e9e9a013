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
/// Where each method is called, for a CoreBluetooth-shaped central's (``CBMCentralManager``)
/// request: on that central's app queue (the main queue when it gave `nil`) or in the app's call,
/// so a delegate that starts a `Timer`, or keeps state the app's code reads, sees the thread
/// CoreBluetoothMock calls it on (its `CBMPeripheralMock` calls the delegate in the app's call):
/// - `peripheral(_:didReceiveReadRequestFor:)`, `peripheral(_:didReceiveWriteRequestFor:data:)`
///   and `peripheral(_:didReceiveWriteCommandFor:data:)` for characteristics: on the central's
///   queue, in a block handed to it when the request reaches the simulated peripheral (after the
///   link's timing, and the GATT server's checks of properties and security, which refuse some
///   requests without asking), in order among that central's callbacks. The answer goes back
///   to the peripheral at the same virtual instant: in a `bridge.run`, time does not move on
///   until the block has run, so a seed still gives one log. CoreBluetoothMock calls them in
///   `readValue` or `writeValue`, on the thread the app calls from: the same, for an app that
///   calls from its queue (from its callbacks, or on the main thread with a `nil` queue).
/// - `peripheralDidReceiveConnectionRequest`, the discovery requests and
///   `peripheral(_:didReceiveSetNotifyRequest:for:)`: in the app's call (`connect`,
///   `discoverServices`, …, `setNotifyValue`), on the thread it calls from, as in
///   CoreBluetoothMock.
/// - The descriptor read and write requests, `peripheral(_:didUpdateNotificationStateFor:error:)`
///   and `peripheral(_:didDisconnect:)` when the last app's link ends: on the central's queue,
///   just before the app's own callback.
/// - `peripheral(_:didDisconnect:)` for `simulateDisconnection(withError:)` and
///   `simulateProximityChange(.outOfRange)`, and `reset()`: in that call, on the test's thread.
///
/// A request of the async API's `MockCentralManager`, which has no queue, is answered on the
/// bridge's executor as the simulation reaches it. Keep the answers quick: the simulation waits
/// for each (nothing blocks, but a run's time does not move until it is given).
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
