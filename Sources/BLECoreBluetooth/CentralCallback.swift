#if canImport(CoreBluetooth)
    @preconcurrency import CoreBluetooth

    /// A delegate callback of `CBCentralManager` or `CBPeripheral`, captured on the manager's
    /// queue with the values that may change afterwards (a characteristic's value) copied out.
    enum CentralCallback {
        case stateUpdated(CBManagerState)
        case discovered(CBPeripheral, advertisementData: [String: Any], rssi: Int)
        case connected(CBPeripheral)
        case failedToConnect(CBPeripheral, (any Error)?)
        case disconnected(CBPeripheral, (any Error)?)
        case nameUpdated(CBPeripheral)
        case servicesModified(CBPeripheral, invalidated: [CBService])
        case rssiRead(CBPeripheral, rssi: Int, (any Error)?)
        case servicesDiscovered(CBPeripheral, (any Error)?)
        case includedServicesDiscovered(CBPeripheral, CBService, (any Error)?)
        case characteristicsDiscovered(CBPeripheral, CBService, (any Error)?)
        case descriptorsDiscovered(CBPeripheral, CBCharacteristic, (any Error)?)
        case characteristicValueUpdated(CBPeripheral, CBCharacteristic, Data?, (any Error)?)
        case characteristicWritten(CBPeripheral, CBCharacteristic, (any Error)?)
        case notificationStateUpdated(CBPeripheral, CBCharacteristic, (any Error)?)
        case descriptorValueUpdated(CBPeripheral, CBDescriptor, Data?, (any Error)?)
        case descriptorWritten(CBPeripheral, CBDescriptor, (any Error)?)
        case readyToSendWriteWithoutResponse(CBPeripheral)
        case willRestoreState([String: Any])
        case connectionEvent(CBConnectionEvent, CBPeripheral)
        case ancsAuthorizationUpdated(CBPeripheral)
        case l2capChannelOpened(CBPeripheral, CBL2CAPChannel?, (any Error)?)
    }

    /// The delegate of the `CBCentralManager` and of every `CBPeripheral` it connects: it posts
    /// each callback, in the order CoreBluetooth delivers them on the manager's queue, to the
    /// ``CallbackInbox`` that ``CoreBluetoothCentralManager`` consumes.
    ///
    /// Only type-checked on Linux (against the stub); it runs only with Apple's CoreBluetooth.
    final class CentralDelegate: NSObject, CBCentralManagerDelegate, CBPeripheralDelegate {
        let inbox: CallbackInbox<CentralCallback>

        init(inbox: CallbackInbox<CentralCallback>) {
            self.inbox = inbox
            super.init()
        }

        func centralManagerDidUpdateState(_ central: CBCentralManager) {
            inbox.post(.stateUpdated(central.state))
        }

        func centralManager(
            _ central: CBCentralManager, didDiscover peripheral: CBPeripheral, advertisementData: [String: Any],
            rssi: NSNumber
        ) {
            inbox.post(.discovered(peripheral, advertisementData: advertisementData, rssi: rssi.intValue))
        }

        func centralManager(_ central: CBCentralManager, didConnect peripheral: CBPeripheral) {
            inbox.post(.connected(peripheral))
        }

        func centralManager(_ central: CBCentralManager, didFailToConnect peripheral: CBPeripheral, error: (any Error)?)
        {
            inbox.post(.failedToConnect(peripheral, error))
        }

        func centralManager(
            _ central: CBCentralManager, didDisconnectPeripheral peripheral: CBPeripheral, error: (any Error)?
        ) {
            inbox.post(.disconnected(peripheral, error))
        }

        func peripheralDidUpdateName(_ peripheral: CBPeripheral) {
            inbox.post(.nameUpdated(peripheral))
        }

        func peripheral(_ peripheral: CBPeripheral, didModifyServices invalidatedServices: [CBService]) {
            inbox.post(.servicesModified(peripheral, invalidated: invalidatedServices))
        }

        func peripheral(_ peripheral: CBPeripheral, didReadRSSI rssi: NSNumber, error: (any Error)?) {
            inbox.post(.rssiRead(peripheral, rssi: rssi.intValue, error))
        }

        func peripheral(_ peripheral: CBPeripheral, didDiscoverServices error: (any Error)?) {
            inbox.post(.servicesDiscovered(peripheral, error))
        }

        func peripheral(
            _ peripheral: CBPeripheral, didDiscoverIncludedServicesFor service: CBService, error: (any Error)?
        ) {
            inbox.post(.includedServicesDiscovered(peripheral, service, error))
        }

        func peripheral(
            _ peripheral: CBPeripheral, didDiscoverCharacteristicsFor service: CBService, error: (any Error)?
        ) {
            inbox.post(.characteristicsDiscovered(peripheral, service, error))
        }

        func peripheral(
            _ peripheral: CBPeripheral, didDiscoverDescriptorsFor characteristic: CBCharacteristic, error: (any Error)?
        ) {
            inbox.post(.descriptorsDiscovered(peripheral, characteristic, error))
        }

        func peripheral(
            _ peripheral: CBPeripheral, didUpdateValueFor characteristic: CBCharacteristic, error: (any Error)?
        ) {
            inbox.post(.characteristicValueUpdated(peripheral, characteristic, characteristic.value, error))
        }

        func peripheral(
            _ peripheral: CBPeripheral, didWriteValueFor characteristic: CBCharacteristic, error: (any Error)?
        ) {
            inbox.post(.characteristicWritten(peripheral, characteristic, error))
        }

        func peripheral(
            _ peripheral: CBPeripheral, didUpdateNotificationStateFor characteristic: CBCharacteristic,
            error: (any Error)?
        ) {
            inbox.post(.notificationStateUpdated(peripheral, characteristic, error))
        }

        func peripheral(_ peripheral: CBPeripheral, didUpdateValueFor descriptor: CBDescriptor, error: (any Error)?) {
            inbox.post(.descriptorValueUpdated(peripheral, descriptor, Self.data(of: descriptor.value), error))
        }

        func peripheral(_ peripheral: CBPeripheral, didWriteValueFor descriptor: CBDescriptor, error: (any Error)?) {
            inbox.post(.descriptorWritten(peripheral, descriptor, error))
        }

        func peripheralIsReady(toSendWriteWithoutResponse peripheral: CBPeripheral) {
            inbox.post(.readyToSendWriteWithoutResponse(peripheral))
        }

        func centralManager(_ central: CBCentralManager, willRestoreState dict: [String: Any]) {
            inbox.post(.willRestoreState(dict))
        }

        func centralManager(
            _ central: CBCentralManager, connectionEventDidOccur event: CBConnectionEvent, for peripheral: CBPeripheral
        ) {
            inbox.post(.connectionEvent(event, peripheral))
        }

        func centralManager(_ central: CBCentralManager, didUpdateANCSAuthorizationFor peripheral: CBPeripheral) {
            inbox.post(.ancsAuthorizationUpdated(peripheral))
        }

        func peripheral(_ peripheral: CBPeripheral, didOpen channel: CBL2CAPChannel?, error: (any Error)?) {
            inbox.post(.l2capChannelOpened(peripheral, channel, error))
        }

        /// A descriptor value as bytes: `Data` as is, a string as UTF-8, a number (CoreBluetooth
        /// uses `NSNumber` for 0x2900 and 0x2902) as a little-endian `UInt16`.
        static func data(of value: Any?) -> Data? {
            switch value {
            case let data as Data: return data
            case let string as String: return Data(string.utf8)
            case let number as NSNumber:
                let raw = number.uint16Value
                return Data([UInt8(raw & 0xFF), UInt8(raw >> 8)])
            default: return nil
            }
        }
    }
#endif
