import BLECBM
import BLEMockKit
import BLEMockKitXCTest
import XCTest

/// CoreBluetoothMock's statics and a spec's `simulate…` calls made from wherever a test's
/// helpers make them: delegate callbacks, notification observers, background queues.
final class SystemSimulateAnywhereXCTests: XCTestCase {
    private let identifier = UUID(uuidString: "7A1E0000-0000-0000-0000-00000000E001")!
    private let otherIdentifier = UUID(uuidString: "7A1E0000-0000-0000-0000-00000000E002")!

    override func tearDownWithError() throws {
        CBMCentralManagerMock.tearDownSimulation()
    }

    /// Power off from a delegate callback, new peripherals and power on from a background queue,
    /// a disconnection from a notification observer: each reaches the app.
    func testStaticsAndSpecCallsWorkFromCallbacksObserversAndBackgroundQueues() {
        let sensor = probeSensor("Sensor", identifier: identifier)
        let other = probeSensor("Other", identifier: otherIdentifier)
        CBMCentralManagerMock.simulatePeripherals([sensor])
        CBMCentralManagerMock.simulateInitialState(.poweredOn)
        let poweredOff = expectation(description: "powered off")
        let otherFound = expectation(description: "the other sensor is found")
        let sensorGone = expectation(description: "the other sensor disconnected")
        let journal = Journal()
        let delegate = CBMCentralManagerDelegateProxy()
        var turnedOff = false
        let appQueue = DispatchQueue(label: "app")
        delegate.didUpdateState = { manager in
            journal.add("state \(manager.state.rawValue)")
            switch manager.state {
            case .poweredOn: manager.scanForPeripherals(withServices: nil)
            case .poweredOff: poweredOff.fulfill()
            default: break
            }
        }
        delegate.didDiscoverPeripheral = { manager, peripheral, advertisementData, _ in
            let name = advertisementData[CBMAdvertisementDataLocalNameKey] as? String ?? "?"
            journal.add("found \(name)")
            if name == "Sensor", !turnedOff {
                turnedOff = true
                // From a delegate callback.
                CBMCentralManagerMock.simulatePowerOff()
            }
            if name == "Other" {
                manager.stopScan()
                manager.connect(peripheral)
                otherFound.fulfill()
            }
        }
        let connected = expectation(description: "connected")
        delegate.didConnect = { _, _ in
            journal.add("connected")
            connected.fulfill()
        }
        delegate.didDisconnect = { _, _, _, _, error in
            journal.add("disconnected \((error as NSError?)?.code ?? -1)")
            sensorGone.fulfill()
        }
        let manager = CBMCentralManagerMock(delegate: delegate, queue: appQueue)
        wait(for: [poweredOff], timeout: 5)
        // From a background queue: new peripherals (allowed while powered off), then power on.
        DispatchQueue.global().async {
            CBMCentralManagerMock.simulatePeripherals([other])
            CBMCentralManagerMock.simulatePowerOn()
        }
        wait(for: [otherFound], timeout: 5)
        // From a notification observer, on a background operation queue: the device drops the link.
        let name = Notification.Name("probe.away")
        let observerQueue = OperationQueue()
        let observer = NotificationCenter.default.addObserver(forName: name, object: nil, queue: observerQueue) {
            _ in other.simulateDisconnection()
        }
        defer { NotificationCenter.default.removeObserver(observer) }
        wait(for: [connected], timeout: 10)
        DispatchQueue.global().async { NotificationCenter.default.post(name: name, object: nil) }
        wait(for: [sensorGone], timeout: 10)
        let entries = journal.entries
        XCTAssertEqual(entries.first, "state 5")
        XCTAssertTrue(entries.contains("state 4"), "\(entries)")
        XCTAssertFalse(entries.drop { $0 != "state 4" }.contains("found Sensor"), "\(entries)")
        XCTAssertEqual(
            entries.suffix(2), ["connected", "disconnected \(CBMError.Code.peripheralDisconnected.rawValue)"])
        _ = manager
    }

    final class Journal: @unchecked Sendable {
        // @unchecked Sendable: `list` is only touched under `lock`.
        private let lock = NSLock()
        private var list: [String] = []
        func add(_ entry: String) { lock.withLock { list.append(entry) } }
        var entries: [String] { lock.withLock { list } }
    }
}

/// An app that waits for ever: it connects to a device that is out of range, with no timeout
/// of its own (CoreBluetooth's connection attempts never time out).
final class SystemWaitingForEverXCTests: XCTestCase {
    private let identifier = UUID(uuidString: "7A1E0000-0000-0000-0000-00000000F001")!

    /// With wall-clock time the test ends with its expectation's timeout, in bounded wall time,
    /// and the connection attempt is still pending: what a failed test says of the simulation
    /// names it (an `async` test, waiting with `fulfillment(of:timeout:)`).
    func testAConnectionThatNeverCompletesIsNamedWhenTheTestFails() async throws {
        let system = try installSimulatedSystem(.realistic(seed: 4))
        CBMCentralManagerMock.simulatePeripherals([
            probeSensor("Far", identifier: identifier, proximity: .outOfRange, retrievable: true)
        ])
        let poweredOn = expectation(description: "powered on")
        let connected = expectation(description: "connected")
        connected.isInverted = true
        let delegate = CBMCentralManagerDelegateProxy()
        delegate.didUpdateState = { manager in if manager.state == .poweredOn { poweredOn.fulfill() } }
        delegate.didConnect = { _, _ in connected.fulfill() }
        delegate.didFailToConnect = { _, _, _ in connected.fulfill() }
        var manager: CBMCentralManager? = CBMCentralManager(delegate: delegate, queue: nil)
        await fulfillment(of: [poweredOn], timeout: 2)
        var peripheral: CBMPeripheral? = try XCTUnwrap(
            manager?.retrievePeripherals(withIdentifiers: [identifier]).first)
        manager?.connect(peripheral!)
        let start = CFAbsoluteTimeGetCurrent()
        await fulfillment(of: [connected], timeout: 1)
        XCTAssertLessThan(CFAbsoluteTimeGetCurrent() - start, 10)
        XCTAssertEqual(peripheral?.state, .connecting)
        // What a failed test says: the pending connection, with its manager and peripheral.
        let central = try XCTUnwrap(manager?.simulatedCentral).identifier.uuidString.prefix(8)
        let note = await system.failureNote() ?? ""
        XCTAssertTrue(
            note.hasPrefix(
                "operations the app started on the simulated system that were still waiting for their callback "
                    + "(a connection attempt does not time out, as with CoreBluetooth):\n"
                    + "- central \(central): connect on peripheral 7A1E0000 was still waiting (since "),
            note)
        XCTAssertTrue(
            note.hasSuffix(
                "what may explain it:\n- central \(central) is still trying to connect to peripheral 7A1E0000, which "
                    + "is out of range: a connection attempt does not time out (as with CoreBluetooth); it completes "
                    + "once the peripheral is in range, powered on and connectable\n"
                    + "the simulated system's seed is 4 (it fixes identifiers and draws; its time follows the wall "
                    + "clock, so timings differ from run to run)"),
            note)
        // The app lets go of its manager (a test's locals go before its failure is reported):
        // the attempt ends with it, with no callback, and is noted as such.
        manager = nil
        peripheral = nil
        // (Up to five seconds of wall time for the release's command to reach the bridge.)
        for _ in 0..<5_000 where system.unansweredCalls.isEmpty { try await Task.sleep(for: .milliseconds(1)) }
        XCTAssertEqual(
            system.unansweredCalls,
            [
                "CBMCentralManager \(central), unanswered: connect on peripheral 7A1E0000, which is out of range: the "
                    + "app let go of the manager while it was still waiting (its operations end with it, with no "
                    + "callback; a test's references to its app go as its test method returns)"
            ])
        // (No longer waiting: it ended.)
        let after = await system.failureNote() ?? ""
        XCTAssertFalse(after.contains("still waiting for their callback"), after)
    }
}

/// The same app with the system's time virtual, in the bridge's run: the run reports the stall.
final class SystemWaitingForEverInVirtualTimeXCTests: XCTestCase {
    private let identifier = UUID(uuidString: "7A1E0000-0000-0000-0000-00000000F002")!

    func testAConnectionThatNeverCompletesEndsTheRunWithAStallNamingIt() async throws {
        guard #available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *) else {
            throw XCTSkip("runs need task executors (macOS 15)")
        }
        let bridge = try installSimulatedSystem(.realistic(seed: 4), time: .virtual).bridge
        CBMCentralManagerMock.simulatePeripherals([
            probeSensor("Far", identifier: identifier, proximity: .outOfRange, retrievable: true)
        ])
        let start = CFAbsoluteTimeGetCurrent()
        let identifier = identifier
        do {
            try await bridge.run {
                let queue = DispatchQueue(label: "app")
                let delegate = CBMCentralManagerDelegateProxy()
                let connected = Flag()
                var peripheral: CBMPeripheral?  // (kept, as CoreBluetooth asks)
                delegate.didUpdateState = { manager in
                    guard manager.state == .poweredOn else { return }
                    peripheral = manager.retrievePeripherals(withIdentifiers: [identifier])[0]
                    manager.connect(peripheral!)
                }
                delegate.didConnect = { _, _ in connected.set() }
                let manager = queue.sync { CBMCentralManager(delegate: delegate, queue: queue) }
                try await bridge.waitForApp { connected.isSet }
                _ = (manager, peripheral)
            }
            XCTFail("the run ended")
        } catch let stall as MockBLEBridge.Stall {
            XCTAssertTrue(
                "\(stall)".contains(": connect on peripheral 7A1E0000 was still waiting (since "), "\(stall)")
        }
        XCTAssertLessThan(CFAbsoluteTimeGetCurrent() - start, 30)
    }

    final class Flag: @unchecked Sendable {
        // @unchecked Sendable: `value` is only touched under `lock`.
        private let lock = NSLock()
        private var value = false
        func set() { lock.withLock { value = true } }
        var isSet: Bool { lock.withLock { value } }
    }
}

/// `finish()` on the wall-clock system's bridge, at the end of a test whose app still waits.
final class SystemFinishXCTests: XCTestCase {
    private let identifier = UUID(uuidString: "7A1E0000-0000-0000-0000-00000000F003")!

    func testFinishingTheSystemsBridgeReportsThePendingConnection() async throws {
        let system = try installSimulatedSystem(.realistic(seed: 5))
        CBMCentralManagerMock.simulatePeripherals([
            probeSensor("Far", identifier: identifier, proximity: .outOfRange, retrievable: true)
        ])
        let poweredOn = expectation(description: "powered on")
        let delegate = CBMCentralManagerDelegateProxy()
        delegate.didUpdateState = { manager in if manager.state == .poweredOn { poweredOn.fulfill() } }
        var failures: [Int] = []
        delegate.didFailToConnect = { _, _, error in failures.append((error as NSError?)?.code ?? -1) }
        let manager = CBMCentralManager(delegate: delegate, queue: nil)
        await fulfillment(of: [poweredOn], timeout: 2)
        let peripheral = try XCTUnwrap(manager.retrievePeripherals(withIdentifiers: [identifier]).first)
        manager.connect(peripheral)
        await system.bridge.waitUntil { !$0.pendingOperations.isEmpty }
        let report = await system.bridge.finish()
        let central = try XCTUnwrap(manager.simulatedCentral).identifier.uuidString.prefix(8)
        XCTAssertTrue(
            report.description.contains("- central \(central): connect on peripheral 7A1E0000 was still waiting"),
            "\(report)")
        XCTAssertEqual(failures, [])
    }
}
