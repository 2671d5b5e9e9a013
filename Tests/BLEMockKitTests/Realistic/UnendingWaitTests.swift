import BLECore
import BLEMockKit
import Foundation
import Testing

/// Waits that nothing in the simulation would end: each is ended by the ATT transaction timeout,
/// fails as CoreBluetooth fails it, or is reported as a stall; none hangs in silence.
@Suite("Waits nothing would end", .timeLimit(.minutes(10)))
struct UnendingWaitTests {
    typealias Setup = TransactionTimeoutTests.Setup

    /// Starts a read of `characteristic` in a task of the run and waits until the bridge has it.
    static func startRead(
        of characteristic: RemoteCharacteristic, in setup: Setup, pending count: Int
    ) async -> Task<Data, any Error> {
        let central = setup.central
        let task = setup.bridge.task { try await central.readValue(for: characteristic) }
        await setup.bridge.waitUntil { $0.pendingOperations.count == count }
        return task
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(
        "A read queued behind a cancelled one nobody answers fails at the first's transaction timeout, not never",
        arguments: [false, true])
    func aRequestBehindACancelledUnansweredOneEnds(realistic: Bool) async throws {
        let setup = try await Setup.make(realistic: realistic)
        let bridge = setup.bridge
        // Nobody reads the manual peripheral's events: the first read is handed to nobody.
        let (error, waited) = try await bridge.run(stallPatience: .seconds(1)) {
            let first = await Self.startRead(of: setup.characteristic, in: setup, pending: 1)
            let second = await Self.startRead(of: setup.other, in: setup, pending: 2)
            let start = await bridge.now
            first.cancel()
            do {
                _ = try await second.value
                throw CancellationError()
            } catch let error as CoreBluetoothError {
                return (error, await bridge.now.offset - start.offset)
            }
        }
        #expect(error == CoreBluetoothError(.connectionTimeout))
        // The first request holds the bearer until its own timeout: at most 30 s from here.
        #expect(waited <= .seconds(30) && waited > .zero)
        #expect(await !setup.central.isConnected(setup.peripheral.identifier))
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(
        "A request handed to a peripheral whose events nobody reads ends at the timeout, and finish() names it",
        arguments: [false, true])
    func aRequestNobodyReadsEnds(realistic: Bool) async throws {
        let setup = try await Setup.make(realistic: realistic)
        let (error, _) = try await setup.leaveUnanswered(.read)
        #expect(error as? CoreBluetoothError == CoreBluetoothError(.connectionTimeout))
        let report = await setup.bridge.finish()
        #expect("\(report)".contains("was never answered"))
        #expect("\(report)".contains("unread events"))
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(
        "A request queued behind an unanswered one fails as invalidated as soon as its service is removed",
        arguments: [false, true])
    func aQueuedRequestOfARemovedServiceFailsAtOnce(realistic: Bool) async throws {
        let setup = try await Setup.make(realistic: realistic)
        let bridge = setup.bridge
        let peripheral = setup.peripheral
        let (error, waited, firstStillWaits) = try await bridge.run {
            _ = await Self.startRead(of: setup.characteristic, in: setup, pending: 1)
            let second = await Self.startRead(of: setup.other, in: setup, pending: 2)
            let start = await bridge.now
            try await peripheral.remove(setup.otherService)
            do {
                _ = try await second.value
                throw CancellationError()
            } catch let error as CoreBluetoothError {
                let waited = await bridge.now.offset - start.offset
                return (error, waited, await bridge.pendingOperations.count == 1)
            }
        }
        #expect(error == CoreBluetoothError(.invalidHandle))
        #expect(error.reason?.contains("removed the service") == true)
        #expect(waited < .seconds(1))
        // The unanswered first read still holds the link.
        #expect(firstStillWaits)
        let refused = await bridge.log.last { $0.kind == .refused }
        #expect(refused?.detail == "invalidated")
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test("A waitUntil whose condition never holds is named in the stall report, with when it began")
    func aConditionThatNeverHoldsIsNamedInTheStall() async throws {
        let bridge = MockBLEBridge(configuration: .init(seed: 22))
        do {
            try await bridge.run(stallPatience: .milliseconds(300)) {
                try await bridge.clock.sleep(for: .seconds(2))
                await bridge.waitUntil { $0.log.contains { $0.kind == .connected } }
            }
            Issue.record("the run should have stalled")
        } catch let stall as MockBLEBridge.Stall {
            #expect(stall.reason == .nothingScheduled)
            #expect(
                stall.waiting == [
                    .operation(
                        "bridge.waitUntil { … } (its condition never held)", central: nil, peripheral: nil,
                        characteristic: nil, since: VirtualClock.Instant(offset: .seconds(2)))
                ])
            #expect(stall.description.contains("bridge.waitUntil { … } (its condition never held) was still waiting"))
            #expect(!stall.description.contains("nothing the bridge knows of"))
        }
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test("A waitForApp whose condition never holds is named in the stall report, with where it was called and when")
    func anAppWaitThatNeverEndsIsNamedInTheStall() async throws {
        let bridge = MockBLEBridge(configuration: .init(seed: 23))
        let line = #line + 4
        do {
            try await bridge.run(stallPatience: .milliseconds(300)) {
                try await bridge.clock.sleep(for: .seconds(2))
                try await bridge.waitForApp { false }
            }
            Issue.record("the run should have stalled")
        } catch let stall as MockBLEBridge.Stall {
            #expect(stall.reason == .nothingScheduled)
            let name =
                "bridge.waitForApp { … } at BLEMockKitTests/UnendingWaitTests.swift:\(line) "
                + "(the app's condition never held)"
            #expect(
                stall.waiting == [
                    .operation(
                        name, central: nil, peripheral: nil, characteristic: nil,
                        since: VirtualClock.Instant(offset: .seconds(2)))
                ])
            #expect(stall.description.contains("\(name) was still waiting (since 2s)"))
            #expect(stall.description.contains("Seed 23"))
        }
    }

    /// App code on its own queue sets what a wait reads without calling the kit (50 ms of its
    /// own set-up): no activity the run hears of. The wait used to miss it and stall after the
    /// run's patience, with its condition holding.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(
        "A waitForApp whose condition comes to hold on the app's own queue, with no call to the kit, ends",
        arguments: [false, true])
    func anAppWaitSeesWhatTheAppDidOnItsOwnQueue(pausingSimulation: Bool) async throws {
        let bridge = MockBLEBridge(configuration: .init(seed: 25))
        let ready = ReadyFlag()
        try await bridge.run(stallPatience: .seconds(5)) {
            DispatchQueue(label: "app").asyncAfter(deadline: .now() + .milliseconds(50)) { ready.set() }
            try await bridge.waitForApp(pausingSimulation: pausingSimulation) { ready.isSet }
        }
        #expect(ready.isSet)
        #expect(await bridge.now == .zero)
    }

    /// A body that swallows its `CancellationError` in a loop never stops when the stall
    /// cancels it: the run still ends, with the stall, leaving the body to the global executor
    /// (it used to keep the run's executor busy, and the run, and an exploration, waiting for
    /// ever). Each turn of this loop waits on the bridge (as a loop reading the bridge's state
    /// does); one that never waits at all holds its thread, which no scope can take back. The
    /// body stops once the test says so.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test("A run whose body swallows cancellation in a loop still ends with its stall")
    func aBodyThatSwallowsCancellationDoesNotKeepTheRunForEver() async throws {
        let bridge = MockBLEBridge(configuration: .init(seed: 26))
        let stop = ReadyFlag()
        let error = await #expect(throws: MockBLEBridge.Stall.self) {
            try await bridge.run(timeLimit: .seconds(5)) {
                while !stop.isSet {
                    try? await bridge.clock.sleep(for: .seconds(1))
                    _ = await bridge.now
                }
            }
        }
        stop.set()
        #expect(error?.reason == .timeLimitReached)
        #expect(error?.at == VirtualClock.Instant(offset: .seconds(5)))
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test("A paused waitForApp that never ends is named as paused; one that ended is not named")
    func aPausedAppWaitIsNamedAsPaused() async throws {
        let bridge = MockBLEBridge(configuration: .init(seed: 24))
        let line = #line + 5
        do {
            try await bridge.run(stallPatience: .milliseconds(300)) {
                try await bridge.waitForApp { true }
                try await bridge.clock.sleep(for: .seconds(1))
                try await bridge.waitForApp(pausingSimulation: true) { false }
            }
            Issue.record("the run should have stalled")
        } catch let stall as MockBLEBridge.Stall {
            #expect(stall.reason == .paused)
            #expect(
                stall.waiting == [
                    .operation(
                        "bridge.waitForApp(pausingSimulation: true) { … } at BLEMockKitTests/UnendingWaitTests.swift:"
                            + "\(line) (the app's condition never held)", central: nil, peripheral: nil,
                        characteristic: nil, since: VirtualClock.Instant(offset: .seconds(1)))
                ])
        }
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test("A wait with nothing scheduled and nobody outside to end it is reported as a stall, with the seed")
    func aWaitNothingCanEndIsAStall() async throws {
        // A connection to a peripheral that does not advertise, with no timeout: nothing is
        // scheduled and nothing outside the run will act.
        let bridge = MockBLEBridge(configuration: .init(seed: 21))
        let peripheral = MockPeripheralManager(bridge: bridge)
        let central = MockCentralManager(bridge: bridge)
        // (No wall-clock bound: under the thread sanitizer the run's task may wait minutes for a
        // thread of the pool; the suite's time limit is what catches a wait that never ends.)
        do {
            try await bridge.run(stallPatience: .milliseconds(300)) {
                try await peripheral.startAdvertising(AdvertisementData(localName: "Gone"))
                try await central.scanForPeripherals(withServices: nil)
                await peripheral.stopAdvertising()
                try await central.connect(peripheral.identifier)
            }
            Issue.record("the run should have stalled")
        } catch let stall as MockBLEBridge.Stall {
            #expect(stall.reason == .nothingScheduled)
            #expect(stall.seed == 21)
            #expect(stall.description.contains("connect"))
        }
    }
}

/// A flag app code sets on its own queue.
private final class ReadyFlag: @unchecked Sendable {
    // @unchecked Sendable: `value` is only read and written with `lock` held.
    private let lock = NSLock()
    private var value = false

    var isSet: Bool { lock.withLock { value } }

    func set() { lock.withLock { value = true } }
}
