import BLECore
import BLEMockKit
import Foundation

extension Benchmark {
    /// `scan.10k-peripherals`: 10,000 sensors advertising every 100 ms on one bridge, one
    /// central scanning for 1 s of virtual time; every sensor must be discovered. The wall time
    /// covers putting the sensors on the air as well as the scan.
    func scanFigures() async throws -> [BenchFigure] {
        var samples: [Double] = []
        var discovered: [Double] = []
        for _ in 0..<sizes.scaleRepetitions {
            let (found, seconds) = try await BenchClock.timed { try await Self.scanScale(peripherals: 10_000) }
            samples.append(seconds)
            discovered.append(Double(found))
        }
        return [
            BenchFigure(
                name: "scan.10k-peripherals", median: BenchClock.median(samples), unit: "s", target: .atMost(1),
                repetitions: samples.count),
            BenchFigure(
                name: "scan.10k-discovered", median: BenchClock.median(discovered), unit: "peripherals",
                target: .exactly(10_000), repetitions: discovered.count),
        ]
    }

    /// Puts `count` advertising sensors on a realistic-timing bridge, scans 1 s of virtual time,
    /// and returns how many different sensors the central discovered.
    static func scanScale(peripherals count: Int) async throws -> Int {
        let bridge = MockBLEBridge(configuration: .realistic(seed: 10_000))
        let sensors = try await BenchPeripheral.advertisingSensors(count, on: bridge)
        let central = MockCentralManager(bridge: bridge)
        let events = central.events()
        try await central.scanForPeripherals(withServices: [BenchPeripheral.service])
        await bridge.advance(by: .seconds(1))
        await central.shutDown()
        var seen = Set<UUID>()
        for await event in events {
            if case .discovered(let peripheral) = event { seen.insert(peripheral.identifier) }
        }
        withExtendedLifetime(sensors) {}
        return seen.count
    }

    /// `connections.100x10`: 100 centrals each connect to 10 sensors of their own, discover and
    /// subscribe; then every sensor notifies once and every central receives its 10.
    func connectionFigures() async throws -> [BenchFigure] {
        var samples: [Double] = []
        for _ in 0..<sizes.scaleRepetitions {
            samples.append(try await BenchClock.seconds { try await Self.connectionScale(centrals: 100, each: 10) })
        }
        return [
            BenchFigure(
                name: "connections.100x10", median: BenchClock.median(samples), unit: "s", target: .atMost(1),
                repetitions: samples.count)
        ]
    }

    /// `centralCount` centrals each connect to `each` sensors of their own and subscribe; every
    /// sensor notifies once. Returns, per central, the sensors whose notification it received
    /// (throws unless each got all of its own).
    @discardableResult
    static func connectionScale(centrals centralCount: Int, each: Int) async throws -> [Set<UUID>] {
        let bridge = MockBLEBridge()
        var sensors: [(MockPeripheralManager, LocalCharacteristic)] = []
        for _ in 0..<(centralCount * each) {
            let sensor = MockPeripheralManager(bridge: bridge)
            let service = try await sensor.add(BenchPeripheral.heartRate)
            try await sensor.startAdvertising(BenchPeripheral.advertisement)
            sensors.append((sensor, service.characteristics[0]))
        }
        // One scan makes every sensor known to the system; the other centrals connect to
        // known identifiers directly, as after retrievePeripherals(withIdentifiers:).
        let scanner = MockCentralManager(bridge: bridge)
        try await scanner.scanForPeripherals(withServices: [BenchPeripheral.service])
        await scanner.shutDown()
        var centrals: [(MockCentralManager, AsyncStream<CentralEvent>)] = []
        for index in 0..<centralCount {
            let central = MockCentralManager(bridge: bridge)
            centrals.append((central, central.events()))
            for (sensor, _) in sensors[(index * each)..<((index + 1) * each)] {
                try await central.connect(sensor.identifier)
                let services = try await central.discoverServices([BenchPeripheral.service], for: sensor.identifier)
                let characteristics = try await central.discoverCharacteristics(
                    [BenchPeripheral.measurement], for: services[0])
                try await central.setNotifyValue(true, for: characteristics[0])
            }
        }
        for (sensor, measurement) in sensors {
            guard try await sensor.updateValue(Data([0x00, 72]), for: measurement) else {
                throw BenchFailure(description: "a notification was not sent")
            }
        }
        var notifiers: [Set<UUID>] = []
        for (central, events) in centrals {
            var received = Set<UUID>()
            for await event in events {
                if case .valueUpdated(let characteristic, Data([0x00, 72])) = event {
                    received.insert(characteristic.service.peripheral)
                    if received.count == each { break }
                }
            }
            guard received.count == each else {
                throw BenchFailure(
                    description: "a central received \(received.count) of \(Plural.count(each, "notification"))")
            }
            notifiers.append(received)
            await central.shutDown()
        }
        return notifiers
    }
}
