// swift-format-ignore-file: AlwaysUseLowerCamelCase
// (These names mirror CoreBluetooth's API.)

import Foundation

// An nRF Blinky-style app's Bluetooth layer, written in plain CoreBluetooth delegate style.
// It compiles against CoreBluetooth's names through CoreBluetoothTypeAliases.swift, unchanged.

/// Finds Blinky devices and connects to one.
final class BlinkyManager: NSObject, CBCentralManagerDelegate {
    static let lbsService = CBUUID(string: "00001523-1212-EFDE-1523-785FEABCD123")

    private(set) var centralManager: CBCentralManager!
    /// Devices found by the scan, in the order found.
    private(set) var discovered: [BlinkyPeripheral] = []
    /// What the app shows about the radio.
    private(set) var isPoweredOn = false
    /// Called when a device is found.
    var onDiscovery: ((BlinkyPeripheral) -> Void)?

    init(queue: DispatchQueue? = nil) {
        super.init()
        centralManager = CBCentralManager(delegate: self, queue: queue)
    }

    /// Starts looking for devices (once the radio is on).
    func startScan() {
        guard centralManager.state == .poweredOn else { return }
        centralManager.scanForPeripherals(
            withServices: [BlinkyManager.lbsService],
            options: [CBCentralManagerScanOptionAllowDuplicatesKey: false])
    }

    func stopScan() {
        centralManager.stopScan()
    }

    func centralManagerDidUpdateState(_ central: CBCentralManager) {
        isPoweredOn = central.state == .poweredOn
        if isPoweredOn {
            startScan()
        }
    }

    func centralManager(
        _ central: CBCentralManager, didDiscover peripheral: CBPeripheral, advertisementData: [String: Any],
        rssi RSSI: NSNumber
    ) {
        guard !discovered.contains(where: { $0.basePeripheral.identifier == peripheral.identifier }) else { return }
        let name = advertisementData[CBAdvertisementDataLocalNameKey] as? String
        let blinky = BlinkyPeripheral(peripheral, manager: central, advertisedName: name, rssi: RSSI.intValue)
        discovered.append(blinky)
        onDiscovery?(blinky)
    }

    func centralManager(_ central: CBCentralManager, didConnect peripheral: CBPeripheral) {
        blinky(for: peripheral)?.didConnect()
    }

    func centralManager(_ central: CBCentralManager, didFailToConnect peripheral: CBPeripheral, error: Error?) {
        blinky(for: peripheral)?.didFailToConnect(error)
    }

    func centralManager(
        _ central: CBCentralManager, didDisconnectPeripheral peripheral: CBPeripheral, error: Error?
    ) {
        blinky(for: peripheral)?.didDisconnect(error)
    }

    private func blinky(for peripheral: CBPeripheral) -> BlinkyPeripheral? {
        discovered.first { $0.basePeripheral.identifier == peripheral.identifier }
    }
}
