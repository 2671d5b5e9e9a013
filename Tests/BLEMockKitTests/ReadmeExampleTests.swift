import BLECore
import BLEMockKit
import Foundation
import Testing

// The README's 30-second example, verbatim (keep the two in step).
@Test func readsTheBodySensorLocation() async throws {
    let bridge = MockBLEBridge()

    // A simulated heart-rate sensor.
    let sensor = MockPeripheralManager(bridge: bridge)
    _ = try await sensor.add(
        GATTService(uuid: "180D", characteristics: [
            GATTCharacteristic(uuid: "2A38", properties: .read, permissions: .readable, value: Data([0x01]))
        ]))
    try await sensor.startAdvertising(AdvertisementData(localName: "HRM", serviceUUIDs: ["180D"]))

    // The code under test sees only the CentralManaging protocol.
    let central: any CentralManaging = MockCentralManager(bridge: bridge)
    try await central.scanForPeripherals(withServices: ["180D"])
    try await central.connect(sensor.identifier)
    try await central.discoverAll(for: sensor.identifier)
    let location = try await central.characteristic("2A38", of: sensor.identifier)
    #expect(try await central.readValue(for: location) == Data([0x01]))

    // Verify interactions from the bridge's log, and that nothing was left over.
    #expect(await bridge.log.contains { $0.kind == .read && $0.attribute == "2A38" })
    #expect(await bridge.finish() == .clean)
}

@Test("The README's example matches ReadmeExampleTests.swift line for line")
func readmeExampleIsTheTestedOne() throws {
    let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
    let readme = try String(contentsOf: root.appendingPathComponent("README.md"), encoding: .utf8)
    let source = try String(contentsOf: URL(fileURLWithPath: #filePath), encoding: .utf8)
    let start = try #require(readme.range(of: "@Test func readsTheBodySensorLocation()"))
    let end = try #require(readme.range(of: "```", range: start.upperBound..<readme.endIndex))
    let documented = readme[start.lowerBound..<end.lowerBound].trimmingCharacters(in: .whitespacesAndNewlines)
    #expect(source.contains(documented))
}
