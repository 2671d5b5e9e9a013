import BLECore
import BLEMockKit
import Foundation

extension Benchmark {
    /// `realistic.session-speedup` and `realistic.distinct-traces`: a 60-second realistic
    /// session, repeated; how much faster than real time it runs, and how many different
    /// bridge logs the repetitions produced (one: every repetition identical).
    func realisticFigures() async throws -> [BenchFigure] {
        var speedups: [Double] = []
        var traces: Set<[BridgeLogEntry]> = []
        for _ in 0..<sizes.realisticSessions {
            let (session, wall) = try await BenchClock.timed { try await RealisticSession.run(seed: 2026) }
            speedups.append(session.simulated / wall)
            traces.insert(session.log)
        }
        return [
            BenchFigure(
                name: "realistic.session-speedup", median: BenchClock.median(speedups), unit: "x real time",
                target: .atLeast(1_000), repetitions: speedups.count),
            BenchFigure(
                name: "realistic.distinct-traces", median: Double(traces.count), unit: "traces",
                target: .exactly(1), repetitions: speedups.count),
        ]
    }
}

/// One realistic session: a sensor advertising every 100 ms is found and connected, its
/// database discovered, then it notifies at 50 Hz for 60 s of link time while the central writes
/// with response 100 times.
struct RealisticSession {
    /// Simulated seconds from the first advertisement to the disconnection.
    let simulated: Double
    /// The bridge's log of the whole session.
    let log: [BridgeLogEntry]

    static let notificationPeriod: Duration = .milliseconds(20)
    static let notifications = 3_000
    static let writes = 100

    /// Runs the session on a new bridge seeded with `seed`.
    static func run(seed: UInt64) async throws -> RealisticSession {
        let bridge = MockBLEBridge(configuration: .realistic(seed: seed))
        var sensorConfiguration = MockPeripheralManager.Configuration.realistic(seed: seed)
        sensorConfiguration.advertisingInterval = .milliseconds(100)
        let sensor = MockPeripheralManager(configuration: sensorConfiguration, bridge: bridge)
        let central = MockCentralManager(configuration: .realistic(seed: seed), bridge: bridge)
        let start = await bridge.now
        _ = await sensor.waitForPoweredOn()
        _ = await central.waitForPoweredOn()
        let local = try await sensor.add(BenchPeripheral.heartRate)
        try await sensor.startAdvertising(BenchPeripheral.advertisement)
        let events = central.events()
        try await central.scanForPeripherals(withServices: [BenchPeripheral.service])
        await bridge.advance(by: .milliseconds(250))
        await central.stopScan()
        try await central.connect(sensor.identifier)
        let characteristics = try await central.discoverAll(for: sensor.identifier)
        let measurement = characteristics[0]
        let controlPoint = characteristics[2]
        try await central.setNotifyValue(true, for: measurement)

        let streamStart = await bridge.now
        var sent = 0
        for tick in 0..<Self.notifications {
            await bridge.advance(to: streamStart.advanced(by: Self.notificationPeriod * tick))
            let sample = Data([0x00, UInt8(60 + tick % 60)])
            if try await sensor.updateValue(sample, for: local.characteristics[0]) { sent += 1 }
            if tick % (Self.notifications / Self.writes) == 0 {
                try await central.writeValue(Data([0x01]), for: controlPoint, type: .withResponse)
            }
        }
        // Let the last notifications leave at the next connection events before hanging up
        // (queued ones would be lost with the link, as on a device).
        await bridge.advance(to: streamStart.advanced(by: .seconds(60) + .milliseconds(200)))
        try await central.cancelPeripheralConnection(sensor.identifier)
        let simulated = start.duration(to: await bridge.now).seconds
        await central.shutDown()
        var received = 0
        for await event in events {
            if case .valueUpdated(let characteristic, _) = event, characteristic == measurement { received += 1 }
        }
        guard sent > Self.notifications * 9 / 10, received == sent else {
            throw BenchFailure(
                description: "realistic session: \(Plural.count(sent, "notification")) sent, \(received) received")
        }
        return RealisticSession(simulated: simulated, log: await bridge.log)
    }
}
