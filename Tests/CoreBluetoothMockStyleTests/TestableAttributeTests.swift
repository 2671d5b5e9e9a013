import BLEMockKit
import Foundation
import Testing

@testable import BLECBM

// CoreBluetoothMock's attributes (CBMAttributes.swift) declare `value` and `isNotifying`
// `internal(set)`, so a test that imports it `@testable` sets them, as AsyncCoreBluetooth's
// tests do, to hand a value to the app's `didUpdateValueFor` without the peripheral sending one.
// BLECBM's had no setter: such a test did not compile.

@Suite("Attributes a @testable import sets", .timeLimit(.minutes(10)), .finishesOwnBridges)
struct TestableAttributeTests {
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test func aTestableImportSetsACharacteristicsValueAndNotifyingAndADescriptorsValue() async throws {
        let bridge = ownBridge(seed: 90)
        let watch = makeWatch(delegate: TransferSpecDelegate())
        try await bridge.run { @MainActor in
            CBMCentralManagerMock.simulatePeripherals([watch])
            let app = ParityApp()
            let (_, peripheral, characteristic) = try await CoreBluetoothMockParityTests.connect(
                watch, app: app, on: bridge)
            #expect(characteristic.value == nil)
            characteristic.value = Data("set by the test".utf8)
            #expect(characteristic.value == Data("set by the test".utf8))
            app.peripheral(peripheral, didUpdateValueFor: characteristic, error: nil)
            #expect(app.values == [Data("set by the test".utf8)])

            #expect(!characteristic.isNotifying)
            characteristic.isNotifying = true
            #expect(characteristic.isNotifying)

            peripheral.discoverDescriptors(for: characteristic)
            try await bridge.waitForApp { app.lines.contains("descriptors nil") }
            let descriptor = try #require(characteristic.descriptors?.first)
            descriptor.value = "set by the test"
            #expect(descriptor.value as? String == "set by the test")
        }
    }
}
