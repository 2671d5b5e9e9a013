import BLECore
import Foundation
import Testing

@testable import BLEMockKit

@Suite("Additional advertising sets", .timeLimit(.minutes(10)))
struct AdvertisingSetTests {
    /// Names of the advertisements a central heard, with when.
    static func heard(_ central: MockCentralManager, _ events: AsyncStream<CentralEvent>, bridge: MockBLEBridge)
        async -> [String]
    {
        _ = central
        var names: [String] = []
        var iterator = events.makeAsyncIterator()
        let count = await bridge.log.filter { $0.kind == .discovered }.count
        while names.count < count, let event = await iterator.next() {
            if case .discovered(let discovery) = event { names.append(discovery.advertisementData.localName ?? "?") }
        }
        return names
    }

    @Test("A second set advertises at its own interval after its own delay, while the peripheral advertises")
    func aSecondSetAdvertisesOnItsOwnSchedule() async throws {
        let bridge = MockBLEBridge(configuration: .realistic(seed: 80))
        let peripheral = MockPeripheralManager(
            configuration: .init(advertisingInterval: .milliseconds(100)), bridge: bridge)
        await peripheral.setAdditionalAdvertisingSets([
            (AdvertisementData(localName: "Set"), .milliseconds(300), .seconds(1), false, true)
        ])
        try await peripheral.startAdvertising(AdvertisementData(localName: "Main"))
        let central = MockCentralManager(configuration: .realistic(seed: 80), bridge: bridge)
        let events = central.events()
        _ = await central.waitForPoweredOn()
        try await central.scanForPeripherals(withServices: nil, options: ScanOptions(allowDuplicates: true))
        await bridge.advance(to: VirtualClock.Instant(offset: .seconds(2)))
        let discoveries = await bridge.log.filter { $0.kind == .discovered }
        let names = await Self.heard(central, events, bridge: bridge)
        #expect(names.count == discoveries.count)
        let sets = zip(names, discoveries).filter { $0.0 == "Set" }.map(\.1.time)
        // From 1 s to 2 s at 300 ms (plus up to 10 ms advDelay each): 3 or 4 of them.
        #expect((3...4).contains(sets.count))
        #expect(sets.allSatisfy { $0 >= VirtualClock.Instant(offset: .seconds(1)) })
        #expect(names.filter { $0 == "Main" }.count > 10)

        await peripheral.stopAdvertising()
        let before = await bridge.log.filter { $0.kind == .discovered }.count
        await bridge.advance(by: .seconds(2))
        #expect(await bridge.log.filter { $0.kind == .discovered }.count == before)
    }

    @Test("A set keeps its phase while nobody listens: a scan that starts mid-interval hears it within that interval")
    func aSetKeepsItsPhase() async throws {
        let bridge = MockBLEBridge(configuration: .realistic(seed: 82))
        // The main advertisement goes out at 0 s, then not before 10.24 s: in the 3 s watched
        // the set is all there is to hear.
        let peripheral = MockPeripheralManager(
            configuration: .init(advertisingInterval: .milliseconds(10_240)), bridge: bridge)
        // First at 0.5 s (its delay; scheduled although nobody listens), then every 2 s.
        await peripheral.setAdditionalAdvertisingSets([
            (AdvertisementData(localName: "Set"), .seconds(2), .milliseconds(500), false, true)
        ])
        try await peripheral.startAdvertising(AdvertisementData(localName: "Main"))
        let central = MockCentralManager(configuration: .realistic(seed: 82), bridge: bridge)
        _ = await central.waitForPoweredOn()
        await bridge.advance(to: VirtualClock.Instant(offset: .milliseconds(1_500)))
        try await central.scanForPeripherals(withServices: nil, options: ScanOptions(allowDuplicates: true))
        await bridge.advance(to: VirtualClock.Instant(offset: .seconds(3)))
        let heard = await bridge.log.filter { $0.kind == .discovered }.map(\.time)
        // Its slot after the one at 0.5 s is 2.5 s (plus up to 10 ms advDelay), not 3.5 s.
        #expect(heard.count == 1)
        #expect(heard.allSatisfy { $0 >= VirtualClock.Instant(offset: .milliseconds(2_500)) })
        #expect(heard.allSatisfy { $0 <= VirtualClock.Instant(offset: .milliseconds(2_510)) })
    }

    @Test("A one-time set advertises once; with instant timing a scan hears the sets already started")
    func oneTimeAndInstantSets() async throws {
        let bridge = MockBLEBridge(seed: 81)
        let peripheral = MockPeripheralManager(bridge: bridge)
        await peripheral.setAdditionalAdvertisingSets([
            (AdvertisementData(localName: "Once"), .milliseconds(100), .zero, true, true),
            (AdvertisementData(localName: "Later"), .milliseconds(100), .seconds(5), false, true),
        ])
        try await peripheral.startAdvertising(AdvertisementData(localName: "Main"))
        let central = MockCentralManager(bridge: bridge)
        let events = central.events()
        try await central.scanForPeripherals(withServices: nil, options: ScanOptions(allowDuplicates: true))
        let names = await Self.heard(central, events, bridge: bridge)
        #expect(names == ["Main", "Once"])
    }
}
