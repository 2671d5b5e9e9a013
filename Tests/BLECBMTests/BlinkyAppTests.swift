import BLECBM
import BLECore
import BLEMockKit
import Foundation
import Testing

@testable import BlinkyExample

/// A simulated Blinky device: the LED Button Service with a button (read, notify) and an LED
/// (read, write).
struct BlinkyDevice {
    let peripheral: MockPeripheralManager
    let button: LocalCharacteristic
    let led: LocalCharacteristic

    static let service: BluetoothUUID = "00001523-1212-EFDE-1523-785FEABCD123"

    static func make(
        on bridge: MockBLEBridge, buttonPressed: Bool = false, ledWithoutResponse: Bool = false
    ) async throws -> BlinkyDevice {
        let peripheral = MockPeripheralManager(
            configuration: .init(name: "Blinky", advertisingInterval: .milliseconds(100), rssi: -55), bridge: bridge)
        let service = try await peripheral.add(
            GATTService(
                uuid: service,
                characteristics: [
                    GATTCharacteristic(
                        uuid: "00001524-1212-EFDE-1523-785FEABCD123", properties: [.read, .notify],
                        permissions: .readable),
                    GATTCharacteristic(
                        uuid: "00001525-1212-EFDE-1523-785FEABCD123",
                        properties: ledWithoutResponse ? [.read, .writeWithoutResponse] : [.read, .write],
                        permissions: [.readable, .writeable]),
                ]))
        try await peripheral.setValue(Data([buttonPressed ? 1 : 0]), for: service.characteristics[0])
        try await peripheral.setValue(Data([0]), for: service.characteristics[1])
        try await peripheral.startAdvertising(AdvertisementData(localName: "nRF Blinky", serviceUUIDs: [Self.service]))
        return BlinkyDevice(peripheral: peripheral, button: service.characteristics[0], led: service.characteristics[1])
    }

    /// With the app connected to this device, turns its LED on and drops the link (a
    /// connection timeout) while the write is on its way in realistic mode (it takes virtual
    /// time), or right after it in fast mode (it completes at once); returns once the app heard
    /// of the disconnection. Call it in a run, on the main actor, where the app lives.
    @MainActor func dropTheLinkDuringALEDWrite(
        of blinky: BlinkyPeripheral, on bridge: MockBLEBridge, realistic: Bool
    ) async throws {
        let central = try #require(await bridge.log.first { $0.kind == .connected }?.central)
        let disconnections = blinky.disconnections
        blinky.turnOnLED()
        if realistic {
            await bridge.waitUntil { $0.pendingOperations.count == 1 }
        } else {
            try await bridge.waitForApp { blinky.ledWrites == 1 }
        }
        await peripheral.simulateDisconnection(of: central, error: CoreBluetoothError(.connectionTimeout))
        try await bridge.waitForApp { blinky.disconnections == disconnections + 1 }
    }
}

@Suite(.timeLimit(.minutes(10)))
struct BlinkyAppTests {
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(arguments: [false, true])
    func theUnchangedAppScansConnectsReadsAndWritesTheLED(realistic: Bool) async throws {
        let bridge = MockBLEBridge(configuration: realistic ? .realistic(seed: 21) : .init(seed: 21))
        let device = try await BlinkyDevice.make(on: bridge, buttonPressed: true)
        try await bridge.run { @MainActor in
            let app = BlinkyManager()
            try await bridge.waitForApp { !app.discovered.isEmpty }
            let blinky = app.discovered[0]
            #expect(blinky.advertisedName == "nRF Blinky")
            #expect(blinky.rssi == -55)
            blinky.connect()
            try await bridge.waitForApp { blinky.isReady && blinky.isButtonPressed != nil && blinky.isLEDOn != nil }
            #expect(blinky.isButtonPressed == true)
            #expect(blinky.isLEDOn == false)
            blinky.turnOnLED()
            try await bridge.waitForApp { blinky.ledWrites == 1 }
            #expect(blinky.isLEDOn == true)
            #expect(blinky.lastError == nil)
        }
        let writes = await bridge.log.filter { $0.kind == .write && $0.handle == device.led.handle }
        #expect(writes.map(\.value) == [Data([1])])
        if realistic {
            // Scanning, connecting and the ATT round trips took virtual time.
            #expect(await bridge.now > .zero)
        }
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(arguments: [false, true])
    func buttonNotificationsReachTheApp(realistic: Bool) async throws {
        let bridge = MockBLEBridge(configuration: realistic ? .realistic(seed: 5) : .init(seed: 5))
        let device = try await BlinkyDevice.make(on: bridge)
        let count = try await bridge.run { @MainActor () -> Int in
            let app = BlinkyManager()
            try await bridge.waitForApp { !app.discovered.isEmpty }
            let blinky = app.discovered[0]
            blinky.connect()
            try await bridge.waitForApp { blinky.isReady && blinky.isButtonPressed == false }
            await bridge.waitUntil { bridge in
                bridge.log.contains { $0.kind == .subscribe }
            }
            for pressed in [true, false, true] {
                _ = try await device.peripheral.updateValue(
                    Data([pressed ? 1 : 0]), for: device.button, onSubscribedCentrals: nil)
                try await bridge.waitForApp { blinky.isButtonPressed == pressed }
            }
            return blinky.buttonNotifications
        }
        #expect(count == 3)
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(arguments: [false, true])
    func theAppReconnectsAfterTheLinkDropsWithAnError(realistic: Bool) async throws {
        let bridge = MockBLEBridge(configuration: realistic ? .realistic(seed: 13) : .init(seed: 13))
        let device = try await BlinkyDevice.make(on: bridge, buttonPressed: true)
        let error = try await bridge.run { @MainActor () -> NSError? in
            let app = BlinkyManager()
            try await bridge.waitForApp { !app.discovered.isEmpty }
            let blinky = app.discovered[0]
            blinky.connect()
            try await bridge.waitForApp { blinky.isReady && blinky.isLEDOn != nil }
            try await device.dropTheLinkDuringALEDWrite(of: blinky, on: bridge, realistic: realistic)
            #expect(!blinky.isReady)
            // The app reconnects by itself and rediscovers.
            try await bridge.waitForApp { blinky.isReady && blinky.isLEDOn != nil }
            return blinky.lastError.map { $0 as NSError }
        }
        // The last error the app saw is the disconnection's (a write pending then gets no
        // callback, as on iOS).
        #expect(error?.domain == CBMErrorDomain)
        #expect(error?.code == CBMError.Code.connectionTimeout.rawValue, "\(String(describing: error))")
        #expect(await bridge.log.filter { $0.kind == .connected }.count == 2)
    }

    /// `byAppsUUID`: the injection names the button by the `CBUUID` the app knows it by (the same
    /// injection as by its `BluetoothUUID`); it fails that characteristic's reads only.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(arguments: [false, true], [false, true])
    func anInjectedReadErrorReachesTheAppAsACoreBluetoothATTError(realistic: Bool, byAppsUUID: Bool) async throws {
        let bridge = MockBLEBridge(configuration: realistic ? .realistic(seed: 17) : .init(seed: 17))
        let device = try await BlinkyDevice.make(on: bridge, buttonPressed: true)
        let injection =
            byAppsUUID
            ? ErrorInjection(
                .read, failure: .att(.readNotPermitted), characteristic: BlinkyPeripheral.buttonCharacteristic)
            : ErrorInjection(.read, failure: .att(.readNotPermitted), characteristic: device.button.uuid)
        #expect(injection.characteristic == device.button.uuid)
        let (error, pressed, led) = try await bridge.run { @MainActor () -> (NSError?, Bool?, Bool?) in
            let app = BlinkyManager()
            // The central the app created fails reads of the button.
            await app.centralManager.simulatedCentral!.inject(injection)
            try await bridge.waitForApp { !app.discovered.isEmpty }
            let blinky = app.discovered[0]
            blinky.connect()
            try await bridge.waitForApp { blinky.lastError != nil && blinky.isLEDOn != nil }
            return (blinky.lastError.map { $0 as NSError }, blinky.isButtonPressed, blinky.isLEDOn)
        }
        #expect(error?.domain == CBMATTErrorDomain)
        #expect(error?.code == CBMATTError.Code.readNotPermitted.rawValue)
        #expect(pressed == nil)
        #expect(led == false)
    }
}
