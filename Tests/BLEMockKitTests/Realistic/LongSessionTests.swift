import BLECore
import BLEMockKit
import Foundation
import Testing

@Suite("Long realistic sessions", .timeLimit(.minutes(10)))
struct LongSessionTests {
    @Test("Two minutes of realistic link time: 10 Hz notifications and periodic writes, all delivered in order")
    func twoMinutesOfLinkTime() async throws {
        let bridge = MockBLEBridge(configuration: .realistic(seed: 21))
        let peripheral = MockPeripheralManager(configuration: .realistic(seed: 21), bridge: bridge)
        #expect(await peripheral.waitForPoweredOn() == .poweredOn)
        let service = try await peripheral.add(TestPeripherals.heartRate)
        try await peripheral.startAdvertising(AdvertisementData(localName: "HRM", serviceUUIDs: ["180D"]))
        let central = MockCentralManager(configuration: .realistic(seed: 21), bridge: bridge)
        #expect(await central.waitForPoweredOn() == .poweredOn)
        try await central.scanForPeripherals(withServices: ["180D"])
        await bridge.advance(by: .milliseconds(300))
        try await central.connect(peripheral.identifier)
        let characteristics = try await central.discoverAll(for: peripheral.identifier)
        try await central.setNotifyValue(true, for: characteristics[0])
        let start = await bridge.now

        var sent = 0
        for tick in 0..<1_200 {
            let value = Data([UInt8(tick & 0xFF), UInt8(tick >> 8)])
            if try await peripheral.updateValue(value, for: service.characteristics[0]) { sent += 1 }
            if tick % 100 == 0 {
                try await central.writeValue(Data([UInt8(tick / 100)]), for: characteristics[2], type: .withResponse)
            }
            await bridge.advance(to: start.advanced(by: .milliseconds(100 * (tick + 1))))
        }

        #expect(await bridge.now == start.advanced(by: .seconds(120)))
        #expect(sent == 1_200)
        let received = await bridge.log.filter { $0.kind == .notification && $0.central == central.identifier }
        #expect(received.count == 1_200)
        let ticks = received.compactMap(\.value).map { Int($0[0]) | Int($0[1]) << 8 }
        #expect(ticks == Array(0..<1_200))
        #expect(await bridge.log.filter { $0.kind == .write && $0.succeeded }.count == 12)
    }
}
