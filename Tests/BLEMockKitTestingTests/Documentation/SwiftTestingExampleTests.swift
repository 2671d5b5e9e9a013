import BLECore
import BLEMockKit
import BLEMockKitTesting
import Foundation
import Testing

// The "Using with Swift Testing" examples of README.md and the DocC article, verbatim
// (checked by `everyDocumentedSwiftBlockIsCompiled`).

/// The examples run with the suite-wide time limit, like every other suite.
@Suite(.timeLimit(.minutes(10)))
struct SwiftTestingExampleTests {
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(.mockBridge(seedCount: 20))
    func theBatteryLevelArrivesOnEverySeed() async throws {
        // Managers made without a bridge join the test's bridge; time drives itself.
        let tag = MockPeripheralManager()
        let service = try await tag.add(
            GATTService(
                uuid: "180F",
                characteristics: [
                    GATTCharacteristic(uuid: "2A19", properties: [.read, .notify], permissions: .readable)
                ]))
        try await tag.startAdvertising(AdvertisementData(localName: "Tag", serviceUUIDs: ["180F"]))

        let central = MockCentralManager()
        let events = central.events()
        try await central.scanForPeripherals(withServices: ["180F"])
        // Realistic mode: the tag is heard at its next advertisement, not at once.
        _ = await events.first {
            if case .discovered = $0 { true } else { false }
        }
        try await central.connect(tag.identifier)
        await central.stopScan()
        try await central.discoverAll(for: tag.identifier)
        let level = try await central.characteristic("2A19", of: tag.identifier)
        try await central.setNotifyValue(true, for: level)
        _ = try await tag.updateValue(Data([76]), for: service.characteristic("2A19")!)
        let first = await events.first {
            if case .valueUpdated = $0 { true } else { false }
        }
        #expect(first == .valueUpdated(level, Data([76])))
        // At the end the trait checks finish(): an operation still waiting or an injection that
        // never fired fails the test, with the seed.
    }
}
