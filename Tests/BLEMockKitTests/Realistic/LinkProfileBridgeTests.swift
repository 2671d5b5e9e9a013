import BLECore
import BLEMockKit
import Foundation
import Testing

/// Link profiles on a bridge: the negotiated interval, ATT_MTU and packet budget, a PDU split
/// across connection events, determinism, and every bad profile field refused by name.
@Suite("Link profiles: on a bridge", .timeLimit(.minutes(10)))
struct LinkProfileBridgeTests {
    static let service: BluetoothUUID = "FD10"
    static let stream: BluetoothUUID = "FD11"

    /// A subscribed pair on a jitter-free bridge with `central` and `peripheral` profiles.
    static func subscribedPair(central: LinkProfile, peripheral: LinkProfile, seed: UInt64 = 4) async throws
        -> (MockBLEBridge, MockPeripheralManager, LocalCharacteristic, MockCentralManager)
    {
        var timing = LinkTiming.realistic(central: central, peripheral: peripheral)
        timing.jitter = .zero
        let bridge = MockBLEBridge(configuration: .init(seed: seed, timing: timing))
        let sensor = MockPeripheralManager(
            configuration: .init(name: "Watch", updateQueue: .realistic(capacity: 16)), bridge: bridge)
        let local = try await sensor.add(
            GATTService(
                uuid: service,
                characteristics: [GATTCharacteristic(uuid: stream, properties: .notify, permissions: [])]))
        try await sensor.startAdvertising(AdvertisementData(localName: "Watch", serviceUUIDs: [service]))
        let (phone, characteristics) = try await Realistic.connectedCentral(to: sensor, on: bridge)
        try await phone.setNotifyValue(true, for: try #require(characteristics.first { $0.uuid == stream }))
        return (bridge, sensor, local.characteristics[0], phone)
    }

    /// When the notifications in the log reached the central.
    static func arrivals(in log: [BridgeLogEntry]) -> [VirtualClock.Instant] {
        log.filter { $0.kind == .notification && $0.central != nil }.map(\.time)
    }

    @Test("A link's ATT_MTU is at most the smaller ATT_MTU the profiles offer")
    func theProfilesCapTheMTU() async throws {
        let (bridge, sensor, _, phone) = try await Self.subscribedPair(central: .iPhoneiOS10, peripheral: .watch)
        #expect(Realistic.linkMTUs(in: await bridge.log) == [185])
        #expect(await sensor.maximumUpdateValueLength(for: phone.identifier) == 182)
        let (old, _, _, _) = try await Self.subscribedPair(central: .iPhoneiOS18, peripheral: .bluetooth4Accessory)
        #expect(Realistic.linkMTUs(in: await old.log) == [23])
    }

    @Test(
        "A realistic manager's device MTU preference is its link profile's offer",
        arguments: [(LinkProfile?.some(.watch), 247), (.unconstrained, 517), (nil, 247)])
    func theDevicePreferenceIsTheProfilesOffer(peripheral: LinkProfile?, mtu: Int) async throws {
        var timing = LinkTiming.realistic(central: .iPhoneiOS18, peripheral: .watch)
        timing.peripheralProfile = peripheral
        let bridge = MockBLEBridge(configuration: .init(seed: 6, timing: timing))
        // Both prefer `.device` (as a CoreBluetooth-shaped app's manager does): an iPhone on
        // iOS 18 offers 517; the peripheral its profile's offer, or a typical 247 without one.
        // Before, a central's `.device` was 185 whatever its profile.
        let sensor = MockPeripheralManager(configuration: .realistic(seed: 6), bridge: bridge)
        #expect(await sensor.waitForPoweredOn() == .poweredOn)
        try await sensor.startAdvertising(AdvertisementData(localName: "Watch"))
        let phone = MockCentralManager(configuration: .realistic(seed: 6), bridge: bridge)
        #expect(await phone.waitForPoweredOn() == .poweredOn)
        try await Realistic.discover(sensor, by: phone, on: bridge)
        try await phone.connect(sensor.identifier)
        #expect(Realistic.linkMTUs(in: await bridge.log) == [mtu])
        #expect(
            try await phone.maximumWriteValueLength(for: sensor.identifier, type: .withoutResponse) == min(mtu - 3, 512)
        )
    }

    @Test("Connection events fall at the negotiated interval, each carrying the packets that fit")
    func eventsFallAtTheNegotiatedInterval() async throws {
        // iOS 18 and the watch: 15 ms, 3 packets per event; 244-byte values are one packet each.
        let (bridge, sensor, local, _) = try await Self.subscribedPair(central: .iPhoneiOS18, peripheral: .watch)
        let start = await bridge.now
        for index in 0..<7 {
            #expect(try await sensor.updateValue(Data(repeating: UInt8(index), count: 244), for: local))
        }
        await bridge.advance(by: .milliseconds(100))
        let arrivals = Self.arrivals(in: await bridge.log).map { start.duration(to: $0) }
        #expect(arrivals.count == 7)
        let first = try #require(arrivals.first)
        #expect(first > .zero && first <= .milliseconds(15))
        let fifteen = Duration.milliseconds(15)
        #expect(arrivals.map { $0 - first } == [.zero, .zero, .zero, fifteen, fifteen, fifteen, fifteen * 2])
    }

    @Test("A notification longer than an event's room sends what fits and arrives at a later event")
    func aLongNotificationSpansEvents() async throws {
        // iOS 9: 4 packets of 27 bytes per 30 ms event. A 155-byte value is 162 bytes with its
        // headers: 6 packets. The first arrives in the second event, the second in the third.
        let (bridge, sensor, local, phone) = try await Self.subscribedPair(central: .iPhoneiOS9, peripheral: .watch)
        #expect(await sensor.maximumUpdateValueLength(for: phone.identifier) == 155)
        #expect(try await sensor.updateValue(Data(repeating: 1, count: 155), for: local))
        #expect(try await sensor.updateValue(Data(repeating: 2, count: 155), for: local))
        let start = await bridge.now
        await bridge.advance(by: .milliseconds(200))
        let arrivals = Self.arrivals(in: await bridge.log)
        #expect(arrivals.count == 2)
        // iOS 9 refuses the watch's 15 ms (under its 20 ms) and keeps 30 ms: events at +30, +60,
        // +90 ms.
        #expect(arrivals.map { start.duration(to: $0) } == [.milliseconds(60), .milliseconds(90)])
    }

    @Test("Without profiles every PDU is one packet, however long: the same 155-byte values cross at once")
    func withoutProfilesAPDUIsOnePacket() async throws {
        let bridge = Realistic.steadyBridge(seed: 4)
        let sensor = MockPeripheralManager(configuration: .init(name: "Watch", mtu: .fixed(158)), bridge: bridge)
        let local = try await sensor.add(
            GATTService(
                uuid: Self.service,
                characteristics: [GATTCharacteristic(uuid: Self.stream, properties: .notify, permissions: [])]))
        try await sensor.startAdvertising(AdvertisementData(localName: "Watch", serviceUUIDs: [Self.service]))
        let (phone, characteristics) = try await Realistic.connectedCentral(to: sensor, on: bridge)
        try await phone.setNotifyValue(true, for: try #require(characteristics.first { $0.uuid == Self.stream }))
        #expect(try await sensor.updateValue(Data(repeating: 1, count: 155), for: local.characteristics[0]))
        #expect(try await sensor.updateValue(Data(repeating: 2, count: 155), for: local.characteristics[0]))
        let start = await bridge.now
        await bridge.advance(by: .milliseconds(100))
        #expect(
            Self.arrivals(in: await bridge.log).map { start.duration(to: $0) } == [
                .milliseconds(30), .milliseconds(30),
            ])
    }

    @Test("The same seed and profiles give the same log, byte for byte")
    func theSameSeedGivesTheSameLog() async throws {
        func run() async throws -> [BridgeLogEntry] {
            var timing = LinkTiming.realistic(central: .iPhoneiOS18, peripheral: .watch)
            timing.jitter = .milliseconds(2)
            let bridge = MockBLEBridge(configuration: .init(seed: 99, timing: timing))
            let sensor = MockPeripheralManager(
                configuration: .init(name: "Watch", updateQueue: .realistic(capacity: 16)), bridge: bridge)
            let local = try await sensor.add(
                GATTService(
                    uuid: Self.service,
                    characteristics: [GATTCharacteristic(uuid: Self.stream, properties: .notify, permissions: [])]))
            try await sensor.startAdvertising(AdvertisementData(localName: "Watch", serviceUUIDs: [Self.service]))
            let (phone, characteristics) = try await Realistic.connectedCentral(to: sensor, on: bridge)
            try await phone.setNotifyValue(true, for: try #require(characteristics.first { $0.uuid == Self.stream }))
            for index in 0..<40 {
                _ = try await sensor.updateValue(
                    Data(repeating: UInt8(index), count: 200), for: local.characteristics[0])
                await bridge.advance(by: .milliseconds(4))
            }
            await bridge.advance(by: .milliseconds(200))
            return await bridge.log
        }
        let first = try await run()
        #expect(Self.arrivals(in: first).count > 30)
        #expect(try await run() == first)
    }

    static let problems: [(LinkTiming, String)] = {
        let owner = "MockBLEBridge.Configuration.timing"
        func central(_ change: (inout LinkProfile) -> Void) -> LinkTiming {
            var profile = LinkProfile.iPhoneiOS18
            change(&profile)
            return .realistic(central: profile)
        }
        var peripheral = LinkProfile.watch
        peripheral.preferredConnectionIntervals = .milliseconds(5) ... .milliseconds(30)
        var offGrid = LinkProfile.watch
        offGrid.preferredConnectionIntervals = .microseconds(15_100) ... .milliseconds(30)
        let offTheGrid = " is not a multiple of 0.00125s (connection intervals are counted in units of 1.25 ms)"
        var instant = LinkTiming.instant
        instant.peripheralProfile = .watch
        // iOS 18 grants the watch 15 ms: a 20 ms jitter is within the 30 ms connectionInterval
        // (which times establishment only) but not within the interval the link's events keep.
        var jittery = LinkTiming.realistic(central: .iPhoneiOS18, peripheral: .watch)
        jittery.jitter = .milliseconds(20)
        return [
            (
                central { $0.connectionIntervals = .milliseconds(45) ... .seconds(2) },
                "\(owner).centralProfile.defaultConnectionInterval: 0.03s is outside 0.045s…2s (the profile's "
                    + "connectionIntervals)"
            ),
            (
                jittery,
                "\(owner).jitter: 0.02s is outside 0s…0.015s (the connection interval the link profiles negotiate)"
            ),
            (
                central { $0.connectionIntervals = .milliseconds(5) ... .seconds(2) },
                "\(owner).centralProfile.connectionIntervals.lowerBound: 0.005s is outside 0.0075s…4s"
            ),
            (
                central { $0.connectionIntervals = .milliseconds(15) ... .seconds(5) },
                "\(owner).centralProfile.connectionIntervals.upperBound: 5s is outside 0.0075s…4s"
            ),
            (
                central { $0.connectionIntervalStep = .milliseconds(1) },
                "\(owner).centralProfile.connectionIntervalStep: 0.001s is outside 0.00125s…4s"
            ),
            (
                central { $0.defaultConnectionInterval = .seconds(5) },
                "\(owner).centralProfile.defaultConnectionInterval: 5s is outside 0.0075s…4s"
            ),
            (
                central { $0.preferredConnectionIntervals = .milliseconds(15) ... .seconds(6) },
                "\(owner).centralProfile.preferredConnectionIntervals.upperBound: 6s is outside 0.0075s…4s"
            ),
            (
                .realistic(central: .iPhoneiOS18, peripheral: peripheral),
                "\(owner).peripheralProfile.preferredConnectionIntervals.lowerBound: 0.005s is outside 0.0075s…4s"
            ),
            (
                central { $0.connectionIntervalStep = .milliseconds(2) },
                "\(owner).centralProfile.connectionIntervalStep: 0.002s" + offTheGrid
            ),
            (
                central { $0.connectionIntervals = .microseconds(7_600) ... .seconds(4) },
                "\(owner).centralProfile.connectionIntervals.lowerBound: 0.0076s" + offTheGrid
            ),
            (
                central { $0.connectionIntervals = .milliseconds(15) ... .microseconds(1_999_999) },
                "\(owner).centralProfile.connectionIntervals.upperBound: 1.999999s" + offTheGrid
            ),
            (
                central { $0.defaultConnectionInterval = .milliseconds(33) },
                "\(owner).centralProfile.defaultConnectionInterval: 0.033s" + offTheGrid
            ),
            (
                central { $0.preferredConnectionIntervals = .milliseconds(15) ... .milliseconds(31) },
                "\(owner).centralProfile.preferredConnectionIntervals.upperBound: 0.031s" + offTheGrid
            ),
            (
                .realistic(central: .iPhoneiOS18, peripheral: offGrid),
                "\(owner).peripheralProfile.preferredConnectionIntervals.lowerBound: 0.0151s" + offTheGrid
            ),
            // Negotiating such a profile trapped in LinkTiming.realistic(central:peripheral:) itself.
            (
                central {
                    $0.connectionIntervals = .milliseconds(30) ... .seconds(10_000_000_000_000)
                    $0.defaultConnectionInterval = .seconds(10_000_000_000_000)
                },
                "\(owner).centralProfile.connectionIntervals.upperBound: 10000000000000s is outside 0.0075s…4s"
            ),
            (
                .realistic(
                    central: .iPhoneiOS18,
                    peripheral: {
                        var profile = LinkProfile.watch
                        profile.preferredConnectionIntervals = .seconds(Int64.max) ... .seconds(Int64.max)
                        return profile
                    }()),
                "\(owner).peripheralProfile.preferredConnectionIntervals.lowerBound: \(Int64.max)s is outside "
                    + "0.0075s…4s"
            ),
            (central { $0.phys = [] }, "\(owner).centralProfile.phys: [] is outside sets of at least one PHY"),
            (
                central { $0.maximumDataLength = 26 },
                "\(owner).centralProfile.maximumDataLength: 26 is outside 27…251"
            ),
            (
                central { $0.maximumDataLength = 252 },
                "\(owner).centralProfile.maximumDataLength: 252 is outside 27…251"
            ),
            (
                central { $0.packetsPerConnectionEvent = 0 },
                "\(owner).centralProfile.packetsPerConnectionEvent: 0 is outside 1…"
            ),
            (central { $0.attMTU = 22 }, "\(owner).centralProfile.attMTU: 22 is outside 23…517"),
            (central { $0.attMTU = 518 }, "\(owner).centralProfile.attMTU: 518 is outside 23…517"),
            (
                instant,
                "\(owner).peripheralProfile: a link profile needs realistic timing (a connectionInterval above "
                    + "zero); use LinkTiming.realistic(central:peripheral:)"
            ),
        ]
    }()

    @Test("A bridge with a bad link profile field makes every manager on it refuse, naming it", arguments: problems)
    func badProfileFields(timing: LinkTiming, problem: String) async throws {
        let bridge = MockBLEBridge(configuration: .init(timing: timing))
        let central = MockCentralManager(bridge: bridge)
        let peripheral = MockPeripheralManager(bridge: bridge)
        await #expect(throws: APIMisuseError.invalidConfiguration(problem)) {
            try await central.scanForPeripherals(withServices: nil)
        }
        await #expect(throws: APIMisuseError.invalidConfiguration(problem)) {
            try await peripheral.startAdvertising(AdvertisementData(localName: "X"))
        }
    }
}
