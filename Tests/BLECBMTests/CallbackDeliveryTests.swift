// swift-format-ignore-file: AlwaysUseLowerCamelCase
// (These names mirror CoreBluetooth's API.)

import BLECBM
import BLECore
import BLEMockKit
import Foundation
import Testing

/// How callbacks reach an app on its own queue outside a run: the bridge applies the app's
/// calls on that queue and runs the callbacks they lead to there itself, one step after
/// another, as blocks handed to the queue would run.
@Suite(.timeLimit(.minutes(10)))
struct CallbackDeliveryTests {
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test func anAppThatKeepsCallingFromItsCallbacksLeavesTheBridgeToTheTestsOwnCalls() async throws {
        let (bridge, sensor, _) = try await Self.sensor(seed: 1)
        let reads = 5_000
        let app = ChainApp(bridge: bridge, reads: reads)
        var events = app.events.makeAsyncIterator()
        #expect(await events.next() == "reading")
        // The app reads again from each read's callback; the test's own call on the bridge
        // still gets its turn long before the app's reads end.
        #expect(await sensor.isAdvertising)
        let readsBefore = app.readCount
        #expect(readsBefore < reads / 2)
        #expect(await events.next() == "done \(reads)")
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test func aCallbackHandedToTheQueueBeforeAnotherRunsFirst() async throws {
        let (bridge, sensor, local) = try await Self.sensor(seed: 2)
        let app = ChainApp(bridge: bridge, reads: 1)
        var events = app.events.makeAsyncIterator()
        #expect(await events.next() == "reading")
        #expect(await events.next() == "done 1")
        app.subscribe()
        #expect(await events.next() == "notifying")
        await app.queueIsIdle()
        // The app's queue is busy while the test reads (the bridge will apply the read from
        // that queue) and the sensor notifies: the notification's callback, handed to the queue
        // before the read is applied, comes before the read's, which the drain applying the
        // read would otherwise run itself. (On this toolchain the drain's hop onto the bridge
        // waits on the queue behind the notification anyway; where a runtime hops in line,
        // the drain sees the callback still waiting and hands the read's over behind it.)
        let gate = DispatchSemaphore(value: 0)
        app.queue.async { gate.wait() }
        app.read()
        #expect(try await sensor.updateValue(Data([7]), for: local.characteristics[1]))
        gate.signal()
        #expect(await events.next() == "notified [7]")
        #expect(await events.next() == "done 2")
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test func callbacksSeeNoTaskLocalOfTheCodeWhoseCallTheBridgeApplied() async throws {
        let (bridge, _, _) = try await Self.sensor(seed: 3)
        let app = ChainApp(bridge: bridge, reads: 2)
        var events = app.events.makeAsyncIterator()
        #expect(await events.next() == "reading")
        #expect(await events.next() == "done 2")
        Marker.$value.withValue("the test's") { app.read() }
        #expect(await events.next() == "done 3")
        #expect(app.markersSeen == [nil, nil, nil])
        #expect(app.callbacksOffTheQueue == 0)
    }

    /// A bridge with a sensor advertising a readable characteristic and a notifying one.
    private static func sensor(seed: UInt64) async throws -> (MockBLEBridge, MockPeripheralManager, LocalService) {
        let bridge = MockBLEBridge(configuration: .init(seed: seed))
        let sensor = MockPeripheralManager(bridge: bridge)
        let local = try await sensor.add(
            GATTService(
                uuid: ChainApp.service,
                characteristics: [
                    GATTCharacteristic(uuid: "2A38", properties: .read, permissions: .readable, value: Data([0x01])),
                    GATTCharacteristic(uuid: "2A37", properties: .notify, permissions: []),
                ]))
        try await sensor.startAdvertising(AdvertisementData(localName: "Sensor", serviceUUIDs: [ChainApp.service]))
        return (bridge, sensor, local)
    }
}

/// A task-local the test sets around a call of the app's.
private enum Marker {
    @TaskLocal static var value: String?
}

/// A central app on its own queue that connects to the sensor, then reads its readable
/// characteristic `reads` times, each read made from the callback of the one before.
private final class ChainApp: NSObject, CBMCentralManagerDelegate, CBMPeripheralDelegate, @unchecked Sendable {
    // @unchecked Sendable: `manager` is only touched on `queue`; the rest, which the test reads
    // too, with `lock` held.
    static let service: BluetoothUUID = "180D"
    let queue = DispatchQueue(label: "chain-app")
    let events: AsyncStream<String>
    private let continuation: AsyncStream<String>.Continuation
    private let key = DispatchSpecificKey<Int>()
    private let lock = NSLock()
    private var manager: CBMCentralManager?
    private var peripheral: CBMPeripheral?
    private var readable: CBMCharacteristic?
    private var notifying: CBMCharacteristic?
    private var target: Int
    private var reads = 0
    private var markers: [String?] = []
    private var offQueue = 0

    init(bridge: MockBLEBridge, reads: Int) {
        target = reads
        (events, continuation) = AsyncStream.makeStream()
        super.init()
        queue.setSpecific(key: key, value: 1)
        queue.async { self.manager = CBMCentralManager(bridge: bridge, delegate: self, queue: self.queue) }
    }

    var readCount: Int { lock.withLock { reads } }
    var markersSeen: [String?] { lock.withLock { markers } }
    var callbacksOffTheQueue: Int { lock.withLock { offQueue } }

    /// One more read, made from the test's thread.
    func read() {
        let (peripheral, readable) = lock.withLock { () -> (CBMPeripheral?, CBMCharacteristic?) in
            target += 1
            return (self.peripheral, self.readable)
        }
        peripheral!.readValue(for: readable!)
    }

    /// Returns once what the app's queue was running when called has ended.
    func queueIsIdle() async {
        await withCheckedContinuation { continuation in queue.async { continuation.resume() } }
    }

    func subscribe() {
        let (peripheral, notifying) = lock.withLock { (self.peripheral!, self.notifying!) }
        peripheral.setNotifyValue(true, for: notifying)
    }

    private func noteCallback() {
        lock.withLock {
            if DispatchQueue.getSpecific(key: key) == nil { offQueue += 1 }
        }
    }

    func centralManagerDidUpdateState(_ central: CBMCentralManager) {
        noteCallback()
        guard central.state == .poweredOn else { return }
        central.scanForPeripherals(withServices: [CBMUUID(bluetoothUUID: Self.service)])
    }

    func centralManager(
        _ central: CBMCentralManager, didDiscover peripheral: CBMPeripheral, advertisementData: [String: Any],
        rssi: NSNumber
    ) {
        noteCallback()
        central.stopScan()
        lock.withLock { self.peripheral = peripheral }
        peripheral.delegate = self
        central.connect(peripheral)
    }

    func centralManager(_ central: CBMCentralManager, didConnect peripheral: CBMPeripheral) {
        noteCallback()
        peripheral.discoverServices(nil)
    }

    func peripheral(_ peripheral: CBMPeripheral, didDiscoverServices error: (any Error)?) {
        noteCallback()
        peripheral.discoverCharacteristics(nil, for: peripheral.services![0])
    }

    func peripheral(
        _ peripheral: CBMPeripheral, didDiscoverCharacteristicsFor service: CBMService, error: (any Error)?
    ) {
        noteCallback()
        lock.withLock {
            readable = service.characteristics![0]
            notifying = service.characteristics![1]
        }
        continuation.yield("reading")
        peripheral.readValue(for: service.characteristics![0])
    }

    func peripheral(
        _ peripheral: CBMPeripheral, didUpdateValueFor characteristic: CBMCharacteristic, error: (any Error)?
    ) {
        noteCallback()
        if characteristic === lock.withLock({ notifying }) {
            continuation.yield("notified \(Array(characteristic.value ?? Data()))")
            return
        }
        let done = lock.withLock { () -> Int? in
            reads += 1
            markers.append(Marker.value)
            if markers.count > 3 { markers.removeFirst() }
            return reads >= target ? reads : nil
        }
        if let done {
            continuation.yield("done \(done)")
        } else {
            peripheral.readValue(for: characteristic)
        }
    }

    func peripheral(
        _ peripheral: CBMPeripheral, didUpdateNotificationStateFor characteristic: CBMCharacteristic,
        error: (any Error)?
    ) {
        noteCallback()
        continuation.yield("notifying")
    }
}
