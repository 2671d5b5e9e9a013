import BLECBM
import BLEMockKit
import BLEMockKitXCTest
import XCTest

@testable import BlinkyExample

/// A hybrid-watch companion and its watch, both delegate-style apps on queues of their own, on the
/// simulated system installed in an async `setUp`, as a team writes new tests for such apps: async
/// test methods, `await fulfillment(of:timeout:)`, the apps' state read with `queue.sync`. The
/// timeouts only bound a failure; nothing sleeps.
final class HybridWatchFastXCTests: XCTestCase {
    private var system: SimulatedSystem!

    override func setUp() async throws {
        system = try installSimulatedSystem()
    }

    func testTheCompanionConnectsWellWithinItsOwnTimeout() async throws {
        let watch = HybridWatch()
        await fulfillment(of: [expectation(watch, "advertising")], timeout: 10)
        let companion = HybridWatchCompanion(connectTimeout: 5)
        await fulfillment(of: [expectation(companion, "powered on")], timeout: 10)
        companion.findWatch()
        await fulfillment(of: [expectation(companion, "ready"), expectation(watch, "subscribed")], timeout: 10)
        let events = companion.queue.sync { companion.events }
        XCTAssertEqual(events, ["powered on", "discovered", "connected", "ready"])
    }

    func testTheCompanionReadsTheWatchsRSSIAndItsWriteLength() async throws {
        // (The watch app is kept: letting go of it, as of any peripheral manager, ends its links.)
        let (companion, watch) = try await connectedApps()
        companion.readRSSI()
        await fulfillment(of: [expectation(companion, "rssi")], timeout: 10)
        let rssi = try XCTUnwrap(companion.queue.sync { companion.lastRSSI })
        XCTAssertLessThan(rssi, 0)
        XCTAssertGreaterThan(rssi, -128)
        // Fast mode prefers the largest ATT_MTU, 517: min(517 − 3, 512), no attribute value being longer.
        XCTAssertEqual(companion.maximumWriteWithoutResponse, 512)
        withExtendedLifetime(watch) {}
    }

    func testTheCompanionGetsEveryNotificationOfABurstInOrder() async throws {
        let (companion, watch) = try await connectedApps()
        watch.notifyActivity(count: 500)
        await fulfillment(of: [expectation(companion, "activity 500")], timeout: 10)
        let activity = companion.queue.sync { companion.activity }
        XCTAssertEqual(activity, (0..<500).map { Data([UInt8($0 >> 8), UInt8($0 & 0xFF)]) })
    }

    func testTheCompanionStreamsAFileInWritesWithoutResponse() async throws {
        let (companion, watch) = try await connectedApps()
        let file = (0..<4_000).map { UInt8(truncatingIfNeeded: $0 &* 7) }
        companion.send(file: file)
        await fulfillment(
            of: [expectation(companion, "file sent"), expectation(watch, "received \(file.count)")], timeout: 10)
        XCTAssertEqual(watch.queue.sync { watch.received }, file)
        XCTAssertEqual(companion.queue.sync { companion.chunkLengths }, [512, 512, 512, 512, 512, 512, 512, 416])
    }

    func testTheSystemsBridgeFinishesCleanOnceTheAppsAreDone() async throws {
        let (companion, watch) = try await connectedApps()
        watch.notifyActivity(count: 20)
        await system.bridge.waitUntil { bridge in bridge.log.filter { $0.kind == .notification }.count >= 20 }
        await fulfillment(of: [expectation(companion, "activity 20")], timeout: 10)
        XCTAssertEqual(companion.queue.sync { companion.activity.count }, 20)
        let report = await system.bridge.finish()
        XCTAssertEqual(report, .clean, "\(report)")
    }
}

/// The same apps in realistic mode (seeded link timing: connection intervals, a negotiated
/// ATT_MTU, queues that fill), time following the wall clock.
final class HybridWatchRealisticXCTests: XCTestCase {
    private var system: SimulatedSystem!

    override func setUp() async throws {
        system = try installSimulatedSystem(.realistic(seed: 11))
    }

    func testTheCompanionConnectsWellWithinItsOwnTimeout() async throws {
        let (companion, watch) = try await connectedApps()
        let events = companion.queue.sync { companion.events }
        XCTAssertFalse(events.contains("connect timed out"), "\(events)")
        XCTAssertGreaterThan(try XCTUnwrap(companion.maximumWriteWithoutResponse), 20)
        withExtendedLifetime(watch) {}
    }

    func testAWriteWithoutResponseLoopWaitsForReadinessAndLosesNothing() async throws {
        let (companion, watch) = try await connectedApps()
        let length = try XCTUnwrap(companion.maximumWriteWithoutResponse)
        let file = (0..<(length * 60)).map { UInt8(truncatingIfNeeded: $0 &* 13) }
        companion.send(file: file)
        await fulfillment(
            of: [expectation(companion, "file sent"), expectation(watch, "received \(file.count)")], timeout: 10)
        XCTAssertEqual(watch.queue.sync { watch.received }, file)
        // The link's queue filled: the app waited for `peripheralIsReady(toSendWriteWithoutResponse:)`.
        XCTAssertGreaterThan(companion.queue.sync { companion.pausesForReadiness }, 0)
        XCTAssertEqual(companion.queue.sync { companion.chunkLengths.max() }, length)
        // Nothing was left undone: no operation waiting, no misuse (no write dropped or cut).
        let report = await system.bridge.finish()
        XCTAssertEqual(report, .clean, "\(report)")
    }

    func testNotificationsAtAHighRateArriveInOrderPacedByTheWatchsQueue() async throws {
        let (companion, watch) = try await connectedApps()
        watch.notifyActivity(count: 150)
        await fulfillment(of: [expectation(companion, "activity 150")], timeout: 10)
        XCTAssertEqual(
            companion.queue.sync { companion.activity }, (0..<150).map { Data([UInt8($0 >> 8), UInt8($0 & 0xFF)]) })
        XCTAssertGreaterThan(watch.queue.sync { watch.pausesForReadiness }, 0)
    }

    func testAfterBluetoothIsTurnedOffAndOnTheCompanionReconnectsByIdentifier() async throws {
        let (companion, watch) = try await connectedApps()
        let off = expectation(companion, "powered off")
        CBMCentralManagerMock.simulatePowerOff()
        await fulfillment(of: [off], timeout: 10)
        XCTAssertEqual(companion.managerState, .poweredOff)
        let retrieved = expectation(companion, "retrieved")
        let readyAgain = expectation(companion, "ready", times: 2)
        CBMCentralManagerMock.simulatePowerOn()
        await fulfillment(of: [retrieved, readyAgain], timeout: 10, enforceOrder: true)
        let events = companion.queue.sync { companion.events }
        // Bluetooth going off ends the link with the state change alone (no didDisconnect).
        XCTAssertEqual(
            events,
            [
                "powered on", "discovered", "connected", "ready", "powered off", "powered on", "retrieved", "connected",
                "ready",
            ])
        withExtendedLifetime(watch) {}
    }
}

/// The system with virtual time: the test runs in the bridge's run, and time drives itself.
final class HybridWatchVirtualTimeXCTests: XCTestCase {
    private var system: SimulatedSystem!

    override func setUp() async throws {
        system = try installSimulatedSystem(.realistic(seed: 11), time: .virtual)
    }

    func testTheCompanionStreamsAFileInVirtualTime() async throws {
        let bridge = system.bridge
        let started = ContinuousClock.now
        let sent = try await bridge.run { () -> [UInt8] in
            let watch = HybridWatch()
            let companion = HybridWatchCompanion(connectTimeout: 5)
            try await bridge.waitForApp { watch.queue.sync { watch.events.contains("advertising") } }
            try await bridge.waitForApp { companion.queue.sync { companion.events.contains("powered on") } }
            companion.findWatch()
            try await bridge.waitForApp { companion.queue.sync { companion.events.contains("ready") } }
            let length = try XCTUnwrap(companion.maximumWriteWithoutResponse)
            let file = (0..<(length * 40)).map { UInt8(truncatingIfNeeded: $0 &* 13) }
            companion.send(file: file)
            try await bridge.waitForApp { watch.queue.sync { watch.received.count == file.count } }
            XCTAssertEqual(watch.queue.sync { watch.received }, file)
            return file
        }
        XCTAssertFalse(sent.isEmpty)
        // Virtual time moved on; the wall clock hardly did.
        let virtual = await bridge.now
        XCTAssertGreaterThan(virtual, .zero)
        XCTAssertLessThan(ContinuousClock.now - started, .seconds(10))
    }
}

// MARK: Helpers

extension XCTestCase {
    /// An expectation fulfilled once the companion has noted `event` (`times` times).
    func expectation(_ app: HybridWatchCompanion, _ event: String, times: Int = 1) -> XCTestExpectation {
        let expectation = expectation(description: "the companion: \(event)" + (times > 1 ? " (\(times) times)" : ""))
        app.when(event, times: times) { expectation.fulfill() }
        return expectation
    }

    /// An expectation fulfilled once the watch has noted `event`.
    func expectation(_ app: HybridWatch, _ event: String) -> XCTestExpectation {
        let expectation = expectation(description: "the watch: \(event)")
        app.when(event) { expectation.fulfill() }
        return expectation
    }

    /// A watch advertising and a companion connected to it, subscribed and ready.
    func connectedApps(connectTimeout: TimeInterval = 5) async throws -> (HybridWatchCompanion, HybridWatch) {
        let watch = HybridWatch()
        await fulfillment(of: [expectation(watch, "advertising")], timeout: 10)
        let companion = HybridWatchCompanion(connectTimeout: connectTimeout)
        await fulfillment(of: [expectation(companion, "powered on")], timeout: 10)
        companion.findWatch()
        await fulfillment(of: [expectation(companion, "ready"), expectation(watch, "subscribed")], timeout: 10)
        return (companion, watch)
    }
}

// MARK: The watch as a CoreBluetoothMock spec

/// The watch as a CoreBluetoothMock spec: the same service, its file data counted by its
/// delegate, its activity notified by the test (`simulateValueUpdate`).
final class HybridWatchSpec: CBMPeripheralSpecDelegate, @unchecked Sendable {
    // @unchecked Sendable: `bytes` is only touched with `lock` held.
    private let lock = NSLock()
    private var bytes: [UInt8] = []
    private var storedOnReceived: (@Sendable (Int) -> Void)?
    let activity = CBMCharacteristicMock(type: HybridWatchService.activity, properties: [.notify])
    let file = CBMCharacteristicMock(type: HybridWatchService.file, properties: [.writeWithoutResponse])
    let firmware = CBMCharacteristicMock(type: HybridWatchService.firmware, properties: [.read])
    private(set) var spec: CBMPeripheralSpec!

    init(identifier: UUID, proximity: CBMProximity = .near, mtu: Int = 23) {
        spec = CBMPeripheralSpec.simulatePeripheral(identifier: identifier, proximity: proximity)
            .advertising(
                advertisementData: [
                    CBMAdvertisementDataLocalNameKey: "Hybrid",
                    CBMAdvertisementDataServiceUUIDsKey: [HybridWatchService.service],
                    CBMAdvertisementDataIsConnectable: true as NSNumber,
                ], withInterval: 0.05
            )
            .connectable(
                name: "Hybrid",
                services: [
                    CBMServiceMock(
                        type: HybridWatchService.service, primary: true, characteristics: activity, file, firmware)
                ], delegate: self, mtu: mtu
            )
            .allowForRetrieval()
            .build()
    }

    var received: [UInt8] { lock.withLock { bytes } }
    /// Called with the count of bytes received so far, after each write command.
    var onReceived: (@Sendable (Int) -> Void)? {
        get { lock.withLock { storedOnReceived } }
        set { lock.withLock { storedOnReceived = newValue } }
    }

    func peripheral(_ peripheral: CBMPeripheralSpec, didReceiveReadRequestFor characteristic: CBMCharacteristicMock)
        -> Result<Data, any Error>
    { .success(Data([3, 1])) }

    func peripheral(
        _ peripheral: CBMPeripheralSpec, didReceiveWriteCommandFor characteristic: CBMCharacteristicMock, data: Data
    ) {
        let (count, onReceived) = lock.withLock { () -> (Int, (@Sendable (Int) -> Void)?) in
            bytes += data
            return (bytes.count, storedOnReceived)
        }
        onReceived?(count)
    }
}

/// The companion against the watch's spec, simulated with CoreBluetoothMock's statics in an async
/// `setUp` (they install the system: realistic, seed 0, time following the wall clock) and torn
/// down in `tearDown`, as a suite moving from CoreBluetoothMock writes it.
final class HybridWatchSpecXCTests: XCTestCase {
    private let watchIdentifier = UUID(uuidString: "5A7E0000-0000-0000-0000-0000000000A1")!
    private let farIdentifier = UUID(uuidString: "5A7E0000-0000-0000-0000-0000000000F0")!
    private var watch: HybridWatchSpec!
    private var far: HybridWatchSpec!

    override func setUp() async throws {
        watch = HybridWatchSpec(identifier: watchIdentifier, mtu: 185)
        far = HybridWatchSpec(identifier: farIdentifier, proximity: .outOfRange)
        CBMCentralManagerMock.simulateInitialState(.poweredOn)
        CBMCentralManagerMock.simulatePeripherals([watch.spec, far.spec])
    }

    override func tearDown() async throws {
        CBMCentralManagerMock.tearDownSimulation()
    }

    func testAConnectionToAWatchOutOfRangeEndsWithTheAppsTimeoutAndADisconnection() async throws {
        let companion = HybridWatchCompanion(connectTimeout: 0.3)
        await fulfillment(of: [expectation(companion, "powered on")], timeout: 10)
        companion.reconnect(to: farIdentifier)
        // CoreBluetooth's attempt never times out; the app's own timeout cancels it, and the
        // cancel is reported as a disconnection with no error (CoreBluetooth's documentation of
        // cancelPeripheralConnection), not as a failure to connect.
        await fulfillment(
            of: [expectation(companion, "connect timed out"), expectation(companion, "disconnected")], timeout: 10,
            enforceOrder: true)
        let events = companion.queue.sync { companion.events }
        XCTAssertEqual(events, ["powered on", "retrieved", "connect timed out", "disconnected"])
        let system = try XCTUnwrap(SimulatedSystem.current)
        let waiting = await system.bridge.waitingOperations
        XCTAssertEqual(waiting, [])
        // Time follows the wall clock: the app's 0.3 s are about 0.3 s of simulation. (Not at
        // least 0.3 s: each call is logged at the instant the system applies it, a hop after the
        // app made it, and that hop is longer for one call than another on a loaded machine.)
        let log = await system.bridge.log
        let connecting = try XCTUnwrap(log.first { $0.kind == .connecting }?.time)
        let cancelled = try XCTUnwrap(log.first { $0.kind == .disconnected }?.time)
        XCTAssertGreaterThanOrEqual(connecting.duration(to: cancelled), .milliseconds(200))
    }

    func testAfterASimulatedDisconnectionTheCompanionReconnectsByIdentifier() async throws {
        let companion = try await connectedToSpec()
        watch.spec.simulateDisconnection()
        await fulfillment(of: [expectation(companion, "disconnected with error 7")], timeout: 10)
        companion.reconnect()
        await fulfillment(
            of: [expectation(companion, "retrieved"), expectation(companion, "ready", times: 2)], timeout: 10,
            enforceOrder: true)
        XCTAssertEqual(
            companion.queue.sync { companion.events },
            [
                "powered on", "discovered", "connected", "ready", "disconnected with error 7", "retrieved", "connected",
                "ready",
            ])
    }

    func testTheCompanionReadsTheSpecsRSSIAndItsNegotiatedWriteLength() async throws {
        let companion = try await connectedToSpec()
        companion.readRSSI()
        await fulfillment(of: [expectation(companion, "rssi")], timeout: 10)
        let rssi = try XCTUnwrap(companion.queue.sync { companion.lastRSSI })
        XCTAssertLessThan(rssi, -20)
        XCTAssertGreaterThan(rssi, -110)
        // The spec's MTU, 185, is less than what the phone offers: 185 − 3.
        XCTAssertEqual(companion.maximumWriteWithoutResponse, 182)
    }

    func testAWriteWithoutResponseLoopToTheSpecLosesNothing() async throws {
        let companion = try await connectedToSpec()
        let file = (0..<(182 * 50)).map { UInt8(truncatingIfNeeded: $0 &* 5) }
        // (Not the log: it has the app's writes as it queued them; the spec hears each as it
        // crosses the link.)
        let received = expectation(description: "the spec received the file")
        watch.onReceived = { count in if count == file.count { received.fulfill() } }
        companion.send(file: file)
        await fulfillment(of: [expectation(companion, "file sent"), received], timeout: 10)
        XCTAssertTrue(watch.received == file)
        XCTAssertEqual(companion.queue.sync { companion.chunkLengths }.count, 50)
        XCTAssertGreaterThan(companion.queue.sync { companion.pausesForReadiness }, 0)
    }

    func testNotificationsTheSpecSendsAtAHighRateAllArriveInOrder() async throws {
        let companion = try await connectedToSpec()
        let values = (0..<150).map { Data([UInt8($0 >> 8), UInt8($0 & 0xFF)]) }
        for value in values { watch.spec.simulateValueUpdate(value, for: watch.activity) }
        await fulfillment(of: [expectation(companion, "activity 150")], timeout: 10)
        XCTAssertEqual(companion.queue.sync { companion.activity }, values)
    }

    func testAPowerCycleMidwayMakesTheCompanionReconnectByIdentifier() async throws {
        let companion = try await connectedToSpec()
        let off = expectation(companion, "powered off")
        CBMCentralManagerMock.simulatePowerOff()
        await fulfillment(of: [off], timeout: 10)
        CBMCentralManagerMock.simulatePowerOn()
        await fulfillment(
            of: [expectation(companion, "retrieved"), expectation(companion, "ready", times: 2)], timeout: 10,
            enforceOrder: true)
        XCTAssertEqual(
            companion.queue.sync { companion.events },
            [
                "powered on", "discovered", "connected", "ready", "powered off", "powered on", "retrieved", "connected",
                "ready",
            ])
    }

    private func connectedToSpec() async throws -> HybridWatchCompanion {
        let companion = HybridWatchCompanion(connectTimeout: 5)
        await fulfillment(of: [expectation(companion, "powered on")], timeout: 10)
        companion.findWatch()
        await fulfillment(of: [expectation(companion, "ready")], timeout: 10)
        return companion
    }
}

/// What a test hears when its app is left waiting: deliberately broken variants. (XCTest has no
/// `XCTExpectFailure` here: the expected failures are captured instead of failing.)
final class HybridWatchLeftWaitingXCTests: ExpectedFailuresTestCase {
    private let farIdentifier = UUID(uuidString: "5A7E0000-0000-0000-0000-0000000000F1")!
    private var system: SimulatedSystem!

    override func setUp() async throws {
        system = try installSimulatedSystem(.realistic(seed: 4))
        let far = HybridWatchSpec(identifier: farIdentifier, proximity: .outOfRange)
        CBMCentralManagerMock.simulatePeripherals([far.spec])
    }

    /// The app forgot its timeout (a long one): the expectation's timeout names what the test
    /// waited for, and the system names the connection still waiting, and `finish()` the leftover.
    func testAnAppWithoutATimeoutLeavesItsConnectionWaitingAndTheReportsNameIt() async throws {
        let companion = HybridWatchCompanion(connectTimeout: 3_600)
        await fulfillment(of: [expectation(companion, "powered on")], timeout: 10)
        companion.reconnect(to: farIdentifier)
        await fulfillment(of: [expectation(companion, "retrieved")], timeout: 10)
        await system.bridge.waitUntil { !$0.pendingOperations.isEmpty }
        expectedFailures = ["the companion: connected"]
        await fulfillment(of: [expectation(companion, "connected")], timeout: 0.2)
        expectedFailures = []
        let failure = try XCTUnwrap(captured.texts.first)
        XCTAssertTrue(failure.contains("the companion: connected"), failure)
        let failureNote = await system.failureNote()
        let note = try XCTUnwrap(failureNote)
        XCTAssertTrue(
            note.hasPrefix(
                "operations the app started on the simulated system that were still waiting for their callback "
                    + "(a connection attempt does not time out, as with CoreBluetooth):\n- central "), note)
        XCTAssertTrue(note.contains(": connect on peripheral 5A7E0000 was still waiting (since "), note)
        // And what may explain it, as a stall report says it.
        XCTAssertTrue(note.contains("\nwhat may explain it:\n- central "), note)
        XCTAssertTrue(note.contains(" is still trying to connect to peripheral 5A7E0000, which is out of range"), note)
        let report = await system.bridge.finish()
        XCTAssertTrue(report.description.contains("connect on peripheral 5A7E0000"), "\(report)")
        XCTAssertEqual(companion.queue.sync { companion.events }, ["powered on", "retrieved"])
    }

    /// On the wall clock nothing reports a stall, and `waitUntil` has no timeout of its own: a
    /// condition that never holds would wait for ever. Awaited as an expectation, the wait fails
    /// with the expectation's name; cancelling its task ends it.
    func testAWaitUntilThatNeverEndsIsBoundedByAnExpectationAndEndsWhenCancelled() async throws {
        let companion = HybridWatchCompanion(connectTimeout: 3_600)
        await fulfillment(of: [expectation(companion, "powered on")], timeout: 10)
        companion.reconnect(to: farIdentifier)
        let bridge = system.bridge
        let subscribed = expectation(description: "the companion subscribed on the watch")
        let wait = Task {
            await bridge.waitUntil { $0.log.contains { $0.kind == .subscribe } }
            subscribed.fulfill()
        }
        expectedFailures = ["the companion subscribed on the watch"]
        await fulfillment(of: [subscribed], timeout: 0.2)
        expectedFailures = []
        XCTAssertEqual(captured.texts.count, 1)
        XCTAssertTrue(
            captured.texts.first?.contains("with unfulfilled expectations: the companion subscribed on the watch")
                == true, "\(captured.texts)")
        wait.cancel()
        await wait.value
    }

    /// The app scans before it is powered on (a classic): nothing is found, and the system names
    /// the scan it ignored.
    func testAScanBeforePowerOnIsNamedAmongTheCallsThatGotNoCallback() async throws {
        let manager = await MainActor.run { () -> CBMCentralManager in
            let manager = CBMCentralManager(delegate: nil, queue: nil)
            manager.scanForPeripherals(withServices: [HybridWatchService.service])
            return manager
        }
        let central = try XCTUnwrap(manager.simulatedCentral).identifier.uuidString.prefix(8)
        let failureNote = await system.failureNote()
        let note = try XCTUnwrap(failureNote)
        XCTAssertEqual(
            note,
            "calls the app made on the simulated system that got no callback, as with CoreBluetooth:\n"
                + "- CBMCentralManager \(central), ignored: scanForPeripherals: the manager is not powered on\n"
                + "the simulated system's seed is \(system.bridge.configuration.seed) (it fixes identifiers and "
                + "draws; its time follows the wall clock, so timings differ from run to run)")
        withExtendedLifetime(manager) {}
    }
}

/// A broken variant in virtual time: the app forgot its timeout, and the test's run reports the
/// stall, naming the test's wait that never ended and the connection the app left waiting.
@available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
final class HybridWatchVirtualTimeStallXCTests: XCTestCase {
    func testARunWhoseAppWaitsForEverReportsTheWaitAndTheConnection() async throws {
        let system = try installSimulatedSystem(.realistic(seed: 11), time: .virtual)
        let identifier = UUID(uuidString: "5A7E0000-0000-0000-0000-0000000000F4")!
        let far = HybridWatchSpec(identifier: identifier, proximity: .outOfRange)
        CBMCentralManagerMock.simulatePeripherals([far.spec])
        let bridge = system.bridge
        let waitLine = #line + 7
        do {
            try await bridge.run(stallPatience: .milliseconds(200)) {
                let companion = HybridWatchCompanion(connectTimeout: 3_600)
                try await bridge.waitForApp { companion.queue.sync { companion.events.contains("powered on") } }
                companion.reconnect(to: identifier)
                // (Never: the watch is out of range, and the app's hour-long timeout is on the wall clock.)
                try await bridge.waitForApp { companion.queue.sync { companion.events.contains("connected") } }
            }
            XCTFail("the run did not stall")
        } catch let stall as MockBLEBridge.Stall {
            let text = "\(stall)"
            XCTAssertTrue(text.contains("HybridWatchXCTests.swift:\(waitLine)"), text)
            XCTAssertTrue(text.contains(": connect on peripheral 5A7E0000 was still waiting (since "), text)
            XCTAssertEqual(stall.seed, 11)
        }
    }
}

/// A broken variant: the system installed with virtual time, and the test waits on the wall
/// clock (expectations) instead of in the bridge's run. Nothing happens (not even the managers'
/// power-on, which takes virtual time in realistic mode); the failure says why.
final class HybridWatchVirtualTimeWithoutARunXCTests: ExpectedFailuresTestCase {

    func testAFailedTestThatNeverRanTheSystemsVirtualTimeIsToldSo() async throws {
        let system = try installSimulatedSystem(.realistic(seed: 11), time: .virtual)
        let watch = HybridWatch()
        expectedFailures = ["the watch: advertising"]
        await fulfillment(of: [expectation(watch, "advertising")], timeout: 0.2)
        expectedFailures = []
        XCTAssertEqual(captured.texts.count, 1)
        let failureNote = await system.failureNote()
        let note = try XCTUnwrap(failureNote)
        XCTAssertEqual(
            note,
            "the simulated system's time is virtual and never moved: what the apps did waits for it (the next "
                + "scheduled event, at 0.1s, never happened). Virtual time moves only in the system bridge's "
                + "`run { }`, where it drives itself, or with its `advance(by:)`: run the test's body in "
                + "`system.bridge.run { }`, or install the system with time following the wall clock (the default).\n"
                + "the simulated system's seed is 11: installed with it, the system draws the same again")
        withExtendedLifetime(watch) {}
    }
}

/// The other side of that note: a test whose body did run on the system's bridge, and held its time
/// with a pausing wait, gets its stall, and the failure note does not tell it to run a body it ran.
final class HybridWatchVirtualTimeHeldByARunXCTests: XCTestCase {

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    func testAPausingWaitInTheSystemsRunIsNotBlamedOnNoRun() async throws {
        let system = try installSimulatedSystem(.realistic(seed: 12), time: .virtual)
        let bridge = system.bridge
        do {
            try await bridge.run(stallPatience: .milliseconds(200)) {
                let companion = HybridWatchCompanion(connectTimeout: 3_600)
                // (Never: the manager powers on in virtual time, which the pause holds.)
                try await bridge.waitForApp(pausingSimulation: true) {
                    companion.queue.sync { companion.events.contains("powered on") }
                }
            }
            XCTFail("the run did not stall")
        } catch let stall as MockBLEBridge.Stall {
            XCTAssertEqual(stall.seed, 12)
        }
        let note = await system.failureNote()
        XCTAssertFalse(note?.contains("never moved") ?? false, note ?? "")
    }
}
