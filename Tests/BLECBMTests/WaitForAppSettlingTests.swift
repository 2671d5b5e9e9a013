import BLECBM
import BLECore
import BLEMockKit
import Foundation
import Testing

/// A central app on a queue of its own whose state callback is slow: it notes that it is powered
/// on, starts a scan (a call the kit notes as the app's activity, which wakes the test's waits),
/// takes a moment (bounded, on the wall clock: an app doing work), then stops the scan.
private final class SlowCallbackApp: NSObject, CBMCentralManagerDelegate, @unchecked Sendable {
    // @unchecked Sendable: `poweredOn` and `callbackEnded` are read and written with `lock` held;
    // `manager` is set once, before the manager's first callback can run.
    let queue = DispatchQueue(label: "slow-callback-app")
    private let lock = NSLock()
    private var storedPoweredOn = false
    private var storedCallbackEnded = false
    private(set) var manager: CBMCentralManager?

    override init() {
        super.init()
        manager = CBMCentralManager(delegate: self, queue: queue)
    }

    /// Whether the state callback has seen the manager powered on.
    var poweredOn: Bool { lock.withLock { storedPoweredOn } }
    /// Whether that callback has returned.
    var callbackEnded: Bool { lock.withLock { storedCallbackEnded } }

    func centralManagerDidUpdateState(_ central: CBMCentralManager) {
        guard central.state == .poweredOn else { return }
        lock.withLock { storedPoweredOn = true }
        central.scanForPeripherals(withServices: nil)
        _ = DispatchSemaphore(value: 0).wait(timeout: .now() + .milliseconds(100))
        central.stopScan()
        lock.withLock { storedCallbackEnded = true }
    }
}

@Suite("Waiting for the app in a run", .timeLimit(.minutes(10)))
struct WaitForAppSettlingTests {
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test func aWaitReturnsOnceTheCallbackThatMadeItsConditionHoldHasReturned() async throws {
        let bridge = MockBLEBridge()
        let ended = try await bridge.run { () -> Bool in
            let app = SlowCallbackApp()
            try await bridge.waitForApp { app.poweredOn }
            return app.callbackEnded
        }
        #expect(ended)
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(arguments: [false, true])
    func aTestHookCalledAfterTheWaitComesAfterTheCallsThatCallbackMade(realistic: Bool) async throws {
        let bridge = MockBLEBridge(configuration: realistic ? .realistic(seed: 4) : .init(seed: 4))
        let watch = MockPeripheralManager(bridge: bridge)
        try await watch.startAdvertising(AdvertisementData(localName: "Watch"))
        try await bridge.run {
            let app = SlowCallbackApp()
            try await bridge.waitForApp { app.poweredOn }
            await watch.stopAdvertising()
            withExtendedLifetime(app) {}
        }
        let kinds = await bridge.log.map(\.kind).filter {
            [.scanStarted, .scanStopped, .advertisingStopped].contains($0)
        }
        #expect(kinds == [.scanStarted, .scanStopped, .advertisingStopped])
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test func aWaitGoesOnWhenItsConditionNoLongerHoldsOnceTheCallbackHasReturned() async throws {
        let bridge = MockBLEBridge()
        // The condition holds only while the callback runs: once it has returned, nothing more
        // happens, so the wait ends as a run's waits do when nothing can change, with a stall.
        let stall = await #expect(throws: MockBLEBridge.Stall.self) {
            try await bridge.run(stallPatience: .milliseconds(300)) {
                let app = SlowCallbackApp()
                try await bridge.waitForApp { app.poweredOn && !app.callbackEnded }
            }
        }
        #expect(stall?.reason == .nothingScheduled)
        #expect(stall?.waiting.map { "\($0)" }.filter { $0.contains("bridge.waitForApp") }.count == 1)
    }
}
