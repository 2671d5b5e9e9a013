import BLECBM
import BLECore
import BLEMockKit
import Foundation
import Testing

/// A central app on a queue of its own whose state callback is slow: it notes that it is powered
/// on, starts a scan (a call the kit notes as the app's activity, which wakes the test's waits),
/// takes a moment (bounded, on the wall clock: an app doing work), then stops the scan.
private final class SlowCallbackApp: NSObject, CBMCentralManagerDelegate, @unchecked Sendable {
    // @unchecked Sendable: `manager` is set once, before the manager's first callback can run.
    let queue = DispatchQueue(label: "slow-callback-app")
    /// Whether the state callback has seen the manager powered on.
    let poweredOn = LockedValue(false)
    /// Whether that callback has returned.
    let callbackEnded = LockedValue(false)
    private(set) var manager: CBMCentralManager?

    override init() {
        super.init()
        manager = CBMCentralManager(delegate: self, queue: queue)
    }

    func centralManagerDidUpdateState(_ central: CBMCentralManager) {
        guard central.state == .poweredOn else { return }
        poweredOn.value = true
        central.scanForPeripherals(withServices: nil)
        _ = DispatchSemaphore(value: 0).wait(timeout: .now() + .milliseconds(100))
        central.stopScan()
        callbackEnded.value = true
    }
}

@Suite("Waiting for the app in a run", .timeLimit(.minutes(10)))
struct WaitForAppSettlingTests {
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test func aWaitReturnsOnceTheCallbackThatMadeItsConditionHoldHasReturned() async throws {
        let bridge = MockBLEBridge()
        let ended = try await bridge.run { () -> Bool in
            let app = SlowCallbackApp()
            try await bridge.waitForApp { app.poweredOn.value }
            return app.callbackEnded.value
        }
        #expect(ended)
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test func aCallbackLongerThanTheStallPatienceIsWaitedForNotTakenForAStall() async throws {
        let bridge = MockBLEBridge()
        let ended = try await bridge.run(stallPatience: .milliseconds(20)) { () -> Bool in
            let app = SlowCallbackApp()
            try await bridge.waitForApp { app.poweredOn.value }
            return app.callbackEnded.value
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
            try await bridge.waitForApp { app.poweredOn.value }
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
                try await bridge.waitForApp { app.poweredOn.value && !app.callbackEnded.value }
            }
        }
        #expect(stall?.reason == .nothingScheduled)
        #expect(stall?.waiting.map { "\($0)" }.filter { $0.contains("bridge.waitForApp") }.count == 1)
    }
}
