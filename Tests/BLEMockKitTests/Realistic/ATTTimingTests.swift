import BLECore
import BLEMockKit
import Foundation
import Testing

@Suite("Realistic: ATT timing", .timeLimit(.minutes(10)))
struct ATTTimingTests {
    /// A central at ATT_MTU 23 connected to the test peripheral on a jitter-free realistic bridge.
    static func link() async throws
        -> (MockBLEBridge, MockPeripheralManager, LocalService, MockCentralManager, [RemoteCharacteristic])
    {
        let bridge = Realistic.steadyBridge()
        let (peripheral, service) = try await Realistic.advertisingPeripheral(on: bridge)
        let (central, characteristics) = try await Realistic.connectedCentral(
            to: peripheral, on: bridge, configuration: .init(mtu: .fixed(23)))
        return (bridge, peripheral, service, central, characteristics)
    }

    @Test("Reading a 300-byte static value at ATT_MTU 23 takes 14 round trips: exactly 420 ms")
    func longStaticRead() async throws {
        let (bridge, _, _, central, characteristics) = try await Self.link()
        let long = try #require(characteristics.first { $0.uuid == Realistic.longValue })
        var value = Data()
        let elapsed = try await Realistic.elapsed(on: bridge) { value = try await central.readValue(for: long) }
        #expect(value == testBytes(300))
        #expect(elapsed == .milliseconds(14 * 30))
        #expect(await bridge.log.last { $0.kind == .read }?.time == bridge.now)
    }

    @Test(
        "Reading a value of N bytes at ATT_MTU 23 takes N / 22 + 1 connection intervals",
        arguments: [(0, 1), (10, 1), (21, 1), (22, 2), (43, 2), (44, 3), (512, 24)])
    func readRoundTrips(length: Int, roundTrips: Int) async throws {
        let (bridge, peripheral, service, central, characteristics) = try await Self.link()
        let value = try #require(characteristics.first { $0.uuid == RigUUID.value })
        try await peripheral.setValue(testBytes(length), for: try #require(service.characteristic(RigUUID.value)))
        var read = Data()
        let elapsed = try await Realistic.elapsed(on: bridge) { read = try await central.readValue(for: value) }
        #expect(read == testBytes(length))
        #expect(elapsed == .milliseconds(30 * roundTrips))
    }

    @Test(
        "Writing with response at ATT_MTU 23: one request up to 20 bytes, else prepare writes of 18 and an execute",
        arguments: [(1, 1), (20, 1), (21, 3), (36, 3), (37, 4), (100, 7), (512, 30)])
    func writeRoundTrips(length: Int, roundTrips: Int) async throws {
        let (bridge, _, _, central, characteristics) = try await Self.link()
        let value = try #require(characteristics.first { $0.uuid == RigUUID.value })
        let elapsed = try await Realistic.elapsed(on: bridge) {
            try await central.writeValue(testBytes(length), for: value, type: .withResponse)
        }
        #expect(elapsed == .milliseconds(30 * roundTrips))
        #expect(try await central.readValue(for: value) == testBytes(length))
    }

    @Test("A write without response returns without advancing virtual time")
    func writeWithoutResponseIsImmediate() async throws {
        let (bridge, _, _, central, characteristics) = try await Self.link()
        let value = try #require(characteristics.first { $0.uuid == RigUUID.value })
        let elapsed = try await Realistic.elapsed(on: bridge) {
            try await central.writeValue(testBytes(20), for: value, type: .withoutResponse)
        }
        #expect(elapsed == .zero)
        // It reaches the peripheral at the next connection event.
        let start = await bridge.now
        await bridge.advance(by: .milliseconds(30))
        #expect(try await central.readValue(for: value) == testBytes(20))
        #expect(await bridge.now == start.advanced(by: .milliseconds(60)))
    }

    @Test("Subscribing and reading RSSI take one connection interval each")
    func oneIntervalOperations() async throws {
        let (bridge, peripheral, _, central, characteristics) = try await Self.link()
        let value = try #require(characteristics.first { $0.uuid == RigUUID.value })
        #expect(
            try await Realistic.elapsed(on: bridge) { try await central.setNotifyValue(true, for: value) }
                == .milliseconds(30))
        #expect(
            try await Realistic.elapsed(on: bridge) { _ = try await central.readRSSI(for: peripheral.identifier) }
                == .milliseconds(30))
    }

    @Test("With the default jitter, each connection interval is 30 ± 2 ms and the same seed gives the same times")
    func jitteredTimesRepeat() async throws {
        func readTimes(seed: UInt64) async throws -> [Duration] {
            let bridge = MockBLEBridge(configuration: .realistic(seed: seed))
            let (peripheral, _) = try await Realistic.advertisingPeripheral(on: bridge)
            let (central, characteristics) = try await Realistic.connectedCentral(to: peripheral, on: bridge)
            let short = try #require(characteristics.first { $0.uuid == RigUUID.readOnly })
            var times: [Duration] = []
            for _ in 0..<10 {
                times.append(try await Realistic.elapsed(on: bridge) { _ = try await central.readValue(for: short) })
            }
            return times
        }
        let first = try await readTimes(seed: 31)
        #expect(first.allSatisfy { $0 >= .milliseconds(28) && $0 <= .milliseconds(32) }, "seed 31: \(first)")
        #expect(Set(first).count > 1, "seed 31: \(first)")
        #expect(try await readTimes(seed: 31) == first)
    }
}
