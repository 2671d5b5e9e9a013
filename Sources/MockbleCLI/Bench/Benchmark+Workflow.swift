import BLECore
import BLEMockKit
import Foundation

extension Benchmark {
    /// `fast.workflow`: one whole fast-mode test workflow, timed workflow by workflow.
    func workflowFigures() async throws -> [BenchFigure] {
        for _ in 0..<min(100, sizes.workflows) { try await Self.fastWorkflow() }
        var samples: [Double] = []
        samples.reserveCapacity(sizes.workflows)
        for _ in 0..<sizes.workflows {
            samples.append(try await BenchClock.seconds { try await Self.fastWorkflow() })
        }
        let workflow = BenchClock.median(samples) * 1e6
        let (actorCall, streamElement) = await referenceFigures()
        return [
            BenchFigure(
                name: "fast.workflow", median: workflow, unit: "µs", target: .atMost(50), repetitions: samples.count),
            actorCall, streamElement,
            // The workflow in units of this machine's actor call: comparable across machines.
            BenchFigure(
                name: "fast.workflow-in-actor-calls", median: (workflow * 1_000 / actorCall.median).rounded(),
                unit: "actor calls", target: .atMost(300), repetitions: samples.count),
        ]
    }

    /// Power on, scan one peripheral, connect, discover all, read, write with response,
    /// subscribe, receive one notification, disconnect: what a typical unit test does, on a new
    /// bridge with a new sensor and central.
    @discardableResult
    static func fastWorkflow() async throws -> WorkflowOutcome {
        let bridge = MockBLEBridge()
        let sensor = MockPeripheralManager(bridge: bridge)
        let local = try await sensor.add(BenchPeripheral.heartRate)
        try await sensor.startAdvertising(BenchPeripheral.advertisement)
        let central = MockCentralManager(bridge: bridge)
        guard await central.waitForPoweredOn() == .poweredOn else { throw BenchFailure(description: "not powered on") }
        let events = central.events()
        var iterator = events.makeAsyncIterator()
        try await central.scanForPeripherals(withServices: [BenchPeripheral.service])
        guard case .discovered(let found) = await iterator.next(), found.identifier == sensor.identifier else {
            throw BenchFailure(description: "the sensor was not discovered")
        }
        await central.stopScan()
        try await central.connect(found.identifier)
        let characteristics = try await central.discoverAll(for: found.identifier)
        guard characteristics.count == 4 else {
            throw BenchFailure(
                description: "discovery found \(Plural.count(characteristics.count, "characteristic")), not 4")
        }
        let location = characteristics[1]
        let controlPoint = characteristics[2]
        let measurement = characteristics[0]
        let read = try await central.readValue(for: location)
        guard read == Data([0x01]) else { throw BenchFailure(description: "read the wrong value") }
        try await central.writeValue(Data([0x01]), for: controlPoint, type: .withResponse)
        try await central.setNotifyValue(true, for: measurement)
        guard try await sensor.updateValue(Data([0x00, 72]), for: local.characteristics[0]) else {
            throw BenchFailure(description: "the notification was not sent")
        }
        var notified: Data?
        while notified == nil, let event = await iterator.next() {
            if case .valueUpdated(let characteristic, let value) = event, characteristic == measurement {
                notified = value
            }
        }
        guard let notified, notified == Data([0x00, 72]) else {
            throw BenchFailure(description: "the notification did not arrive (got \(String(describing: notified)))")
        }
        try await central.cancelPeripheralConnection(found.identifier)
        guard await !central.isConnected(found.identifier) else { throw BenchFailure(description: "still connected") }
        return WorkflowOutcome(characteristics: characteristics.count, read: read, notified: notified)
    }

    /// What one fast workflow saw, for tests: it throws on any other outcome.
    struct WorkflowOutcome: Equatable {
        /// The characteristics discovery found.
        var characteristics: Int
        /// The body location read.
        var read: Data
        /// The heart-rate measurement notified.
        var notified: Data
    }
}
