import BLECore
import Foundation
import Testing

@testable import BLEMockKit

@Suite("Event stream lifetime", .timeLimit(.minutes(10)))
struct EventStreamLifetimeTests {
    @Test("A stream nobody holds any more stops buffering and is not reported as unread")
    func droppedStreamUnsubscribes() async throws {
        let bridge = MockBLEBridge()
        let central = MockCentralManager(bridge: bridge)
        do {
            let events = central.events()
            #expect(central.broadcaster.streamCount == 1)
            withExtendedLifetime(events) {}
        }
        #expect(central.broadcaster.streamCount == 0)
        try await central.scanForPeripherals(withServices: nil)
        #expect(await bridge.finish() == .clean)
    }

    @Test("A dropped iterator of a held stream keeps the stream subscribed; dropping both ends it")
    func iteratorAndStreamBothCount() async throws {
        let bridge = MockBLEBridge()
        let (peripheral, _) = try await TestPeripherals.advertisingHeartRate(on: bridge)
        let central = MockCentralManager(bridge: bridge)
        var kept: AsyncStream<CentralEvent>? = central.events()
        do {
            var iterator = kept!.makeAsyncIterator()
            try await central.scanForPeripherals(withServices: nil)
            #expect(await iterator.next() == .stateChanged(.poweredOn))
            guard case .discovered(let found) = await iterator.next() else {
                Issue.record("expected a discovery")
                return
            }
            #expect(found.identifier == peripheral.identifier)
        }
        #expect(central.broadcaster.streamCount == 1)
        kept = nil
        #expect(central.broadcaster.streamCount == 0)
    }

    @Test("Events wait in a stream's buffer in order, however many arrive before it is read")
    func manyBufferedEventsArriveInOrder() async throws {
        let bridge = MockBLEBridge()
        let (peripheral, service) = try await TestPeripherals.advertisingHeartRate(on: bridge)
        let (central, characteristics) = try await TestPeripherals.connectedCentral(to: peripheral, on: bridge)
        let measurement = try #require(characteristics.first { $0.uuid == TestPeripherals.measurement })
        try await central.setNotifyValue(true, for: measurement)
        let events = central.events()
        let local = service.characteristics.first { $0.uuid == measurement.uuid }!
        for value in 0..<1_000 {
            _ = try await peripheral.updateValue(Data([UInt8(value & 0xFF), UInt8(value >> 8)]), for: local)
        }
        var received: [Int] = []
        for await event in events {
            if case .valueUpdated(_, let data) = event { received.append(Int(data[0]) | Int(data[1]) << 8) }
            if received.count == 1_000 { break }
        }
        #expect(received == Array(0..<1_000))
    }
}
