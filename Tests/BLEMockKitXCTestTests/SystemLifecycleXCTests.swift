import BLECBM
import BLEMockKit
import BLEMockKitXCTest
import XCTest

/// An error a test throws midway on purpose.
struct MidwayError: Error {}

/// The system's life across an XCTest class's tests: each starts with none installed and ends
/// leaving none, however it ended, and what a test left behind (managers still alive) does not
/// reach the next one.
final class SystemLifecycleXCTests: ExpectedFailuresTestCase {

    override func setUp() {
        XCTAssertNil(SimulatedSystem.current, "the previous test left a system installed")
    }

    override func tearDown() {
        // (After the teardown blocks.)
        XCTAssertNil(SimulatedSystem.current, "the test left a system installed")
        if let system = SimulatedSystem.current { system.uninstall() }
    }

    func testInstallingTwiceInATestThrowsTheInstallErrorNamingTheFirst() throws {
        try installSimulatedSystem()
        XCTAssertThrowsError(try installSimulatedSystem()) { error in
            guard let error = error as? SimulatedSystem.InstallError else { return XCTFail("\(error)") }
            XCTAssertEqual(error.installedBy, "the XCTest \(self.name)")
            XCTAssertEqual(error.requestedBy, "the XCTest \(self.name)")
            XCTAssertTrue(
                error.description.hasPrefix(
                    "SimulatedSystem.install (the XCTest \(self.name)): a simulated system is already installed, "
                        + "by the XCTest \(self.name)."), error.description)
        }
    }

    /// A migrating suite that calls CoreBluetoothMock's statics in `setUpWithError` before
    /// installing the system itself: the statics installed one already, and the error says so.
    func testInstallingAfterTheStaticsInstalledOneSaysTheStaticsDid() throws {
        CBMCentralManagerMock.simulateInitialState(.poweredOn)
        defer { CBMCentralManagerMock.tearDownSimulation() }
        XCTAssertThrowsError(try installSimulatedSystem()) { error in
            guard let error = error as? SimulatedSystem.InstallError else { return XCTFail("\(error)") }
            XCTAssertEqual(error.installedBy, "CBMCentralManagerMock.simulateInitialState(_:)")
            XCTAssertTrue(
                error.description.contains(
                    "CoreBluetoothMock's statics install the system when none is installed: install it before "
                        + "calling them (they then act on it), or let them install it and do not install another."),
                error.description)
        }
    }

    /// The same with a spec's call (bringing it into range before simulating it): the error
    /// names that call, as the spec's type and method.
    func testInstallingAfterASpecsCallInstalledOneNamesThatCall() throws {
        let spec = probeSensor("Moved", identifier: UUID(uuidString: "7A1E0000-0000-0000-0000-00000000C006")!)
        spec.simulateProximityChange(.near)
        defer { CBMCentralManagerMock.tearDownSimulation() }
        XCTAssertThrowsError(try installSimulatedSystem()) { error in
            guard let error = error as? SimulatedSystem.InstallError else { return XCTFail("\(error)") }
            XCTAssertEqual(error.installedBy, "CBMPeripheralSpec.simulateProximityChange(_:)")
            XCTAssertTrue(
                error.description.hasPrefix(
                    "SimulatedSystem.install (the XCTest \(self.name)): a simulated system is already installed, "
                        + "by CBMPeripheralSpec.simulateProximityChange(_:). CoreBluetoothMock's statics install the "
                        + "system when none is installed"), error.description)
        }
    }

    func testTwoInstallsAtOnceFromTwoThreadsOneWinsAndTheOtherGetsTheInstallError() {
        let results = Results()
        DispatchQueue.concurrentPerform(iterations: 8) { index in
            do {
                results.add(.success(try SimulatedSystem.install(installedBy: "thread \(index)")))
            } catch {
                results.add(.failure(error))
            }
        }
        let systems = results.all.compactMap { try? $0.get() }
        XCTAssertEqual(systems.count, 1)
        let errors = results.all.compactMap { result -> SimulatedSystem.InstallError? in
            guard case .failure(let error) = result else { return nil }
            return error as? SimulatedSystem.InstallError
        }
        XCTAssertEqual(errors.count, 7)
        XCTAssertTrue(errors.allSatisfy { $0.installedBy == systems.first?.installedBy })
        XCTAssertTrue(SimulatedSystem.current === systems.first)
        systems.first?.uninstall()
    }

    final class Results: @unchecked Sendable {
        // @unchecked Sendable: `list` is only touched under `lock`.
        private let lock = NSLock()
        private var list: [Result<SimulatedSystem, any Error>] = []
        func add(_ result: Result<SimulatedSystem, any Error>) { lock.withLock { list.append(result) } }
        var all: [Result<SimulatedSystem, any Error>] { lock.withLock { list } }
    }

    func testUninstallingWhatIsNotInstalledDoesNothing() throws {
        CBMCentralManagerMock.tearDownSimulation()
        let system = try SimulatedSystem.install(installedBy: name)
        system.uninstall()
        system.uninstall()
        CBMCentralManagerMock.tearDownSimulation()
        XCTAssertNil(SimulatedSystem.current)
        let next = try SimulatedSystem.install(installedBy: name)
        system.uninstall()  // the old one: leaves the new one installed
        XCTAssertTrue(SimulatedSystem.current === next)
        next.uninstall()
    }

    func testATestThatThrowsMidwayLeavesNoSystemInstalled() throws {
        expectedFailures = ["MidwayError"]
        try installSimulatedSystem()
        let manager = CBMCentralManager(delegate: nil, queue: nil)
        manager.scanForPeripherals(withServices: nil)
        throw MidwayError()
    }

    /// A test that mixes the helper with CoreBluetoothMock's statics: it tears the simulation
    /// down midway and starts another with the statics. The next test still starts clean.
    func testTearingDownTheHelpersSystemAndSimulatingAgainLeavesNothingForTheNextTest() throws {
        let first = try installSimulatedSystem()
        CBMCentralManagerMock.tearDownSimulation()
        XCTAssertFalse(first.isInstalled)
        CBMCentralManagerMock.simulatePeripherals([
            probeSensor("Again", identifier: UUID(uuidString: "7A1E0000-0000-0000-0000-00000000C001")!)
        ])
        let second = try XCTUnwrap(SimulatedSystem.current)
        XCTAssertFalse(second === first)
        XCTAssertEqual(second.installedBy, "CBMCentralManagerMock.simulatePeripherals(_:)")
    }

    /// `tearDownSimulation()` then a new simulation in the same test, CoreBluetoothMock style:
    /// the old manager hears `unknown` and nothing more; a new manager works on the new one.
    func testTearingDownAndSimulatingAgainInOneTestStartsAFreshSimulation() {
        let firstSpec = probeSensor("First", identifier: UUID(uuidString: "7A1E0000-0000-0000-0000-00000000C002")!)
        let secondSpec = probeSensor("Second", identifier: UUID(uuidString: "7A1E0000-0000-0000-0000-00000000C003")!)
        CBMCentralManagerMock.simulatePeripherals([firstSpec])
        CBMCentralManagerMock.simulateInitialState(.poweredOn)
        let firstRead = expectation(description: "the first app read the first sensor")
        let old = ProbeCentralApp(target: "First")
        old.onRead = { _ in firstRead.fulfill() }
        old.start()
        wait(for: [firstRead], timeout: 5)
        let firstSystem = SimulatedSystem.current
        let oldUnknown = expectation(description: "the old manager hears unknown")
        old.onState = { state in if state == .unknown { oldUnknown.fulfill() } }
        CBMCentralManagerMock.tearDownSimulation()
        wait(for: [oldUnknown], timeout: 2)

        CBMCentralManagerMock.simulatePeripherals([secondSpec])
        CBMCentralManagerMock.simulateInitialState(.poweredOn)
        XCTAssertFalse(SimulatedSystem.current === firstSystem)
        let secondRead = expectation(description: "the new app read the second sensor")
        let new = ProbeCentralApp(target: "Second")
        new.onRead = { _ in secondRead.fulfill() }
        new.start()
        wait(for: [secondRead], timeout: 5)
        // The old manager heard nothing of the new simulation.
        XCTAssertEqual(old.events, ["state 5", "discovered First", "connected", "read 2A", "state 0"])
        XCTAssertEqual(old.manager?.state, .unknown)
        old.manager?.scanForPeripherals(withServices: nil)
        XCTAssertEqual(old.manager?.isScanning, false)
        XCTAssertEqual(old.events.count, 5)
        CBMCentralManagerMock.tearDownSimulation()
    }

    /// The same from inside a delegate callback of the first system's manager, where that
    /// system's bridge is still current: the statics after `tearDownSimulation()` act on a fresh
    /// system, and a manager made there joins it (they went to the uninstalled system, and the
    /// manager was invalid).
    func testTearingDownAndSimulatingAgainInACallbackStartsAFreshSimulation() {
        let firstSpec = probeSensor("First", identifier: UUID(uuidString: "7A1E0000-0000-0000-0000-00000000C00A")!)
        let secondSpec = probeSensor("Second", identifier: UUID(uuidString: "7A1E0000-0000-0000-0000-00000000C00B")!)
        CBMCentralManagerMock.simulatePeripherals([firstSpec])
        CBMCentralManagerMock.simulateInitialState(.poweredOn)
        let firstSystem = SimulatedSystem.current
        let new = ProbeCentralApp(target: "Second")
        let secondRead = expectation(description: "the app made in the callback read the second sensor")
        new.onRead = { _ in secondRead.fulfill() }
        let old = ProbeCentralApp(target: "First")
        let systems = LockedValue<[SimulatedSystem?]>([])
        old.onState = { state in
            guard state == .poweredOn else { return }
            CBMCentralManagerMock.tearDownSimulation()
            CBMCentralManagerMock.simulatePeripherals([secondSpec])
            CBMCentralManagerMock.simulateInitialState(.poweredOn)
            systems.value.append(SimulatedSystem.current)
            new.start()
        }
        old.start(queue: DispatchQueue(label: "lifecycle.callback-teardown"))
        wait(for: [secondRead], timeout: 5)
        let second = systems.value.first ?? nil
        XCTAssertNotNil(second)
        XCTAssertFalse(second === firstSystem)
        XCTAssertTrue(second === SimulatedSystem.current)
        XCTAssertEqual(new.events, ["state 5", "discovered Second", "connected", "read 2A"])
        CBMCentralManagerMock.tearDownSimulation()
    }

    /// A manager the previous test left alive, scanning, on a system that was uninstalled:
    /// it reports `unknown`, and its delegate hears nothing from the next system.
    func testAManagerLeftAliveByAnEarlierTestHearsNothingFromTheNextSystem() throws {
        let spec = probeSensor("Left", identifier: UUID(uuidString: "7A1E0000-0000-0000-0000-00000000C004")!)
        let earlier = try SimulatedSystem.install(installedBy: "the earlier test")
        CBMCentralManagerMock.simulatePeripherals([spec])
        let leftBehind = ProbeCentralApp(target: "nobody")
        let poweredOn = expectation(description: "powered on")
        let unknown = expectation(description: "unknown")
        leftBehind.onState = { state in
            if state == .poweredOn { poweredOn.fulfill() }
            if state == .unknown { unknown.fulfill() }
        }
        leftBehind.start(queue: DispatchQueue(label: "left.behind"))
        wait(for: [poweredOn], timeout: 2)
        earlier.uninstall()

        // The next test.
        let next = try SimulatedSystem.install(installedBy: "the next test")
        defer { next.uninstall() }
        CBMCentralManagerMock.simulatePeripherals([spec])
        let read = expectation(description: "the next test's app read the sensor")
        let app = ProbeCentralApp(target: "Left")
        app.onRead = { _ in read.fulfill() }
        app.start()
        wait(for: [read, unknown], timeout: 5)
        XCTAssertEqual(leftBehind.events, ["state 5", "state 0"])
        XCTAssertEqual(leftBehind.manager?.state, .unknown)
        XCTAssertFalse(leftBehind.manager?.bridge === next.bridge)
        // The earlier system's notes say it was uninstalled, and that the manager's scan ended with it.
        let name = try XCTUnwrap(leftBehind.manager?.simulatedCentral).identifier.uuidString.prefix(8)
        XCTAssertEqual(
            earlier.unansweredCalls,
            [
                "the simulated system installed by the earlier test was uninstalled (tearDownSimulation(), or "
                    + "SimulatedSystem.uninstall()): its manager is invalid and hears nothing more",
                "CBMCentralManager \(name): its scan ended with the simulated system's uninstall, with no callback but "
                    + "the state unknown",
            ])
        // Called under the next system (an app singleton's), it is ignored, and the next system's
        // notes (its stall or failure) say which manager it was.
        XCTAssertTrue(next.unansweredCalls.isEmpty)
        leftBehind.manager?.scanForPeripherals(withServices: nil)
        XCTAssertEqual(
            next.unansweredCalls,
            [
                "CBMCentralManager \(name), of a simulated system uninstalled before this one (an app kept it past its "
                    + "test), ignored: scanForPeripherals: the manager is not powered on (the manager is invalid and "
                    + "hears nothing of this system: make a new one)"
            ])
    }

    /// A suite written for CoreBluetoothMock resets its specs' delegates between tests, in
    /// `tearDown` after `tearDownSimulation()` too: the delegate hears `reset()`, as in
    /// CoreBluetoothMock, and no system is left installed for the next test (`tearDown` above
    /// checks it too).
    func testAResetAfterTheSimulationIsTornDownTellsTheDelegateAndInstallsNoSystem() {
        let resets = ResetCountingDelegate()
        let identifier = UUID(uuidString: "7A1E0000-0000-0000-0000-00000000C005")!
        let spec = CBMPeripheralSpec.simulatePeripheral(identifier: identifier)
            .advertising(advertisementData: [CBMAdvertisementDataLocalNameKey: "Reset"], withInterval: 0.1)
            .connectable(name: "Reset", services: [], delegate: resets)
            .build()
        CBMCentralManagerMock.simulatePeripherals([spec])
        spec.simulateReset()
        XCTAssertEqual(resets.count.value, 1)
        CBMCentralManagerMock.tearDownSimulation()
        spec.simulateReset()
        XCTAssertEqual(resets.count.value, 2)
        XCTAssertNil(SimulatedSystem.current, "installed by \(SimulatedSystem.current?.installedBy ?? "")")
    }
}

/// A spec delegate that counts its resets.
final class ResetCountingDelegate: CBMPeripheralSpecDelegate, Sendable {
    let count = LockedValue(0)

    func reset() { count.value += 1 }
}

/// Callbacks still queued for a manager when its system is uninstalled (its queue was busy):
/// they may arrive before the manager hears `unknown`, never after it, and none reaches the
/// next test's system.
final class SystemLateCallbacksXCTests: XCTestCase {
    func testCallbacksQueuedBeforeAnUninstallNeverFollowTheUnknownState() throws {
        let spec = probeSensor(
            "Chatty", identifier: UUID(uuidString: "7A1E0000-0000-0000-0000-00000000C005")!, interval: 0.01)
        let system = try SimulatedSystem.install(installedBy: name)
        addTeardownBlock { system.uninstall() }
        CBMCentralManagerMock.simulatePeripherals([spec])
        let queue = DispatchQueue(label: "busy.app")
        let journal = SystemSimulateAnywhereXCTests.Journal()
        let scanning = expectation(description: "heard the sensor")
        let delegate = CBMCentralManagerDelegateProxy()
        delegate.didUpdateState = { manager in
            journal.add("state \(manager.state.rawValue)")
            if manager.state == .poweredOn {
                manager.scanForPeripherals(
                    withServices: nil, options: [CBMCentralManagerScanOptionAllowDuplicatesKey: true])
            }
        }
        var heard = 0
        delegate.didDiscoverPeripheral = { _, _, _, _ in
            journal.add("found")
            heard += 1
            if heard == 1 { scanning.fulfill() }
        }
        let manager = CBMCentralManager(delegate: delegate, queue: queue)
        wait(for: [scanning], timeout: 5)
        // The app's queue is busy while the system goes and the next one comes.
        let busy = DispatchSemaphore(value: 0)
        queue.async { busy.wait() }
        let piling = expectation(description: "discoveries queue up behind it")
        piling.isInverted = true
        wait(for: [piling], timeout: 0.1)
        system.uninstall()
        let next = try SimulatedSystem.install(installedBy: "the next test")
        defer { next.uninstall() }
        CBMCentralManagerMock.simulatePeripherals([spec])
        busy.signal()
        let unknown = expectation(description: "unknown")
        queue.async { unknown.fulfill() }  // after everything queued so far
        wait(for: [unknown], timeout: 5)
        // What else reaches the queue after a while: nothing.
        let settled = expectation(description: "settled")
        settled.isInverted = true
        wait(for: [settled], timeout: 0.3)
        let entries = queue.sync { journal.entries }
        let afterUnknown = entries.drop { $0 != "state 0" }
        XCTAssertEqual(afterUnknown.first, "state 0", "\(entries.suffix(5))")
        XCTAssertEqual(Array(afterUnknown.dropFirst()), [], "\(entries.suffix(5))")
        XCTAssertEqual(manager.state, .unknown)
    }
}

/// A manager made on a system's bridge once the system is uninstalled (an app's queue that
/// made one just as the test ended and uninstalled the system): it is as invalid as those made
/// before, not a live manager on a simulation whose time has stopped.
final class SystemRetiredBridgeXCTests: XCTestCase {
    func testAManagerMadeOnAnUninstalledSystemsBridgeIsInvalid() throws {
        let system = try SimulatedSystem.install(installedBy: name)
        CBMCentralManagerMock.simulatePeripherals([
            probeSensor("Gone", identifier: UUID(uuidString: "7A1E0000-0000-0000-0000-00000000C006")!)
        ])
        system.uninstall()
        let app = ProbeCentralApp(target: "Gone")
        let unknown = expectation(description: "unknown")
        app.onState = { state in if state == .unknown { unknown.fulfill() } }
        let central = CBMCentralManager(bridge: system.bridge, delegate: app, queue: nil)
        let peripheralManager = CBMPeripheralManager(bridge: system.bridge, delegate: nil, queue: nil)
        wait(for: [unknown], timeout: 2)
        XCTAssertEqual(app.events, ["state 0"])
        XCTAssertEqual(central.state, .unknown)
        central.scanForPeripherals(withServices: nil)
        XCTAssertFalse(central.isScanning)
        XCTAssertEqual(peripheralManager.state, .unknown)
    }
}

/// A system installed once for a whole class, in the class's `setUp()`, as some suites do.
final class SystemInstalledForTheClassXCTests: XCTestCase {
    nonisolated(unsafe) private static var classSystem: SimulatedSystem?

    override class func setUp() {
        super.setUp()
        classSystem = try? SimulatedSystem.install(installedBy: "SystemInstalledForTheClassXCTests.setUp()")
        CBMCentralManagerMock.simulatePeripherals([
            probeSensor("Shared", identifier: UUID(uuidString: "7A1E0000-0000-0000-0000-00000000D001")!)
        ])
    }

    override class func tearDown() {
        classSystem?.uninstall()
        classSystem = nil
        super.tearDown()
    }

    func testTheClassSystemServesThisTest() throws {
        let system = try XCTUnwrap(Self.classSystem)
        XCTAssertTrue(SimulatedSystem.current === system)
        let read = expectation(description: "read")
        let app = ProbeCentralApp(target: "Shared")
        app.onRead = { _ in read.fulfill() }
        DispatchQueue.global().async { app.start() }
        wait(for: [read], timeout: 5)
    }

    func testAPerTestInstallInsideItIsRefusedNamingTheClassSetUp() {
        XCTAssertThrowsError(try installSimulatedSystem()) { error in
            XCTAssertEqual(
                (error as? SimulatedSystem.InstallError)?.installedBy, "SystemInstalledForTheClassXCTests.setUp()")
        }
    }
}

/// The helper from an `async` `setUp`, CoreBluetoothMock's tear-down in an `async` `tearDown`.
final class SystemAsyncSetUpXCTests: XCTestCase {
    private var system: SimulatedSystem?

    override func setUp() async throws {
        XCTAssertNil(SimulatedSystem.current)
        system = try installSimulatedSystem(.realistic(seed: 6))
        CBMCentralManagerMock.simulatePeripherals([
            probeSensor("Async", identifier: UUID(uuidString: "7A1E0000-0000-0000-0000-00000000C007")!)
        ])
    }

    override func tearDown() async throws {
        CBMCentralManagerMock.tearDownSimulation()
        XCTAssertNil(SimulatedSystem.current)
        XCTAssertEqual(system?.isInstalled, false)
    }

    func testAnAppMadeOnItsQueueReadsTheSensor() async throws {
        let read = expectation(description: "read")
        let app = ProbeCentralApp(target: "Async")
        app.onRead = { _ in read.fulfill() }
        DispatchQueue(label: "app").async { app.start() }
        await fulfillment(of: [read], timeout: 5)
        XCTAssertTrue(app.manager?.bridge === system?.bridge)
    }
}

/// A misuse CoreBluetooth lets pass quietly (a write without response to a characteristic that
/// does not take one) is named in the system's failure note: a test waiting for data that never
/// arrived is told of it.
final class SystemFailureNoteMisuseXCTests: XCTestCase {
    func testTheFailureNoteListsTheMisusesThatPassedQuietly() async throws {
        let system = try SimulatedSystem.install(installedBy: name)
        defer { system.uninstall() }
        CBMCentralManagerMock.simulatePeripherals([
            probeSensor("Quiet", identifier: UUID(uuidString: "7A1E0000-0000-0000-0000-00000000C00C")!)
        ])
        let app = ProbeCentralApp(target: "Quiet")
        let read = expectation(description: "read")
        app.onRead = { _ in read.fulfill() }
        app.start(queue: DispatchQueue(label: "failure-note.misuse"))
        await fulfillment(of: [read], timeout: 5)
        let before = await system.failureNote()
        XCTAssertNil(before)
        let peripheral = try XCTUnwrap(app.peripheral)
        let characteristic = try XCTUnwrap(peripheral.services?.first?.characteristics?.first)
        peripheral.writeValue(Data(count: 600), for: characteristic, type: .withoutResponse)
        await system.bridge.waitUntil { bridge in !bridge.misuses.isEmpty }
        let misuses = await system.bridge.misuses
        let failureNote = await system.failureNote()
        let note = try XCTUnwrap(failureNote)
        XCTAssertTrue(
            note.contains(
                "misuses CoreBluetooth lets pass quietly, which the apps made (the bridge's `misuses`):\n"
                    + misuses.map { "- \($0)" }.joined(separator: "\n")), note)
        // (The characteristic takes no write without response: that is the misuse, before its length.)
        XCTAssertEqual(misuses.map(\.kind), [.writeWithoutResponseNotSupported])
    }
}

/// `simulatePeripherals(_:)` refused while a manager is powered on (one an earlier test left, its
/// tearDown not tearing the simulation down, looks the same to the next test): the warning names
/// the managers and the system, and the system's notes keep it for the test's failure.
final class SystemRefusedPeripheralsXCTests: XCTestCase {
    override func tearDown() {
        CBMCentralManagerMock.tearDownSimulation()
    }

    func testSimulatingPeripheralsUnderALiveManagerIsRefusedNamingTheManager() throws {
        CBMCentralManagerMock.simulateInitialState(.poweredOn)
        let app = ProbeCentralApp(target: "nobody")
        let poweredOn = expectation(description: "powered on")
        app.onState = { state in if state == .poweredOn { poweredOn.fulfill() } }
        app.start(queue: DispatchQueue(label: "refused.peripherals"))
        wait(for: [poweredOn], timeout: 2)
        let system = try XCTUnwrap(SimulatedSystem.current)
        CBMCentralManagerMock.simulatePeripherals([
            probeSensor("Late", identifier: UUID(uuidString: "7A1E0000-0000-0000-0000-00000000C00D")!)
        ])
        let name = try XCTUnwrap(app.manager?.simulatedCentral).identifier.uuidString.prefix(8)
        XCTAssertEqual(
            system.unansweredCalls,
            [
                "CBMCentralManagerMock.simulatePeripherals(_:): peripherals cannot change while managers exist and "
                    + "Bluetooth is on (CBMCentralManager \(name), on the simulated system installed by "
                    + "CBMCentralManagerMock.simulateInitialState(_:)); call simulatePowerOff() first, or simulate them "
                    + "before creating managers (those an earlier test left count too, when its tearDown did not call "
                    + "CBMCentralManagerMock.tearDownSimulation()). The call does nothing."
            ])
    }
}

/// A system torn down in a callback inside its bridge's run: the run that then waits for a
/// discovery stalls, and the stall says the uninstall is why the app went quiet (it said only
/// that every task waited).
final class SystemUninstalledInARunXCTests: XCTestCase {
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    func testAStallAfterAnUninstallInACallbackNamesTheUninstall() async throws {
        let system = try installSimulatedSystem(.realistic(seed: 71), time: .virtual)
        let bridge = system.bridge
        CBMCentralManagerMock.simulatePeripherals([
            probeSensor("Far", identifier: UUID(uuidString: "7A1E0000-0000-0000-0000-00000000C00E")!, proximity: .far)
        ])
        let app = ProbeCentralApp(target: "Far")
        app.onState = { state in
            if state == .poweredOn { CBMCentralManagerMock.tearDownSimulation() }
        }
        do {
            try await bridge.run(stallPatience: .milliseconds(200)) {
                app.start(queue: DispatchQueue(label: "uninstalled.in.run"))
                try await bridge.waitForApp { app.peripheral != nil }
            }
            XCTFail("the run did not stall")
        } catch let stall as MockBLEBridge.Stall {
            XCTAssertEqual(
                stall.unansweredCalls,
                [
                    "the simulated system installed by the XCTest \(name) was uninstalled (tearDownSimulation(), or "
                        + "SimulatedSystem.uninstall()): its manager is invalid and hears nothing more"
                ])
            XCTAssertEqual(stall.seed, 71)
            // (The app heard the state, and did not scan: a manager below powered on cannot.)
            XCTAssertEqual(app.events, ["state 5", "state 0"])
        }
    }
}
