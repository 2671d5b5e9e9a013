import BLECore
import BLEMockKit
import Foundation
import Testing

/// A value whose length is a multiple of ATT_MTU − 1 fills every Read response, so the central
/// asks once more with a Read Blob at offset == length: that is answered with no bytes, not
/// Invalid Offset (Core Vol 3, Part F, 3.4.4.5: only an offset past the end is invalid).
@Suite("Reads of values of every length", .timeLimit(.minutes(10)))
struct ReadLengthTests {
    static let service: BluetoothUUID = "FD10"
    static let value: BluetoothUUID = "FD11"

    @Test(
        "A static or dynamic value of 0, MTU − 2, MTU − 1, MTU, 2 × (MTU − 1) or 512 bytes reads whole",
        arguments: [0, 21, 22, 23, 44, 512], [false, true])
    func aValueOfAnyLengthReadsWhole(length: Int, dynamic: Bool) async throws {
        let bridge = MockBLEBridge(configuration: .realistic(seed: 5))
        let peripheral = MockPeripheralManager(bridge: bridge)
        let bytes = Data((0..<length).map { UInt8(truncatingIfNeeded: $0 * 7) })
        let characteristic = GATTCharacteristic(
            uuid: Self.value, properties: .read, permissions: .readable, value: dynamic ? nil : bytes)
        let local = try await peripheral.add(GATTService(uuid: Self.service, characteristics: [characteristic]))
        if dynamic { try await peripheral.setValue(bytes, for: local.characteristics[0]) }
        try await peripheral.startAdvertising(AdvertisementData(localName: "Lengths"))
        let central = MockCentralManager(configuration: .init(mtu: .fixed(23)), bridge: bridge)
        let read = try await bridge.run {
            try await central.scanForPeripherals(withServices: nil)
            try await bridge.clock.sleep(for: .milliseconds(300))
            try await central.connect(peripheral.identifier)
            let services = try await central.discoverServices(nil, for: peripheral.identifier)
            let remote = try await central.discoverCharacteristics(nil, for: services[0])[0]
            return try await central.readValue(for: remote)
        }
        #expect(read == bytes)
        // One Read, then a Read Blob per full part (ATT_MTU − 1 = 22 bytes), up to 512 bytes.
        let reads = await bridge.log.filter { $0.kind == .read }
        #expect(reads.count == 1)
        #expect(reads.first?.error == nil)
    }
}
