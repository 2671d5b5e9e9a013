import BLECBM
import BLEMockKit
import BLEMockKitXCTest
import XCTest

/// An XCTest suite as an iOS team writes it for an app that creates its managers wherever it
/// likes: the system installed in `setUpWithError`, synchronous tests waiting on the main thread.
/// Each test creates a central app (which reads a CoreBluetoothMock-style sensor) and a
/// peripheral app (which a central made on the main thread reads) somewhere other than the test's
/// thread; both must join the installed system and work.
final class SystemManagersAnywhereXCTests: XCTestCase {
    private var system: SimulatedSystem!
    private let sensorIdentifier = UUID(uuidString: "7A1E0000-0000-0000-0000-00000000A001")!

    override func setUpWithError() throws {
        system = try installSimulatedSystem()
        CBMCentralManagerMock.simulatePeripherals([probeSensor("Sensor", identifier: sensorIdentifier)])
    }

    /// Creates the central app and the peripheral app with `start`, which runs its closure
    /// somewhere else; checks that both joined the system and work.
    private func checkBothRolesWork(
        appQueue: DispatchQueue? = nil, file: StaticString = #filePath, line: UInt = #line,
        _ start: (@escaping @Sendable () -> Void) -> Void
    ) {
        let readSensor = expectation(description: "the app read the sensor")
        let readPeer = expectation(description: "a central read the peripheral app")
        let central = ProbeCentralApp(target: "Sensor")
        central.onRead = { value in if value == Data([0x2A]) { readSensor.fulfill() } }
        let peripheral = ProbePeripheralApp(name: "Peer", value: Data([0x07]))
        start {
            central.start(queue: appQueue)
            peripheral.start(queue: appQueue)
        }
        let reader = ProbeCentralApp(target: "Peer")
        reader.onRead = { value in if value == Data([0x07]) { readPeer.fulfill() } }
        reader.start()
        wait(for: [readSensor, readPeer], timeout: 5)
        XCTAssertTrue(central.manager?.bridge === system.bridge, "the central app's manager", file: file, line: line)
        XCTAssertNotNil(peripheral.manager?.simulatedPeripheral, "the peripheral app's manager", file: file, line: line)
        XCTAssertEqual(
            central.events, ["state 5", "discovered Sensor", "connected", "read 2A"], file: file, line: line)
        XCTAssertEqual(peripheral.events, ["state 5", "added", "advertising"], file: file, line: line)
    }

    func testManagersCreatedInAGlobalQueueAsyncJoinTheSystem() {
        checkBothRolesWork { body in DispatchQueue.global().async { body() } }
    }

    func testManagersCreatedOnAPrivateSerialQueueJoinTheSystem() {
        let queue = DispatchQueue(label: "app.bluetooth")
        checkBothRolesWork(appQueue: queue) { body in queue.async { body() } }
    }

    func testManagersCreatedInADetachedTaskJoinTheSystem() {
        checkBothRolesWork { body in Task.detached { body() } }
    }

    func testManagersCreatedInAnOperationJoinTheSystem() {
        let operations = OperationQueue()
        checkBothRolesWork { body in operations.addOperation { body() } }
        operations.waitUntilAllOperationsAreFinished()
    }

    func testManagersCreatedOnAThreadOfTheirOwnJoinTheSystem() {
        checkBothRolesWork { body in Thread { body() }.start() }
    }

    func testManagersCreatedInATimerCallbackOnTheMainRunLoopJoinTheSystem() {
        checkBothRolesWork { body in
            let timer = Timer(timeInterval: 0.01, repeats: false) { _ in body() }
            RunLoop.main.add(timer, forMode: .default)
        }
    }

    func testManagersCreatedInAnotherManagersDelegateCallbackJoinTheSystem() {
        let first = CBMCentralManagerDelegateProxy()
        var firstManager: CBMCentralManager?
        checkBothRolesWork(appQueue: DispatchQueue(label: "app.second")) { body in
            first.didUpdateState = { manager in if manager.state == .poweredOn { body() } }
            firstManager = CBMCentralManager(delegate: first, queue: DispatchQueue(label: "app.first"))
        }
        XCTAssertTrue(firstManager?.bridge === system.bridge)
    }

    func testManagersCreatedInANotificationObserverJoinTheSystem() {
        let name = Notification.Name("probe.start")
        var observer: (any NSObjectProtocol)?
        checkBothRolesWork { body in
            observer = NotificationCenter.default.addObserver(forName: name, object: nil, queue: nil) { _ in body() }
            DispatchQueue.global().async { NotificationCenter.default.post(name: name, object: nil) }
        }
        if let observer { NotificationCenter.default.removeObserver(observer) }
    }

    /// The same from an `async` test method, waiting with `fulfillment(of:timeout:)`.
    func testManagersCreatedAnywhereJoinTheSystemInAnAsyncTest() async throws {
        let readSensor = expectation(description: "the app read the sensor")
        let central = ProbeCentralApp(target: "Sensor")
        central.onRead = { _ in readSensor.fulfill() }
        Task.detached { central.start(queue: DispatchQueue(label: "app.async")) }
        await fulfillment(of: [readSensor], timeout: 5)
        XCTAssertTrue(central.manager?.bridge === system.bridge)
        XCTAssertEqual(central.events.last, "read 2A")
    }

    /// An `async` test on the main actor, the app on the main queue: awaiting
    /// `fulfillment(of:timeout:)` lets the main queue deliver its callbacks.
    @MainActor
    func testAnAppOnTheMainQueueWorksInAMainActorAsyncTest() async throws {
        let readSensor = expectation(description: "the app read the sensor")
        let central = ProbeCentralApp(target: "Sensor")
        central.onRead = { _ in readSensor.fulfill() }
        central.start()
        await fulfillment(of: [readSensor], timeout: 5)
        XCTAssertTrue(central.manager?.bridge === system.bridge)
        XCTAssertEqual(central.events, ["state 5", "discovered Sensor", "connected", "read 2A"])
    }

    /// Many managers of both roles made at once on many threads all join the system and power on.
    func testManyManagersMadeAtOnceOnManyThreadsAllJoinAndPowerOn() {
        let count = 16
        let poweredOn = expectation(description: "every manager powered on")
        poweredOn.expectedFulfillmentCount = 2 * count
        let centralDelegate = PoweredOnCounter { poweredOn.fulfill() }
        let peripheralDelegate = PoweredOnCounter { poweredOn.fulfill() }
        let made = Made()
        DispatchQueue.concurrentPerform(iterations: count) { index in
            let queue = DispatchQueue(label: "app.\(index)")
            made.add(CBMCentralManager(delegate: centralDelegate, queue: queue))
            made.add(CBMPeripheralManager(delegate: peripheralDelegate, queue: queue))
        }
        wait(for: [poweredOn], timeout: 10)
        XCTAssertEqual(made.all.count, 2 * count)
        XCTAssertTrue(made.all.compactMap { $0 as? CBMCentralManager }.allSatisfy { $0.bridge === system.bridge })
    }

    final class PoweredOnCounter: NSObject, CBMPeripheralManagerDelegate, CBMCentralManagerDelegate,
        @unchecked Sendable
    {
        // @unchecked Sendable: `onPoweredOn` is set once, before any manager exists.
        let onPoweredOn: @Sendable () -> Void
        init(_ onPoweredOn: @escaping @Sendable () -> Void) { self.onPoweredOn = onPoweredOn }
        func peripheralManagerDidUpdateState(_ peripheral: CBMPeripheralManager) {
            if peripheral.state == .poweredOn { onPoweredOn() }
        }
        func centralManagerDidUpdateState(_ central: CBMCentralManager) {
            if central.state == .poweredOn { onPoweredOn() }
        }
    }

    final class Made: @unchecked Sendable {
        // @unchecked Sendable: `list` is only touched under `lock`.
        private let lock = NSLock()
        private var list: [AnyObject] = []
        func add(_ object: AnyObject) { lock.withLock { list.append(object) } }
        var all: [AnyObject] { lock.withLock { list } }
    }
}
