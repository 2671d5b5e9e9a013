import BLECore
import BLEMockKit
import Foundation
import Testing

// The README's examples, verbatim: `everyDocumentedSwiftBlockIsCompiled` (Documentation/)
// checks that each Swift block of README.md (other than package manifests) appears in this file
// or in one of the Documentation/ example files.

/// The examples run with the suite-wide time limit, like every other suite.
@Suite(.timeLimit(.minutes(10)))
struct ReadmeExampleTests {
    @Test func readsTheBodySensorLocation() async throws {
        let bridge = MockBLEBridge()

        // A simulated heart-rate sensor.
        let sensor = MockPeripheralManager(bridge: bridge)
        _ = try await sensor.add(
            GATTService(
                uuid: "180D",
                characteristics: [
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

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test func appCodeRunsOnTimeThatDrivesItself() async throws {
        let bridge = MockBLEBridge(configuration: .realistic(seed: 7))
        let readings = try await bridge.run {
            // A sensor that starts advertising after 2 s, then notifies a reading every second.
            let sensor = MockPeripheralManager(configuration: .realistic(seed: 7), bridge: bridge)
            _ = await sensor.waitForPoweredOn()
            let heartRate = try await sensor.add(
                GATTService(
                    uuid: "180D",
                    characteristics: [GATTCharacteristic(uuid: "2A37", properties: .notify, permissions: .readable)]))
            bridge.task {  // a task the run tracks: time waits for it
                try await bridge.clock.sleep(for: .seconds(2))
                try await sensor.startAdvertising(AdvertisementData(serviceUUIDs: ["180D"]))
                for beat: UInt8 in 60..<70 {
                    try await bridge.clock.sleep(for: .seconds(1))
                    _ = try await sensor.updateValue(Data([0, beat]), for: heartRate.characteristics[0])
                }
            }

            // App code as apps write it: it reacts to events and never touches the clock.
            let central = MockCentralManager(configuration: .realistic(seed: 7), bridge: bridge)
            var readings: [UInt8] = []
            for await event in central.events() {
                switch event {
                case .stateChanged(.poweredOn):
                    try await central.scanForPeripherals(withServices: ["180D"])
                case .discovered(let found):
                    await central.stopScan()
                    try await central.connect(found.identifier)
                    let measurement = try await central.discoverAll(for: found.identifier)[0]
                    try await central.setNotifyValue(true, for: measurement)
                case .valueUpdated(_, let value):
                    readings.append(value[1])
                default:
                    break
                }
                if readings.count == 3 { break }
            }
            return readings
        }
        // Whenever every task of the run waits, time jumps to the next thing scheduled: the
        // power-on, the advertising, the connection, each ATT round trip, each heartbeat.
        #expect(readings == [60, 61, 62])
        let elapsed = VirtualClock.Instant.zero.duration(to: await bridge.now)
        #expect(elapsed > .seconds(5) && elapsed < .seconds(6))  // virtual: milliseconds of wall time
    }

    @Test func longReadsTakeRealisticTime() async throws {
        // Seeded, virtual time: 30 ms connection interval, jitter, MTU draws.
        let bridge = MockBLEBridge(configuration: .realistic(seed: 42))
        let sensor = MockPeripheralManager(configuration: .realistic(seed: 42), bridge: bridge)
        _ = await sensor.waitForPoweredOn()  // realistic managers start .unknown
        _ = try await sensor.add(
            GATTService(
                uuid: "FFF0",
                characteristics: [
                    GATTCharacteristic(uuid: "FFF1", properties: .read, permissions: .readable, value: Data(count: 300))
                ]))
        try await sensor.startAdvertising(AdvertisementData(serviceUUIDs: ["FFF0"]))

        let central = MockCentralManager(configuration: .init(mtu: .fixed(23)), bridge: bridge)
        try await central.scanForPeripherals(withServices: ["FFF0"])
        await bridge.advance(by: .milliseconds(200))  // advertisements arrive at their intervals
        try await central.connect(sensor.identifier)
        let blob = try await central.discoverAll(for: sensor.identifier)[0]

        let before = await bridge.now
        #expect(try await central.readValue(for: blob).count == 300)
        let elapsed = before.duration(to: await bridge.now)
        // One Read and 13 Read Blobs at ATT_MTU 23: 14 round trips of about 30 ms, in no wall time.
        #expect(elapsed > .milliseconds(14 * 28) && elapsed < .milliseconds(14 * 32))
    }

    @Test func injectedErrorsFailExactlyAsScripted() async throws {
        let bridge = MockBLEBridge()
        let sensor = MockPeripheralManager(bridge: bridge)
        _ = try await sensor.add(
            GATTService(
                uuid: "180D",
                characteristics: [
                    GATTCharacteristic(uuid: "2A38", properties: .read, permissions: .readable, value: Data([0x01]))
                ]))
        try await sensor.startAdvertising(AdvertisementData(serviceUUIDs: ["180D"]))

        var configuration = MockCentralManager.Configuration()
        configuration.errorInjection = [
            ErrorInjection(.read, failure: .att(.insufficientAuthentication), frequency: .once, characteristic: "2A38")
        ]
        let central = MockCentralManager(configuration: configuration, bridge: bridge)
        try await central.scanForPeripherals(withServices: ["180D"])
        try await central.connect(sensor.identifier)
        let location = try await central.discoverAll(for: sensor.identifier)[0]

        await #expect(throws: ATTError(.insufficientAuthentication)) { try await central.readValue(for: location) }
        #expect(try await central.readValue(for: location) == Data([0x01]))  // only once
        #expect(await bridge.finish() == .clean)  // an injection that never fired would be listed here
    }

    @Test func faultsHappenAtVirtualTimes() async throws {
        let bridge = MockBLEBridge()
        let sensor = MockPeripheralManager(bridge: bridge)
        try await sensor.startAdvertising(AdvertisementData(localName: "HRM"))
        let central = MockCentralManager(bridge: bridge)
        try await central.scanForPeripherals(withServices: nil)
        try await central.connect(sensor.identifier)

        // The sensor walks away after 10 s: its link drops with connectionTimeout.
        await bridge.schedule(.proximity(peripheral: sensor.identifier, .outOfRange), after: .seconds(10))
        await bridge.advance(by: .seconds(9))
        #expect(await central.isConnected(sensor.identifier))
        await bridge.advance(by: .seconds(1))
        #expect(await !central.isConnected(sensor.identifier))
        #expect(await bridge.log.last?.error == .coreBluetooth(CoreBluetoothError(.connectionTimeout)))
    }

    @Test func aBundledProfileBecomesAPeripheral() async throws {
        let bridge = MockBLEBridge()
        // One the kit bundles; load a file of your own with PeripheralProfile.load(contentsOf:).
        let profile = PeripheralProfile.bundled(.heartRate)
        let sensor = try await profile.makePeripheral(on: bridge)

        let central = MockCentralManager(bridge: bridge)
        try await central.scanForPeripherals(withServices: ["180D"])
        try await central.connect(sensor.identifier)
        try await central.discoverAll(for: sensor.identifier)
        let location = try await central.characteristic("2A38", of: sensor.identifier)
        #expect(try await central.readValue(for: location) == Data([0x01]))  // the profile's "loc" value
    }

    @Test func aScenarioRunsInATest() async {
        let scenario = Scenario.bundled(.heartRateBasic)  // or your own: try Scenario.load(contentsOf: url)
        let trace = await ScenarioRunner(scenario).run()
        #expect(trace.passed, "\(trace.failures)")
        #expect(trace.records.first { $0.op == "connect" }?.mtu == 185)
        let timeline = trace.text(for: scenario)  // or trace.json, or trace.mermaid(for: scenario)
        #expect(timeline.hasSuffix("all 6 expectations held\n"))
    }
}
