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

/// Two apps, a phone (central) and a watch (peripheral), each on a queue given by the test (the
/// main queue for one of them, say), with nothing in their delegates: the test makes their
/// calls, one at a time.
private final class QueueApps: @unchecked Sendable {
    // @unchecked Sendable: each manager is only touched on its own queue.
    final class Phone: NSObject, CBMCentralManagerDelegate {
        func centralManagerDidUpdateState(_ central: CBMCentralManager) {}
    }
    final class Watch: NSObject, CBMPeripheralManagerDelegate {
        func peripheralManagerDidUpdateState(_ peripheral: CBMPeripheralManager) {}
    }

    let phoneQueue: DispatchQueue
    let watchQueue: DispatchQueue
    private let phoneOnMain: Bool
    private let watchOnMain: Bool
    private let phone = Phone()
    private let watch = Watch()
    private var central: CBMCentralManager?
    private var peripheral: CBMPeripheralManager?
    private let bridge: MockBLEBridge

    init(bridge: MockBLEBridge, phoneOnMain: Bool, watchOnMain: Bool) {
        self.bridge = bridge
        self.phoneOnMain = phoneOnMain
        self.watchOnMain = watchOnMain
        phoneQueue = phoneOnMain ? .main : DispatchQueue(label: "queue-apps.phone")
        watchQueue = watchOnMain ? .main : DispatchQueue(label: "queue-apps.watch")
    }

    /// Creates both managers, the watch's first, each on its queue.
    func start(isolation: isolated (any Actor)? = #isolation) async throws {
        // (The main queue as `nil`, as apps give it.)
        let bridge = bridge
        try await bridge.runOnAppQueue(watchQueue) {
            self.peripheral = CBMPeripheralManager(
                bridge: bridge, delegate: self.watch, queue: self.watchOnMain ? nil : self.watchQueue)
        }
        try await bridge.runOnAppQueue(phoneQueue) {
            self.central = CBMCentralManager(
                bridge: bridge, delegate: self.phone, queue: self.phoneOnMain ? nil : self.phoneQueue)
        }
    }

    func scan(isolation: isolated (any Actor)? = #isolation) async throws {
        try await bridge.runOnAppQueue(phoneQueue) { self.central!.scanForPeripherals(withServices: nil) }
    }

    func stopScan(isolation: isolated (any Actor)? = #isolation) async throws {
        try await bridge.runOnAppQueue(phoneQueue) { self.central!.stopScan() }
    }

    func advertise(isolation: isolated (any Actor)? = #isolation) async throws {
        try await bridge.runOnAppQueue(watchQueue) {
            self.peripheral!.startAdvertising([CBMAdvertisementDataLocalNameKey: "Watch"])
        }
    }

    func stopAdvertising(isolation: isolated (any Actor)? = #isolation) async throws {
        try await bridge.runOnAppQueue(watchQueue) { self.peripheral!.stopAdvertising() }
    }
}

extension WaitForAppSettlingTests {
    /// Where the test body runs and which app is on the main queue.
    enum Placement: CaseIterable, Sendable {
        case bodyOnMainActorPhoneOnMainQueue
        case bodyOnMainActorWatchOnMainQueue
        case bodyOnRunExecutorAppsOnTheirOwnQueues
    }

    /// Alternates the phone's and the watch's calls at one virtual instant, each made on its
    /// app's queue and waited for; returns the kinds of the bridge log's entries after start-up.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    private func alternateCalls(_ placement: Placement) async throws -> [BridgeLogEntry.Kind] {
        let bridge = MockBLEBridge(seed: 8)
        let apps = QueueApps(
            bridge: bridge, phoneOnMain: placement == .bodyOnMainActorPhoneOnMainQueue,
            watchOnMain: placement == .bodyOnMainActorWatchOnMainQueue)
        let body: @Sendable (isolated (any Actor)?) async throws -> Void = { _ in
            try await apps.start()
            await bridge.advance(by: .seconds(1))
            for _ in 0..<3 {
                try await apps.scan()
                try await apps.advertise()
                try await apps.stopScan()
                try await apps.stopAdvertising()
            }
            await bridge.advance(by: .seconds(1))
        }
        if placement == .bodyOnRunExecutorAppsOnTheirOwnQueues {
            try await bridge.run { try await body(nil) }
        } else {
            try await bridge.run { @MainActor in try await body(MainActor.shared) }
        }
        return await bridge.log.filter { $0.time > .zero }.map(\.kind)
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(arguments: Placement.allCases)
    func callsTwoAppsMakeOnTheirQueuesOneAfterTheOtherAtOneInstantAreAppliedInTheOrderTheyWereMade(
        placement: Placement
    ) async throws {
        // (Before, with the body on the main actor, the run's driver applied the calls held so
        // far whenever it got to them: two of a row were then put in their apps' order, and the
        // log changed from run to run; with the body on the run's executor every call was held
        // until time moved, and all the phone's were applied before all the watch's.)
        let round: [BridgeLogEntry.Kind] = [
            .scanStarted, .advertisingStarted, .discovered, .scanStopped, .advertisingStopped,
        ]
        for _ in 0..<10 {
            let kinds = try await alternateCalls(placement)
            #expect(kinds == round + round + round)
        }
    }
}
