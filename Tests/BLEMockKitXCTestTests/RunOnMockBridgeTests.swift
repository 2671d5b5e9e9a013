import BLECBM
import BLECore
import BLEMockKit
import BLEMockKitXCTest
import XCTest

/// The XCTest helper, used as a suite not yet on Swift Testing uses it.
final class RunOnMockBridgeTests: XCTestCase {
    actor Seen {
        var seeds: [UInt64] = []
        func add(_ seed: UInt64) { seeds.append(seed) }
    }

    func testTheBodyRunsOncePerSeedOnAFreshBridgeItsManagersShare() async throws {
        guard #available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *) else {
            throw XCTSkip("needs macOS 15")
        }
        let seen = Seen()
        try await runOnMockBridge(.realistic(seed: 0), seeds: [8, 9]) {
            guard let bridge = MockBLEBridge.current else { return XCTFail("no current bridge") }
            XCTAssertEqual(bridge.configuration.timing, .realistic)
            await seen.add(bridge.configuration.seed)
            let central = MockCentralManager()
            XCTAssertTrue(central.bridge === bridge)
            try await bridge.clock.sleep(for: .seconds(2))
        }
        let seeds = await seen.seeds
        XCTAssertEqual(seeds, [8, 9])
    }

    func testWithoutSeedsItRunsOnceWithTheConfigurationsSeed() async throws {
        guard #available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *) else {
            throw XCTSkip("needs macOS 15")
        }
        let seen = Seen()
        try await runOnMockBridge(.init(seed: 21)) {
            await seen.add(MockBLEBridge.current?.configuration.seed ?? 0)
        }
        let seeds = await seen.seeds
        XCTAssertEqual(seeds, [21])
    }

    /// A body that skips the test (`throw XCTSkip(…)`, a condition only known once it runs)
    /// skips it: the helper runs no other seed and throws the skip on. It used to fail the test
    /// ("the test threw on bridge seed 1: XCTSkip(…)"), with the run's files, once per seed.
    func testASkipInTheBodySkipsTheTestAndRunsNoOtherSeed() async throws {
        guard #available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *) else {
            throw XCTSkip("needs macOS 15")
        }
        let seen = Seen()
        do {
            try await runOnMockBridge(seeds: [1, 2]) {
                await seen.add(MockBLEBridge.current?.configuration.seed ?? 0)
                throw XCTSkip("no watch in this configuration")
            }
            XCTFail("the skip was not thrown on")
        } catch let skip as XCTSkip {
            XCTAssertEqual(skip.message, "no watch in this configuration")
        }
        let seeds = await seen.seeds
        XCTAssertEqual(seeds, [1])
    }

    /// App work that takes longer than the default second of stall patience (set-up on the
    /// app's own queue, 1.2 s here) passes with a longer patience: with the default the run
    /// would stall, paused.
    func testAStallPatienceLetsAppWorkTakeLongerThanASecond() async throws {
        guard #available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *) else {
            throw XCTSkip("needs macOS 15")
        }
        final class Flag: @unchecked Sendable {
            // @unchecked Sendable: `value` is only read and written with `lock` held.
            private let lock = NSLock()
            private var value = false
            var isSet: Bool { lock.withLock { value } }
            func set() { lock.withLock { value = true } }
        }
        try await runOnMockBridge(stallPatience: .seconds(30)) {
            guard let bridge = MockBLEBridge.current else { return XCTFail("no current bridge") }
            let done = Flag()
            DispatchQueue(label: "app-work").asyncAfter(deadline: .now() + .milliseconds(1_200)) { done.set() }
            try await bridge.waitForApp(pausingSimulation: true) { done.isSet }
        }
    }

    /// A CoreBluetoothMock-style app that keeps its manager and is the delegate of the peripheral
    /// it connects to: the manager keeps its peripherals, and they keep their delegates, as
    /// CoreBluetoothMock's do.
    final class ConnectingMockApp: NSObject, CBMCentralManagerDelegate, CBMPeripheralDelegate, @unchecked Sendable {
        // @unchecked Sendable: `connected` is only read and written with `lock` held; `manager` is
        // set once, before any callback.
        let lock = NSLock()
        var manager: CBMCentralManager?
        var connected = false

        func centralManagerDidUpdateState(_ central: CBMCentralManager) {
            if central.state == .poweredOn { central.scanForPeripherals(withServices: nil) }
        }

        func centralManager(
            _ central: CBMCentralManager, didDiscover peripheral: CBMPeripheral, advertisementData: [String: Any],
            rssi: NSNumber
        ) {
            central.stopScan()
            peripheral.delegate = self
            central.connect(peripheral)
        }

        func centralManager(_ central: CBMCentralManager, didConnect peripheral: CBMPeripheral) {
            lock.withLock { connected = true }
        }
    }

    func testAMockAppAndItsPeripheralsGoWithTheBridgeOnceTheTestEnds() async throws {
        guard #available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *) else {
            throw XCTSkip("needs macOS 15")
        }
        nonisolated(unsafe) weak var weakBridge: MockBLEBridge?
        nonisolated(unsafe) weak var weakApp: ConnectingMockApp?
        try await runOnMockBridge(.init(seed: 3)) {
            let bridge = try XCTUnwrap(MockBLEBridge.current)
            let tag = CBMPeripheralSpec.simulatePeripheral(proximity: .near)
                .advertising(advertisementData: [CBMAdvertisementDataLocalNameKey: "Tag"], withInterval: 0.1)
                .connectable(name: "Tag", services: [], delegate: nil)
                .build()
            CBMCentralManagerMock.simulatePeripherals([tag])
            let app = ConnectingMockApp()
            app.manager = CBMCentralManagerMock(delegate: app, queue: DispatchQueue(label: "app"))
            try await bridge.waitForApp { app.lock.withLock { app.connected } }
            weakBridge = bridge
            weakApp = app
        }
        // Up to two seconds of wall time for the clean-up already started; a cycle stays.
        for _ in 0..<2_000 where weakApp != nil || weakBridge != nil {
            try await Task.sleep(for: .milliseconds(1))
        }
        XCTAssertNil(weakApp)
        XCTAssertNil(weakBridge)
    }
}
