import BLECBM
import BLEMockKit
import BLEMockKitTesting
import Foundation
import Testing

/// A CoreBluetoothMock-style app as the nRF Blinky app is written: a `CBMCentralManagerMock`
/// whose delegate it is, and the peripheral it connects to, which it keeps and is the delegate
/// of. A `CBMCentralManagerMock`'s peripheral keeps its delegate, as CoreBluetoothMock's does,
/// so the app and its peripheral hold each other.
final class PeripheralKeepingApp: NSObject, CBMCentralManagerDelegate, CBMPeripheralDelegate,
    @unchecked Sendable
{
    // @unchecked Sendable: every mutable property is only read and written with `lock` held.
    private let lock = NSLock()
    private var storedManager: CBMCentralManager?
    private var storedPeripheral: CBMPeripheral?
    private var storedServices = 0

    /// Makes the app's manager where it is called: on the current bridge in a test's scope, on the
    /// installed simulated system elsewhere.
    func start(queue: DispatchQueue) {
        let manager = CBMCentralManagerMock(delegate: self, queue: queue)
        lock.withLock { storedManager = manager }
    }

    var manager: CBMCentralManager? { lock.withLock { storedManager } }

    /// Lets go of the manager (the app keeps its peripheral).
    func dropManager() {
        let manager = lock.withLock { storedManager.take() }
        _ = manager
    }
    var peripheral: CBMPeripheral? { lock.withLock { storedPeripheral } }
    /// How many services the app discovered.
    var services: Int { lock.withLock { storedServices } }

    func centralManagerDidUpdateState(_ central: CBMCentralManager) {
        if central.state == .poweredOn { central.scanForPeripherals(withServices: nil) }
    }

    func centralManager(
        _ central: CBMCentralManager, didDiscover peripheral: CBMPeripheral, advertisementData: [String: Any],
        rssi: NSNumber
    ) {
        guard lock.withLock({ storedPeripheral == nil }) else { return }
        lock.withLock { storedPeripheral = peripheral }
        peripheral.delegate = self
        central.stopScan()
        central.connect(peripheral)
    }

    func centralManager(_ central: CBMCentralManager, didConnect peripheral: CBMPeripheral) {
        peripheral.discoverServices(nil)
    }

    func peripheral(_ peripheral: CBMPeripheral, didDiscoverServices error: (any Error)?) {
        lock.withLock { storedServices = peripheral.services?.count ?? 0 }
    }

    /// A watch advertising one service, near.
    static func watch() -> CBMPeripheralSpec {
        CBMPeripheralSpec.simulatePeripheral(proximity: .near)
            .advertising(advertisementData: [CBMAdvertisementDataLocalNameKey: "Watch"], withInterval: 0.1)
            .connectable(
                name: "Watch", services: [CBMServiceMock(type: CBMUUID(string: "180D"), primary: true)], delegate: nil
            )
            .build()
    }
}

/// Weak references to what a test made, read after the test's scope.
final class Remains: @unchecked Sendable {
    // @unchecked Sendable: `entries` is only read and written with `lock` held.
    private let lock = NSLock()
    private var entries: [(name: String, reference: @Sendable () -> AnyObject?)] = []

    func add(_ object: AnyObject?, _ name: String) {
        nonisolated(unsafe) weak let weak = object
        lock.withLock { entries.append((name, { weak })) }
    }

    /// The names of those still alive after up to two seconds of wall time (for clean-up work
    /// already started); a cycle stays.
    func aliveAfterCleanUps() async -> [String] {
        func alive() -> [String] { lock.withLock { entries.filter { $0.reference() != nil }.map(\.name) } }
        for _ in 0..<2_000 where !alive().isEmpty {
            try? await Task.sleep(for: .milliseconds(1))
        }
        return alive()
    }
}

@Suite("The end of a test's bridge", .timeLimit(.minutes(10)))
struct TestEndReleaseTests {
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(arguments: [false, true])
    func aMockAppKeepingItsPeripheralGoesWithTheTraitsBridgeOnceTheTestEnds(realistic: Bool) async throws {
        let remains = Remains()
        let test = try #require(Test.current)
        do {
            let trait: MockBridgeTrait = realistic ? .mockBridge(.realistic(seed: 5)) : .mockBridge(seeds: [5])
            try await trait.provideScope(for: test, testCase: Test.Case.current) {
                let bridge = try #require(MockBLEBridge.current)
                CBMCentralManagerMock.simulatePeripherals([PeripheralKeepingApp.watch()])
                let app = PeripheralKeepingApp()
                app.start(queue: DispatchQueue(label: "app"))
                try await bridge.waitForApp { app.services == 1 }
                // In the test, the peripheral keeps its delegate, as CoreBluetoothMock's does.
                #expect(app.peripheral?.delegate === app)
                remains.add(bridge, "the bridge")
                remains.add(app, "the app")
                remains.add(app.manager, "the manager")
                remains.add(app.peripheral, "the peripheral")
            }
        }
        #expect(await remains.aliveAfterCleanUps() == [])
    }

    // A test on a bridge of its own ends the simulation with `finish()`: the app goes then.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(arguments: [false, true])
    func aMockAppKeepingItsPeripheralGoesWithABridgeOfTheTestsOwnOnceTheTestFinishesIt(realistic: Bool)
        async throws
    {
        let remains = Remains()
        do {
            let bridge = MockBLEBridge(configuration: realistic ? .realistic(seed: 7) : .init(seed: 7))
            try await bridge.run {
                CBMCentralManagerMock.simulatePeripherals([PeripheralKeepingApp.watch()])
                let app = PeripheralKeepingApp()
                app.start(queue: DispatchQueue(label: "app"))
                try await bridge.waitForApp { app.services == 1 }
                remains.add(app, "the app")
                remains.add(app.manager, "the manager")
                remains.add(app.peripheral, "the peripheral")
            }
            // Between runs the test goes on: the peripheral still keeps its delegate.
            #expect(await remains.aliveAfterCleanUps() == ["the app", "the manager", "the peripheral"])
            remains.add(bridge, "the bridge")
            #expect(await bridge.finish() == .clean)
        }
        #expect(await remains.aliveAfterCleanUps() == [])
    }

    // With its manager gone, a peripheral object hears nothing more: it lets go of its delegate
    // then, whether or not the test has ended.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(arguments: [false, true])
    func aMockAppKeepingItsPeripheralButNotItsManagerGoesWithTheManager(realistic: Bool) async throws {
        let remains = Remains()
        let bridge = MockBLEBridge(configuration: realistic ? .realistic(seed: 8) : .init(seed: 8))
        try await bridge.run {
            CBMCentralManagerMock.simulatePeripherals([PeripheralKeepingApp.watch()])
            let app = PeripheralKeepingApp()
            app.start(queue: DispatchQueue(label: "app"))
            try await bridge.waitForApp { app.services == 1 }
            remains.add(app.manager, "the manager")
            app.dropManager()
            #expect(await remains.aliveAfterCleanUps() == [])
            // The app keeps its peripheral, which keeps its delegate no longer.
            #expect(app.peripheral?.delegate === app)
            remains.add(app, "the app")
            remains.add(app.peripheral, "the peripheral")
        }
        // The bridge goes on (the test has not finished it): the app and its peripheral have gone.
        #expect(await remains.aliveAfterCleanUps() == [])
        #expect(await bridge.waitingOperations == [])
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test func anAppTheTestStillKeepsAfterItsBridgeEndsKeepsItsPeripheralAndHearsNothingMore() async throws {
        let test = try #require(Test.current)
        let kept = PeripheralKeepingApp()
        try await MockBridgeTrait.mockBridge(seeds: [6]).provideScope(for: test, testCase: Test.Case.current) {
            let bridge = try #require(MockBLEBridge.current)
            CBMCentralManagerMock.simulatePeripherals([PeripheralKeepingApp.watch()])
            kept.start(queue: DispatchQueue(label: "app"))
            try await bridge.waitForApp { kept.services == 1 }
        }
        // The test keeps the app: the app keeps its peripheral, whose delegate it still is.
        #expect(kept.peripheral?.delegate === kept)
        #expect(kept.peripheral?.state == .connected)
    }
}
