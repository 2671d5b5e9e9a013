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
        type: CBMUUID(string: "2A19"), properties: [.read, .notify], value: nil, permissions: [.readable])
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
/// includes and their characteristics, subscribes to those that notify, and notes the values
/// and service changes it hears; with a restore identifier, it takes back what
/// `willRestoreState` hands it.
final class IncludedServicesPhone: NSObject, CBMCentralManagerDelegate, CBMPeripheralDelegate, @unchecked Sendable {
    // @unchecked Sendable: only touched on the main queue.
    var manager: CBMCentralManager!
    var watch: CBMPeripheral?
    var calls: [String] = []
    /// The services each didModifyServices invalidated.
    var invalidated: [[CBMService]] = []
    /// Whether a subscription was confirmed.
    var subscribed = false

    init(restoreIdentifier: String? = nil) {
        super.init()
        manager = CBMCentralManager(
            delegate: self, queue: nil,
            options: restoreIdentifier.map { [CBMCentralManagerOptionRestoreIdentifierKey: $0] })
    }

    func centralManager(_ central: CBMCentralManager, willRestoreState dict: [String: Any]) {
        for peripheral in dict[CBMCentralManagerRestoredStatePeripheralsKey] as? [CBMPeripheral] ?? [] {
            peripheral.delegate = self
            watch = peripheral
        }
    }

    func centralManagerDidUpdateState(_ central: CBMCentralManager) {
        if central.state == .poweredOn, watch == nil {
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
        _ peripheral: CBMPeripheral, didDiscoverCharacteristicsFor service: CBMService, error: (any Error)?
    ) {
        for characteristic in service.characteristics ?? [] where characteristic.properties.contains(.notify) {
            peripheral.setNotifyValue(true, for: characteristic)
        }
    }

    func peripheral(
        _ peripheral: CBMPeripheral, didUpdateNotificationStateFor characteristic: CBMCharacteristic,
        error: (any Error)?
    ) {
        if error == nil, characteristic.isNotifying { subscribed = true }
    }

    func peripheral(
        _ peripheral: CBMPeripheral, didUpdateValueFor characteristic: CBMCharacteristic, error: (any Error)?
    ) {
        let outcome = error.map { "error \(($0 as NSError).domain)/\(($0 as NSError).code)" } ?? "ok"
        calls.append("value \(Array(characteristic.value ?? Data())) \(outcome)")
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
            try await bridge.waitForApp { phone.subscribed }
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

extension IncludedServiceChangeTests {
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(
        "A relaunched app gets back the included services it had discovered, with their characteristics and subscriptions, and hears their notifications",
        arguments: [false, true])
    func restorationKeepsIncludedServices(realistic: Bool) async throws {
        let bridge = MockBLEBridge(configuration: realistic ? .realistic(seed: 10) : .init(seed: 10))
        try await bridge.run { @MainActor in
            let app = IncludingWatchFirmware()
            try await bridge.waitForApp { app.manager.isAdvertising }
            var first: IncludedServicesPhone? = IncludedServicesPhone(restoreIdentifier: "companion")
            try await bridge.waitForApp { first!.subscribed }
            await first!.manager.simulatedCentral!.simulateAppTermination()
            first = nil

            let relaunched = IncludedServicesPhone(restoreIdentifier: "companion")
            try await bridge.waitForApp { relaunched.manager.state == .poweredOn }
            let watch = try #require(relaunched.watch)
            #expect(watch.state == .connected)
            let primary = try #require(watch.services?.first)
            let battery = try #require(primary.includedServices?.first)
            #expect(battery.uuid == IncludingWatchFirmware.batteryUUID && !battery.isPrimary)
            let level = try #require(battery.characteristics?.first)
            #expect(level.isNotifying)

            #expect(app.manager.updateValue(Data([42]), for: app.level, onSubscribedCentrals: nil))
            try await bridge.waitForApp { !relaunched.calls.isEmpty }
            #expect(relaunched.calls == ["value [42] ok"])
            #expect(relaunched.manager.apiMisuses.isEmpty)
        }
    }
}
