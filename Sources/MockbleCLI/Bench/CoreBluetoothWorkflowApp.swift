import BLECBM
import BLECore
import BLEMockKit
import Foundation

/// The steps of `fast.workflow` written as a CoreBluetooth delegate app (BLECBM): power on, scan
/// for the sensor, connect, discover every service and characteristic, read the body sensor
/// location, write the control point, subscribe to the measurement, receive one notification,
/// disconnect. Every step is the callback of the one before, on the app's own serial queue.
final class CoreBluetoothWorkflowApp: NSObject, CBMCentralManagerDelegate, CBMPeripheralDelegate,
    @unchecked Sendable
{
    // @unchecked Sendable: every mutable property is only read and written on `queue` (the
    // manager's delegate queue, where the manager is also created).
    private let queue: DispatchQueue
    private let sensor: MockPeripheralManager
    private let local: LocalService
    private var manager: CBMCentralManager?
    private var peripheral: CBMPeripheral?
    private var characteristics: [CBMCharacteristic] = []
    private var read: Data?
    private var notified: Data?
    private var continuation: CheckedContinuation<Benchmark.WorkflowOutcome, any Error>?

    private init(queue: DispatchQueue, sensor: MockPeripheralManager, local: LocalService) {
        self.queue = queue
        self.sensor = sensor
        self.local = local
    }

    /// Runs one workflow on a new bridge with a new sensor and app, whose callbacks arrive on
    /// `queue` (the test's own queue, as an XCTest's is the main queue); `release`, when given,
    /// watches the bridge's release.
    @discardableResult
    static func run(on queue: DispatchQueue, release: BridgeRelease? = nil) async throws -> Benchmark.WorkflowOutcome {
        let bridge = MockBLEBridge()
        release?.watch(bridge)
        let sensor = MockPeripheralManager(bridge: bridge)
        let local = try await sensor.add(BenchPeripheral.heartRate)
        try await sensor.startAdvertising(BenchPeripheral.advertisement)
        let app = CoreBluetoothWorkflowApp(queue: queue, sensor: sensor, local: local)
        return try await withCheckedThrowingContinuation { continuation in
            // Created on the app's queue, as its callbacks read `manager` there: the first
            // callback may come before an assignment made on another thread is seen.
            app.queue.async {
                app.continuation = continuation
                app.manager = CBMCentralManager(bridge: bridge, delegate: app, queue: app.queue)
            }
        }
    }

    private func finish(_ result: Result<Benchmark.WorkflowOutcome, any Error>) {
        continuation?.resume(with: result)
        continuation = nil
    }

    private func fail(_ description: String) {
        finish(.failure(BenchFailure(description: description)))
    }

    func centralManagerDidUpdateState(_ central: CBMCentralManager) {
        guard central.state == .poweredOn else { return fail("not powered on") }
        central.scanForPeripherals(withServices: [CBMUUID(bluetoothUUID: BenchPeripheral.service)])
    }

    func centralManager(
        _ central: CBMCentralManager, didDiscover peripheral: CBMPeripheral, advertisementData: [String: Any],
        rssi: NSNumber
    ) {
        guard peripheral.identifier == sensor.identifier else { return fail("the sensor was not discovered") }
        central.stopScan()
        self.peripheral = peripheral
        peripheral.delegate = self
        central.connect(peripheral)
    }

    func centralManager(_ central: CBMCentralManager, didConnect peripheral: CBMPeripheral) {
        peripheral.discoverServices(nil)
    }

    func peripheral(_ peripheral: CBMPeripheral, didDiscoverServices error: (any Error)?) {
        guard let service = peripheral.services?.first else { return fail("no service") }
        peripheral.discoverCharacteristics(nil, for: service)
    }

    func peripheral(
        _ peripheral: CBMPeripheral, didDiscoverCharacteristicsFor service: CBMService, error: (any Error)?
    ) {
        characteristics = service.characteristics ?? []
        guard characteristics.count == 4 else {
            return fail("discovery found \(Plural.count(characteristics.count, "characteristic")), not 4")
        }
        peripheral.readValue(for: characteristics[1])
    }

    func peripheral(
        _ peripheral: CBMPeripheral, didUpdateValueFor characteristic: CBMCharacteristic, error: (any Error)?
    ) {
        if characteristic === characteristics[1] {
            guard characteristic.value == Data([0x01]) else { return fail("read the wrong value") }
            read = characteristic.value
            peripheral.writeValue(Data([0x01]), for: characteristics[2], type: .withResponse)
        } else if characteristic === characteristics[0] {
            guard let value = characteristic.value, value == Data([0x00, 72]) else {
                return fail("the notification did not arrive")
            }
            notified = value
            manager?.cancelPeripheralConnection(peripheral)
        }
    }

    func centralManager(
        _ central: CBMCentralManager, didDisconnectPeripheral peripheral: CBMPeripheral, error: (any Error)?
    ) {
        guard error == nil, peripheral.state == .disconnected, let read, let notified else {
            return fail("the disconnection went wrong")
        }
        finish(
            .success(Benchmark.WorkflowOutcome(characteristics: characteristics.count, read: read, notified: notified)))
    }

    func peripheral(
        _ peripheral: CBMPeripheral, didWriteValueFor characteristic: CBMCharacteristic, error: (any Error)?
    ) {
        guard error == nil else { return fail("the write failed") }
        peripheral.setNotifyValue(true, for: characteristics[0])
    }

    func peripheral(
        _ peripheral: CBMPeripheral, didUpdateNotificationStateFor characteristic: CBMCharacteristic,
        error: (any Error)?
    ) {
        guard characteristic.isNotifying else { return fail("not notifying") }
        let sensor = sensor
        let measurement = local.characteristics[0]
        // The test makes the sensor notify, from the test's queue.
        if #available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *) {
            Task(executorPreference: QueueExecutor(queue)) {
                _ = try? await sensor.updateValue(Data([0x00, 72]), for: measurement)
            }
        } else {
            Task { _ = try? await sensor.updateValue(Data([0x00, 72]), for: measurement) }
        }
    }
}
