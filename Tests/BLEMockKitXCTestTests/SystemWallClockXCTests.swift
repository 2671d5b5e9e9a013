import BLECBM
import BLEMockKit
import XCTest

/// A CoreBluetoothMock-style XCTest suite on the system its statics install (realistic timing,
/// time following the wall clock): timeouts are wall-clock seconds, advertising intervals too.
final class SystemWallClockXCTests: XCTestCase {
    private let nearIdentifier = UUID(uuidString: "7A1E0000-0000-0000-0000-00000000B001")!
    private let farIdentifier = UUID(uuidString: "7A1E0000-0000-0000-0000-00000000B002")!
    private let beaconIdentifier = UUID(uuidString: "7A1E0000-0000-0000-0000-00000000B003")!
    private var near: CBMPeripheralSpec!
    private var far: CBMPeripheralSpec!
    private var beacon: CBMPeripheralSpec!

    override func setUpWithError() throws {
        XCTAssertNil(SimulatedSystem.current, "a system was left installed")
        near = probeSensor("Near", identifier: nearIdentifier, proximity: .near, interval: 0.1)
        far = probeSensor("Far", identifier: farIdentifier, proximity: .outOfRange, interval: 0.05, retrievable: true)
        beacon = probeSensor("Beacon", identifier: beaconIdentifier, proximity: .near, interval: 1)
        CBMCentralManagerMock.simulatePeripherals([near, far, beacon])
        CBMCentralManagerMock.simulateInitialState(.poweredOn)
    }

    override func tearDownWithError() throws {
        CBMCentralManagerMock.tearDownSimulation()
        XCTAssertNil(SimulatedSystem.current)
    }

    /// "Nothing found within 2 s" for an out-of-range device, with an inverted expectation,
    /// while a device advertising once a second is heard about once a second (duplicates
    /// allowed), and an in-range one connects "within 3 s".
    func testWallClockTimeoutsAndAdvertisingIntervalsMeanWallClockSeconds() {
        let system = SimulatedSystem.current
        XCTAssertEqual(system?.time, .wallClock)
        let poweredOn = expectation(description: "powered on")
        let farFound = expectation(description: "the out-of-range device is found")
        farFound.isInverted = true
        let connected = expectation(description: "connected to the near device")
        var beaconHeard: [CFAbsoluteTime] = []
        var nearPeripheral: CBMPeripheral?
        let delegate = CBMCentralManagerDelegateProxy()
        delegate.didUpdateState = { manager in if manager.state == .poweredOn { poweredOn.fulfill() } }
        delegate.didDiscoverPeripheral = { manager, peripheral, advertisementData, _ in
            switch advertisementData[CBMAdvertisementDataLocalNameKey] as? String {
            case "Far": farFound.fulfill()
            case "Beacon": beaconHeard.append(CFAbsoluteTimeGetCurrent())
            case "Near" where nearPeripheral == nil:
                nearPeripheral = peripheral
                manager.connect(peripheral)
            default: break
            }
        }
        delegate.didConnect = { _, _ in connected.fulfill() }
        let manager = CBMCentralManagerMock(delegate: delegate, queue: nil)
        wait(for: [poweredOn], timeout: 2)
        let start = CFAbsoluteTimeGetCurrent()
        let startTime = DispatchTime.now()
        manager.scanForPeripherals(
            withServices: [ProbeService.service], options: [CBMCentralManagerScanOptionAllowDuplicatesKey: true])
        wait(for: [connected], timeout: 3)
        XCTAssertLessThan(CFAbsoluteTimeGetCurrent() - start, 3)
        wait(for: [farFound], timeout: 2)
        let waited = Double(DispatchTime.now().uptimeNanoseconds - startTime.uptimeNanoseconds) / 1e9
        XCTAssertGreaterThanOrEqual(waited, 2, "an inverted expectation waits its whole timeout")
        manager.stopScan()
        let heard = beaconHeard.filter { $0 >= start }
        // About one a second over `waited` seconds (the first may come at once): plausible, not exact.
        XCTAssertGreaterThanOrEqual(heard.count, Int(waited) - 1, "\(heard.map { $0 - start })")
        XCTAssertLessThanOrEqual(heard.count, Int(waited.rounded(.up)) + 1, "\(heard.map { $0 - start })")
        if let first = heard.first, let last = heard.last, heard.count >= 2 {
            // About a second apart on average (one late delivery on a loaded machine aside).
            let average = (last - first) / Double(heard.count - 1)
            XCTAssertTrue((0.5...1.5).contains(average), "\(heard.map { $0 - start })")
        }
        _ = nearPeripheral
    }
}
