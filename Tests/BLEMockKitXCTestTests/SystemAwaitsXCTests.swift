import BLECBM
import BLEMockKit
import BLEMockKitXCTest
import XCTest

/// An `async` XCTest that awaits the simulated system's bridge while its app keeps calling from
/// its own queue, then reads the app's queue-confined state with `queue.sync`, as such tests do.
final class SystemAwaitsXCTests: XCTestCase {
    private let identifier = UUID(uuidString: "7A1E0000-0000-0000-0000-00000000E101")!

    /// Each `await` on the bridge goes on off the app's queue (before, about a third went on on
    /// the thread applying the app's reads, inside the app's queue, where `queue.sync` onto it
    /// traps), and the app's reads go on meanwhile.
    func testAwaitsOnTheSystemsBridgeGoOnOffTheAppsQueue() async throws {
        let system = try installSimulatedSystem()
        CBMCentralManagerMock.simulatePeripherals([probeSensor("Sensor", identifier: identifier)])
        let appQueue = DispatchQueue(label: "probe.app")
        let onAppQueue = DispatchSpecificKey<Bool>()
        appQueue.setSpecific(key: onAppQueue, value: true)
        let app = ProbeCentralApp(target: "Sensor")
        let reading = ReadLoop()
        let firstRead = expectation(description: "the app read the sensor")
        // Once connected, the app reads again as each read comes back, until told to stop.
        app.onRead = { _ in
            if reading.count() == 1 { firstRead.fulfill() }
            guard reading.goesOn, let peripheral = app.peripheral,
                let characteristic = peripheral.services?.first?.characteristics?.first
            else { return }
            peripheral.readValue(for: characteristic)
        }
        appQueue.async { app.start(queue: appQueue) }
        await fulfillment(of: [firstRead], timeout: 10)
        // Awaits until the app has read 100 times more (thousands of awaits, each racing the
        // app's reads for the bridge).
        var awaits = 0
        var reads = 1
        while reads < 101 {
            awaits += 1
            _ = await system.bridge.now
            if DispatchQueue.getSpecific(key: onAppQueue) == true {
                XCTFail("await \(awaits) went on on the app's queue")
                break
            }
            // Safe only off the app's queue (dispatch stops a sync onto the queue it runs on).
            reads = appQueue.sync { reading.reads }
        }
        reading.stop()
        XCTAssertGreaterThanOrEqual(reads, 101)
        XCTAssertGreaterThan(awaits, 100)
        CBMCentralManagerMock.tearDownSimulation()
    }
}

/// A count of an app's reads and whether it reads on.
private final class ReadLoop: @unchecked Sendable {
    // @unchecked Sendable: `storedReads` and `stopped` are only touched with `lock` held.
    private let lock = NSLock()
    private var storedReads = 0
    private var stopped = false

    /// Counts a read; returns the count.
    func count() -> Int {
        lock.withLock {
            storedReads += 1
            return storedReads
        }
    }
    var reads: Int { lock.withLock { storedReads } }
    var goesOn: Bool { lock.withLock { !stopped } }
    func stop() { lock.withLock { stopped = true } }
}
