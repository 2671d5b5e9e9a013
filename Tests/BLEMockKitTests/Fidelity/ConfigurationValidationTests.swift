import BLECore
import BLEMockKit
import Foundation
import Testing

/// Every numeric configuration field is checked: a value out of range makes the manager (or
/// every manager on the bridge) refuse each call with `invalidConfiguration` naming the field,
/// the value and the range allowed. Before, an advertising interval of zero made `advance`
/// loop for ever at one instant, `packetsPerConnectionEvent: -1` trapped, and `0` never
/// delivered anything.
@Suite("Configuration: numeric fields are checked, with the field, value and range", .timeLimit(.minutes(10)))
struct ConfigurationValidationTests {
    typealias Central = MockCentralManager.Configuration
    typealias Peripheral = MockPeripheralManager.Configuration

    static let centralCases: [(Central, String)] = [
        (
            Central(stateTransition: .realistic(duration: .milliseconds(-1))),
            "MockCentralManager.Configuration.stateTransition.realistic(duration:): -0.001s is outside 0s…"
        ),
        (
            Central(writeWithoutResponseQueue: .realistic(capacity: 0)),
            "MockCentralManager.Configuration.writeWithoutResponseQueue.realistic(capacity:): 0 is outside 1…"
        ),
        (
            Central(connection: .init(failureProbability: 1.5)),
            "MockCentralManager.Configuration.connection.failureProbability: 1.5 is outside 0…1"
        ),
        (
            Central(connection: .init(failureProbability: .nan)),
            "MockCentralManager.Configuration.connection.failureProbability: nan is outside 0…1"
        ),
        (Central(connection: .init(limit: 0)), "MockCentralManager.Configuration.connection.limit: 0 is outside 1…"),
        (
            Central(connection: .init(latency: .milliseconds(-5) ... .milliseconds(5))),
            "MockCentralManager.Configuration.connection.latency: -0.005s is outside 0s…"
        ),
        (
            Central(pairing: .automatic(duration: .seconds(-1), outcome: .succeeds)),
            "MockCentralManager.Configuration.pairing.automatic(duration:): -1s is outside 0s…"
        ),
    ]

    @Test("A central with an out-of-range numeric field refuses every call, naming it", arguments: centralCases)
    func centralFields(configuration: Central, problem: String) async throws {
        let central = MockCentralManager(configuration: configuration)
        await #expect(throws: APIMisuseError.invalidConfiguration(problem)) {
            try await central.scanForPeripherals(withServices: nil)
        }
        await #expect(throws: APIMisuseError.invalidConfiguration(problem)) {
            try await central.connect(UUID(uuidString: "00000000-0000-0000-0000-000000000001")!)
        }
    }

    static let peripheralCases: [(Peripheral, String)] = [
        (
            Peripheral(advertisingInterval: .zero),
            "MockPeripheralManager.Configuration.advertisingInterval: 0s is outside 0.02s…10.24s"
        ),
        (
            Peripheral(advertisingInterval: .milliseconds(10_241)),
            "MockPeripheralManager.Configuration.advertisingInterval: 10.241s is outside 0.02s…10.24s"
        ),
        (Peripheral(rssi: -128), "MockPeripheralManager.Configuration.rssi: -128 is outside -127…20"),
        (Peripheral(rssi: 21), "MockPeripheralManager.Configuration.rssi: 21 is outside -127…20"),
        (Peripheral(rssiVariation: -1), "MockPeripheralManager.Configuration.rssiVariation: -1 is outside 0…147"),
        (
            Peripheral(advertisingDelay: .milliseconds(-1)),
            "MockPeripheralManager.Configuration.advertisingDelay: -0.001s is outside 0s…"
        ),
        (
            Peripheral(preparedWriteCapacity: 0),
            "MockPeripheralManager.Configuration.preparedWriteCapacity: 0 is outside 1…"
        ),
        (
            Peripheral(preparedWriteCapacity: -5),
            "MockPeripheralManager.Configuration.preparedWriteCapacity: -5 is outside 1…"
        ),
        (
            Peripheral(updateQueue: .realistic(capacity: -3)),
            "MockPeripheralManager.Configuration.updateQueue.realistic(capacity:): -3 is outside 1…"
        ),
        (
            Peripheral(stateTransition: .realistic(duration: .seconds(-2))),
            "MockPeripheralManager.Configuration.stateTransition.realistic(duration:): -2s is outside 0s…"
        ),
    ]

    @Test("A peripheral with an out-of-range numeric field refuses every call, naming it", arguments: peripheralCases)
    func peripheralFields(configuration: Peripheral, problem: String) async throws {
        let peripheral = MockPeripheralManager(configuration: configuration)
        await #expect(throws: APIMisuseError.invalidConfiguration(problem)) {
            try await peripheral.add(GATTService(uuid: "180F", characteristics: []))
        }
        await #expect(throws: APIMisuseError.invalidConfiguration(problem)) {
            try await peripheral.startAdvertising(AdvertisementData(localName: "X"))
        }
    }

    /// A phone whose links run at 500 ms (it grants a peripheral that asks for nothing its default).
    static let slowPhone = LinkProfile(name: "Slow phone", defaultConnectionInterval: .milliseconds(500))

    static let bridgeCases: [(MockBLEBridge.Configuration, String)] = [
        (
            .init(timing: LinkTiming(packetsPerConnectionEvent: -1)),
            "MockBLEBridge.Configuration.timing.packetsPerConnectionEvent: -1 is outside 1…"
        ),
        (
            .init(timing: LinkTiming(packetsPerConnectionEvent: 0)),
            "MockBLEBridge.Configuration.timing.packetsPerConnectionEvent: 0 is outside 1…"
        ),
        (
            .init(timing: LinkTiming(connectionInterval: .milliseconds(5))),
            "MockBLEBridge.Configuration.timing.connectionInterval: 0.005s is outside 0s or 0.0075s…4s"
        ),
        (
            .init(timing: LinkTiming(connectionInterval: .milliseconds(10), jitter: .milliseconds(11))),
            "MockBLEBridge.Configuration.timing.jitter: 0.011s is outside 0s…0.01s (the connection interval)"
        ),
        (
            .init(timing: LinkTiming(jitter: .milliseconds(-1))),
            "MockBLEBridge.Configuration.timing.jitter: -0.001s is outside 0s…"
        ),
        (
            .init(timing: LinkTiming(connectionLatency: .milliseconds(-1) ... .zero)),
            "MockBLEBridge.Configuration.timing.connectionLatency: -0.001s is outside 0s…"
        ),
        (
            .init(timing: LinkTiming(supervisionTimeout: .milliseconds(50))),
            "MockBLEBridge.Configuration.timing.supervisionTimeout: 0.05s is outside 0s or 0.1s…32s"
        ),
        // Supervision timeout > (1 + peripheral latency) × connection interval × 2 (Core, Vol 6,
        // Part B, 4.5.2); the kit's links have no peripheral latency. (Each was accepted.)
        (
            .init(timing: LinkTiming(connectionInterval: .seconds(1), supervisionTimeout: .milliseconds(720))),
            "MockBLEBridge.Configuration.timing.supervisionTimeout: 0.72s is outside 0s or 2s…32s (above 2s: more "
                + "than twice the connection interval, 1s, as the Core specification requires of a link without "
                + "peripheral latency)"
        ),
        (
            .init(timing: LinkTiming(connectionInterval: .seconds(1), supervisionTimeout: .seconds(2))),
            "MockBLEBridge.Configuration.timing.supervisionTimeout: 2s is outside 0s or 2s…32s (above 2s: more than "
                + "twice the connection interval, 1s, as the Core specification requires of a link without "
                + "peripheral latency)"
        ),
        (
            .init(timing: LinkTiming(connectionInterval: .seconds(4), supervisionTimeout: .seconds(8))),
            "MockBLEBridge.Configuration.timing.supervisionTimeout: 8s is outside 0s or 8s…32s (above 8s: more than "
                + "twice the connection interval, 4s, as the Core specification requires of a link without "
                + "peripheral latency)"
        ),
        (
            .init(timing: LinkTiming(centralProfile: slowPhone)),
            "MockBLEBridge.Configuration.timing.supervisionTimeout: 0.72s is outside 0s or 1s…32s (above 1s: more "
                + "than twice the connection interval the link profiles negotiate, 0.5s, as the Core specification "
                + "requires of a link without peripheral latency)"
        ),
        (
            .init(realTimePacing: -1),
            "MockBLEBridge.Configuration.realTimePacing: -1.0 is outside 0… (finite), or nil"
        ),
        (
            .init(realTimePacing: .infinity),
            "MockBLEBridge.Configuration.realTimePacing: inf is outside 0… (finite), or nil"
        ),
    ]

    @Test(
        "A bridge with an out-of-range timing field makes every manager on it refuse, naming it", arguments: bridgeCases
    )
    func bridgeFields(configuration: MockBLEBridge.Configuration, problem: String) async throws {
        let bridge = MockBLEBridge(configuration: configuration)
        let central = MockCentralManager(bridge: bridge)
        let peripheral = MockPeripheralManager(bridge: bridge)
        await #expect(throws: APIMisuseError.invalidConfiguration(problem)) {
            try await central.scanForPeripherals(withServices: nil)
        }
        await #expect(throws: APIMisuseError.invalidConfiguration(problem)) {
            try await peripheral.startAdvertising(AdvertisementData(localName: "X"))
        }
        // Nothing was scheduled that could loop or trap.
        #expect(await bridge.run(maximumEvents: 10))
    }

    @Test("The limits of each range are accepted")
    func boundariesAreAccepted() async throws {
        let timings = [
            LinkTiming(connectionInterval: .microseconds(7_500), jitter: .zero, packetsPerConnectionEvent: 1),
            LinkTiming(connectionInterval: .milliseconds(45), supervisionTimeout: .milliseconds(100)),
            LinkTiming(connectionInterval: .seconds(4), supervisionTimeout: .milliseconds(8_010)),
            LinkTiming(connectionInterval: .seconds(1), supervisionTimeout: .milliseconds(2_010)),
            LinkTiming(connectionInterval: .seconds(4), supervisionTimeout: .zero),
            LinkTiming(supervisionTimeout: .seconds(32)), .instant, .realistic,
        ]
        for timing in timings {
            let bridge = MockBLEBridge(configuration: .init(timing: timing, realTimePacing: 0))
            let peripheral = MockPeripheralManager(
                configuration: .init(
                    advertisingInterval: .milliseconds(20), rssi: -127, rssiVariation: 0, preparedWriteCapacity: 1),
                bridge: bridge)
            try await peripheral.startAdvertising(AdvertisementData(localName: "Low"))
            let loud = MockPeripheralManager(
                configuration: .init(advertisingInterval: .milliseconds(10_240), rssi: 20), bridge: bridge)
            try await loud.startAdvertising(AdvertisementData(localName: "High"))
            let central = MockCentralManager(
                configuration: .init(
                    writeWithoutResponseQueue: .realistic(capacity: 1),
                    connection: .init(failureProbability: 1, limit: 1, latency: .zero ... .zero)),
                bridge: bridge)
            try await central.scanForPeripherals(withServices: nil)
        }
    }

    @Test("Timing that takes a slow interval from elsewhere gets the shortest supervision timeout it allows")
    func derivedTimingFitsItsSupervisionTimeout() async throws {
        let timings = [
            LinkTiming.realistic(central: Self.slowPhone),
            LinkConditions(mtu: 23, connectionInterval: .seconds(1)).timing,
            LinkFigures(connectionInterval: .seconds(1)).linkTiming,
            ExplorationPlan(seed: 1, conditions: LinkConditions(mtu: 23, connectionInterval: .seconds(4)))
                .configuration.timing,
        ]
        #expect(
            timings.map(\.supervisionTimeout) == [
                .milliseconds(1_010), .milliseconds(2_010), .milliseconds(2_010), .milliseconds(8_010),
            ])
        for timing in timings {
            let central = MockCentralManager(bridge: MockBLEBridge(configuration: .init(timing: timing)))
            try await central.scanForPeripherals(withServices: nil)
        }
        // Faster links keep realistic timing's 720 ms.
        #expect(
            LinkTiming.realistic(central: .iPhoneiOS18, peripheral: .watch).supervisionTimeout == .milliseconds(720))
        #expect(
            LinkConditions(mtu: 23, connectionInterval: .milliseconds(355)).timing.supervisionTimeout
                == .milliseconds(720))
        #expect(LinkFigures(connectionInterval: .milliseconds(50)).linkTiming.supervisionTimeout == .milliseconds(720))
    }
}
