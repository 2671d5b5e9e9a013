import BLECBM
import BLECore
import BLEMockKit
import Foundation
import Testing

@testable import BlinkyExample

// The documentation's examples for BLECBM (README.md, MIGRATION.md, BLECBM.docc), compiled
// and run here; scripts/sync-doc-examples.py copies them into the documents.

@available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
@Test func anUnchangedCoreBluetoothAppRunsOnTheTestsBridge() async throws {
    let bridge = MockBLEBridge(configuration: .realistic(seed: 7))
    // The device the app looks for: a simulated Blinky.
    let blinky = MockPeripheralManager(bridge: bridge)
    let service = try await blinky.add(
        GATTService(
            uuid: "00001523-1212-EFDE-1523-785FEABCD123",
            characteristics: [
                GATTCharacteristic(
                    uuid: "00001524-1212-EFDE-1523-785FEABCD123", properties: [.read, .notify],
                    permissions: .readable),
                GATTCharacteristic(
                    uuid: "00001525-1212-EFDE-1523-785FEABCD123", properties: [.read, .write],
                    permissions: [.readable, .writeable]),
            ]))
    try await blinky.setValue(Data([0x01]), for: service.characteristics[0])  // the button is pressed
    try await blinky.setValue(Data([0x00]), for: service.characteristics[1])  // the LED is off
    try await blinky.startAdvertising(
        AdvertisementData(localName: "nRF Blinky", serviceUUIDs: ["00001523-1212-EFDE-1523-785FEABCD123"]))

    try await bridge.run { @MainActor in
        // The app's own code creates `CBCentralManager(delegate: self, queue: nil)`: inside the
        // run it joins this bridge. Callbacks arrive on the main queue, in virtual time.
        let app = BlinkyManager()
        try await bridge.waitForApp { !app.discovered.isEmpty }
        let device = app.discovered[0]
        device.connect()
        try await bridge.waitForApp { device.isReady && device.isButtonPressed == true }
        device.turnOnLED()
        try await bridge.waitForApp { device.isLEDOn == true }
    }
    #expect(await bridge.log.contains { $0.kind == .write && $0.value == Data([0x01]) })
}
