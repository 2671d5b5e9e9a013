import BLECore
import BLEMockKit
import Foundation

/// Stands between a peripheral of a recording ``CBMCentralManager`` and the app's peripheral
/// delegate: records what each callback reports, then calls the app's delegate with the same
/// arguments.
final class RecordingPeripheralDelegate: CBMPeripheralDelegate {
    private weak var wrapped: (any CBMPeripheralDelegate)?
    private let recording: CentralRecording

    init(wrapping wrapped: (any CBMPeripheralDelegate)?, recording: CentralRecording) {
        self.wrapped = wrapped
        self.recording = recording
    }

    private func record(_ event: RecordedEvent) { recording.recorder.record(event) }

    func peripheralDidUpdateName(_ peripheral: CBMPeripheral) {
        wrapped?.peripheralDidUpdateName(peripheral)
    }

    func peripheral(_ peripheral: CBMPeripheral, didModifyServices invalidatedServices: [CBMService]) {
        wrapped?.peripheral(peripheral, didModifyServices: invalidatedServices)
    }

    func peripheral(_ peripheral: CBMPeripheral, didReadRSSI rssi: NSNumber, error: (any Error)?) {
        wrapped?.peripheral(peripheral, didReadRSSI: rssi, error: error)
    }

    func peripheral(_ peripheral: CBMPeripheral, didDiscoverServices error: (any Error)?) {
        if error == nil {
            record(
                .servicesDiscovered(
                    peripheral: peripheral.identifier,
                    services: (peripheral.services ?? []).map { RecordedService($0.remote) }))
        }
        wrapped?.peripheral(peripheral, didDiscoverServices: error)
    }

    func peripheral(
        _ peripheral: CBMPeripheral, didDiscoverIncludedServicesFor service: CBMService, error: (any Error)?
    ) {
        if error == nil {
            record(
                .servicesDiscovered(
                    peripheral: peripheral.identifier,
                    services: (service.includedServices ?? []).map { RecordedService($0.remote) }))
        }
        wrapped?.peripheral(peripheral, didDiscoverIncludedServicesFor: service, error: error)
    }

    func peripheral(
        _ peripheral: CBMPeripheral, didDiscoverCharacteristicsFor service: CBMService, error: (any Error)?
    ) {
        if error == nil {
            record(
                .characteristicsDiscovered(
                    peripheral: peripheral.identifier, service: service.remote.handle,
                    characteristics: (service.characteristics ?? []).map { RecordedCharacteristic($0.remote) }))
        }
        wrapped?.peripheral(peripheral, didDiscoverCharacteristicsFor: service, error: error)
    }

    func peripheral(
        _ peripheral: CBMPeripheral, didDiscoverDescriptorsFor characteristic: CBMCharacteristic, error: (any Error)?
    ) {
        if error == nil {
            record(
                .descriptorsDiscovered(
                    peripheral: peripheral.identifier, characteristic: characteristic.remote.handle,
                    descriptors: (characteristic.descriptors ?? []).map { RecordedDescriptor($0.remote) }))
        }
        wrapped?.peripheral(peripheral, didDiscoverDescriptorsFor: characteristic, error: error)
    }

    /// A read's value or error, or else a notification or indication (which carry no error).
    func peripheral(
        _ peripheral: CBMPeripheral, didUpdateValueFor characteristic: CBMCharacteristic, error: (any Error)?
    ) {
        let handle = characteristic.remote.handle
        if recording.answersRead(peripheral.identifier, handle) {
            let result: Result<RecordedValue, RecordedError> =
                if let failure = CentralRecording.recorded(error) {
                    .failure(failure)
                } else {
                    .success(.bytes(characteristic.value ?? Data()))
                }
            record(.read(peripheral: peripheral.identifier, handle: handle, result: result))
        } else if error == nil {
            let properties = characteristic.remote.properties
            record(
                .valueUpdated(
                    peripheral: peripheral.identifier, handle: handle, value: .bytes(characteristic.value ?? Data()),
                    isIndication: properties.contains(.indicate) && !properties.contains(.notify)))
        }
        wrapped?.peripheral(peripheral, didUpdateValueFor: characteristic, error: error)
    }

    func peripheral(
        _ peripheral: CBMPeripheral, didWriteValueFor characteristic: CBMCharacteristic, error: (any Error)?
    ) {
        written(peripheral, characteristic.remote.handle, error)
        wrapped?.peripheral(peripheral, didWriteValueFor: characteristic, error: error)
    }

    func peripheral(
        _ peripheral: CBMPeripheral, didUpdateNotificationStateFor characteristic: CBMCharacteristic,
        error: (any Error)?
    ) {
        record(
            .notificationState(
                peripheral: peripheral.identifier, handle: characteristic.remote.handle,
                enabled: error == nil ? characteristic.isNotifying : !characteristic.isNotifying,
                error: CentralRecording.recorded(error)))
        wrapped?.peripheral(peripheral, didUpdateNotificationStateFor: characteristic, error: error)
    }

    func peripheral(_ peripheral: CBMPeripheral, didUpdateValueFor descriptor: CBMDescriptor, error: (any Error)?) {
        let handle = descriptor.remote.handle
        if recording.answersRead(peripheral.identifier, handle) {
            if let failure = CentralRecording.recorded(error) {
                record(.read(peripheral: peripheral.identifier, handle: handle, result: .failure(failure)))
            } else if let bytes = Self.bytes(of: descriptor.value) {
                record(.read(peripheral: peripheral.identifier, handle: handle, result: .success(.bytes(bytes))))
            }
        }
        wrapped?.peripheral(peripheral, didUpdateValueFor: descriptor, error: error)
    }

    func peripheral(_ peripheral: CBMPeripheral, didWriteValueFor descriptor: CBMDescriptor, error: (any Error)?) {
        written(peripheral, descriptor.remote.handle, error)
        wrapped?.peripheral(peripheral, didWriteValueFor: descriptor, error: error)
    }

    private func written(_ peripheral: CBMPeripheral, _ handle: UInt16, _ error: (any Error)?) {
        guard let value = recording.writeAnswered(peripheral.identifier, handle) else { return }
        record(
            .write(
                peripheral: peripheral.identifier, handle: handle, value: .bytes(value), withResponse: true,
                error: CentralRecording.recorded(error)))
    }

    func peripheralIsReady(toSendWriteWithoutResponse peripheral: CBMPeripheral) {
        wrapped?.peripheralIsReady(toSendWriteWithoutResponse: peripheral)
    }

    func peripheral(_ peripheral: CBMPeripheral, didOpen channel: CBML2CAPChannel?, error: (any Error)?) {
        wrapped?.peripheral(peripheral, didOpen: channel, error: error)
    }

    /// A descriptor value's bytes: data as is, a string in UTF-8, a number as the 16-bit
    /// little-endian value CoreBluetooth reads it from.
    static func bytes(of value: Any?) -> Data? {
        switch value {
        case let data as Data: data
        case let string as String: Data(string.utf8)
        case let number as NSNumber: withUnsafeBytes(of: number.uint16Value.littleEndian) { Data($0) }
        default: nil
        }
    }
}
