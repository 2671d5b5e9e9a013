import Foundation

/// One Blinky device: its LED (write) and button (read, notify).
final class BlinkyPeripheral: NSObject, CBPeripheralDelegate {
    static let buttonCharacteristic = CBUUID(string: "00001524-1212-EFDE-1523-785FEABCD123")
    static let ledCharacteristic = CBUUID(string: "00001525-1212-EFDE-1523-785FEABCD123")

    let basePeripheral: CBPeripheral
    private let centralManager: CBCentralManager
    let advertisedName: String?
    let rssi: Int

    private var buttonCharacteristic: CBCharacteristic?
    private var ledCharacteristic: CBCharacteristic?

    /// Whether the app keeps reconnecting after the link drops.
    var reconnects = true
    /// Whether the device is connected and its characteristics found.
    private(set) var isReady = false
    /// The LED's state as last written, or read.
    private(set) var isLEDOn: Bool?
    /// The button's state as last read or notified.
    private(set) var isButtonPressed: Bool?
    /// How many times the button changed, by notification.
    private(set) var buttonNotifications = 0
    /// What went wrong last (a failed connection, read or write, a disconnection).
    private(set) var lastError: Error?
    /// How many times the device disconnected.
    private(set) var disconnections = 0
    /// Writes to the LED that completed.
    private(set) var ledWrites = 0

    init(_ peripheral: CBPeripheral, manager: CBCentralManager, advertisedName: String?, rssi: Int) {
        basePeripheral = peripheral
        centralManager = manager
        self.advertisedName = advertisedName
        self.rssi = rssi
        super.init()
        peripheral.delegate = self
    }

    func connect() {
        centralManager.connect(basePeripheral, options: nil)
    }

    func disconnect() {
        reconnects = false
        centralManager.cancelPeripheralConnection(basePeripheral)
    }

    func turnOnLED() { writeLED(true) }

    func turnOffLED() { writeLED(false) }

    private func writeLED(_ on: Bool) {
        guard let ledCharacteristic else { return }
        let type: CBCharacteristicWriteType =
            ledCharacteristic.properties.contains(.write) ? .withResponse : .withoutResponse
        basePeripheral.writeValue(Data([on ? 0x01 : 0x00]), for: ledCharacteristic, type: type)
        if type == .withoutResponse { isLEDOn = on }
        pendingLED = on
    }

    private var pendingLED: Bool?

    // MARK: From the manager

    func didConnect() {
        basePeripheral.discoverServices([BlinkyManager.lbsService])
    }

    func didFailToConnect(_ error: Error?) {
        lastError = error
    }

    func didDisconnect(_ error: Error?) {
        isReady = false
        buttonCharacteristic = nil
        ledCharacteristic = nil
        disconnections += 1
        if let error {
            lastError = error
        }
        if reconnects && error != nil {
            connect()
        }
    }

    // MARK: CBPeripheralDelegate

    func peripheral(_ peripheral: CBPeripheral, didDiscoverServices error: Error?) {
        if let error {
            lastError = error
            return
        }
        for service in peripheral.services ?? [] where service.uuid == BlinkyManager.lbsService {
            peripheral.discoverCharacteristics(
                [BlinkyPeripheral.buttonCharacteristic, BlinkyPeripheral.ledCharacteristic], for: service)
        }
    }

    func peripheral(_ peripheral: CBPeripheral, didDiscoverCharacteristicsFor service: CBService, error: Error?) {
        if let error {
            lastError = error
            return
        }
        for characteristic in service.characteristics ?? [] {
            if characteristic.uuid == BlinkyPeripheral.buttonCharacteristic {
                buttonCharacteristic = characteristic
                if characteristic.properties.contains(.read) {
                    peripheral.readValue(for: characteristic)
                }
                if characteristic.properties.contains(.notify) {
                    peripheral.setNotifyValue(true, for: characteristic)
                }
            } else if characteristic.uuid == BlinkyPeripheral.ledCharacteristic {
                ledCharacteristic = characteristic
                if characteristic.properties.contains(.read) {
                    peripheral.readValue(for: characteristic)
                }
            }
        }
        isReady = buttonCharacteristic != nil && ledCharacteristic != nil
    }

    func peripheral(_ peripheral: CBPeripheral, didUpdateValueFor characteristic: CBCharacteristic, error: Error?) {
        if let error {
            lastError = error
            return
        }
        guard let value = characteristic.value, let first = value.first else { return }
        if characteristic == buttonCharacteristic {
            if characteristic.isNotifying && isButtonPressed != nil {
                buttonNotifications += 1
            }
            isButtonPressed = first == 0x01
        } else if characteristic == ledCharacteristic {
            isLEDOn = first == 0x01
        }
    }

    func peripheral(_ peripheral: CBPeripheral, didWriteValueFor characteristic: CBCharacteristic, error: Error?) {
        if let error {
            lastError = error
            return
        }
        ledWrites += 1
        if let pendingLED {
            isLEDOn = pendingLED
        }
    }

    func peripheral(
        _ peripheral: CBPeripheral, didUpdateNotificationStateFor characteristic: CBCharacteristic, error: Error?
    ) {
        if let error {
            lastError = error
        }
    }
}
