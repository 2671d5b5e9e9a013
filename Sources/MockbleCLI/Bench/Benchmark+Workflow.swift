import BLECBM
import BLECore
import BLEMockKit
import Foundation

extension Benchmark {
    /// `fast.workflow`: one whole fast-mode test workflow, timed workflow by workflow.
    func workflowFigures() async throws -> [BenchFigure] {
        return try await ReleaseWatchdog.watching { watchdog in try await workflowFigures(watchdog: watchdog) }
    }

    private func workflowFigures(watchdog: ReleaseWatchdog) async throws -> [BenchFigure] {
        for _ in 0..<min(100, sizes.workflows) { _ = try await Self.timedFastWorkflow(watchdog: watchdog) }
        var samples: [Double] = []
        samples.reserveCapacity(sizes.workflows)
        for _ in 0..<sizes.workflows {
            samples.append(try await Self.timedFastWorkflow(watchdog: watchdog))
        }
        let workflow = BenchClock.median(samples) * 1e6
        // The same steps through the CoreBluetooth-shaped API (delegates on the app's queue),
        // each timed right after a fast workflow, so their ratio is this machine's at that
        // moment (this machine's speed drifts by more than the ratio's margin).
        let (delegateSamples, pairedSamples) = try await coreBluetoothWorkflowSamples(watchdog: watchdog)
        let delegateWorkflow = BenchClock.median(delegateSamples) * 1e6
        // The median of the pairs' ratios: a pair's two workflows ran moments apart, at one
        // speed of this machine.
        let ratio = BenchClock.median(zip(delegateSamples, pairedSamples).map { $0 / $1 })
        let (actorCall, streamElement) = await referenceFigures()
        return [
            BenchFigure(
                name: "fast.workflow", median: workflow, unit: "µs", target: .atMost(50), repetitions: samples.count),
            BenchFigure(
                name: "corebluetooth.workflow", median: delegateWorkflow, unit: "µs", target: .reference,
                repetitions: delegateSamples.count),
            BenchFigure(
                name: "corebluetooth.workflow-to-fast.workflow", median: ratio, unit: "×",
                target: .atMost(2), repetitions: delegateSamples.count),
            actorCall, streamElement,
            // The workflow in units of this machine's actor call: comparable across machines.
            BenchFigure(
                name: "fast.workflow-in-actor-calls", median: (workflow * 1_000 / actorCall.median).rounded(),
                unit: "actor calls", target: .atMost(300), repetitions: samples.count),
        ]
    }

    /// Seconds from the start of a fast workflow until its bridge is released.
    static func timedFastWorkflow(watchdog: ReleaseWatchdog) async throws -> Double {
        try await BridgeRelease.seconds(watchdog: watchdog) { release in try await fastWorkflow(release: release) }
    }

    /// The CoreBluetooth-shaped workflow's times, in seconds, each paired with a fast workflow's
    /// timed just before it, as ``fastWorkflow(release:)`` is timed for `fast.workflow`. The
    /// CoreBluetooth-shaped one is timed from the app's queue (as an XCTest on the main thread
    /// shares the main queue with an app on it); the hop onto that queue is not timed. Both are
    /// timed until their bridge is released: a CoreBluetooth-shaped manager the app let go of is
    /// torn down after the app's last callback, and that work is the workflow's.
    func coreBluetoothWorkflowSamples(watchdog: ReleaseWatchdog) async throws -> (delegate: [Double], fast: [Double]) {
        let queue = DispatchQueue(label: "bench.corebluetooth-workflow")
        let timeOne: @Sendable () async throws -> Double = {
            try await BridgeRelease.seconds(watchdog: watchdog) { release in
                try await CoreBluetoothWorkflowApp.run(on: queue, release: release)
            }
        }
        let onQueue: @Sendable () async throws -> Double = {
            if #available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *) {
                return try await Task(executorPreference: QueueExecutor(queue), operation: timeOne).value
            }
            return try await timeOne()
        }
        for _ in 0..<min(100, sizes.workflows) { _ = try await onQueue() }
        var delegate: [Double] = []
        var fast: [Double] = []
        delegate.reserveCapacity(sizes.workflows)
        fast.reserveCapacity(sizes.workflows)
        for _ in 0..<sizes.workflows {
            fast.append(try await Self.timedFastWorkflow(watchdog: watchdog))
            delegate.append(try await onQueue())
        }
        return (delegate, fast)
    }

    /// Power on, scan one peripheral, connect, discover all, read, write with response,
    /// subscribe, receive one notification, disconnect: what a typical unit test does, on a new
    /// bridge with a new sensor and central (whose release `release` watches, when given).
    @discardableResult
    static func fastWorkflow(release: BridgeRelease? = nil) async throws -> WorkflowOutcome {
        let bridge = MockBLEBridge()
        release?.watch(bridge)
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
