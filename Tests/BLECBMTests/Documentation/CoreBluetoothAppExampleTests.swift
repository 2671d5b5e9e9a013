import BLECBM
import BLECore
import BLEMockKit
import Foundation
import Testing

@testable import BlinkyExample

/// The examples run with the suite-wide time limit, like every other suite.
@Suite(.timeLimit(.minutes(10)))
struct CoreBluetoothAppExampleTests {
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

    /// A fault named by the delegate app's simulated central: the Blinky app hears the link drop
    /// with the error, and connects again.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test func aDelegateAppHearsTheLinkDropTheTestSimulates() async throws {
        let bridge = MockBLEBridge(configuration: .realistic(seed: 7))
        // The simulated Blinky of the package's Blinky tests (the example above builds the same).
        let blinky = try await BlinkyDevice.make(on: bridge).peripheral
        try await bridge.run { @MainActor in
            let app = BlinkyManager()
            try await bridge.waitForApp { !app.discovered.isEmpty }
            let device = app.discovered[0]
            device.connect()
            try await bridge.waitForApp { device.isReady }
            // The fault names the app's simulated central and the peripheral by identifier.
            let central = try #require(app.centralManager.simulatedCentral).identifier
            await bridge.simulate(
                .disconnect(
                    central: central, peripheral: blinky.identifier, error: CoreBluetoothError(.connectionTimeout)))
            try await bridge.waitForApp { device.disconnections == 1 && device.isReady }
            #expect((device.lastError as? CBMError)?.code == .connectionTimeout)
        }
    }

    /// A spec delegate as written for CoreBluetoothMock: the button is pressed, the LED accepts writes.
    struct PressedButtonBlinky: CBMPeripheralSpecDelegate {
        func peripheral(_ peripheral: CBMPeripheralSpec, didReceiveReadRequestFor characteristic: CBMCharacteristicMock)
            -> Result<Data, any Error>
        {
            .success(Data([0x01]))
        }

        func peripheral(
            _ peripheral: CBMPeripheralSpec, didReceiveWriteRequestFor characteristic: CBMCharacteristicMock, data: Data
        ) -> Result<Void, any Error> {
            .success(())
        }
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test func coreBluetoothMockSpecsRunAfterChangingTheImport() async throws {
        // Written for CoreBluetoothMock; only `import CoreBluetoothMock` became `import BLECBM`.
        let button = CBMCharacteristicMock(
            type: CBMUUID(string: "00001524-1212-EFDE-1523-785FEABCD123"), properties: [.notify, .read],
            descriptors: CBMClientCharacteristicConfigurationDescriptorMock())
        let led = CBMCharacteristicMock(
            type: CBMUUID(string: "00001525-1212-EFDE-1523-785FEABCD123"), properties: [.write, .read])
        let blinky =
            CBMPeripheralSpec
            .simulatePeripheral(proximity: .near)
            .advertising(
                advertisementData: [
                    CBMAdvertisementDataLocalNameKey: "nRF Blinky",
                    CBMAdvertisementDataServiceUUIDsKey: [CBMUUID(string: "00001523-1212-EFDE-1523-785FEABCD123")],
                ],
                withInterval: 0.250
            )
            .connectable(
                name: "nRF Blinky",
                services: [
                    CBMServiceMock(
                        type: CBMUUID(string: "00001523-1212-EFDE-1523-785FEABCD123"), primary: true,
                        characteristics: button, led)
                ],
                delegate: PressedButtonBlinky()
            )
            .build()

        // The simulation belongs to the test's bridge: tests with the same specs run in parallel.
        let bridge = MockBLEBridge(configuration: .realistic(seed: 1))
        try await bridge.run { @MainActor in
            CBMCentralManagerMock.simulatePeripherals([blinky])
            let app = BlinkyManager()
            try await bridge.waitForApp { !app.discovered.isEmpty }
            let device = app.discovered[0]
            device.connect()
            try await bridge.waitForApp { device.isReady && device.isButtonPressed == true }
            await bridge.waitUntil { $0.log.contains { $0.kind == .subscribe } }  // the app subscribed
            blinky.simulateValueUpdate(Data([0x00]), for: button)
            try await bridge.waitForApp { device.isButtonPressed == false }
            blinky.simulateProximityChange(.outOfRange)
            try await bridge.waitForApp { device.disconnections == 1 }
        }
    }
}
