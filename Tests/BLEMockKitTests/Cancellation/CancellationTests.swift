import BLECore
import BLEMockKit
import Foundation
import Testing

/// Every suspending call of the managers returns `CancellationError` when its task is
/// cancelled while it waits, leaves nothing pending, and lets the bridge and managers go.
@Suite("Cancellation of waiting calls", .timeLimit(.minutes(10)))
struct CancellationTests {
    /// A call that waits for ever until cancelled, and how to set it up.
    enum Call: String, CaseIterable, CustomTestStringConvertible, Sendable {
        case connect, discoverServices, discoverIncludedServices, discoverCharacteristics, discoverDescriptors
        case readCharacteristic, readFromManualPeripheral, readDescriptor, writeWithResponse, writeDescriptor
        case setNotifyValue, readRSSI

        var testDescription: String { rawValue }

        /// The injection that makes the call wait for an answer that never comes.
        var injection: ErrorInjection.Operation? {
            switch self {
            case .connect, .readFromManualPeripheral: nil
            case .discoverServices, .discoverIncludedServices: .serviceDiscovery
            case .discoverCharacteristics: .characteristicDiscovery
            case .discoverDescriptors: .descriptorDiscovery
            case .readCharacteristic, .readDescriptor: .read
            case .writeWithResponse, .writeDescriptor: .write
            case .setNotifyValue: .subscribe
            case .readRSSI: .readRSSI
            }
        }

        /// Starts the call on `rig`; it waits.
        func start(on rig: Rig) -> Task<Void, any Error> {
            let central = rig.central
            let peripheral = rig.peripheral.identifier
            let value = rig.remote(RigUUID.value)
            return Task {
                switch self {
                case .connect:
                    try await central.cancelPeripheralConnection(peripheral)
                    await rig.peripheral.stopAdvertising()
                    try await central.connect(peripheral)
                case .discoverServices: _ = try await central.discoverServices(nil, for: peripheral)
                case .discoverIncludedServices:
                    _ = try await central.discoverIncludedServices(nil, for: rig.remoteService)
                case .discoverCharacteristics:
                    _ = try await central.discoverCharacteristics(nil, for: rig.remoteService)
                case .discoverDescriptors: _ = try await central.discoverDescriptors(for: value)
                case .readCharacteristic, .readFromManualPeripheral: _ = try await central.readValue(for: value)
                case .readDescriptor: _ = try await central.readValue(for: rig.userDescription)
                case .writeWithResponse: try await central.writeValue(Data([1]), for: value, type: .withResponse)
                case .writeDescriptor: try await central.writeValue(Data([1]), for: rig.userDescription)
                case .setNotifyValue: try await central.setNotifyValue(true, for: value)
                case .readRSSI: _ = try await central.readRSSI(for: peripheral)
                }
            }
        }
    }

    @Test(
        "A waiting call returns CancellationError when cancelled, leaves nothing pending, and frees the bridge",
        arguments: Call.allCases)
    func cancelledCallEnds(_ call: Call) async throws {
        weak var weakBridge: MockBLEBridge?
        weak var weakCentral: MockCentralManager?
        weak var weakPeripheral: MockPeripheralManager?
        do {
            let rig = try await Rig.make(requestHandling: call == .readFromManualPeripheral ? .manual : .automatic)
            weakBridge = rig.bridge
            weakCentral = rig.central
            weakPeripheral = rig.peripheral
            if let operation = call.injection {
                await rig.central.inject(ErrorInjection(operation, failure: .neverAnswers))
            }
            let task = call.start(on: rig)
            await rig.bridge.waitUntil { $0.pendingOperations.count == 1 }
            task.cancel()
            await #expect(throws: CancellationError.self) { try await task.value }
            await rig.bridge.waitUntil { $0.pendingOperations.isEmpty }
            #expect(await rig.bridge.pendingOperations.isEmpty)
        }
        #expect(weakBridge == nil)
        #expect(weakCentral == nil)
        #expect(weakPeripheral == nil)
    }

    @Test("A call made by a task already cancelled starts nothing and throws CancellationError")
    func alreadyCancelledCallStartsNothing() async throws {
        let rig = try await Rig.make()
        let pdus = await rig.bridge.attPDUCount
        let task = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            try await rig.central.writeValue(Data([9]), for: rig.remote(RigUUID.value), type: .withResponse)
        }
        await #expect(throws: CancellationError.self) { try await task.value }
        #expect(await rig.bridge.attPDUCount == pdus)
        #expect(try await rig.central.readValue(for: rig.remote(RigUUID.value)).isEmpty)
    }

    @Test("Cancelling a wait for a condition on the bridge ends it")
    func cancelledConditionWaitEnds() async throws {
        let bridge = MockBLEBridge()
        let wait = Task { await bridge.waitUntil { $0.now > .zero } }
        wait.cancel()
        await wait.value
        #expect(await bridge.now == .zero)
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test("Cancelling a run cancels its body, whose waiting calls end")
    func cancelledRunEndsItsBody() async throws {
        let bridge = MockBLEBridge(configuration: .realistic(seed: 2))
        let started = AsyncStream<Void>.makeStream()
        let run = Task {
            // Once the body waits on its stream, nothing is scheduled: the run would report a
            // stall after its patience (wall-clock), so the patience is long enough that the
            // cancellation, however late a loaded machine delivers it, always comes first.
            try await bridge.run(stallPatience: .seconds(600)) {
                let central = MockCentralManager(configuration: .realistic(seed: 2), bridge: bridge)
                var events = central.events().makeAsyncIterator()
                started.continuation.yield()
                while await events.next() != nil {}
                try Task.checkCancellation()
            }
        }
        var iterator = started.stream.makeAsyncIterator()
        await iterator.next()
        run.cancel()
        await #expect(throws: CancellationError.self) { try await run.value }
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test("Cancelling a run whose body waits on a task of the run ends the run and cancels the task")
    func cancelledRunEndsATaskItsBodyWaitsOn() async throws {
        let bridge = MockBLEBridge(configuration: .realistic(seed: 3))
        let started = AsyncStream<Void>.makeStream()
        let run = Task {
            try await bridge.run(timeLimit: .seconds(10_000_000), stallPatience: .seconds(600)) {
                // A worker that only time or cancellation ends, and a body that waits for it
                // without passing its own cancellation on (as `try await uploader.value` does).
                let worker = bridge.task {
                    started.continuation.yield()
                    while true { try await bridge.clock.sleep(for: .seconds(1)) }
                }
                try await worker.value
            }
        }
        var iterator = started.stream.makeAsyncIterator()
        await iterator.next()
        run.cancel()
        // Before, the driver stopped moving time while the body still waited on the worker,
        // and the run never returned.
        await #expect(throws: CancellationError.self) { try await run.value }
        #expect(bridge.clock.sleeperCount == 0)
    }

    /// A body that ends normally once cancelled (reading an event stream, which finishes on
    /// cancellation) used to race the driver: the run returned the body's value or threw, from one
    /// run to the next (1 in 60 threw).
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test("A cancelled run throws CancellationError even when its body then returns normally, on every rerun")
    func cancelledRunThrowsWhateverItsBodyReturns() async throws {
        for seed in UInt64(0)..<20 {
            let bridge = MockBLEBridge(configuration: .realistic(seed: seed))
            let started = AsyncStream<Void>.makeStream()
            let run = Task {
                try await bridge.run(stallPatience: .seconds(600)) {
                    let central = MockCentralManager()
                    var events = central.events().makeAsyncIterator()
                    started.continuation.yield()
                    while await events.next() != nil {}
                    return "the body returned"
                }
            }
            var iterator = started.stream.makeAsyncIterator()
            await iterator.next()
            run.cancel()
            let outcome = await run.result
            #expect(throws: CancellationError.self, "seed \(seed)") { try outcome.get() }
        }
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test("Cancelling an advance inside a run returns it at once, where the run's time has got to")
    func cancelledAdvanceInARunReturnsAtOnce() async throws {
        let bridge = MockBLEBridge(configuration: .realistic(seed: 85))
        let times = try await bridge.run {
            let sensor = MockPeripheralManager(configuration: .realistic(seed: 85))
            _ = await sensor.waitForPoweredOn()
            try await sensor.startAdvertising(AdvertisementData(localName: "busy"))
            let advance = bridge.task {
                await bridge.advance(by: .seconds(3_000))
                return await bridge.now
            }
            try await bridge.clock.sleep(for: .seconds(1))
            let cancelledAt = await bridge.now
            advance.cancel()
            let returnedAt = try await advance.value
            // The driver no longer stops at the cancelled advance's target.
            try await bridge.clock.sleep(for: .seconds(1))
            return (cancelledAt, returnedAt, await bridge.now)
        }
        // Before, the advance ran on to 3000 s.
        #expect(times.1 == times.0)
        #expect(times.2 == times.0.advanced(by: .seconds(1)))
        #expect(await bridge.pendingOperations.isEmpty)
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test("An advance cancelled before it starts, inside a run or outside, moves no time")
    func advanceCancelledBeforeItStartsMovesNoTime() async throws {
        // Outside a run, with nothing scheduled (before, time jumped to the target).
        let idle = MockBLEBridge()
        let outside = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            await idle.advance(by: .seconds(50))
        }
        await outside.value
        #expect(await idle.now == .zero)
        // Inside one: the advance returns at once.
        let bridge = MockBLEBridge()
        let now = try await bridge.run {
            let advance = bridge.task {
                withUnsafeCurrentTask { $0?.cancel() }
                await bridge.advance(by: .seconds(50))
                return await bridge.now
            }
            return try await advance.value
        }
        #expect(now == .zero)
        #expect(await bridge.now == .zero)
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test("Cancelling an advance of a virtual clock's run returns it at once, where the run's time has got to")
    func cancelledClockAdvanceInARunReturnsAtOnce() async throws {
        let clock = VirtualClock()
        let times = try await clock.run {
            async let advanced: VirtualClock.Instant = {
                await clock.advance(by: .seconds(3_000))
                return clock.now
            }()
            try await clock.sleep(for: .seconds(1))
            let cancelledAt = clock.now
            withUnsafeCurrentTask { $0?.cancel() }
            let returnedAt = await advanced
            return (cancelledAt, returnedAt)
        }
        #expect(times.0 == .zero.advanced(by: .seconds(1)))
        #expect(times.1 == times.0)
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test("A task started by a task of a run as the run ends is cancelled too, so it waits on nothing")
    func aTaskStartedAsTheRunEndsIsCancelled() async throws {
        let bridge = MockBLEBridge(configuration: .realistic(seed: 4))
        let restarted = RestartedTask()
        try await bridge.run {
            _ = bridge.task {
                do {
                    while true { try await bridge.clock.sleep(for: .seconds(1)) }
                } catch {
                    // Cancelled as the run ends, the task restarts its work in a task of its own.
                    restarted.set(bridge.task { try await bridge.clock.sleep(for: .seconds(1)) })
                }
            }
            try await bridge.clock.sleep(for: .milliseconds(500))
        }
        // Before, the new task was left running, asleep on a clock no run would move again.
        let task = try #require(restarted.task)
        await #expect(throws: CancellationError.self) { try await task.value }
        #expect(bridge.clock.sleeperCount == 0)
    }

    /// The task a task of the run started as it ended.
    final class RestartedTask: @unchecked Sendable {
        // @unchecked Sendable: `stored` is only read and written with `lock` held.
        private let lock = NSLock()
        private var stored: Task<Void, any Error>?

        func set(_ task: Task<Void, any Error>) { lock.withLock { stored = task } }

        var task: Task<Void, any Error>? { lock.withLock { stored } }
    }
}
