import BLECore
import BLEMockKit
import Foundation
import Testing

// The DocC articles' examples, verbatim: `everyDocumentedSwiftBlockIsCompiled` checks that
// each Swift block of the articles appears in one of the example files.

/// The examples run with the suite-wide time limit, like every other suite.
@Suite(.timeLimit(.minutes(10)))
struct ArticleExampleTests {
    @Test func gettingStartedWithAMockCentral() async throws {
        // 1. A bridge: the simulated radio this test owns.
        let bridge = MockBLEBridge()

        // 2. A peripheral with a battery service.
        let tag = MockPeripheralManager(bridge: bridge)
        let battery = try await tag.add(
            GATTService(
                uuid: "180F",
                characteristics: [
                    GATTCharacteristic(uuid: "2A19", properties: [.read, .notify], permissions: .readable)
                ]))
        try await tag.setValue(Data([87]), for: battery.characteristics[0])
        try await tag.startAdvertising(AdvertisementData(localName: "Tag", serviceUUIDs: ["180F"]))

        // 3. The code under test talks to a central through the role protocol.
        let central: any CentralManaging = MockCentralManager(bridge: bridge)
        try await central.scanForPeripherals(withServices: ["180F"])
        try await central.connect(tag.identifier)
        try await central.discoverAll(for: tag.identifier)
        let level = try await central.characteristic("2A19", of: tag.identifier)
        #expect(try await central.readValue(for: level) == Data([87]))

        // 4. Notifications arrive as events.
        let events = await central.events()
        try await central.setNotifyValue(true, for: level)
        _ = try await tag.updateValue(Data([86]), for: battery.characteristics[0])
        let update = await events.first { event in
            if case .valueUpdated = event { return true }
            return false
        }
        #expect(update == .valueUpdated(level, Data([86])))
        #expect(await bridge.finish() == .clean)
    }

    @Test func realisticModeIsSeededAndTakesVirtualTime() async throws {
        func session(seed: UInt64) async throws -> (mtu: Int, log: [BridgeLogEntry]) {
            let bridge = MockBLEBridge(configuration: .realistic(seed: seed))
            let sensor = MockPeripheralManager(configuration: .realistic(seed: seed), bridge: bridge)
            _ = await sensor.waitForPoweredOn()
            try await sensor.startAdvertising(AdvertisementData(localName: "HRM"))
            let central = MockCentralManager(configuration: .realistic(seed: seed), bridge: bridge)
            _ = await central.waitForPoweredOn()
            try await central.scanForPeripherals(withServices: nil)
            await bridge.advance(by: .milliseconds(300))
            try await central.connect(sensor.identifier)
            let mtu = try await central.maximumWriteValueLength(for: sensor.identifier, type: .withoutResponse) + 3
            return (mtu, await bridge.log)
        }
        let first = try await session(seed: 42)
        let again = try await session(seed: 42)
        #expect(first.log == again.log)  // same seed, same run, event for event
        #expect(MTUMode.validRange.contains(first.mtu))
        #expect(first.log.last!.time > .zero)  // connecting took virtual time
    }

    @Test func sequentialCodeStepsTimeByHand() async throws {
        let bridge = MockBLEBridge(configuration: .realistic(seed: 11))
        let sensor = MockPeripheralManager(bridge: bridge)
        _ = await sensor.waitForPoweredOn()
        try await sensor.startAdvertising(AdvertisementData(localName: "HRM"))
        let central = MockCentralManager(bridge: bridge)
        _ = await central.waitForPoweredOn()
        try await central.scanForPeripherals(withServices: nil)
        // Outside a run nothing moves time while the test waits for an event: step it to let
        // the sensor's advertisements be heard.
        await bridge.advance(by: .milliseconds(300))
        let heard = await bridge.now
        // A call that needs the link runs the schedule forward itself.
        try await central.connect(sensor.identifier)
        #expect(await central.isConnected(sensor.identifier))
        #expect(await bridge.now > heard)  // connecting took virtual time
    }

    @Test func injectingAFailureForOneCharacteristic() async throws {
        let bridge = MockBLEBridge()
        let sensor = MockPeripheralManager(bridge: bridge)
        _ = try await sensor.add(
            GATTService(
                uuid: "180D",
                characteristics: [
                    GATTCharacteristic(uuid: "2A38", properties: .read, permissions: .readable, value: Data([1])),
                    GATTCharacteristic(uuid: "2A39", properties: .write, permissions: .writeable),
                ]))
        try await sensor.startAdvertising(AdvertisementData(serviceUUIDs: ["180D"]))
        let central = MockCentralManager(bridge: bridge)
        try await central.scanForPeripherals(withServices: ["180D"])
        try await central.connect(sensor.identifier)
        try await central.discoverAll(for: sensor.identifier)
        let control = try await central.characteristic("2A39", of: sensor.identifier)

        // Fail the next two writes to the control point, as a device busy with something else would.
        await central.inject(
            ErrorInjection(
                .write, failure: .att(.init(rawValue: 0x80)), frequency: .times(2),
                characteristic: "2A39"))
        for _ in 0..<2 {
            await #expect(throws: ATTError(.init(rawValue: 0x80))) {
                try await central.writeValue(Data([1]), for: control, type: .withResponse)
            }
        }
        try await central.writeValue(Data([1]), for: control, type: .withResponse)  // the third succeeds

        // A link that drops mid-session fails what was waiting with the link's error.
        await bridge.simulate(
            .disconnect(
                central: central.identifier, peripheral: sensor.identifier,
                error: CoreBluetoothError(.connectionTimeout)))
        await #expect(throws: CoreBluetoothError(.notConnected)) {
            try await central.writeValue(Data([1]), for: control, type: .withResponse)
        }
    }

    @Test func fixturesAndScenariosFromCode() async throws {
        // A profile written inline; files load the same way with PeripheralProfile.load(contentsOf:).
        let profile = try PeripheralProfile(
            json: Data(
                """
                {"name": "Thermometer", "services": [{"uuid": "181A", "characteristics": [
                  {"id": "temperature", "uuid": "2A6E", "properties": ["read", "notify"], "permissions": ["readable"]}
                ]}]}
                """.utf8))
        let scenario = Scenario(
            name: "thermometer", peripheral: profile,
            steps: [
                ScenarioStep(
                    index: 0, operation: .scan(services: ["181A"], allowDuplicates: false, solicited: [], duration: nil)
                ),
                ScenarioStep(index: 1, operation: .connect(timeout: .seconds(5))),
                ScenarioStep(index: 2, operation: .discover),
            ])
        let trace = await ScenarioRunner(scenario).run()
        #expect(trace.records.map(\.ok) == [true, true, true])
        #expect(
            trace.json.hasPrefix(#"{"step":0,"op":"scan","ok":true,"time":"0s","discovered":[{"name":"Thermometer""#))
    }

    @Test func bundledProfilesAndScenariosByName() async throws {
        // The kit's own profiles and scenarios are compiled into the library: no path, no resources.
        let bridge = MockBLEBridge()
        let uart = try await PeripheralProfile.bundled(.nordicUART).makePeripheral(on: bridge)
        let central = MockCentralManager(bridge: bridge)
        try await central.scanForPeripherals(withServices: nil)
        try await central.connect(uart.identifier)
        #expect(try await central.discoverAll(for: uart.identifier).count == 2)  // rx and tx

        // A bundled scenario's "../peripherals/heart-rate.json" is the bundled profile.
        #expect(Scenario.bundled(.heartRateBasic).peripheral == PeripheralProfile.bundled(.heartRate))
        for name in BundledScenario.allCases {
            let trace = await ScenarioRunner(Scenario.bundled(name)).run()
            #expect(trace.passed, "\(name): \(trace.failures)")
        }
    }

    // "Testing app code in realistic mode"

    /// App code under test: it follows a central's events, connects to the first heart-rate
    /// sensor it finds, subscribes, and reconnects whenever the link drops.
    actor HeartRateMonitor {
        let central: any CentralManaging
        private(set) var readings: [UInt8] = []
        private(set) var connections = 0

        init(central: any CentralManaging) {
            self.central = central
        }

        func follow(_ events: AsyncStream<CentralEvent>) async throws {
            for await event in events {
                switch event {
                case .stateChanged(.poweredOn):
                    try await central.scanForPeripherals(withServices: ["180D"])
                case .discovered(let sensor):
                    await central.stopScan()
                    try await connect(to: sensor.identifier)
                case .disconnected(let sensor, _):
                    try await connect(to: sensor.identifier)
                case .valueUpdated(_, let value):
                    readings.append(value[1])
                default:
                    break
                }
            }
        }

        private func connect(to sensor: UUID) async throws {
            try await central.connect(sensor)
            connections += 1
            let measurement = try await central.discoverAll(for: sensor)[0]
            try await central.setNotifyValue(true, for: measurement)
        }
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test func theMonitorReconnectsAfterTheLinkDrops() async throws {
        let bridge = MockBLEBridge(configuration: .realistic(seed: 21))
        let (readings, connections) = try await bridge.run {
            let sensor = MockPeripheralManager(configuration: .realistic(seed: 21), bridge: bridge)
            _ = await sensor.waitForPoweredOn()
            let heartRate = try await sensor.add(
                GATTService(
                    uuid: "180D",
                    characteristics: [GATTCharacteristic(uuid: "2A37", properties: .notify, permissions: .readable)]))
            try await sensor.startAdvertising(AdvertisementData(serviceUUIDs: ["180D"]))
            bridge.task {  // the sensor's heartbeat: one reading a second
                for beat: UInt8 in 60..<80 {
                    try await bridge.clock.sleep(for: .seconds(1))
                    _ = try await sensor.updateValue(Data([0, beat]), for: heartRate.characteristics[0])
                }
            }

            let central = MockCentralManager(configuration: .realistic(seed: 21), bridge: bridge)
            let monitor = HeartRateMonitor(central: central)
            let events = central.events()
            let following = bridge.task { try await monitor.follow(events) }

            // The link drops after 4.5 s; the monitor must reconnect on its own.
            await bridge.schedule(
                .disconnect(
                    central: central.identifier, peripheral: sensor.identifier, error: .init(.connectionTimeout)),
                at: .zero.advanced(by: .milliseconds(4_500)))
            while await monitor.readings.count < 6 {
                try await bridge.clock.sleep(for: .milliseconds(100))  // virtual time: free
            }
            following.cancel()
            return (await monitor.readings, await monitor.connections)
        }
        #expect(connections == 2)
        #expect(readings.count == 6)
        #expect(readings == readings.sorted())  // in order, whatever was missed while reconnecting
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test func aWaitThatCannotEndIsReportedWithTheSeed() async throws {
        let bridge = MockBLEBridge(configuration: .realistic(seed: 5))
        let error = await #expect(throws: MockBLEBridge.Stall.self) {
            try await bridge.run(stallPatience: .milliseconds(100)) {
                let central = MockCentralManager(configuration: .realistic(seed: 5), bridge: bridge)
                _ = await central.waitForPoweredOn()
                try await central.scanForPeripherals(withServices: ["180D"])
                for await event in central.events() {
                    if case .discovered = event { return }  // no sensor advertises: never
                }
            }
        }
        #expect(error?.reason == .nothingScheduled)
        #expect(error?.seed == 5)
        #expect(error?.description.contains("Seed 5") == true)
    }
}
