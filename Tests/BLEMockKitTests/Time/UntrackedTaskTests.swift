import BLECore
import BLEMockKit
import Testing

/// What a run makes of kit calls from tasks it cannot see: `finish()` lists each, once, with
/// the advice to start such tasks with `bridge.task`; tasks the run tracks leave nothing. (A
/// run cannot see when a plain task starts: with the whole suite on two cores, one may wait for
/// a thread longer than the default stall patience, so those runs are given a long one.)
@Suite("Calls from tasks a run cannot see", .timeLimit(.minutes(10)))
struct UntrackedTaskTests {
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test("A manager's call from a plain Task during a run is listed by finish(), once, with advice")
    func aPlainTasksManagerCallIsListed() async throws {
        let bridge = MockBLEBridge(configuration: .init(seed: 41))
        let central = MockCentralManager(bridge: bridge)
        try await bridge.run(stallPatience: .seconds(120)) {
            _ = await central.waitForPoweredOn()
            for _ in 0..<2 {
                try await Task { try await central.scanForPeripherals(withServices: nil, options: .init()) }.value
            }
            await central.stopScan()
        }
        let report = await bridge.finish()
        let call = "MockCentralManager.scanForPeripherals(withServices:options:)"
        #expect(report == .leftovers([.untrackedCall(call), .seed(41)]))
        #expect("\(report)".contains("\(call) was called during a run from a task the run cannot see"))
        #expect("\(report)".contains("start it with bridge.task { }"))
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test("A sleep on the bridge's clock begun by a plain Task during a run is listed by finish()")
    func aPlainTasksSleepIsListed() async throws {
        let bridge = MockBLEBridge(configuration: .init(seed: 42))
        let woke = try await bridge.run(stallPatience: .seconds(120)) {
            try await Task {
                try await bridge.clock.sleep(for: .seconds(5))
                return bridge.clock.now
            }.value
        }
        #expect(woke >= .zero + .seconds(5))
        #expect(await bridge.finish() == .leftovers([.untrackedCall("MockBLEBridge.clock.sleep"), .seed(42)]))
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test("Sleeps and calls from the run's body, its bridge.task tasks and their children leave nothing")
    func trackedTasksLeaveNothing() async throws {
        let bridge = MockBLEBridge(configuration: .init(seed: 43))
        let central = MockCentralManager(bridge: bridge)
        let woke = try await bridge.run {
            _ = await central.waitForPoweredOn()
            try await bridge.clock.sleep(for: .seconds(1))
            let timer = bridge.task {
                try await bridge.clock.sleep(for: .seconds(2))
                try await central.scanForPeripherals(withServices: nil, options: .init())
            }
            async let child: Void = bridge.clock.sleep(for: .seconds(3))
            try await timer.value
            try await child
            await central.stopScan()
            return bridge.clock.now
        }
        #expect(woke == .zero + .seconds(4))
        #expect(await bridge.finish() == .clean)
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test("A main-actor body's sleep on the bridge's clock is the run's own and is not listed")
    func aMainActorBodysSleepIsNotListed() async throws {
        let bridge = MockBLEBridge(configuration: .init(seed: 44))
        try await bridge.run { @MainActor in
            try await bridge.clock.sleep(for: .seconds(1))
        }
        #expect(await bridge.finish() == .clean)
    }

    @Test("Outside a run, a plain Task's sleep and calls are not listed: nothing moves time behind them")
    func outsideARunNothingIsListed() async throws {
        let bridge = MockBLEBridge(configuration: .init(seed: 45))
        let central = MockCentralManager(bridge: bridge)
        let sleeper = Task { try await bridge.clock.sleep(for: .seconds(1)) }
        await bridge.clock.untilSleeping()
        await bridge.advance(by: .seconds(1))
        try await sleeper.value
        try await Task { try await central.scanForPeripherals(withServices: nil, options: .init()) }.value
        await central.stopScan()
        #expect(await bridge.finish() == .clean)
    }
}
