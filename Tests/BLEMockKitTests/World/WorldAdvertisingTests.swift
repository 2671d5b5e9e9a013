import BLECore
import Foundation
import Testing

@testable import BLEMockKit

@Suite("World: advertising and scanning", .timeLimit(.minutes(10)))
struct WorldAdvertisingTests {
    static let advertisement = AdvertisementData(
        localName: "Sensor", serviceUUIDs: ["180D"], manufacturerData: Data([0x4C, 0x00]),
        serviceData: ["180D": Data([1])])

    /// The times since `start` at which `central` heard advertisements.
    static func discoveryTimes(_ harness: WorldHarness, _ central: UUID, since start: VirtualClock.Instant)
        -> [Duration]
    {
        harness.timeline.compactMap { happening in
            if case .central(central, .discovered) = happening.effect { return start.duration(to: happening.time) }
            return nil
        }
    }

    @Test("With instant timing a scan hears every advertiser at once, in the order they joined")
    func instantScan() throws {
        var harness = WorldHarness()
        let first = harness.addPeripheral(.init(rssi: -45))
        let second = harness.addPeripheral(.init(name: "Second"))
        try harness.startAdvertising(first, Self.advertisement)
        try harness.startAdvertising(second, AdvertisementData(localName: "Two"))
        let central = harness.addCentral()
        try harness.startScan(central)
        #expect(
            harness.centralEvents(central) == [
                .discovered(
                    DiscoveredPeripheral(
                        peripheral: RemotePeripheral(identifier: first, name: "Sensor"),
                        advertisementData: Self.advertisement, rssi: -45)),
                .discovered(
                    DiscoveredPeripheral(
                        peripheral: RemotePeripheral(identifier: second, name: "Second"),
                        advertisementData: AdvertisementData(localName: "Two"), rssi: -50)),
            ])
        #expect(harness.world.now == .zero)
        #expect(harness.world.nextDeadline == nil)
    }

    @Test("With realistic timing each advertisement is heard an interval plus a 0–10 ms advDelay after the last")
    func realisticIntervals() throws {
        var harness = WorldHarness(timing: WorldHarness.steadyTiming)
        let peripheral = harness.addPeripheral(.init(advertisingInterval: ms(100), seed: 7))
        try harness.startAdvertising(peripheral, Self.advertisement)
        let central = harness.addCentral()
        try harness.startScan(central, options: ScanOptions(allowDuplicates: true))
        #expect(harness.centralEvents(central).isEmpty)
        for _ in 0..<5 { harness.runNextEvent() }
        // The advDelays are the first draws of the peripheral's advertising stream.
        var stream = SeededGenerator(seed: 7).derived("advertising")
        var expected: [Duration] = []
        var at = Duration.zero
        for _ in 0..<5 {
            let delay = stream.duration(in: .zero...ms(10))
            #expect(delay >= .zero && delay <= ms(10))
            at += ms(100) + delay
            expected.append(at)
        }
        #expect(Self.discoveryTimes(harness, central, since: .zero) == expected)
    }

    @Test(
        "The next advertising event is an interval after the last when it went out now, else the train's next slot",
        arguments: [
            // (since the last event, interval, the next event from now)
            (ms(0), ms(100), ms(100)), (ms(30), ms(100), ms(70)), (ms(100), ms(100), ms(100)),
            (ms(250), ms(100), ms(50)), (ms(700), ms(1_000), ms(300)), (ms(10_239), ms(10_240), ms(1)),
            (Duration.nanoseconds(1), ms(20), ms(20) - .nanoseconds(1)),
        ])
    func nextAdvertisingEvent(elapsed: Duration, interval: Duration, next: Duration) {
        let anchor = VirtualClock.Instant.zero.advanced(by: .seconds(3))
        let now = anchor.advanced(by: elapsed)
        #expect(
            World.nextAdvertisingEvent(after: now, interval: interval, since: anchor) == now.advanced(by: next))
    }

    @Test("A realistic scan that starts mid-interval hears the advertiser at its next slot, not a whole interval on")
    func scanMidInterval() throws {
        var harness = WorldHarness(timing: WorldHarness.steadyTiming)
        let peripheral = harness.addPeripheral(.init(advertisingInterval: .seconds(1), seed: 7))
        // Its first advertisement goes out at 0 s, heard by nobody.
        try harness.startAdvertising(peripheral, Self.advertisement)
        let central = harness.addCentral()
        harness.advance(to: .zero.advanced(by: ms(700)))
        try harness.startScan(central, options: ScanOptions(allowDuplicates: true))
        harness.advance(to: .zero.advanced(by: ms(3_100)))
        var stream = SeededGenerator(seed: 7).derived("advertising")
        let first = ms(1_000) + stream.duration(in: .zero...ms(10))
        let second = first + ms(1_000) + stream.duration(in: .zero...ms(10))
        let third = second + ms(1_000) + stream.duration(in: .zero...ms(10))
        #expect(Self.discoveryTimes(harness, central, since: .zero) == [first, second, third])

        // Scanning stops, the advertisement already scheduled goes out unheard, and scanning
        // starts again half an interval after it: the next is heard half an interval on, the
        // train's phase kept while nobody listened (not a whole interval after the restart).
        harness.stopScan(central)
        let unheard = third + ms(1_000) + stream.duration(in: .zero...ms(10))
        let restart = VirtualClock.Instant.zero.advanced(by: unheard + ms(500))
        harness.advance(to: restart)
        try harness.startScan(central, options: ScanOptions(allowDuplicates: true))
        harness.advance(to: restart.advanced(by: ms(600)))
        let fourth = unheard + ms(1_000) + stream.duration(in: .zero...ms(10))
        #expect(Self.discoveryTimes(harness, central, since: .zero) == [first, second, third, fourth])
        #expect(VirtualClock.Instant.zero.advanced(by: fourth) <= restart.advanced(by: ms(510)))
    }

    @Test("Without duplicates a realistic scan reports each advertiser once")
    func noDuplicates() throws {
        var harness = WorldHarness(timing: WorldHarness.steadyTiming)
        let peripheral = harness.addPeripheral()
        try harness.startAdvertising(peripheral, Self.advertisement)
        let central = harness.addCentral()
        try harness.startScan(central)
        harness.advance(to: .zero.advanced(by: .seconds(1)))
        #expect(Self.discoveryTimes(harness, central, since: .zero).count == 1)
    }

    @Test("An advertising delay holds the first advertisement back exactly that long")
    func advertisingDelay() throws {
        var harness = WorldHarness()
        let central = harness.addCentral()
        try harness.startScan(central)
        let peripheral = harness.addPeripheral(.init(advertisingDelay: ms(50)))
        try harness.startAdvertising(peripheral, Self.advertisement)
        #expect(harness.centralEvents(central).isEmpty)
        let idle = harness.runUntilIdle()
        #expect(idle)
        #expect(Self.discoveryTimes(harness, central, since: .zero) == [ms(50)])
    }

    @Test("A one-time advertiser is heard once, then stops advertising", arguments: [false, true])
    func advertisesOnce(realistic: Bool) throws {
        var harness = WorldHarness(timing: realistic ? WorldHarness.steadyTiming : .instant)
        let central = harness.addCentral()
        try harness.startScan(central, options: ScanOptions(allowDuplicates: true))
        let peripheral = harness.addPeripheral(.init(advertisesOnce: true, seed: 3))
        try harness.startAdvertising(peripheral, Self.advertisement)
        harness.advance(to: .zero.advanced(by: .seconds(1)))
        // Without an advertising delay the one advertisement goes out at once, in either timing.
        #expect(Self.discoveryTimes(harness, central, since: .zero) == [.zero])
        #expect(!harness.world.isAdvertising(peripheral: peripheral))
        #expect(harness.log(.advertisingStopped).map(\.time) == [.zero])
    }

    @Test("Advertising stopped and started again has its own delay: the old schedule is not spent on it")
    func restartedAdvertisingKeepsItsDelay() throws {
        var harness = WorldHarness(timing: WorldHarness.steadyTiming)
        let central = harness.addCentral()
        try harness.startScan(central, options: ScanOptions(allowDuplicates: true))
        let peripheral = harness.addPeripheral(.init(advertisingDelay: ms(200), advertisesOnce: true))
        try harness.startAdvertising(peripheral, Self.advertisement)
        harness.advance(to: .zero.advanced(by: ms(100)))
        harness.mutate { $0.stopAdvertising(peripheral: peripheral) }
        try harness.startAdvertising(peripheral, Self.advertisement)
        harness.advance(to: .zero.advanced(by: .seconds(1)))
        // Its one advertisement goes out 200 ms after it started again, not at 200 ms.
        #expect(Self.discoveryTimes(harness, central, since: .zero) == [ms(300)])
    }

    @Test("Advertising timing set before advertising starts again replaces the configuration's, to any interval")
    func advertisingTimingReplacesTheConfigurations() throws {
        var harness = WorldHarness()
        let central = harness.addCentral()
        try harness.startScan(central, options: ScanOptions(allowDuplicates: true))
        let peripheral = harness.addPeripheral(.init(advertisingInterval: .seconds(1)))
        harness.mutate { $0.setAdvertisingTiming(of: peripheral, interval: ms(5), delay: ms(50), once: false) }
        try harness.startAdvertising(peripheral, Self.advertisement)
        harness.advance(to: .zero.advanced(by: ms(62)))
        #expect(Self.discoveryTimes(harness, central, since: .zero) == [ms(50), ms(55), ms(60)])
        harness.mutate { $0.stopAdvertising(peripheral: peripheral) }
        harness.mutate { $0.setAdvertisingTiming(of: peripheral, interval: ms(5), delay: ms(10), once: true) }
        let start = harness.world.now
        try harness.startAdvertising(peripheral, Self.advertisement)
        harness.advance(to: start.advanced(by: .seconds(1)))
        #expect(Self.discoveryTimes(harness, central, since: start).filter { $0 >= .zero } == [ms(10)])
        #expect(!harness.world.isAdvertising(peripheral: peripheral))
    }

    @Test(
        "Without an advertising delay the first advertisement is heard as advertising starts, in realistic timing too")
    func noAdvertisingDelayMeansNone() throws {
        var harness = WorldHarness(timing: WorldHarness.steadyTiming)
        let central = harness.addCentral()
        try harness.startScan(central, options: ScanOptions(allowDuplicates: true))
        let peripheral = harness.addPeripheral(.init(advertisingInterval: .seconds(2), seed: 5))
        try harness.startAdvertising(peripheral, Self.advertisement)
        harness.advance(to: .zero.advanced(by: .seconds(3)))
        // The next one is an interval plus the first advDelay drawn later.
        var stream = SeededGenerator(seed: 5).derived("advertising")
        let next = Duration.seconds(2) + stream.duration(in: .zero...ms(10))
        #expect(Self.discoveryTimes(harness, central, since: .zero) == [.zero, next])
        // A delay of 1 ns holds it back 1 ns, no more.
        let late = harness.addPeripheral(
            .init(name: "Late", advertisingInterval: .seconds(2), advertisingDelay: .nanoseconds(1)))
        let start = harness.world.now
        try harness.startAdvertising(late, AdvertisementData(localName: "Late"))
        harness.advance(to: start.advanced(by: .milliseconds(1)))
        let heard = harness.log(.discovered).filter { $0.peripheral == late }.map { start.duration(to: $0.time) }
        #expect(heard == [.nanoseconds(1)])
    }

    @Test("A varied RSSI stays within the -127…20 dBm a controller reports", arguments: [20, -127])
    func variedRSSIStaysReportable(rssi: Int) throws {
        var harness = WorldHarness()
        let peripheral = harness.addPeripheral(.init(rssi: rssi, rssiVariation: 10, seed: 11))
        let readings = (0..<200).map { _ in harness.mutate { $0.currentRSSI(of: peripheral) } }
        #expect(readings.allSatisfy { (-127...20).contains($0) }, "\(readings)")
        // Half the draws go past the bound and give the bound; the others vary inwards.
        #expect(readings.contains(rssi))
        #expect(Set(readings).count > 5)
    }

    @Test("In the background a peripheral's advertisement loses its name and data; its services overflow")
    func backgroundPeripheral() throws {
        var harness = WorldHarness()
        let peripheral = harness.addPeripheral()
        harness.mutate { $0.setBackground(.peripheral(peripheral), true) }
        try harness.startAdvertising(peripheral, Self.advertisement)
        let central = harness.addCentral()
        try harness.startScan(central, services: ["180D"])
        let cut = AdvertisementData(overflowServiceUUIDs: ["180D"])
        #expect(
            harness.centralEvents(central) == [
                .discovered(
                    DiscoveredPeripheral(
                        peripheral: RemotePeripheral(identifier: peripheral, name: nil), advertisementData: cut,
                        rssi: -50))
            ])
    }

    @Test("A backgrounded central hears each peripheral once, whatever allowDuplicates says")
    func backgroundCentral() throws {
        var harness = WorldHarness(timing: WorldHarness.steadyTiming)
        let peripheral = harness.addPeripheral(.init(seed: 5))
        try harness.startAdvertising(peripheral, Self.advertisement)
        let central = harness.addCentral()
        harness.mutate { $0.setBackground(.central(central), true) }
        // In the background only a scan that names services discovers anything.
        try harness.startScan(central, services: ["180D"], options: ScanOptions(allowDuplicates: true))
        harness.advance(to: .zero.advanced(by: .seconds(1)))
        harness.mutate { $0.setBackground(.central(central), false) }
        harness.advance(to: .zero.advanced(by: .seconds(2)))
        // Advertisements go out every 100 ms plus advDelay; in the background only the first
        // is reported, in the foreground every one.
        var stream = SeededGenerator(seed: 5).derived("advertising")
        var sent: [Duration] = []
        while sent.last ?? .zero <= .seconds(2) {
            sent.append((sent.last ?? .zero) + ms(100) + stream.duration(in: .zero...ms(10)))
        }
        let expected = [sent[0]] + sent.filter { $0 > .seconds(1) && $0 <= .seconds(2) }
        #expect(Self.discoveryTimes(harness, central, since: .zero) == expected)
    }

    @Test(
        "An advertisement not sent also when connected goes unheard while a central is connected, and is heard once the link ends"
    )
    func advertisingStopsWhileConnected() throws {
        var harness = WorldHarness()
        let device = harness.addPeripheral(.init(name: "Device"))
        let phone = harness.addPeripheral(.init(name: "Phone"))
        harness.mutate { $0.setAdvertisesWhenConnected(false, peripheral: device) }
        harness.mutate {
            $0.setAdvertisingSets(
                [
                    AdvertisingSet(
                        advertisement: AdvertisementData(localName: "Quiet"), interval: ms(100), delay: .zero,
                        once: false, alsoWhenConnected: false),
                    AdvertisingSet(
                        advertisement: AdvertisementData(localName: "Beacon"), interval: ms(100), delay: .zero,
                        once: false, alsoWhenConnected: true),
                ], of: device)
        }
        try harness.startAdvertising(device, AdvertisementData(localName: "Device"))
        try harness.startAdvertising(phone, AdvertisementData(localName: "Phone"))
        for peripheral in [device, phone] { harness.mutate { $0.cache(peripheral: peripheral) } }
        let first = harness.addCentral()
        let second = harness.addCentral()
        harness.perform(.connect(central: first, peripheral: device, timeout: nil))
        harness.perform(.connect(central: first, peripheral: phone, timeout: nil))
        #expect(harness.world.holdsConnection(device))

        // While connected, the device's main advertisement and its quiet set are not heard; its
        // set sent also when connected is, and so is the peripheral manager, which advertises
        // while connected as iOS does.
        try harness.startScan(second, options: ScanOptions(allowDuplicates: true))
        #expect(Self.names(heardBy: second, in: harness) == ["Beacon", "Phone"])

        // The link ends: the device advertises again, heard at once with instant timing.
        try harness.mutate { try $0.cancelConnection(central: first, peripheral: device) }
        #expect(Self.names(heardBy: second, in: harness) == ["Beacon", "Phone", "Device", "Quiet"])
    }

    @Test(
        "Another app's connection silences an advertisement not sent also when connected until it ends, in realistic timing"
    )
    func advertisingStopsWhileConnectedToTheSystem() throws {
        var harness = WorldHarness(timing: WorldHarness.steadyTiming)
        let device = harness.addPeripheral(.init(name: "Device", advertisingInterval: ms(100), seed: 4))
        harness.mutate { $0.setAdvertisesWhenConnected(false, peripheral: device) }
        harness.mutate { $0.setConnectedToSystem(peripheral: device, true) }
        try harness.startAdvertising(device, Self.advertisement)
        let central = harness.addCentral()
        try harness.startScan(central, options: ScanOptions(allowDuplicates: true))
        harness.advance(to: .zero.advanced(by: .seconds(1)))
        #expect(Self.discoveryTimes(harness, central, since: .zero).isEmpty)
        // The other app lets go: the next advertising event, within an interval plus advDelay, is heard.
        harness.mutate { $0.setConnectedToSystem(peripheral: device, false) }
        harness.advance(to: .zero.advanced(by: .seconds(2)))
        let heard = Self.discoveryTimes(harness, central, since: .zero)
        #expect(heard.count >= 9)
        #expect(heard.first.map { $0 > .seconds(1) && $0 <= .seconds(1) + ms(110) } == true, "\(heard)")
    }

    /// The local names `central` heard, in order.
    static func names(heardBy central: UUID, in harness: WorldHarness) -> [String] {
        harness.centralEvents(central).compactMap { event in
            if case .discovered(let discovery) = event { return discovery.advertisementData.localName }
            return nil
        }
    }
}
