import BLECBM
import BLECore
import BLEMockKit
import Foundation
import Testing

/// A smartwatch companion app's background life through BLECBM: the system terminates it while
/// it is connected and subscribed, or while its connect waits for the watch, and relaunches it
/// for the watch's event, as iOS's state preservation and restoration does (Apple's Core
/// Bluetooth Programming Guide, "State Preservation and Restoration"; TN3115).
@Suite(.timeLimit(.minutes(10)))
struct RestorationProbeTests {
    static let seeds: [UInt64] = [1, 2, 3]

    static func bridge(realistic: Bool, seed: UInt64) -> MockBLEBridge {
        MockBLEBridge(configuration: realistic ? .realistic(seed: seed) : .init(seed: seed))
    }

    /// The app's queue: the main queue for odd seeds, a serial queue of its own for even ones.
    static func queue(seed: UInt64) -> DispatchQueue? {
        seed.isMultiple(of: 2) ? DispatchQueue(label: "companion.\(seed)") : nil
    }

    /// A bridge, the simulated watch on it (with its status characteristic) and the app's queue,
    /// for `seed`.
    static func rig(realistic: Bool, seed: UInt64, proximity: Proximity? = nil) async throws -> (
        MockBLEBridge, MockPeripheralManager, LocalCharacteristic, DispatchQueue?
    ) {
        let bridge = Self.bridge(realistic: realistic, seed: seed)
        let (watch, status) = try await SimulatedWatch.make(on: bridge, proximity: proximity)
        return (bridge, watch, status, Self.queue(seed: seed))
    }

    /// Launches the companion, waits until it is subscribed to the watch's status, and lets the
    /// system terminate it (its objects go, as its process ending lets them go); returns what the
    /// terminated app heard.
    @MainActor
    static func launchUntilReadyAndTerminate(
        on bridge: MockBLEBridge, restoreIdentifier: String = "companion", queue: DispatchQueue?
    ) async throws -> [String] {
        var app: WatchCompanionApp? = WatchCompanionApp(restoreIdentifier: restoreIdentifier, queue: queue)
        try await bridge.waitForApp { app!.heard("ready") }
        await app!.manager.simulatedCentral!.simulateAppTermination()
        let calls = app!.calls
        app = nil
        return calls
    }

    // MARK: Connected and subscribed

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(arguments: [false, true], seeds)
    func aCompanionTerminatedWhileSubscribedIsRelaunchedForTheWatchsNotificationAndGetsItsValue(
        realistic: Bool, seed: UInt64
    ) async throws {
        let (bridge, watch, status, queue) = try await Self.rig(realistic: realistic, seed: seed)
        let (before, after, log) = try await bridge.run {
            @MainActor () -> ([String], [String], [BridgeLogEntry]) in
            let before = try await Self.launchUntilReadyAndTerminate(on: bridge, queue: queue)
            try await bridge.clock.sleep(for: .seconds(30))
            // The watch notifies: iOS relaunches the app for it.
            _ = try await watch.updateValue(Data([42]), for: status)
            try await bridge.clock.sleep(for: .seconds(1))
            let relaunched = WatchCompanionApp(restoreIdentifier: "companion", queue: queue)
            try await bridge.waitForApp { relaunched.heard(startingWith: "value") }
            #expect(relaunched.manager.apiMisuses.isEmpty)
            return (before, relaunched.calls, await bridge.log)
        }
        #expect(
            before == [
                "state poweredOn", "connected", "discovering services", "discovering characteristics",
                "notifying true", "ready",
            ])
        // `willRestoreState` first, the state next, then the notification the app was relaunched
        // for; the restored peripheral needed no rediscovery, and its link never dropped.
        #expect(
            after == ["restored connected services=1 notifying=[\"FEE1\"]", "state poweredOn", "ready", "value [42]"])
        #expect(log.filter { $0.kind == .servicesDiscovered }.count == 1)
        #expect(!log.contains { $0.kind == .disconnected })
    }

    // MARK: A pending connect

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(arguments: [false, true], seeds)
    func aCompanionTerminatedWithAPendingConnectIsRelaunchedWithTheWatchConnectedWhenItComesInRange(
        realistic: Bool, seed: UInt64
    ) async throws {
        let (bridge, watch, status, queue) = try await Self.rig(realistic: realistic, seed: seed)
        let (before, after) = try await bridge.run { @MainActor () -> ([String], [String]) in
            var app: WatchCompanionApp? = WatchCompanionApp(restoreIdentifier: "companion", queue: queue)
            try await bridge.waitForApp { app!.heard("ready") }
            // The user walks away: the link drops and the app's connect waits for the watch.
            await watch.simulateProximityChange(.outOfRange)
            try await bridge.waitForApp { app!.heard("disconnected") }
            try await bridge.clock.sleep(for: .seconds(5))
            await app!.manager.simulatedCentral!.simulateAppTermination()
            let before = app!.calls
            app = nil
            try await bridge.clock.sleep(for: .seconds(60))
            // The user comes back: the system's connect completes, and iOS relaunches the app.
            await watch.simulateProximityChange(.near)
            try await bridge.clock.sleep(for: .seconds(5))
            let relaunched = WatchCompanionApp(restoreIdentifier: "companion", queue: queue)
            try await bridge.waitForApp { relaunched.heard("ready") }
            _ = try await watch.updateValue(Data([7]), for: status)
            try await bridge.waitForApp { relaunched.heard(startingWith: "value") }
            return (before, relaunched.calls)
        }
        #expect(
            before == [
                "state poweredOn", "connected", "discovering services", "discovering characteristics", "notifying true",
                "ready", "disconnected",
            ])
        // The link is up when the app is relaunched: the restored peripheral is `connected` (with
        // nothing discovered: its services went with the link that dropped), and the
        // `didConnect` the app was relaunched for follows its state. (This app, seeing a connected
        // peripheral with no services at `poweredOn`, starts discovering before that `didConnect`
        // and again after it: see the report on this probe.)
        #expect(
            Array(after.prefix(4)) == [
                "restored connected services=0 notifying=[]", "state poweredOn", "discovering services", "connected",
            ])
        #expect(after.filter { $0 == "connected" }.count == 1, "\(after)")
        #expect(after.contains("value [7]") && after.last != nil, "\(after)")
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(arguments: [false, true], seeds)
    func aCompanionRelaunchedWhileItsConnectStillWaitsGetsTheWatchConnectingAndThenConnected(
        realistic: Bool, seed: UInt64
    ) async throws {
        let (bridge, watch, _, queue) = try await Self.rig(realistic: realistic, seed: seed)
        let after = try await bridge.run { @MainActor () -> [String] in
            var app: WatchCompanionApp? = WatchCompanionApp(restoreIdentifier: "companion", queue: queue)
            try await bridge.waitForApp { app!.heard("ready") }
            await watch.simulateProximityChange(.outOfRange)
            try await bridge.waitForApp { app!.heard("disconnected") }
            await app!.manager.simulatedCentral!.simulateAppTermination()
            app = nil
            try await bridge.clock.sleep(for: .seconds(10))
            // Relaunched (for another reason) while the watch is still away.
            let relaunched = WatchCompanionApp(restoreIdentifier: "companion", queue: queue)
            try await bridge.waitForApp { relaunched.heard("state poweredOn") }
            try await bridge.clock.sleep(for: .seconds(10))
            await watch.simulateProximityChange(.near)
            try await bridge.waitForApp { relaunched.heard("ready") }
            return relaunched.calls
        }
        #expect(
            after == [
                "restored connecting services=0 notifying=[]", "state poweredOn", "connected", "discovering services",
                "discovering characteristics",
                "notifying true", "ready",
            ])
        #expect(await bridge.log.filter { $0.kind == .connected }.count == 2)
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(arguments: [false, true], seeds)
    func aCompanionTerminatedWhileScanningIsRelaunchedForTheWatchItFinds(realistic: Bool, seed: UInt64) async throws {
        let (bridge, watch, _, queue) = try await Self.rig(realistic: realistic, seed: seed, proximity: .outOfRange)
        let (before, after) = try await bridge.run { @MainActor () -> ([String], [String]) in
            var app: WatchCompanionApp? = WatchCompanionApp(restoreIdentifier: "companion", queue: queue)
            try await bridge.waitForApp { app!.heard("state poweredOn") }
            try await bridge.clock.sleep(for: .seconds(2))
            await app!.manager.simulatedCentral!.simulateAppTermination()
            let before = app!.calls
            app = nil
            await watch.simulateProximityChange(.near)
            try await bridge.clock.sleep(for: .seconds(2))
            let relaunched = WatchCompanionApp(restoreIdentifier: "companion", queue: queue)
            try await bridge.waitForApp { relaunched.heard("ready") }
            return (before, relaunched.calls)
        }
        #expect(before == ["state poweredOn"])
        #expect(
            after == [
                "restored nothing", "restored scan [\"FEE0\"]", "state poweredOn", "connected",
                "discovering services", "discovering characteristics", "notifying true", "ready",
            ])
    }

    /// A companion terminated while scanning (for its service, soliciting another, with
    /// duplicates) is relaunched scanning: `isScanning` is true from `willRestoreState` on, and
    /// the restored scan options hold every option it scanned with, as CoreBluetooth's
    /// `CBCentralManagerRestoredStateScanOptionsKey` ("all of the peripheral scan options in use
    /// by the central manager when the system stopped the app"). Both used to be missing: the
    /// manager said it was not scanning, and the options held the duplicates key alone.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(arguments: [false, true])
    func aCompanionTerminatedWhileScanningIsRelaunchedScanningWithEveryScanOptionItUsed(realistic: Bool) async throws {
        let bridge = Self.bridge(realistic: realistic, seed: 6)
        let restore = [CBMCentralManagerOptionRestoreIdentifierKey: "companion"]
        let outcome = try await bridge.run { @MainActor () -> RestoredScan in
            let first = RestoredScanJournal()
            var terminated: CBMCentralManager? = CBMCentralManager(delegate: first, queue: nil, options: restore)
            try await bridge.waitForApp { terminated!.state == .poweredOn }
            terminated!.scanForPeripherals(
                withServices: [CBMUUID(string: "FEE0")],
                options: [
                    CBMCentralManagerScanOptionAllowDuplicatesKey: true,
                    CBMCentralManagerScanOptionSolicitedServiceUUIDsKey: [CBMUUID(string: "FFF0")],
                ])
            try await bridge.clock.sleep(for: .seconds(1))
            await terminated!.simulatedCentral!.simulateAppTermination()
            terminated = nil
            let journal = RestoredScanJournal()
            let relaunched = CBMCentralManager(delegate: journal, queue: nil, options: restore)
            try await bridge.waitForApp { journal.restored != nil && relaunched.state == .poweredOn }
            return RestoredScan(dictionary: journal.restored!, scanningWhenRestored: journal.scanningWhenRestored)
        }
        #expect(outcome.services == ["FEE0"])
        #expect(outcome.allowDuplicates == true)
        #expect(outcome.solicited == ["FFF0"])
        #expect(outcome.scanningWhenRestored)
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(arguments: [false, true], seeds)
    func aCompanionTerminatedAgainAfterItsRelaunchIsRestoredAgain(realistic: Bool, seed: UInt64) async throws {
        let (bridge, watch, status, queue) = try await Self.rig(realistic: realistic, seed: seed)
        let after = try await bridge.run { @MainActor () -> [String] in
            _ = try await Self.launchUntilReadyAndTerminate(on: bridge, queue: queue)
            _ = try await watch.updateValue(Data([1]), for: status)
            var second: WatchCompanionApp? = WatchCompanionApp(restoreIdentifier: "companion", queue: queue)
            try await bridge.waitForApp { second!.heard("value [1]") }
            await second!.manager.simulatedCentral!.simulateAppTermination()
            second = nil
            _ = try await watch.updateValue(Data([2]), for: status)
            try await bridge.clock.sleep(for: .seconds(1))
            let third = WatchCompanionApp(restoreIdentifier: "companion", queue: queue)
            try await bridge.waitForApp { third.heard(startingWith: "value") }
            return third.calls
        }
        #expect(
            after == ["restored connected services=1 notifying=[\"FEE1\"]", "state poweredOn", "ready", "value [2]"])
    }

    // MARK: Restore identifiers

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(arguments: [false, true], seeds)
    func aCompanionRelaunchedWithAnotherRestoreIdentifierIsNotRestoredAndConnectsAgainItself(
        realistic: Bool, seed: UInt64
    ) async throws {
        let (bridge, watch, status, queue) = try await Self.rig(realistic: realistic, seed: seed)
        let after = try await bridge.run { @MainActor () -> [String] in
            _ = try await Self.launchUntilReadyAndTerminate(on: bridge, restoreIdentifier: "companion.v1", queue: queue)
            try await bridge.clock.sleep(for: .seconds(1))
            // An update changed the identifier: the state kept for "companion.v1" is not this one's.
            let relaunched = WatchCompanionApp(
                restoreIdentifier: "companion.v2", queue: queue, knownWatch: watch.identifier)
            try await bridge.waitForApp { relaunched.heard("ready") }
            _ = try await watch.updateValue(Data([5]), for: status)
            try await bridge.waitForApp { relaunched.heard(startingWith: "value") }
            #expect(relaunched.manager.apiMisuses.isEmpty)
            return relaunched.calls
        }
        // No `willRestoreState`: the app starts as a new one does.
        #expect(
            after == [
                "state poweredOn", "retrieved disconnected", "connected", "discovering services",
                "discovering characteristics", "notifying true",
                "ready", "value [5]",
            ])
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(arguments: [false, true])
    func aSecondManagerWithTheRelaunchedAppsRestoreIdentifierReportsUnsupportedAndTheFirstIsRestored(realistic: Bool)
        async throws
    {
        let bridge = Self.bridge(realistic: realistic, seed: 4)
        let (watch, status) = try await SimulatedWatch.make(on: bridge)
        let (first, second, misuses) = try await bridge.run { @MainActor () -> ([String], [String], [String]) in
            _ = try await Self.launchUntilReadyAndTerminate(on: bridge, queue: nil)
            let relaunched = WatchCompanionApp(restoreIdentifier: "companion")
            // A second part of the app makes a manager with the same identifier.
            let twin = WatchCompanionApp(restoreIdentifier: "companion")
            try await bridge.waitForApp { relaunched.heard("ready") && !twin.calls.isEmpty }
            _ = try await watch.updateValue(Data([3]), for: status)
            try await bridge.waitForApp { relaunched.heard(startingWith: "value") }
            try await bridge.clock.sleep(for: .seconds(1))
            return (relaunched.calls, twin.calls, twin.manager.apiMisuses)
        }
        #expect(
            first == ["restored connected services=1 notifying=[\"FEE1\"]", "state poweredOn", "ready", "value [3]"])
        // The twin is not restored and takes nothing over; it hears its state, `unsupported`, as
        // CoreBluetooth reports for a second manager with a restore identifier in use, and its
        // misuses say why.
        #expect(second == ["state unsupported"])
        #expect(misuses.count == 1)
        #expect(misuses.first?.contains("restore identifier \"companion\"") == true, "\(misuses)")
    }

    // MARK: Mid-write

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(arguments: [false, true], seeds)
    func aCompanionTerminatedAsItWritesHearsNothingMoreAndTheRelaunchedAppWritesAgain(
        realistic: Bool, seed: UInt64
    ) async throws {
        let (bridge, watch, status, queue) = try await Self.rig(realistic: realistic, seed: seed)
        let (before, after) = try await bridge.run { @MainActor () -> ([String], [String]) in
            var app: WatchCompanionApp? = WatchCompanionApp(restoreIdentifier: "companion", queue: queue)
            try await bridge.waitForApp { app!.heard("ready") }
            app!.send([1])
            await app!.manager.simulatedCentral!.simulateAppTermination()
            // The callbacks handed to the app before its termination have run (on its own queue,
            // for even seeds, they may not have yet): a wait in a run lets the app catch up.
            try await bridge.waitForApp { true }
            let before = app!.calls
            app = nil
            try await bridge.clock.sleep(for: .seconds(2))
            _ = try await watch.updateValue(Data([9]), for: status)
            let relaunched = WatchCompanionApp(restoreIdentifier: "companion", queue: queue)
            try await bridge.waitForApp { relaunched.heard(startingWith: "value") }
            relaunched.send([2])
            try await bridge.waitForApp { relaunched.heard(startingWith: "wrote") }
            return (before, relaunched.calls)
        }
        // In fast mode the write is answered at once, before the termination; in realistic mode
        // it waits for a connection event, and the termination ends it unheard (and unsent).
        #expect(before.last == (realistic ? "ready" : "wrote 0"), "\(before)")
        #expect(
            after == [
                "restored connected services=1 notifying=[\"FEE1\"]", "state poweredOn", "ready", "value [9]",
                "wrote 0",
            ])
        let writes = await bridge.log.filter { $0.kind == .write }.map { Array($0.value ?? Data()) }
        #expect(writes == (realistic ? [[2]] : [[1], [2]]))
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(arguments: [false, true])
    func aWriteTheWatchHasWhenTheCompanionIsTerminatedIsAnsweredToNobody(realistic: Bool) async throws {
        let bridge = Self.bridge(realistic: realistic, seed: 6)
        let watch = MockPeripheralManager(configuration: .init(name: "Watch", requestHandling: .manual), bridge: bridge)
        let local = try await watch.add(
            GATTService(
                uuid: "FEE0",
                characteristics: [
                    GATTCharacteristic(uuid: SimulatedWatch.status, properties: .notify, permissions: .readable),
                    GATTCharacteristic(uuid: SimulatedWatch.control, properties: .write, permissions: .writeable),
                ]))
        try await watch.startAdvertising(AdvertisementData(localName: "Watch", serviceUUIDs: ["FEE0"]))
        let (before, after, written) = try await bridge.run { @MainActor () -> ([String], [String], [[UInt8]]) in
            var requests = watch.events().compactMap { event -> [ATTRequest]? in
                if case .writeRequests(let requests) = event { return requests }
                return nil
            }.makeAsyncIterator()
            var app: WatchCompanionApp? = WatchCompanionApp(restoreIdentifier: "companion")
            try await bridge.waitForApp { app!.heard("ready") }
            app!.send([1])
            // The watch has the request; the system terminates the app before the answer.
            let first = try #require(await requests.next())
            await app!.manager.simulatedCentral!.simulateAppTermination()
            let before = app!.calls
            app = nil
            try await watch.respond(to: first[0], withResult: .success, value: nil)
            try await bridge.clock.sleep(for: .seconds(1))
            _ = try await watch.updateValue(Data([9]), for: local.characteristics[0])
            let relaunched = WatchCompanionApp(restoreIdentifier: "companion")
            try await bridge.waitForApp { relaunched.heard(startingWith: "value") }
            relaunched.send([2])
            let second = try #require(await requests.next())
            try await watch.respond(to: second[0], withResult: .success, value: nil)
            try await bridge.waitForApp { relaunched.heard(startingWith: "wrote") }
            return (before, relaunched.calls, (first + second).map { Array($0.value ?? Data()) })
        }
        #expect(before.last == "ready", "\(before)")
        // The answer to the terminated app's write reaches nobody: the relaunched app hears only
        // its own write's.
        #expect(
            after == [
                "restored connected services=1 notifying=[\"FEE1\"]", "state poweredOn", "ready", "value [9]",
                "wrote 0",
            ])
        #expect(written == [[1], [2]])
    }

    // MARK: Determinism

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(arguments: [false, true])
    func theSameSeedGivesTheSameBridgeLogAcrossTerminationAndRelaunch(realistic: Bool) async throws {
        @Sendable func session(queue: DispatchQueue?) async throws -> [String] {
            let bridge = Self.bridge(realistic: realistic, seed: 11)
            let (watch, status) = try await SimulatedWatch.make(on: bridge)
            try await bridge.run { @MainActor in
                var app: WatchCompanionApp? = WatchCompanionApp(restoreIdentifier: "companion", queue: queue)
                try await bridge.waitForApp { app!.heard("ready") }
                await watch.simulateProximityChange(.outOfRange)
                try await bridge.waitForApp { app!.heard("disconnected") }
                await app!.manager.simulatedCentral!.simulateAppTermination()
                app = nil
                try await bridge.clock.sleep(for: .seconds(3))
                await watch.simulateProximityChange(.near)
                try await bridge.clock.sleep(for: .seconds(3))
                let relaunched = WatchCompanionApp(restoreIdentifier: "companion", queue: queue)
                try await bridge.waitForApp { relaunched.heard("ready") }
                _ = try await watch.updateValue(Data([1]), for: status)
                try await bridge.waitForApp { relaunched.heard(startingWith: "value") }
            }
            return await bridge.log.map { "\($0.time) \($0.kind) \($0.detail ?? "") \($0.error.map { "\($0)" } ?? "")" }
        }
        let first = try await session(queue: nil)
        let second = try await session(queue: nil)
        let third = try await session(queue: DispatchQueue(label: "companion.determinism"))
        #expect(first == second)
        #expect(first == third)
        #expect(first.count > 10)
    }
}

/// The environment variable that enables the tests which install the process-wide system.
private let restorationSystemTestsVariable = "BLEMOCKKIT_SYSTEM_TESTS"

/// State restoration with the process-wide ``SimulatedSystem``, as an XCTest-style test of an app
/// that creates its managers on its own queue uses it. They install the system, which every
/// CoreBluetooth-shaped manager created outside a bridge in the process would join: so they run
/// in a process of their own, which ``RestorationProbeSystemProcessTests`` starts.
@Suite(
    .serialized, .timeLimit(.minutes(10)),
    .enabled(if: ProcessInfo.processInfo.environment[restorationSystemTestsVariable] == "1"))
struct RestorationProbeSystemTests {
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(arguments: [false, true])
    func aCompanionOnTheSystemIsRelaunchedForTheWatchsNotification(realistic: Bool) async throws {
        let system = try SimulatedSystem.install(realistic ? .realistic(seed: 3) : .init(seed: 3), time: .virtual)
        defer { system.uninstall() }
        let bridge = system.bridge
        let (watch, status) = try await SimulatedWatch.make(on: bridge)
        let queue = DispatchQueue(label: "companion")
        let (joined, after) = try await bridge.run { () -> (Bool, [String]) in
            // The app creates its manager on its own queue, where no bridge is current: it joins
            // the system.
            var app: WatchCompanionApp? = queue.sync { WatchCompanionApp(restoreIdentifier: "companion", queue: queue) }
            let joined = app!.manager.bridge === bridge
            try await bridge.waitForApp { app!.heard("ready") }
            await app!.manager.simulatedCentral!.simulateAppTermination()
            app = nil
            _ = try await watch.updateValue(Data([4]), for: status)
            try await bridge.clock.sleep(for: .seconds(1))
            let relaunched = queue.sync { WatchCompanionApp(restoreIdentifier: "companion", queue: queue) }
            try await bridge.waitForApp { relaunched.heard(startingWith: "value") }
            return (joined, relaunched.calls)
        }
        #expect(joined)
        #expect(
            after == ["restored connected services=1 notifying=[\"FEE1\"]", "state poweredOn", "ready", "value [4]"])
    }
}

@Suite(
    .timeLimit(.minutes(10)),
    // (Not in the process it starts.)
    .disabled(if: ProcessInfo.processInfo.environment[restorationSystemTestsVariable] != nil))
struct RestorationProbeSystemProcessTests {
    @Test func restorationWithTheProcessWideSystemPassesInAProcessOfItsOwn() async throws {
        #if os(Linux)
            let process = Process()
            process.executableURL = URL(fileURLWithPath: CommandLine.arguments[0])
            process.arguments = ["--testing-library", "swift-testing", "--filter", "RestorationProbeSystemTests/"]
            var environment = ProcessInfo.processInfo.environment
            environment[restorationSystemTestsVariable] = "1"
            process.environment = environment
            let output = Pipe()
            process.standardOutput = output
            process.standardError = output
            // The child's output is read, and its exit awaited, off the concurrency pool.
            let text = try await withCheckedThrowingContinuation {
                (continuation: CheckedContinuation<String, any Error>) in
                let reader = Thread {
                    let data = output.fileHandleForReading.readDataToEndOfFile()
                    process.waitUntilExit()
                    continuation.resume(returning: String(decoding: data, as: UTF8.self))
                }
                do {
                    try process.run()
                    reader.start()
                    DispatchQueue.global().asyncAfter(deadline: .now() + .seconds(8 * 60)) {
                        if process.isRunning { process.terminate() }
                    }
                } catch {
                    continuation.resume(throwing: error)
                }
            }
            #expect(process.terminationStatus == 0, "\(text)")
            #expect(text.contains("Test run with 1 test"), "\(text)")
            #expect(!text.contains("✘"), "\(text)")
        #endif
        #expect(SimulatedSystem.current == nil)
    }
}

/// Records a relaunched manager's `willRestoreState` and whether it said it was scanning then.
private final class RestoredScanJournal: NSObject, CBMCentralManagerDelegate, @unchecked Sendable {
    // @unchecked Sendable: only touched on the main queue (the manager's queue).
    var restored: [String: Any]?
    var scanningWhenRestored = false

    func centralManagerDidUpdateState(_ central: CBMCentralManager) {}

    func centralManager(_ central: CBMCentralManager, willRestoreState dict: [String: Any]) {
        restored = dict
        scanningWhenRestored = central.isScanning
    }
}

/// What a relaunched manager's `willRestoreState` said of its scan.
private struct RestoredScan: Sendable {
    var services: [String]?
    var allowDuplicates: Bool?
    var solicited: [String]?
    var scanningWhenRestored: Bool

    init(dictionary: [String: Any], scanningWhenRestored: Bool) {
        services = (dictionary[CBMCentralManagerRestoredStateScanServicesKey] as? [CBMUUID])?.map(\.uuidString)
        let options = dictionary[CBMCentralManagerRestoredStateScanOptionsKey] as? [String: Any]
        allowDuplicates = (options?[CBMCentralManagerScanOptionAllowDuplicatesKey] as? NSNumber)?.boolValue
        solicited = (options?[CBMCentralManagerScanOptionSolicitedServiceUUIDsKey] as? [CBMUUID])?.map(\.uuidString)
        self.scanningWhenRestored = scanningWhenRestored
    }
}
