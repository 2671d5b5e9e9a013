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
        // The same steps through the CoreBluetooth-shaped API (delegates on the app's queue), in
        // blocks taking turns with blocks of fast workflows, so their ratio is this machine's at
        // that moment (its speed drifts by more than the ratio's margin).
        let blocks = try await coreBluetoothWorkflowBlocks(watchdog: watchdog)
        let delegateWorkflow = BenchClock.median(blocks.flatMap(\.delegate)) * 1e6
        // The median of the blocks' ratios: a block's two halves ran moments apart, at one speed
        // of this machine.
        let ratio = BenchClock.median(blocks.map { BenchClock.median($0.delegate) / BenchClock.median($0.fast) })
        let (actorCall, streamElement) = await referenceFigures()
        return [
            BenchFigure(
                name: "fast.workflow", median: workflow, unit: "µs", target: .atMost(50), repetitions: samples.count),
            BenchFigure(
                name: "corebluetooth.workflow", median: delegateWorkflow, unit: "µs", target: .reference,
                repetitions: blocks.reduce(0) { $0 + $1.delegate.count }),
            BenchFigure(
                name: "corebluetooth.workflow-to-fast.workflow", median: ratio, unit: "×",
                target: .atMost(2), repetitions: blocks.count),
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

    /// Blocks of workflow times, in seconds: in each, `blockSize` CoreBluetooth-shaped workflows
    /// timed one after another right after as many fast ones (timed as ``fastWorkflow(release:)``
    /// is for `fast.workflow`). Blocks, not pairs: a fast workflow timed right after a
    /// CoreBluetooth-shaped one ran about twice as slow as one after another fast one (and the
    /// CoreBluetooth-shaped one a fifth slower after a fast one), so pairs measured two cold
    /// paths and understated the ratio of the figures above them. The CoreBluetooth-shaped ones
    /// are timed from the app's queue (as an XCTest on the main thread shares the main queue
    /// with an app on it); the hop onto that queue, once a block, is not timed. Both are timed
    /// until their bridge is released: a CoreBluetooth-shaped manager the app let go of is torn
    /// down after the app's last callback, and that work is the workflow's.
    func coreBluetoothWorkflowBlocks(
        watchdog: ReleaseWatchdog, blockSize: Int = 100
    ) async throws -> [(delegate: [Double], fast: [Double])] {
        let queue = DispatchQueue(label: "bench.corebluetooth-workflow")
        let size = min(blockSize, sizes.workflows)
        let timeBlock: @Sendable () async throws -> [Double] = {
            var times: [Double] = []
            times.reserveCapacity(size)
            for _ in 0..<size {
                times.append(
                    try await BridgeRelease.seconds(watchdog: watchdog) { release in
                        try await CoreBluetoothWorkflowApp.run(on: queue, release: release)
                    })
            }
            return times
        }
        let onQueue: @Sendable () async throws -> [Double] = {
            if #available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *) {
                return try await Task(executorPreference: QueueExecutor(queue), operation: timeBlock).value
            }
            return try await timeBlock()
        }
        _ = try await onQueue()
        var blocks: [(delegate: [Double], fast: [Double])] = []
        for _ in 0..<max(1, sizes.workflows / size) {
            var fast: [Double] = []
            fast.reserveCapacity(size)
            for _ in 0..<size { fast.append(try await Self.timedFastWorkflow(watchdog: watchdog)) }
            blocks.append((try await onQueue(), fast))
        }
        return blocks
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
