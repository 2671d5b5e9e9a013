// swift-format-ignore-file: AlwaysUseLowerCamelCase
// (These names mirror CoreBluetooth's API.)

import BLECBM
import BLECore
import BLEMockKit
import Foundation
import Testing

/// How callbacks reach an app on its own queue outside a run: as blocks on that queue, which
/// neither hold the bridge up while they run nor keep it from the test's own calls.
@Suite(.timeLimit(.minutes(10)))
struct CallbackDeliveryTests {
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test func anAppThatKeepsCallingFromItsCallbacksLeavesTheBridgeToTheTestsOwnCalls() async throws {
        let (bridge, sensor, _) = try await Self.sensor(seed: 1)
        // The app reads again from each read's callback until the test stops it, or at most
        // this many times: the test's own call on the bridge gets its turn in between, and
        // stops it long before (a bridge held by the app's chain would answer the test only
        // once the reads ran out).
        let most = 200_000
        let app = ChainApp(bridge: bridge, reads: most, waitsToRead: true)
        var events = app.events.makeAsyncIterator()
        #expect(await events.next() == "ready")
        // The reads start, and the test calls, from a queue of the test's own (the cooperative
        // pool, which the parallel suite keeps busy, could make the test's call late).
        let advertising = try await Self.fromOwnQueue {
            app.startReading()
            let advertising = await sensor.isAdvertising
            app.stopReading()
            return advertising
        }
        #expect(advertising)
        let done = try #require(await events.next())
        let reads = try #require(Int(done.dropFirst("done ".count)))
        #expect(done.hasPrefix("done ") && reads < most)
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test func aCallbackThatWaitsForTheTestsOwnCallOnTheBridgeDoesNotHoldItUp() async throws {
        let (bridge, sensor, _) = try await Self.sensor(seed: 2)
        let gate = DispatchSemaphore(value: 0)
        // The read's callback blocks the app's queue until the test's own call on the bridge
        // has returned (on a device, the peripheral goes on while the app's queue waits; a
        // callback run while the bridge is held would wait for ever). Bounded, so a regression
        // fails instead of hanging.
        let (entered, inCallback) = AsyncStream<Void>.makeStream()
        let app = ChainApp(bridge: bridge, reads: 1) {
            inCallback.yield()
            return gate.wait(timeout: .now() + 30) == .success
        }
        var events = app.events.makeAsyncIterator()
        // The test waits for the callback, calls and signals from a queue of its own.
        let advertising = try await Self.fromOwnQueue {
            var callbacks = entered.makeAsyncIterator()
            await callbacks.next()
            let advertising = await sensor.isAdvertising
            gate.signal()
            return advertising
        }
        #expect(advertising)
        #expect(await events.next() == "reading")
        #expect(await events.next() == "done 1")
        #expect(app.waitsEnded == [true])
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

    /// Runs `body` in a task whose jobs run on a dispatch queue of its own.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    private static func fromOwnQueue<T: Sendable>(_ body: @escaping @Sendable () async -> T) async throws -> T {
        await Task(executorPreference: QueueExecutor(DispatchQueue(label: "test-calls")), operation: body).value
    }

    /// A bridge with a sensor advertising a readable characteristic.
    private static func sensor(seed: UInt64) async throws -> (MockBLEBridge, MockPeripheralManager, LocalService) {
        let bridge = MockBLEBridge(configuration: .init(seed: seed))
        let sensor = MockPeripheralManager(bridge: bridge)
        let local = try await sensor.add(
            GATTService(
                uuid: ChainApp.service,
                characteristics: [
                    GATTCharacteristic(uuid: "2A38", properties: .read, permissions: .readable, value: Data([0x01]))
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
    private var target: Int
    private var reads = 0
    private var markers: [String?] = []
    private var offQueue = 0
    private var waits: [Bool] = []
    /// Called on the app's queue in each read's callback: whether a wait it makes ended.
    private let onRead: (@Sendable () -> Bool)?

    private let waitsToRead: Bool

    /// An app that reads `reads` times, starting once it has discovered the characteristic, or,
    /// when it `waitsToRead`, once ``startReading()`` is called; `onRead` is called in each
    /// read's callback.
    init(
        bridge: MockBLEBridge, reads: Int, waitsToRead: Bool = false, onRead: (@Sendable () -> Bool)? = nil
    ) {
        target = reads
        self.waitsToRead = waitsToRead
        self.onRead = onRead
        (events, continuation) = AsyncStream.makeStream()
        super.init()
        queue.setSpecific(key: key, value: 1)
        queue.async { self.manager = CBMCentralManager(bridge: bridge, delegate: self, queue: self.queue) }
    }

    var markersSeen: [String?] { lock.withLock { markers } }
    var callbacksOffTheQueue: Int { lock.withLock { offQueue } }
    var waitsEnded: [Bool] { lock.withLock { waits } }

    /// Ends the reads at the next read's callback.
    func stopReading() {
        lock.withLock { target = 0 }
    }

    /// The first read, made from the test's thread, of an app that waits to read.
    func startReading() {
        let (peripheral, readable) = lock.withLock { (self.peripheral, self.readable) }
        peripheral!.readValue(for: readable!)
    }

    /// One more read, made from the test's thread.
    func read() {
        let (peripheral, readable) = lock.withLock { () -> (CBMPeripheral?, CBMCharacteristic?) in
            target += 1
            return (self.peripheral, self.readable)
        }
        peripheral!.readValue(for: readable!)
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
        lock.withLock { readable = service.characteristics![0] }
        guard !waitsToRead else {
            continuation.yield("ready")
            return
        }
        continuation.yield("reading")
        peripheral.readValue(for: service.characteristics![0])
    }

    func peripheral(
        _ peripheral: CBMPeripheral, didUpdateValueFor characteristic: CBMCharacteristic, error: (any Error)?
    ) {
        noteCallback()
        if let onRead {
            let ended = onRead()
            lock.withLock { waits.append(ended) }
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
}
