import BLECore
import BLEMockKit
import Foundation

/// Stands between a recording ``CBMCentralManager`` and the app's delegate: records what
/// each callback reports, then calls the app's delegate with the same arguments.
final class RecordingCentralManagerDelegate: CBMCentralManagerDelegate {
    private weak var wrapped: (any CBMCentralManagerDelegate)?
    private let recording: CentralRecording

    init(wrapping wrapped: (any CBMCentralManagerDelegate)?, recording: CentralRecording) {
        self.wrapped = wrapped
        self.recording = recording
    }

    private func record(_ event: RecordedEvent) { recording.recorder.record(event) }

    func centralManagerDidUpdateState(_ central: CBMCentralManager) {
        wrapped?.centralManagerDidUpdateState(central)
    }

    func centralManager(_ central: CBMCentralManager, willRestoreState dict: [String: Any]) {
        wrapped?.centralManager(central, willRestoreState: dict)
    }

    func centralManager(
        _ central: CBMCentralManager, didDiscover peripheral: CBMPeripheral, advertisementData: [String: Any],
        rssi: NSNumber
    ) {
        let advertisement = AdvertisementData(dictionary: advertisementData, keys: .platform) {
            (uuid: CBMUUID) in uuid.bluetoothUUID
        }
        record(
            .discovered(
                peripheral: peripheral.identifier, name: peripheral.name, advertisement: advertisement,
                rssi: rssi.intValue))
        wrapped?.centralManager(central, didDiscover: peripheral, advertisementData: advertisementData, rssi: rssi)
    }

    func centralManager(_ central: CBMCentralManager, didConnect peripheral: CBMPeripheral) {
        let mtu = peripheral.maximumWriteValueLength(for: .withoutResponse) + 3
        record(.connected(peripheral: peripheral.identifier, mtu: mtu))
        wrapped?.centralManager(central, didConnect: peripheral)
    }

    func centralManager(
        _ central: CBMCentralManager, didFailToConnect peripheral: CBMPeripheral, error: (any Error)?
    ) {
        let recorded = CentralRecording.recorded(error) ?? RecordedError(domain: .coreBluetooth, code: 0)
        record(.connectionFailed(peripheral: peripheral.identifier, error: recorded))
        wrapped?.centralManager(central, didFailToConnect: peripheral, error: error)
    }

    func centralManager(
        _ central: CBMCentralManager, didDisconnectPeripheral peripheral: CBMPeripheral, error: (any Error)?
    ) {
        disconnected(peripheral, error)
        wrapped?.centralManager(central, didDisconnectPeripheral: peripheral, error: error)
    }

    func centralManager(
        _ central: CBMCentralManager, didDisconnectPeripheral peripheral: CBMPeripheral, timestamp: CFAbsoluteTime,
        isReconnecting: Bool, error: (any Error)?
    ) {
        disconnected(peripheral, error)
        wrapped?.centralManager(
            central, didDisconnectPeripheral: peripheral, timestamp: timestamp, isReconnecting: isReconnecting,
            error: error)
    }

    private func disconnected(_ peripheral: CBMPeripheral, _ error: (any Error)?) {
        recording.linkEnded(peripheral.identifier)
        record(.disconnected(peripheral: peripheral.identifier, error: CentralRecording.recorded(error)))
    }

    func centralManager(
        _ central: CBMCentralManager, connectionEventDidOccur event: CBMConnectionEvent, for peripheral: CBMPeripheral
    ) {
        wrapped?.centralManager(central, connectionEventDidOccur: event, for: peripheral)
    }

    func centralManager(_ central: CBMCentralManager, didUpdateANCSAuthorizationFor peripheral: CBMPeripheral) {
        wrapped?.centralManager(central, didUpdateANCSAuthorizationFor: peripheral)
    }
}
