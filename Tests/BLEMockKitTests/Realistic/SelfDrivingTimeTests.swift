import BLECore
import BLEMockKit
import Foundation
import Testing

/// An app-shaped heart-rate client: it owns a task that reacts to the central's events —
/// connects when the sensor is discovered, subscribes, counts readings, reconnects after a
/// disconnect — and the test waits for its readings, never advancing time itself.
actor HeartRateClient {
    let central: MockCentralManager
    private(set) var readings: [UInt8] = []
    private(set) var connections = 0
    private var waiters: [(count: Int, continuation: CheckedContinuation<Void, Never>)] = []

    init(central: MockCentralManager) {
        self.central = central
    }

    /// Reacts to events until the stream ends.
    func run(events: AsyncStream<CentralEvent>) async throws {
        for await event in events {
            switch event {
            case .stateChanged(.poweredOn):
                try await central.scanForPeripherals(withServices: [TestPeripherals.heartRateService])
            case .discovered(let found):
                await central.stopScan()
                try await central.connect(found.identifier)
                connections += 1
                let characteristics = try await central.discoverAll(for: found.identifier)
                try await central.setNotifyValue(true, for: characteristics[0])
            case .disconnected(let peripheral, _):
                try await central.connect(peripheral.identifier)
                connections += 1
                let characteristics = try await central.discoverAll(for: peripheral.identifier)
                try await central.setNotifyValue(true, for: characteristics[0])
            case .valueUpdated(_, let value):
                readings.append(value.last ?? 0)
                let ready = waiters.filter { $0.count <= readings.count }
                waiters.removeAll { $0.count <= readings.count }
                for waiter in ready { waiter.continuation.resume() }
            default:
                break
            }
        }
    }

    /// Returns once `count` readings arrived.
    func untilReadings(_ count: Int) async {
        guard readings.count < count else { return }
        await withCheckedContinuation { waiters.append((count, $0)) }
    }
}

@Suite("Self-driving virtual time", .timeLimit(.minutes(10)))
struct SelfDrivingTimeTests {
    /// A sensor that starts advertising after two seconds and then notifies every second.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    static func sensor(on bridge: MockBLEBridge, beats: Int) async throws -> MockPeripheralManager {
        let peripheral = MockPeripheralManager(
            configuration: .realistic(seed: bridge.configuration.seed), bridge: bridge)
        _ = await peripheral.waitForPoweredOn()
        let service = try await peripheral.add(TestPeripherals.heartRate)
        bridge.task {
            try await bridge.clock.sleep(for: .seconds(2))
            try await peripheral.startAdvertising(
                AdvertisementData(localName: "HRM", serviceUUIDs: [TestPeripherals.heartRateService]))
            var beat: UInt8 = 0
            while beat < beats {
                try await bridge.clock.sleep(for: .seconds(1))
                if try await peripheral.updateValue(Data([0, 60 + beat]), for: service.characteristics[0]) {
                    beat += 1
                }
            }
        }
        return peripheral
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test("An event-driven client connects, subscribes and gets its readings with no advance in the test")
    func appShapedClient() async throws {
        let bridge = MockBLEBridge(configuration: .realistic(seed: 11))
        let readings = try await bridge.run {
            _ = try await Self.sensor(on: bridge, beats: 5)
            let central = MockCentralManager(configuration: .realistic(seed: 11), bridge: bridge)
            let client = HeartRateClient(central: central)
            let events = central.events()
            let run = bridge.task { try await client.run(events: events) }
            _ = await central.waitForPoweredOn()
            try await central.scanForPeripherals(withServices: [TestPeripherals.heartRateService])
            await client.untilReadings(5)
            run.cancel()
            return await client.readings
        }
        #expect(readings == [60, 61, 62, 63, 64])
        let now = await bridge.now
        #expect(now > .zero.advanced(by: .seconds(6)) && now < .zero.advanced(by: .seconds(8)), "\(now)")
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test("Code waiting for an event that cannot come fails within two seconds with a report naming the wait")
    func stallIsReported() async throws {
        let bridge = MockBLEBridge(configuration: .realistic(seed: 3))
        let wall = WallInstants()
        do {
            try await bridge.run(stallPatience: .milliseconds(200)) {
                let central = MockCentralManager(configuration: .realistic(seed: 3), bridge: bridge)
                _ = await central.waitForPoweredOn()
                var events = central.events().makeAsyncIterator()
                wall.mark()
                _ = await events.next()  // nothing will ever happen: the stall cancels this wait
                wall.mark()
            }
            Issue.record("the run should have stalled")
        } catch let stall as MockBLEBridge.Stall {
            #expect(stall.reason == .nothingScheduled)
            #expect(stall.seed == 3)
            #expect(stall.waiting.contains { if case .eventWait = $0 { return true } else { return false } })
            #expect(stall.description.contains("Seed 3"))
        }
        // From the hopeless wait to its cancellation by the stall report, on the run's thread.
        #expect(try #require(wall.elapsed) < .seconds(2))
    }

    /// Holds a continuation nobody resumes during the run (resumed after it, to let the task go).
    final class Parked: @unchecked Sendable {
        // @unchecked Sendable: `continuation` is only read and written with `lock` held.
        private let lock = NSLock()
        private var continuation: CheckedContinuation<Void, Never>?

        func park(_ continuation: CheckedContinuation<Void, Never>) {
            lock.withLock { self.continuation = continuation }
        }

        func release() { lock.withLock { continuation.take() }?.resume() }
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(
        "In a run, a watchdog on the clock wakes at its deadline during a longer connection attempt and can cancel it")
    func aWatchdogWakesDuringAConnectionAttempt() async throws {
        var configuration = MockBLEBridge.Configuration.realistic(seed: 5)
        configuration.timing.jitter = .zero
        configuration.timing.connectionLatency = .milliseconds(500) ... .milliseconds(500)
        let bridge = MockBLEBridge(configuration: configuration)
        try await bridge.run {
            let sensor = MockPeripheralManager(bridge: bridge)
            try await sensor.startAdvertising(AdvertisementData(localName: "Sensor"))
            let central = MockCentralManager(bridge: bridge)
            let events = central.events()
            try await central.scanForPeripherals(withServices: nil)
            _ = await events.first {
                if case .discovered = $0 { true } else { false }
            }
            await central.stopScan()
            let start = await bridge.now
            let connecting = bridge.task { try await central.connect(sensor.identifier) }
            // The app's watchdog allows 200 ms; the link takes 500 ms to come up. The attempt,
            // once made, does not run the schedule ahead of the watchdog: time moves one event
            // at a time while every task of the run waits.
            try await bridge.clock.sleep(for: .milliseconds(200))
            #expect(await bridge.now == start.advanced(by: .milliseconds(200)))
            #expect(await !central.isConnected(sensor.identifier))
            connecting.cancel()
            await #expect(throws: CancellationError.self) { try await connecting.value }
            #expect(await !central.isConnected(sensor.identifier))
            #expect(await bridge.now == start.advanced(by: .milliseconds(200)))
        }
    }

    /// (Its suite's time limit is what catches the old failure: the run waited for ever. A
    /// tighter limit would fail it on a loaded machine, under the thread sanitizer, where the
    /// test's task may wait minutes for a thread of the concurrency pool.)
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(
        "A body waiting on something cancellation cannot end still gets its stall report, and ends once resumed after the run"
    )
    func stallOfABodyThatIgnoresCancellation() async throws {
        let bridge = MockBLEBridge(seed: 8)
        let parked = Parked()
        let retained = WeakReferences()
        do {
            // Held by the body alone: it goes when the body's task ends.
            let held = Parked()
            retained.watch(held, "what the body holds")
            try await bridge.run(stallPatience: .milliseconds(200)) {
                // A continuation of the code's own, which the stall's cancellation does not end.
                await withCheckedContinuation { parked.park($0) }
                withExtendedLifetime(held) {}
            }
            Issue.record("the run should have stalled")
        } catch let stall as MockBLEBridge.Stall {
            #expect(stall.reason == .nothingScheduled)
            #expect(stall.waiting.isEmpty)
            #expect(stall.description.contains("outside the simulation"))
        }
        // Resumed after its run's executor stopped, the body still runs to its end (before, it
        // waited for ever for a thread that was gone, holding all it captured).
        parked.release()
        #expect(await retained.aliveAfterCleanUps() == [])
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(
        "A task the run started ends with the run: a device serving its events for ever is cancelled, and the bridge goes",
        arguments: [false, true])
    func aTrackedTaskEndsWithTheRun(stalls: Bool) async throws {
        let retained = WeakReferences()
        // (A stalled run returns no handle of the tracked task; the bridge must go all the same.)
        var served: Task<Int, any Error>?
        do {
            let bridge = MockBLEBridge(seed: 9)
            let peripheral = MockPeripheralManager(bridge: bridge)
            retained.watch(bridge, "the bridge")
            retained.watch(peripheral, "the device's manager")
            served = try await bridge.run(stallPatience: .milliseconds(100)) { () -> Task<Int, any Error> in
                let events = peripheral.events()
                _ = await peripheral.waitForPoweredOn()
                // A simulated device's loop: it holds its manager (and so the bridge), and its
                // event stream ends only when the manager goes.
                let served = bridge.task { () -> Int in
                    var count = 0
                    for await _ in events { count += 1 }
                    _ = peripheral
                    return count
                }
                if stalls {
                    // Waits for an event no one will cause: the run stalls.
                    let central = MockCentralManager(bridge: bridge)
                    _ = await central.waitForPoweredOn()
                    for await _ in central.events() {}
                }
                return served
            }
            if stalls { Issue.record("the run should have stalled") }
        } catch let stall as MockBLEBridge.Stall {
            #expect(stalls)
            #expect(stall.reason == .nothingScheduled)
        }
        let alive = await retained.aliveAfterCleanUps()
        #expect(alive == [])
        if let served {
            #expect(served.isCancelled)
            // The task let go of the device's manager: it has ended, and its value is there
            // (awaited only then: a task still running would keep this test waiting).
            if alive.isEmpty { _ = try? await served.value }
        }
    }
}

@Suite("Connections and state that need no driving", .timeLimit(.minutes(10)))
struct UndrivenLifecycleTests {
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test("A realistic manager watched only through its events powers on by itself, reporting each step")
    func realisticManagerPowersOnWhileWatched() async throws {
        let bridge = MockBLEBridge(configuration: .realistic(seed: 4))
        let states = try await bridge.run {
            let central = MockCentralManager(configuration: .realistic(seed: 4), bridge: bridge)
            return await central.events().prefixArray(2)
        }
        #expect(states == [.stateChanged(.resetting), .stateChanged(.poweredOn)])
        #expect(await bridge.now == VirtualClock.Instant(offset: .milliseconds(100)))
    }

    @Test("A fast manager reports its state once, before anything else, to a stream opened at creation")
    func fastManagerReportsItsStateOnce() async throws {
        let bridge = MockBLEBridge()
        let central = MockCentralManager(bridge: bridge)
        let events = central.events()
        try await central.scanForPeripherals(withServices: nil)
        await central.simulateStateChange(.poweredOff)
        _ = await bridge.finish()
        #expect(await Realistic.drain(events) == [.stateChanged(.poweredOn), .stateChanged(.poweredOff)])
    }

    @Test("A second connect to a pending peripheral gives up at its own timeout; the first still completes")
    func eachConnectHasItsOwnTimeout() async throws {
        let bridge = MockBLEBridge()
        let peripheral = MockPeripheralManager(bridge: bridge)
        try await peripheral.startAdvertising(AdvertisementData(localName: "Late"))
        let central = MockCentralManager(bridge: bridge)
        try await central.scanForPeripherals(withServices: nil)
        await peripheral.stopAdvertising()
        let first = Task { try await central.connect(peripheral.identifier) }
        await bridge.waitUntil { $0.pendingOperations.count == 1 }
        await #expect(throws: CoreBluetoothError(.connectionTimeout)) {
            try await central.connect(peripheral.identifier, options: ConnectOptions(timeout: .seconds(1)))
        }
        #expect(await bridge.now == VirtualClock.Instant(offset: .seconds(1)))
        #expect(await bridge.pendingOperations.count == 1)  // the first call still waits
        try await peripheral.startAdvertising(AdvertisementData(localName: "Back"))
        try await first.value
        #expect(await central.isConnected(peripheral.identifier))
    }

    @Test("A pending connect completes when the advertisement changes from non-connectable to connectable")
    func connectableAdvertisementCompletesAPendingConnect() async throws {
        let bridge = MockBLEBridge()
        let peripheral = MockPeripheralManager(bridge: bridge)
        try await peripheral.startAdvertising(AdvertisementData(localName: "Scan me"))
        let central = MockCentralManager(bridge: bridge)
        try await central.scanForPeripherals(withServices: nil)
        await peripheral.stopAdvertising()
        let attempt = Task { try await central.connect(peripheral.identifier) }
        await bridge.waitUntil { $0.pendingOperations.count == 1 }
        try await peripheral.startAdvertising(AdvertisementData(localName: "Beacon", isConnectable: false))
        #expect(await !central.isConnected(peripheral.identifier))
        await peripheral.simulateAdvertisementChange(AdvertisementData(localName: "Beacon", isConnectable: true))
        try await attempt.value
        #expect(await central.isConnected(peripheral.identifier))
    }
}
