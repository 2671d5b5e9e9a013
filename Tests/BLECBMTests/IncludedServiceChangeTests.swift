import BLECBM
import BLEMockKit
import Foundation
import Testing

/// A watch whose primary service includes a secondary battery service, in CoreBluetooth
/// delegate style: it publishes both, answers reads of the battery level, and advertises.
final class IncludingWatchFirmware: NSObject, CBMPeripheralManagerDelegate, @unchecked Sendable {
    // @unchecked Sendable: only touched on the main queue.
    static let primaryUUID = CBMUUID(string: "6E430001-B5A3-F393-E0A9-E50E24DCCA9E")
    static let batteryUUID = CBMUUID(string: "180F")
    var manager: CBMPeripheralManager!
    let level = CBMMutableCharacteristic(
        type: CBMUUID(string: "2A19"), properties: [.read], value: nil, permissions: [.readable])
    let battery = CBMMutableService(type: batteryUUID, primary: false)
    let primary = CBMMutableService(type: primaryUUID, primary: true)

    override init() {
        super.init()
        manager = CBMPeripheralManager(delegate: self, queue: nil)
    }

    func peripheralManagerDidUpdateState(_ peripheral: CBMPeripheralManager) {
        guard peripheral.state == .poweredOn else { return }
        battery.characteristics = [level]
        primary.includedServices = [battery]
        peripheral.add(battery)
        peripheral.add(primary)
    }

    func peripheralManager(_ peripheral: CBMPeripheralManager, didAdd service: CBMService, error: (any Error)?) {
        guard service.uuid == Self.primaryUUID else { return }
        peripheral.startAdvertising([CBMAdvertisementDataServiceUUIDsKey: [Self.primaryUUID]])
    }

    func peripheralManager(_ peripheral: CBMPeripheralManager, didReceiveRead request: CBMATTRequest) {
        request.value = Data([77])
        peripheral.respond(to: request, withResult: .success)
    }
}

/// The phone's app: connects to the watch, discovers its primary service, the services it
/// includes and their characteristics, and notes each callback.
final class IncludedServicesPhone: NSObject, CBMCentralManagerDelegate, CBMPeripheralDelegate, @unchecked Sendable {
    // @unchecked Sendable: only touched on the main queue.
    var manager: CBMCentralManager!
    var watch: CBMPeripheral?
    var calls: [String] = []
    /// The services each didModifyServices invalidated.
    var invalidated: [[CBMService]] = []

    override init() {
        super.init()
        manager = CBMCentralManager(delegate: self, queue: nil)
    }

    func centralManagerDidUpdateState(_ central: CBMCentralManager) {
        if central.state == .poweredOn {
            central.scanForPeripherals(withServices: [IncludingWatchFirmware.primaryUUID])
        }
    }

    func centralManager(
        _ central: CBMCentralManager, didDiscover peripheral: CBMPeripheral, advertisementData: [String: Any],
        rssi: NSNumber
    ) {
        guard watch == nil else { return }
        central.stopScan()
        watch = peripheral
        peripheral.delegate = self
        central.connect(peripheral)
    }

    func centralManager(_ central: CBMCentralManager, didConnect peripheral: CBMPeripheral) {
        peripheral.discoverServices(nil)
    }

    func peripheral(_ peripheral: CBMPeripheral, didDiscoverServices error: (any Error)?) {
        for service in peripheral.services ?? [] { peripheral.discoverIncludedServices(nil, for: service) }
    }

    func peripheral(
        _ peripheral: CBMPeripheral, didDiscoverIncludedServicesFor service: CBMService, error: (any Error)?
    ) {
        for included in service.includedServices ?? [] { peripheral.discoverCharacteristics(nil, for: included) }
    }

    func peripheral(
        _ peripheral: CBMPeripheral, didUpdateValueFor characteristic: CBMCharacteristic, error: (any Error)?
    ) {
        calls.append("value " + (error.map { "error \(($0 as NSError).domain)/\(($0 as NSError).code)" } ?? "ok"))
    }

    func peripheral(_ peripheral: CBMPeripheral, didModifyServices invalidatedServices: [CBMService]) {
        invalidated.append(invalidatedServices)
    }
}

@Suite(.timeLimit(.minutes(5)))
struct IncludedServiceChangeTests {
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(
        "A service the phone found only as an included service, removed by the watch, is reported invalidated, leaves its including service and is not read again",
        arguments: [false, true])
    func aRemovedIncludedServiceIsInvalidated(realistic: Bool) async throws {
        let bridge = MockBLEBridge(configuration: realistic ? .realistic(seed: 9) : .init(seed: 9))
        try await bridge.run { @MainActor in
            let app = IncludingWatchFirmware()
            try await bridge.waitForApp { app.manager.isAdvertising }
            let phone = IncludedServicesPhone()
            try await bridge.waitForApp {
                phone.watch?.services?.first?.includedServices?.first?.characteristics?.isEmpty == false
            }
            let watch = try #require(phone.watch)
            let primary = try #require(watch.services?.first)
            let battery = try #require(primary.includedServices?.first)
            let level = try #require(battery.characteristics?.first)
            #expect(battery.uuid == IncludingWatchFirmware.batteryUUID && !battery.isPrimary)
            #expect(watch.services == [primary])

            app.manager.remove(app.battery)
            try await bridge.waitForApp { !phone.invalidated.isEmpty }
            #expect(phone.invalidated.count == 1)
            #expect(phone.invalidated.first?.count == 1 && phone.invalidated.first?.first === battery)
            #expect(primary.includedServices?.isEmpty == true)
            #expect(watch.services == [primary])

            // Its characteristic is not one of the peripheral's any more: the read is refused,
            // as one of a removed primary service's is, with no callback.
            watch.readValue(for: level)
            try await bridge.clock.sleep(for: .seconds(1))
            #expect(phone.calls.isEmpty)
            #expect(
                phone.manager.apiMisuses == [
                    "readValue: the attribute is not one of \(watch.identifier)'s current attributes"
                ])
        }
    }
}
