import BLECBM
import BLECore
import BLEMockKit
import BLEMockKitTesting
import Foundation
import Testing

@testable import BlinkyExample

/// A 20 kB file whose every byte depends on its position.
let asyncWrapperFile: [UInt8] = (0..<20_000).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ $0 >> 8) }

/// How an upload of ``asyncWrapperFile`` by ``AsyncUploader`` ended, with its apps.
@MainActor
struct AsyncUploadRun {
    let client: AsyncBLEClient
    let uploader: AsyncUploader
    let watch: AsyncWatchApp
    let result: Result<UInt32, any Error>
}

/// Starts the watch and the phone on `bridge` (inside its run, on the main actor), uploads the
/// file, dropping the link once the watch holds `dropAfter` bytes, and returns how it ended.
@available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
@MainActor
func asyncUpload(
    on bridge: MockBLEBridge, bug: AsyncWrapperBug? = nil, clock: (any Clock<Duration>)? = nil,
    timeout: Duration = .seconds(5), dropAfter: Int? = nil
) async throws -> AsyncUploadRun {
    let watch = AsyncWatchApp()
    let client = AsyncBLEClient(timeout: timeout, clock: clock ?? ContinuousClock(), bug: bug)
    let uploader = AsyncUploader(client: client, file: asyncWrapperFile)
    async let outcome: Result<UInt32, any Error> = {
        do { return .success(try await uploader.upload()) } catch { return .failure(error) }
    }()
    if let dropAfter {
        try await bridge.waitForApp { watch.receivedCount >= dropAfter }
        if let central = client.manager.simulatedCentral?.identifier,
            let peripheral = watch.manager.simulatedPeripheral?.identifier
        {
            await bridge.simulateDisconnection(
                central: central, peripheral: peripheral, error: CoreBluetoothError(.connectionTimeout))
        }
    }
    let result = await outcome
    return AsyncUploadRun(client: client, uploader: uploader, watch: watch, result: result)
}

/// A Swift-concurrency wrapper around CoreBluetooth's delegates (``AsyncBLEClient``) uploading a
/// file to a watch app, in runs whose body is on the main actor, as the app is (the `.mockBridge`
/// trait's body is not: see the trait's documentation), fast and realistic, with faults and
/// planted bugs.
@Suite(.timeLimit(.minutes(10)))
struct AsyncWrapperAppTests {
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test func theWrapperUploadsTheFileInFastMode() async throws {
        let bridge = MockBLEBridge()
        try await bridge.run { @MainActor in
            let run = try await asyncUpload(on: bridge)
            #expect(try run.result.get() == TransferService.checksum(asyncWrapperFile))
            #expect(run.watch.receivedBytes == asyncWrapperFile)
            #expect(run.client.problems.isEmpty && run.watch.problems.isEmpty)
            #expect(run.uploader.connections == 1)
            #expect(run.client.readyCallbacks == 0)  // fast mode's queue never fills
        }
        #expect(await bridge.finish() == .clean)
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(arguments: [1, 2, 3, 4, 5, 6] as [UInt64])
    func theWrapperUploadsTheFileInRealisticModePacedByTheReadyCallback(seed: UInt64) async throws {
        let bridge = MockBLEBridge(configuration: .realistic(seed: seed))
        // Intermittent: inside a run, this app's main-actor code suspends at each call to an
        // async function of its own and starts task-group children that pass through the global
        // executor, and the run may move virtual time meanwhile (see TestingAppCode's Limits):
        // chunks may then trickle one instant at a time, so the queue never fills, and the same
        // seed may give another log.
        // The upload completes whole either way (an app told it cannot send hears the ready
        // callback it is owed); whether the queue ever filled is what varies.
        // The app's timeouts on the bridge's clock: on the wall clock, a loaded machine (the whole
        // suite in one process on two cores) let 5 s pass before a realistic connect completed.
        let readyCallbacks = try await bridge.run { @MainActor in
            let run = try await asyncUpload(on: bridge, clock: bridge.clock)
            #expect(try run.result.get() == TransferService.checksum(asyncWrapperFile))
            #expect(run.watch.receivedBytes == asyncWrapperFile)
            #expect(run.client.problems.isEmpty && run.watch.problems.isEmpty)
            return run.client.readyCallbacks
        }
        withKnownIssue("a main-actor Swift-concurrency app inside a run", isIntermittent: true) {
            #expect(readyCallbacks > 0)
        }
        #expect(await bridge.misuses.isEmpty)
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(arguments: [11, 12, 13, 14, 15, 16] as [UInt64])
    func aLinkDroppedMidTransferIsReconnectedAndTheUploadResumes(seed: UInt64) async throws {
        let bridge = MockBLEBridge(configuration: .realistic(seed: seed))
        try await bridge.run { @MainActor in
            let run = try await asyncUpload(on: bridge, clock: bridge.clock, dropAfter: 8_000)
            #expect(try run.result.get() == TransferService.checksum(asyncWrapperFile))
            #expect(run.watch.receivedBytes == asyncWrapperFile)
            #expect(run.client.problems.isEmpty && run.watch.problems.isEmpty)
            #expect(run.uploader.connections == 2 && run.uploader.drops == 1)
            #expect(run.uploader.resumedAt.count == 1 && run.uploader.resumedAt[0] >= 8_000)
        }
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test func theSameSeedGivesTheSameLogWhenTheAppSleepsOnTheBridgesClock() async throws {
        func once() async throws -> [String] {
            let bridge = MockBLEBridge(configuration: .realistic(seed: 21))
            let kept = try await bridge.run { @MainActor in
                let run = try await asyncUpload(on: bridge, clock: bridge.clock, dropAfter: 10_000)
                return UncheckedKeep(run)
            }
            let log = await bridge.log.map { "\($0)" }
            withExtendedLifetime(kept) {}
            return log
        }
        let first = try await once()
        // Intermittent: inside a run, this app's main-actor code suspends at each call to an
        // async function of its own and starts task-group children that pass through the global
        // executor, and the run may move virtual time meanwhile (see TestingAppCode's Limits):
        // chunks may then trickle one instant at a time, so the same seed may give another log.
        await withKnownIssue("a main-actor Swift-concurrency app inside a run", isIntermittent: true) {
            for _ in 0..<3 {
                let again = try await once()
                #expect(again == first)
            }
        }
    }

    /// An app that waits for the ready callback without asking `canSendWriteWithoutResponse`
    /// first waits for ever in fast mode (the queue never fills, so the callback never comes):
    /// with its timeout on the bridge's clock, it times out after 5 s of virtual time; on the
    /// wall clock, the run stalls after its patience, saying the wait is outside the simulation.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test func waitingForAReadyCallbackNoRefusalCausedTimesOutOrStalls() async throws {
        let bridge = MockBLEBridge()
        let (error, elapsed) = try await bridge.run { @MainActor in
            let start = bridge.clock.now
            let run = try await asyncUpload(on: bridge, bug: .waitsForReadyUnconditionally, clock: bridge.clock)
            return (run.result.failure as? AsyncClientError, start.duration(to: bridge.clock.now))
        }
        #expect(error == .timedOut("ready to send"))
        #expect(elapsed == .seconds(5))

        let wallClock = MockBLEBridge()
        let stall = try await #require(throws: MockBLEBridge.Stall.self) {
            try await wallClock.run(stallPatience: .milliseconds(200)) { @MainActor in
                _ = try await asyncUpload(on: wallClock, bug: .waitsForReadyUnconditionally)
            }
        }
        #expect(stall.reason == .nothingScheduled)
        #expect("\(stall)".contains("nothing the bridge knows of"))
    }

    /// Cancelling the task that waits in the wrapper (a scan no watch answers) ends the wait at
    /// once with `CancellationError`, releases the continuation, and stops the scan.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(arguments: [false, true])
    func cancellingTheAppsTaskEndsItsWaitAndStopsTheScan(realistic: Bool) async throws {
        let bridge = MockBLEBridge(configuration: realistic ? .realistic(seed: 31) : .fast)
        try await bridge.run { @MainActor in
            let client = AsyncBLEClient(timeout: .seconds(600), clock: bridge.clock)
            let scan = bridge.task { @MainActor in
                try await client.waitUntilPoweredOn()
                _ = try await client.scan(for: TransferService.service)
            }
            try await bridge.waitForApp { client.manager.isScanning }
            scan.cancel()
            await #expect(throws: CancellationError.self) { try await scan.value }
            try await bridge.waitForApp { !client.manager.isScanning }
            #expect(client.problems.isEmpty)
        }
        #expect(await bridge.finish() == .clean)
    }
}

extension Result {
    /// The error, if any.
    var failure: Failure? {
        if case .failure(let error) = self { return error }
        return nil
    }
}

/// Keeps a run's apps alive past the run (their managers would shut down as they are let go of).
struct UncheckedKeep: @unchecked Sendable {
    // @unchecked Sendable: kept, and read only once the code that made it is done with it.
    let value: Any
    init(_ value: Any) { self.value = value }
}

/// Main-actor code that queues a block on the main queue, then calls an async function of the
/// main actor: what ran, in order.
@MainActor
final class MainActorCallOrder {
    private var order: [String] = []

    private func callee() async { order.append("callee") }

    func callAfterQueuingABlock() async -> [String] {
        DispatchQueue.main.async { MainActor.assumeIsolated { self.order.append("queued block") } }
        order.append("caller")
        await callee()
        order.append("after the call")
        return order
    }
}

/// What the run's documentation says of main-actor code inside a run (TestingAppCode's Limits):
/// a call from the main actor to an async function of the main actor may suspend there, so a
/// callback queued on the main queue before it runs first, which it does not outside a run.
@Suite(.timeLimit(.minutes(10)))
struct MainActorCallsInARunTests {
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test func insideARunACallOnTheMainActorLetsQueuedMainQueueWorkRunFirst() async throws {
        let outside = await MainActorCallOrder().callAfterQueuingABlock()
        #expect(outside == ["caller", "callee", "after the call"])
        let bridge = MockBLEBridge()
        let inside = try await bridge.run { @MainActor in await MainActorCallOrder().callAfterQueuingABlock() }
        // As on a device (and outside a run) the callee runs first; inside a run the queued
        // block does (the run's executor preference makes the runtime suspend the call).
        withKnownIssue("inside a run a main-actor call to a main-actor async function suspends") {
            #expect(inside == outside)
        }
        #expect(inside == ["caller", "queued block", "callee", "after the call"])
    }
}
