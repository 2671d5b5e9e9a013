import BLECBM
import BLEMockKit
import Foundation
import Testing

/// A spec delegate that notes, for each request it answers (connection, discoveries, reads,
/// writes, write commands) and the end of the connection, whether it runs on the app's queue (marked with ``key``), on the main queue (marked with ``mainKey``)
/// and on the main thread.
final class ThreadProbe: CBMPeripheralSpecDelegate, @unchecked Sendable {
    // @unchecked Sendable: `notes` is only read and written with `lock` held.
    static let key = DispatchSpecificKey<Int>()
    /// Marks the main queue. (On Linux the main queue's blocks may run on another thread than
    /// the main thread: `dispatchMain()` lets the main thread go.)
    static let mainKey: DispatchSpecificKey<Int> = {
        let key = DispatchSpecificKey<Int>()
        DispatchQueue.main.setSpecific(key: key, value: 1)
        return key
    }()

    struct Note: Equatable {
        var request: String
        var onAppQueue: Bool
        var onMainQueue: Bool
        var onMainThread: Bool
    }

    private let lock = NSLock()
    private var notes: [Note] = []

    var asked: [Note] {
        lock.lock()
        defer { lock.unlock() }
        return notes
    }

    private func note(_ request: String) {
        let note = Note(
            request: request, onAppQueue: DispatchQueue.getSpecific(key: Self.key) != nil,
            onMainQueue: DispatchQueue.getSpecific(key: Self.mainKey) != nil, onMainThread: Thread.isMainThread)
        lock.lock()
        notes.append(note)
        lock.unlock()
    }

    func peripheralDidReceiveConnectionRequest(_ peripheral: CBMPeripheralSpec) -> Result<Void, Error> {
        note("connect")
        return .success(())
    }

    func peripheral(_ peripheral: CBMPeripheralSpec, didReceiveServiceDiscoveryRequest serviceUUIDs: [CBMUUID]?)
        -> Result<Void, Error>
    {
        note("services")
        return .success(())
    }

    func peripheral(
        _ peripheral: CBMPeripheralSpec, didReceiveCharacteristicsDiscoveryRequest characteristicUUIDs: [CBMUUID]?,
        for service: CBMServiceMock
    ) -> Result<Void, Error> {
        note("characteristics")
        return .success(())
    }

    func peripheral(_ peripheral: CBMPeripheralSpec, didDisconnect error: Error?) { note("disconnected") }

    func peripheral(_ peripheral: CBMPeripheralSpec, didReceiveReadRequestFor characteristic: CBMCharacteristicMock)
        -> Result<Data, Error>
    {
        note("read")
        // Longer than one Read at the spec's ATT_MTU of 23: the Read Blobs come from this value.
        return .success(Data((0..<60).map { UInt8($0) }))
    }

    func peripheral(
        _ peripheral: CBMPeripheralSpec, didReceiveWriteRequestFor characteristic: CBMCharacteristicMock, data: Data
    ) -> Result<Void, Error> {
        note("write \(data.count)")
        return .success(())
    }

    func peripheral(
        _ peripheral: CBMPeripheralSpec, didReceiveWriteCommandFor characteristic: CBMCharacteristicMock, data: Data
    ) {
        note("command \(data.count)")
    }
}

/// An app that finds the first peripheral, connects it and discovers its services and
/// characteristics, everything from its delegate callbacks, on its queue; what it does with the
/// characteristics is its subclasses'. It notes when its link has ended.
class FirstPeripheralApp: NSObject, CBMCentralManagerDelegate, CBMPeripheralDelegate, @unchecked Sendable {
    // @unchecked Sendable: its state (and its subclasses') is only read and written on `queue`
    // (the test reads it with `queue.sync`).
    let queue: DispatchQueue?
    private var found: CBMPeripheral?
    private(set) weak var central: CBMCentralManager?
    private(set) var disconnected = false

    init(queue: DispatchQueue?) { self.queue = queue }

    /// Runs `body` on the app's queue (in line, with the main queue's `nil`).
    func onQueue<T>(_ body: () -> T) -> T {
        guard let queue else { return body() }
        return queue.sync(execute: body)
    }

    func centralManagerDidUpdateState(_ central: CBMCentralManager) {
        if central.state == .poweredOn { central.scanForPeripherals(withServices: nil) }
    }

    func centralManager(
        _ central: CBMCentralManager, didDiscover peripheral: CBMPeripheral, advertisementData: [String: Any],
        rssi: NSNumber
    ) {
        guard found == nil else { return }
        found = peripheral
        self.central = central
        central.stopScan()
        peripheral.delegate = self
        central.connect(peripheral)
    }

    func centralManager(_ central: CBMCentralManager, didConnect peripheral: CBMPeripheral) {
        peripheral.discoverServices(nil)
    }

    func peripheral(_ peripheral: CBMPeripheral, didDiscoverServices error: Error?) {
        for service in peripheral.services ?? [] { peripheral.discoverCharacteristics(nil, for: service) }
    }

    // The callbacks subclasses override, declared here: the delegate protocols' default
    // implementations would otherwise answer for them.
    func peripheral(_ peripheral: CBMPeripheral, didDiscoverCharacteristicsFor service: CBMService, error: Error?) {}
    func peripheral(_ peripheral: CBMPeripheral, didUpdateValueFor characteristic: CBMCharacteristic, error: Error?) {}
    func peripheral(_ peripheral: CBMPeripheral, didWriteValueFor characteristic: CBMCharacteristic, error: Error?) {}

    func centralManager(
        _ central: CBMCentralManager, didDisconnectPeripheral peripheral: CBMPeripheral, error: Error?
    ) {
        disconnected = true
    }
}

/// An app that reads the first peripheral's characteristic (a long read), writes it with
/// response (a long write), then without, reads it again and disconnects.
final class QueueApp: FirstPeripheralApp, @unchecked Sendable {
    // @unchecked Sendable: as its superclass's.
    private var values: [Data] = []

    /// The values read so far, and whether the app has disconnected (read on the app's queue).
    var snapshot: (values: [Data], disconnected: Bool) { onQueue { (values, disconnected) } }

    override func peripheral(
        _ peripheral: CBMPeripheral, didDiscoverCharacteristicsFor service: CBMService, error: Error?
    ) {
        guard let characteristic = service.characteristics?.first else { return }
        peripheral.readValue(for: characteristic)
    }

    override func peripheral(
        _ peripheral: CBMPeripheral, didUpdateValueFor characteristic: CBMCharacteristic, error: Error?
    ) {
        values.append(characteristic.value ?? Data())
        if values.count == 1 {
            peripheral.writeValue(Data(repeating: 7, count: 40), for: characteristic, type: .withResponse)
        } else {
            central?.cancelPeripheralConnection(peripheral)
        }
    }

    override func peripheral(
        _ peripheral: CBMPeripheral, didWriteValueFor characteristic: CBMCharacteristic, error: Error?
    ) {
        peripheral.writeValue(Data([9]), for: characteristic, type: .withoutResponse)
        peripheral.readValue(for: characteristic)
    }
}

/// An app that, in one callback, reads the first peripheral's characteristic, writes it with
/// response, then without, and notes how many requests the spec's delegate had heard when those
/// calls returned; it disconnects once the write is answered.
final class BurstApp: FirstPeripheralApp, @unchecked Sendable {
    // @unchecked Sendable: as its superclass's.
    let probe: ThreadProbe
    private var heardDuringCalls: Int?

    init(queue: DispatchQueue, probe: ThreadProbe) {
        self.probe = probe
        super.init(queue: queue)
    }

    var snapshot: (heardDuringCalls: Int?, disconnected: Bool) { onQueue { (heardDuringCalls, disconnected) } }

    override func peripheral(
        _ peripheral: CBMPeripheral, didDiscoverCharacteristicsFor service: CBMService, error: Error?
    ) {
        guard let characteristic = service.characteristics?.first else { return }
        let before = probe.asked.count
        peripheral.readValue(for: characteristic)
        peripheral.writeValue(Data(repeating: 7, count: 4), for: characteristic, type: .withResponse)
        peripheral.writeValue(Data([9]), for: characteristic, type: .withoutResponse)
        heardDuringCalls = probe.asked.count - before
    }

    override func peripheral(
        _ peripheral: CBMPeripheral, didWriteValueFor characteristic: CBMCharacteristic, error: Error?
    ) {
        central?.cancelPeripheralConnection(peripheral)
    }
}

/// Where a spec delegate's `Timer` would fire: a thread's scheduling, for a block on the app's
/// queue, without the wall clock. A delegate that schedules its next step on `Ticker.current`
/// works only where the app's queue runs it, as `Timer.scheduledTimer` works only on a thread
/// with a run loop.
final class Ticker: Sendable {
    static let key = DispatchSpecificKey<Ticker>()
    let queue: DispatchQueue
    let bridge: MockBLEBridge

    init(queue: DispatchQueue, bridge: MockBLEBridge) {
        self.queue = queue
        self.bridge = bridge
        queue.setSpecific(key: Self.key, value: self)
    }

    /// The ticker of the queue this runs on, if it has one.
    static var current: Ticker? { DispatchQueue.getSpecific(key: key) }

    /// Runs `block` on the queue later (with the test's bridge current, as in a callback).
    func schedule(_ block: @escaping @Sendable () -> Void) {
        let bridge = bridge
        queue.async { MockBLEBridge.$current.withValue(bridge) { block() } }
    }
}

/// A spec delegate that starts streaming when its control point is written, as delegates
/// written for CoreBluetoothMock start a `Timer`: each value is scheduled on the thread's
/// ticker. Its state has no lock: the app reads it on its queue, where the delegate runs.
final class Streamer: CBMPeripheralSpecDelegate, @unchecked Sendable {
    // @unchecked Sendable: its state is only read and written on the app's queue (the delegate
    // is called there, its ticks run there, and the app reads it there).
    let stream: CBMCharacteristicMock
    var started = false
    var sent = 0

    init(stream: CBMCharacteristicMock) { self.stream = stream }

    func peripheral(
        _ peripheral: CBMPeripheralSpec, didReceiveWriteRequestFor characteristic: CBMCharacteristicMock, data: Data
    ) -> Result<Void, Error> {
        started = true
        Ticker.current?.schedule { self.tick(peripheral) }
        return .success(())
    }

    private func tick(_ peripheral: CBMPeripheralSpec) {
        sent += 1
        peripheral.simulateValueUpdate(Data([UInt8(sent)]), for: stream)
        if sent < 3 { Ticker.current?.schedule { self.tick(peripheral) } }
    }
}

/// An app that subscribes to the stream, writes the control point, and notes each value with
/// what the spec's delegate says it has sent (read without a lock, on the app's queue).
final class StreamApp: NSObject, CBMCentralManagerDelegate, CBMPeripheralDelegate, @unchecked Sendable {
    // @unchecked Sendable: its state is only read and written on `queue`.
    let queue: DispatchQueue
    let streamer: Streamer
    private var received: [(value: UInt8, sent: Int)] = []
    private var startedWhenWritten: Bool?

    init(queue: DispatchQueue, streamer: Streamer) {
        self.queue = queue
        self.streamer = streamer
    }

    /// The peripheral connected (only touched on `queue`).
    private var peripheral: CBMPeripheral?

    var snapshot: (received: [(value: UInt8, sent: Int)], startedWhenWritten: Bool?) {
        queue.sync { (received, startedWhenWritten) }
    }

    func centralManagerDidUpdateState(_ central: CBMCentralManager) {
        if central.state == .poweredOn { central.scanForPeripherals(withServices: nil) }
    }

    func centralManager(
        _ central: CBMCentralManager, didDiscover peripheral: CBMPeripheral, advertisementData: [String: Any],
        rssi: NSNumber
    ) {
        central.stopScan()
        // Kept, as an app must: CoreBluetooth cancels the connection of a peripheral nobody keeps.
        self.peripheral = peripheral
        peripheral.delegate = self
        central.connect(peripheral)
    }

    func centralManager(_ central: CBMCentralManager, didConnect peripheral: CBMPeripheral) {
        peripheral.discoverServices(nil)
    }

    func peripheral(_ peripheral: CBMPeripheral, didDiscoverServices error: Error?) {
        for service in peripheral.services ?? [] { peripheral.discoverCharacteristics(nil, for: service) }
    }

    func peripheral(_ peripheral: CBMPeripheral, didDiscoverCharacteristicsFor service: CBMService, error: Error?) {
        guard let stream = service.characteristics?.first(where: { $0.properties.contains(.notify) }) else { return }
        peripheral.setNotifyValue(true, for: stream)
    }

    func peripheral(
        _ peripheral: CBMPeripheral, didUpdateNotificationStateFor characteristic: CBMCharacteristic, error: Error?
    ) {
        guard error == nil,
            let control = characteristic.service?.characteristics?.first(where: { $0.properties.contains(.write) })
        else { return }
        peripheral.writeValue(Data([1]), for: control, type: .withResponse)
    }

    func peripheral(_ peripheral: CBMPeripheral, didWriteValueFor characteristic: CBMCharacteristic, error: Error?) {
        startedWhenWritten = streamer.started
    }

    func peripheral(_ peripheral: CBMPeripheral, didUpdateValueFor characteristic: CBMCharacteristic, error: Error?) {
        guard let value = characteristic.value?.first else { return }
        received.append((value, streamer.sent))
    }
}

@Suite(.timeLimit(.minutes(10)), .finishesOwnBridges)
struct SpecDelegateThreadTests {
    static let service = CBMUUID(string: "6E400001-B5A3-F393-E0A9-E50E24DCCA9E")

    static func spec(_ delegate: any CBMPeripheralSpecDelegate, characteristics: [CBMCharacteristicMock])
        -> CBMPeripheralSpec
    {
        CBMPeripheralSpec.simulatePeripheral(proximity: .near)
            .advertising(advertisementData: [CBMAdvertisementDataLocalNameKey: "Probe"], withInterval: 0.1)
            .connectable(
                name: "Probe",
                services: [CBMServiceMock(type: service, primary: true, characteristics: characteristics)],
                delegate: delegate, mtu: 23
            )
            .build()
    }

    static func probeSpec(_ probe: ThreadProbe) -> CBMPeripheralSpec {
        spec(
            probe,
            characteristics: [
                CBMCharacteristicMock(
                    type: CBMUUID(string: "6E400002-B5A3-F393-E0A9-E50E24DCCA9E"),
                    properties: [.read, .write, .writeWithoutResponse])
            ])
    }

    /// Runs a queue app on each of `queues` against a thread probe on a bridge of `seed`;
    /// returns what the probe noted and the bridge's log.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    static func probe(queues: [DispatchQueue?], seed: UInt64) async throws -> (
        notes: [ThreadProbe.Note], log: [String]
    ) {
        let probe = ThreadProbe()
        let spec = probeSpec(probe)
        let bridge = ownBridge(configuration: .realistic(seed: seed))
        let values = try await bridge.run { @MainActor () -> [[Data]] in
            CBMCentralManagerMock.simulatePeripherals([spec])
            let apps = queues.map { QueueApp(queue: $0) }
            let managers = zip(apps, queues).map { CBMCentralManagerMock(delegate: $0, queue: $1) }
            try await bridge.waitForApp { apps.allSatisfy { $0.snapshot.disconnected } }
            _ = managers
            return apps.map(\.snapshot.values)
        }
        let value = Data((0..<60).map { UInt8($0) })
        #expect(values == Array(repeating: [value, value], count: queues.count), "seed \(seed)")
        #expect(await bridge.finish() == .clean, "seed \(seed)")
        return (probe.asked, await bridge.log.map { "\($0)" })
    }

    /// What the thread probe hears from the queue app.
    static let requests = [
        "connect", "services", "characteristics", "read", "write 40", "command 1", "read", "disconnected",
    ]

    static func appQueue() -> DispatchQueue {
        let queue = DispatchQueue(label: "app")
        queue.setSpecific(key: ThreadProbe.key, value: 1)
        return queue
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test func aSpecDelegatesHandlersRunOnTheAppsQueue() async throws {
        let (notes, _) = try await Self.probe(queues: [Self.appQueue()], seed: 5)
        // One call for the long read, one with the long write's whole value.
        #expect(notes.map(\.request) == Self.requests)
        #expect(notes.allSatisfy { $0.onAppQueue }, "\(notes)")
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test func withANilQueueASpecDelegatesHandlersRunOnTheMainQueue() async throws {
        _ = ThreadProbe.mainKey
        let (notes, _) = try await Self.probe(queues: [nil], seed: 6)
        #expect(notes.map(\.request) == Self.requests)
        #expect(notes.allSatisfy { $0.onMainQueue }, "\(notes)")
        #if canImport(Darwin)
            // (Where the main queue runs on the main thread.)
            #expect(notes.allSatisfy { $0.onMainThread }, "\(notes)")
        #endif
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test func aHandlerCanScheduleWorkOnItsThreadAndTheAppReadsItsStateWithoutALock() async throws {
        let stream = CBMCharacteristicMock(
            type: CBMUUID(string: "6E400003-B5A3-F393-E0A9-E50E24DCCA9E"), properties: [.notify],
            descriptors: CBMClientCharacteristicConfigurationDescriptorMock())
        let control = CBMCharacteristicMock(
            type: CBMUUID(string: "6E400004-B5A3-F393-E0A9-E50E24DCCA9E"), properties: [.write])
        let streamer = Streamer(stream: stream)
        let spec = Self.spec(streamer, characteristics: [stream, control])
        let bridge = ownBridge(configuration: .realistic(seed: 8))
        let queue = DispatchQueue(label: "streaming app")
        _ = Ticker(queue: queue, bridge: bridge)
        let (received, startedWhenWritten) = try await bridge.run { @MainActor in
            CBMCentralManagerMock.simulatePeripherals([spec])
            let app = StreamApp(queue: queue, streamer: streamer)
            let manager = CBMCentralManagerMock(delegate: app, queue: queue)
            try await bridge.waitForApp { app.snapshot.received.count == 3 }
            _ = manager
            return app.snapshot
        }
        // The write's callback sees the delegate started; each value, that it was sent.
        #expect(startedWhenWritten == true)
        #expect(received.map(\.value) == [1, 2, 3])
        #expect(received.allSatisfy { $0.sent >= Int($0.value) }, "\(received)")
        #expect(queue.sync { streamer.sent } == 3)
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(arguments: [UInt64(2), 31, 404])
    func theSameSeedGivesTheSameLogWithAnAppCallingFromItsQueue(seed: UInt64) async throws {
        let first = try await Self.probe(queues: [Self.appQueue()], seed: seed)
        let second = try await Self.probe(queues: [Self.appQueue()], seed: seed)
        #expect(first.log == second.log, "seed \(seed)")
        #expect(first.notes == second.notes, "seed \(seed)")
        #expect(!first.log.isEmpty)
        #expect(first.notes.allSatisfy { $0.onAppQueue }, "\(first.notes)")
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(arguments: [UInt64(3), 32, 405])
    func theSameSeedGivesTheSameLogWithTwoAppsAnsweredOnTheirOwnQueuesAtOnce(seed: UInt64) async throws {
        // Both apps' requests reach the delegate at the same instants, each on its app's queue
        // (the blocks may run at the same time): their answers are applied in one order anyway.
        let first = try await Self.probe(queues: [Self.appQueue(), Self.appQueue()], seed: seed)
        let second = try await Self.probe(queues: [Self.appQueue(), Self.appQueue()], seed: seed)
        #expect(first.log == second.log, "seed \(seed)")
        #expect(first.notes.map(\.request).sorted() == second.notes.map(\.request).sorted(), "seed \(seed)")
        #expect(first.notes.allSatisfy { $0.onAppQueue }, "\(first.notes)")
    }

    /// The read, write and write-command handlers are called when the requests reach the
    /// peripheral, not inside the app's calls (as CoreBluetoothMock calls them), and in ATT's
    /// order: the write request waits for the read's answer (one request at a time on a link),
    /// the write without response goes out at once and reaches the delegate before it.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(arguments: [UInt64(9), 33, 406])
    func requestsReachASpecDelegateAfterTheCallsAndInATTsOrder(seed: UInt64) async throws {
        let probe = ThreadProbe()
        let spec = Self.probeSpec(probe)
        let bridge = ownBridge(configuration: .realistic(seed: seed))
        let queue = Self.appQueue()
        let heard = try await bridge.run { @MainActor in
            CBMCentralManagerMock.simulatePeripherals([spec])
            let app = BurstApp(queue: queue, probe: probe)
            let manager = CBMCentralManagerMock(delegate: app, queue: queue)
            try await bridge.waitForApp { app.snapshot.disconnected }
            _ = manager
            return app.snapshot.heardDuringCalls
        }
        #expect(heard == 0, "seed \(seed)")
        #expect(
            probe.asked.map(\.request)
                == ["connect", "services", "characteristics", "read", "command 1", "write 4", "disconnected"],
            "seed \(seed)")
        #expect(probe.asked.allSatisfy { $0.onAppQueue }, "\(probe.asked)")
        #expect(await bridge.finish() == .clean, "seed \(seed)")
    }
}
