import BLECBM
import BLEMockKit
import Foundation
import Testing

// A hybrid-smartwatch companion app migrating from CoreBluetoothMock: its delegate-style central
// (on the main queue or a queue of its own) talks to a `CBMPeripheralSpec` whose delegate is the
// watch's firmware. Each test follows the data path end to end and checks every callback, value,
// error and order against CoreBluetooth's documented behaviour, and CoreBluetoothMock's where
// CoreBluetooth says nothing (its source, folder CoreBluetoothMock/ of
// github.com/NordicSemiconductor/IOS-CoreBluetooth-Mock).

extension CBMUUID {
    static let watchService = CBMUUID(string: "7D2E0001-5C3A-4B8E-9F10-2A6B3C4D5E6F")
    static let watchFile = CBMUUID(string: "7D2E0002-5C3A-4B8E-9F10-2A6B3C4D5E6F")
    static let watchControl = CBMUUID(string: "7D2E0003-5C3A-4B8E-9F10-2A6B3C4D5E6F")
    static let watchStatus = CBMUUID(string: "7D2E0004-5C3A-4B8E-9F10-2A6B3C4D5E6F")
    static let watchLog = CBMUUID(string: "7D2E0005-5C3A-4B8E-9F10-2A6B3C4D5E6F")
    static let watchInfo = CBMUUID(string: "7D2E0006-5C3A-4B8E-9F10-2A6B3C4D5E6F")
    static let watchLegacy = CBMUUID(string: "7D2E00F1-5C3A-4B8E-9F10-2A6B3C4D5E6F")
    static let watchOTA = CBMUUID(string: "7D2E00F2-5C3A-4B8E-9F10-2A6B3C4D5E6F")
}

/// The watch's GATT table: a file-transfer characteristic written without response, a control
/// point written with response, a status characteristic (read, notify: its value is how many
/// file bytes the watch holds), a log characteristic that indicates, and an info characteristic
/// whose value the spec holds (the firmware does not answer its reads).
struct WatchTable {
    let file = CBMCharacteristicMock(type: .watchFile, properties: [.writeWithoutResponse])
    let control = CBMCharacteristicMock(type: .watchControl, properties: [.write])
    let status = CBMCharacteristicMock(
        type: .watchStatus, properties: [.read, .notify],
        descriptors: CBMDescriptorMock(type: CBMUUID(string: "2901")), CBMCCCDescriptorMock())
    let log = CBMCharacteristicMock(type: .watchLog, properties: [.indicate], descriptors: CBMCCCDescriptorMock())
    let info = CBMCharacteristicMock(type: .watchInfo, properties: [.read])
    let legacyValue = CBMCharacteristicMock(type: .watchLegacy, properties: [.read, .notify])
    let service: CBMServiceMock
    let legacy: CBMServiceMock
    let ota = CBMServiceMock(
        type: .watchOTA, primary: true,
        characteristics: CBMCharacteristicMock(type: .watchOTA, properties: [.write]))

    init() {
        service = CBMServiceMock(
            type: .watchService, primary: true, characteristics: file, control, status, log, info)
        legacy = CBMServiceMock(type: .watchLegacy, primary: true, characteristics: legacyValue)
    }
}

/// The watch's firmware, as a spec delegate: it keeps the file bytes written to it, answers the
/// control point (0xFF is refused with `writeNotPermitted`), reads of its status with the byte
/// count (4 bytes, little endian) and notes everything.
final class WatchFirmware: CBMPeripheralSpecDelegate, @unchecked Sendable {
    // @unchecked Sendable: its state is only read and written with `lock` held.
    private let lock = NSLock()
    private var fileBytes = Data()
    private var chunkSizes: [Int] = []
    private var notes: [String] = []
    private var dropAfter: Int?
    /// Subscriptions to the log characteristic are refused (with `insufficientAuthorization`).
    let refusesLog: Bool

    init(refusesLog: Bool = false) { self.refusesLog = refusesLog }

    var file: Data { lock.withLock { fileBytes } }
    var chunks: [Int] { lock.withLock { chunkSizes } }
    var heard: [String] { lock.withLock { notes } }

    /// After this many file bytes, the watch drops its link (`simulateDisconnection`), from
    /// inside its write-command callback.
    func dropLink(after bytes: Int) { lock.withLock { dropAfter = bytes } }

    private func note(_ line: String) { lock.withLock { notes.append(line) } }

    func peripheralDidReceiveConnectionRequest(_ peripheral: CBMPeripheralSpec) -> Result<Void, Error> {
        note("connect")
        return .success(())
    }

    func peripheral(_ peripheral: CBMPeripheralSpec, didDisconnect error: Error?) {
        note("disconnected \(WatchApp.describe(error))")
    }

    func peripheral(
        _ peripheral: CBMPeripheralSpec, didReceiveWriteCommandFor characteristic: CBMCharacteristicMock, data: Data
    ) {
        let drop = lock.withLock { () -> Bool in
            fileBytes += data
            chunkSizes.append(data.count)
            guard let limit = dropAfter, fileBytes.count >= limit else { return false }
            dropAfter = nil
            return true
        }
        if drop { peripheral.simulateDisconnection(withError: CBMError(.peripheralDisconnected)) }
    }

    func peripheral(
        _ peripheral: CBMPeripheralSpec, didReceiveWriteRequestFor characteristic: CBMCharacteristicMock, data: Data
    ) -> Result<Void, Error> {
        note("write \(characteristic.uuid == .watchControl ? "control" : "other") \(data.count)")
        return data.first == 0xFF ? .failure(CBMATTError(.writeNotPermitted)) : .success(())
    }

    func peripheral(_ peripheral: CBMPeripheralSpec, didReceiveReadRequestFor characteristic: CBMCharacteristicMock)
        -> Result<Data, Error>
    {
        guard characteristic.uuid == .watchStatus else {
            // As CoreBluetoothMock's default answer.
            return .failure(CBMATTError(.readNotPermitted))
        }
        note("read status")
        return .success(WatchApp.encode(UInt32(file.count)))
    }

    func peripheral(_ peripheral: CBMPeripheralSpec, didReceiveReadRequestFor descriptor: CBMDescriptorMock)
        -> Result<Data, Error>
    {
        note("read descriptor \(descriptor.uuid)")
        return .success(Data("Bytes received".utf8))
    }

    func peripheral(
        _ peripheral: CBMPeripheralSpec, didReceiveWriteRequestFor descriptor: CBMDescriptorMock, data: Data
    ) -> Result<Void, Error> {
        note("write descriptor \(descriptor.uuid) \(String(decoding: data, as: UTF8.self))")
        return .success(())
    }

    func peripheral(
        _ peripheral: CBMPeripheralSpec, didReceiveSetNotifyRequest enabled: Bool,
        for characteristic: CBMCharacteristicMock
    ) -> Result<Void, Error> {
        note("notify \(WatchApp.name(characteristic.uuid)) \(enabled)")
        if refusesLog, characteristic.uuid == .watchLog { return .failure(CBMATTError(.insufficientAuthorization)) }
        return .success(())
    }
}

/// The companion app: a delegate-style central on the main queue (`nil`) or a queue of its own.
/// It notes its callbacks as lines, and sends a file without response, paced by
/// `canSendWriteWithoutResponse` and `peripheralIsReady(toSendWriteWithoutResponse:)`.
final class WatchApp: NSObject, CBMCentralManagerDelegate, CBMPeripheralDelegate, @unchecked Sendable {
    // @unchecked Sendable: its state is only read and written with `lock` held (the callbacks
    // run on `queue`; the test reads with the lock).
    let queue: DispatchQueue?
    private let lock = NSLock()
    private var noted: [String] = []
    private var readyCount = 0
    private var written: [Int] = []
    private var pending = Data()
    private var offset = 0
    private var characteristicsByUUID: [CBMUUID: CBMCharacteristic] = [:]
    private var reading: Set<CBMUUID> = []
    private(set) var manager: CBMCentralManager?
    private var connected: CBMPeripheral?

    init(queue: DispatchQueue?) { self.queue = queue }

    var lines: [String] { lock.withLock { noted } }
    var readyCallbacks: Int { lock.withLock { readyCount } }
    /// The size of each write without response the app made.
    var writes: [Int] { lock.withLock { written } }
    var sent: Int { lock.withLock { offset } }
    var peripheral: CBMPeripheral? { lock.withLock { connected } }

    func characteristic(_ uuid: CBMUUID) -> CBMCharacteristic? { lock.withLock { characteristicsByUUID[uuid] } }

    private func note(_ line: String) { lock.withLock { noted.append(line) } }

    /// Runs `body` on the app's queue.
    func perform(_ body: @escaping @Sendable () -> Void) { (queue ?? .main).async(execute: body) }

    /// Makes the app's manager (its delegate called on the app's queue).
    func start() {
        let manager = CBMCentralManagerMock(delegate: self, queue: queue)
        lock.withLock { self.manager = manager }
    }

    func connect(_ identifier: UUID) {
        guard let manager, let peripheral = manager.retrievePeripherals(withIdentifiers: [identifier]).first else {
            return note("not retrievable")
        }
        lock.withLock { connected = peripheral }
        peripheral.delegate = self
        manager.connect(peripheral)
    }

    /// Sends `file` from `offset` on, in chunks of `maximumWriteValueLength(for: .withoutResponse)`.
    func send(_ file: Data, from offset: Int = 0) {
        lock.withLock {
            pending = file
            self.offset = offset
        }
        pump()
    }

    private func pump() {
        guard let peripheral, let characteristic = characteristic(.watchFile) else { return }
        while peripheral.canSendWriteWithoutResponse {
            let (chunk, done) = lock.withLock { () -> (Data, Bool) in
                guard offset < pending.count else { return (Data(), true) }
                let length = min(peripheral.maximumWriteValueLength(for: .withoutResponse), pending.count - offset)
                let chunk = pending.subdata(in: offset..<offset + length)
                offset += length
                written.append(length)
                return (chunk, false)
            }
            if done { return }
            peripheral.writeValue(chunk, for: characteristic, type: .withoutResponse)
        }
    }

    func read(_ uuid: CBMUUID) {
        guard let peripheral, let characteristic = characteristic(uuid) else { return }
        lock.withLock { _ = reading.insert(uuid) }
        peripheral.readValue(for: characteristic)
    }

    static func describe(_ error: Error?) -> String {
        guard let error = error as NSError? else { return "nil" }
        return "\(error.domain) \(error.code)"
    }

    static func name(_ uuid: CBMUUID) -> String {
        switch uuid {
        case .watchFile: "file"
        case .watchControl: "control"
        case .watchStatus: "status"
        case .watchLog: "log"
        case .watchInfo: "info"
        case .watchLegacy: "legacy"
        case .watchOTA: "ota"
        case .watchService: "watch"
        default: uuid.uuidString
        }
    }

    static func encode(_ count: UInt32) -> Data { withUnsafeBytes(of: count.littleEndian) { Data($0) } }

    static func hex(_ data: Data?) -> String { data.map { $0.map { String(format: "%02x", $0) }.joined() } ?? "nil" }

    // MARK: Central

    func centralManagerDidUpdateState(_ central: CBMCentralManager) { note("state \(central.state.rawValue)") }

    func centralManager(_ central: CBMCentralManager, didConnect peripheral: CBMPeripheral) {
        note("connected services=\(peripheral.services == nil ? "nil" : "kept")")
        peripheral.discoverServices(nil)
    }

    func centralManager(_ central: CBMCentralManager, didFailToConnect peripheral: CBMPeripheral, error: Error?) {
        note("failed \(Self.describe(error))")
    }

    func centralManager(
        _ central: CBMCentralManager, didDisconnectPeripheral peripheral: CBMPeripheral, error: Error?
    ) {
        note(
            "disconnected \(Self.describe(error)) canSend=\(peripheral.canSendWriteWithoutResponse) "
                + "services=\(peripheral.services == nil ? "nil" : "kept")")
    }

    // MARK: Peripheral

    func peripheral(_ peripheral: CBMPeripheral, didDiscoverServices error: Error?) {
        note("services \((peripheral.services ?? []).map { Self.name($0.uuid) }) \(Self.describe(error))")
        for service in peripheral.services ?? [] { peripheral.discoverCharacteristics(nil, for: service) }
    }

    func peripheral(_ peripheral: CBMPeripheral, didDiscoverCharacteristicsFor service: CBMService, error: Error?) {
        lock.withLock {
            for characteristic in service.characteristics ?? [] {
                characteristicsByUUID[characteristic.uuid] = characteristic
            }
        }
        note("characteristics \(Self.name(service.uuid)) \((service.characteristics ?? []).count)")
    }

    func peripheralIsReady(toSendWriteWithoutResponse peripheral: CBMPeripheral) {
        lock.withLock { readyCount += 1 }
        pump()
    }

    func peripheral(_ peripheral: CBMPeripheral, didUpdateValueFor characteristic: CBMCharacteristic, error: Error?) {
        let wasRead = lock.withLock { reading.remove(characteristic.uuid) != nil }
        note(
            "\(wasRead ? "read" : "value") \(Self.name(characteristic.uuid)) \(Self.hex(characteristic.value)) "
                + Self.describe(error))
    }

    func peripheral(_ peripheral: CBMPeripheral, didWriteValueFor characteristic: CBMCharacteristic, error: Error?) {
        note("written \(Self.name(characteristic.uuid)) \(Self.describe(error))")
    }

    func peripheral(
        _ peripheral: CBMPeripheral, didUpdateNotificationStateFor characteristic: CBMCharacteristic, error: Error?
    ) {
        note("notifying \(Self.name(characteristic.uuid)) \(characteristic.isNotifying) \(Self.describe(error))")
    }

    func peripheral(
        _ peripheral: CBMPeripheral, didDiscoverDescriptorsFor characteristic: CBMCharacteristic, error: Error?
    ) {
        note(
            "descriptors \(Self.name(characteristic.uuid)) \((characteristic.descriptors ?? []).map(\.uuid.uuidString)) "
                + Self.describe(error))
    }

    func peripheral(_ peripheral: CBMPeripheral, didUpdateValueFor descriptor: CBMDescriptor, error: Error?) {
        let value =
            (descriptor.value as? Data).map { String(decoding: $0, as: UTF8.self) } ?? "\(descriptor.value ?? "nil")"
        note("descriptor read \(descriptor.uuid.uuidString) \(value) \(Self.describe(error))")
    }

    func peripheral(_ peripheral: CBMPeripheral, didWriteValueFor descriptor: CBMDescriptor, error: Error?) {
        note("descriptor written \(descriptor.uuid.uuidString) \(Self.describe(error))")
    }

    func peripheral(_ peripheral: CBMPeripheral, didReadRSSI rssi: NSNumber, error: Error?) {
        note("rssi \(rssi.intValue) \(Self.describe(error))")
    }

    func peripheral(_ peripheral: CBMPeripheral, didModifyServices invalidatedServices: [CBMService]) {
        note("modified \(invalidatedServices.map { Self.name($0.uuid) })")
    }

    func peripheralDidUpdateName(_ peripheral: CBMPeripheral) { note("name \(peripheral.name ?? "nil")") }
}

@Suite("Spec data path probe: a smartwatch companion app", .timeLimit(.minutes(10)), .finishesOwnBridges)
struct SpecDataPathProbeTests {
    /// The app's queue: the main queue, or one of its own.
    enum AppQueue: String, CaseIterable, CustomTestStringConvertible {
        case main, own
        var testDescription: String { rawValue }
        func make() -> DispatchQueue? { self == .main ? nil : DispatchQueue(label: "watch-app") }
    }

    static func bridge(realistic: Bool, seed: UInt64) -> MockBLEBridge {
        ownBridge(configuration: realistic ? .realistic(seed: seed) : .init(seed: seed))
    }

    /// A bridge (realistic or fast, with `seed`), the watch's firmware and attribute table, and
    /// the watch's spec built on them (ATT_MTU `mtu`).
    static func rig(realistic: Bool, seed: UInt64, mtu: Int = 23) -> (
        MockBLEBridge, WatchFirmware, WatchTable, CBMPeripheralSpec
    ) {
        let firmware = WatchFirmware()
        let table = WatchTable()
        return (
            Self.bridge(realistic: realistic, seed: seed), firmware, table,
            Self.watch(table, firmware: firmware, mtu: mtu)
        )
    }

    static func watch(_ table: WatchTable, firmware: WatchFirmware, mtu: Int = 23) -> CBMPeripheralSpec {
        CBMPeripheralSpec
            .simulatePeripheral(proximity: .near)
            .advertising(advertisementData: [CBMAdvertisementDataLocalNameKey: "Hybrid"], withInterval: 0.100)
            .connectable(
                name: "Hybrid", services: [table.service, table.legacy], delegate: firmware,
                connectionInterval: 0.030, mtu: mtu
            )
            .allowForRetrieval()
            .build()
    }

    /// The file the app sends: 2,000 bytes, each its offset's low byte.
    static let file = Data((0..<2000).map { UInt8(truncatingIfNeeded: $0) })

    /// Makes the app, connects it to the watch and discovers every characteristic.
    @MainActor
    static func connect(_ app: WatchApp, to watch: CBMPeripheralSpec, on bridge: MockBLEBridge) async throws {
        CBMCentralManagerMock.simulateRSSIDeviation(.none)
        CBMCentralManagerMock.simulatePeripherals([watch])
        // (In the run's body: a manager made in a block on another queue would not see the
        // test's bridge, a task-local, and would join the process-wide simulated system.)
        app.start()
        try await bridge.waitForApp { app.lines.contains("state \(CBMManagerState.poweredOn.rawValue)") }
        let identifier = watch.identifier
        app.perform { app.connect(identifier) }
        try await bridge.waitForApp { app.lines.filter { $0.hasPrefix("characteristics") }.count == 2 }
    }

    // CoreBluetooth: `maximumWriteValueLength(for: .withoutResponse)` is the most one write
    // without response carries; `canSendWriteWithoutResponse` false means the app waits for
    // `peripheralIsReady(toSendWriteWithoutResponse:)`. A file sent so arrives whole and in order,
    // each chunk at most that long, and no write the app made is lost.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(arguments: [23, 185, 517], [false, true])
    func aFileWrittenWithoutResponseInMTUSizedChunksArrivesWholeAndInOrder(mtu: Int, realistic: Bool) async throws {
        for queue in AppQueue.allCases {
            let bridge = Self.bridge(realistic: realistic, seed: 900 + UInt64(mtu))
            let firmware = WatchFirmware()
            let table = WatchTable()
            let watch = Self.watch(table, firmware: firmware, mtu: mtu)
            let app = WatchApp(queue: queue.make())
            let longest = try await bridge.run { @MainActor () -> Int in
                try await Self.connect(app, to: watch, on: bridge)
                let longest = try #require(app.peripheral).maximumWriteValueLength(for: .withoutResponse)
                app.perform { app.send(Self.file) }
                try await bridge.waitForApp { firmware.file.count == Self.file.count }
                return longest
            }
            // The central's ATT_MTU is 517 in fast mode, 185 (a device's) in realistic mode.
            let linkMTU = min(mtu, realistic ? 185 : 517)
            #expect(longest == min(linkMTU - 3, 512), "queue \(queue)")
            #expect(firmware.file == Self.file, "queue \(queue)")
            #expect(firmware.chunks == app.writes, "queue \(queue): no write lost, none split")
            #expect(firmware.chunks.allSatisfy { $0 <= longest }, "queue \(queue)")
            if realistic, Self.file.count / longest > 20 {
                // The queue of 20 filled: the app was told when there was room again.
                #expect(app.readyCallbacks > 0, "queue \(queue)")
            }
        }
    }

    // CoreBluetooth: a write with response gets `didWriteValueFor` with the peripheral's ATT error
    // (`CBATTErrorDomain`, its code) or nil; the characteristic's `value` is not the value
    // written. CoreBluetoothMock: the delegate's answer is that result. A long write (above
    // ATT_MTU − 3) reaches the firmware once, whole.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(arguments: AppQueue.allCases, [false, true])
    func theControlPointAnswersWritesWithTheFirmwaresResultAndLongWritesArriveWhole(
        queue: AppQueue, realistic: Bool
    ) async throws {
        let (bridge, firmware, _, watch) = Self.rig(realistic: realistic, seed: 910)
        let app = WatchApp(queue: queue.make())
        let value = try await bridge.run { @MainActor () -> Data? in
            try await Self.connect(app, to: watch, on: bridge)
            let peripheral = try #require(app.peripheral)
            let control = try #require(app.characteristic(.watchControl))
            app.perform {
                peripheral.writeValue(Data([0x01]), for: control, type: .withResponse)
                peripheral.writeValue(Data([0xFF]), for: control, type: .withResponse)
                peripheral.writeValue(Data(repeating: 0x02, count: 300), for: control, type: .withResponse)
                peripheral.writeValue(Data(repeating: 0x03, count: 512), for: control, type: .withResponse)
            }
            try await bridge.waitForApp { app.lines.filter { $0.hasPrefix("written") }.count == 4 }
            return control.value
        }
        let written = app.lines.filter { $0.hasPrefix("written") }
        #expect(
            written == [
                "written control nil", "written control \(CBMATTErrorDomain) 3", "written control nil",
                "written control nil",
            ])
        #expect(value == nil)
        #expect(
            firmware.heard == [
                "connect", "write control 1", "write control 1", "write control 300", "write control 512",
            ])
    }

    // CoreBluetooth: a read gets `didUpdateValueFor` with the value, or the peripheral's ATT error
    // (and `value` unchanged). CoreBluetoothMock: a read the delegate does not answer fails with
    // `readNotPermitted` (its default answer), whatever value the spec's characteristic holds.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(arguments: AppQueue.allCases, [false, true])
    func readsGetTheFirmwaresAnswerAndASpecValueAloneIsNotReadable(queue: AppQueue, realistic: Bool) async throws {
        let (bridge, _, table, watch) = Self.rig(realistic: realistic, seed: 920)
        let app = WatchApp(queue: queue.make())
        table.info.value = Data("v1.2".utf8)
        try await bridge.run { @MainActor in
            try await Self.connect(app, to: watch, on: bridge)
            app.perform { app.read(.watchStatus) }
            try await bridge.waitForApp { app.lines.contains { $0.hasPrefix("read status") } }
            app.perform { app.read(.watchInfo) }
            try await bridge.waitForApp { app.lines.contains { $0.hasPrefix("read info") } }
        }
        #expect(
            app.lines.filter { $0.hasPrefix("read") } == [
                "read status 00000000 nil", "read info nil \(CBMATTErrorDomain) 2",
            ])
    }

    // CoreBluetooth: notifications reach `didUpdateValueFor` only while subscribed
    // (`setNotifyValue(true, …)` answered with `isNotifying` true), in order; indications too.
    // CoreBluetoothMock: `simulateValueUpdate` sets the spec's value, and reaches only
    // subscribed, connected apps.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(arguments: AppQueue.allCases, [false, true])
    func valueUpdatesReachOnlyASubscribedApp(
        queue: AppQueue, realistic: Bool
    ) async throws {
        let (bridge, _, table, watch) = Self.rig(realistic: realistic, seed: 930)
        let app = WatchApp(queue: queue.make())
        let (statusValue, logValue) = try await bridge.run { @MainActor () -> (Data?, Data?) in
            try await Self.connect(app, to: watch, on: bridge)
            let peripheral = try #require(app.peripheral)
            let status = try #require(app.characteristic(.watchStatus))
            let log = try #require(app.characteristic(.watchLog))
            // Not subscribed: not heard.
            watch.simulateValueUpdate(Data([0x11]), for: table.status)
            app.perform { peripheral.setNotifyValue(true, for: status) }
            try await bridge.waitForApp { app.lines.contains("notifying status true nil") }
            watch.simulateValueUpdate(Data([0x12]), for: table.status)
            try await bridge.waitForApp { app.lines.contains { $0.hasPrefix("value status 12") } }
            app.perform { peripheral.setNotifyValue(true, for: log) }
            try await bridge.waitForApp { app.lines.contains("notifying log true nil") }
            for index in 0..<3 { watch.simulateValueUpdate(Data([UInt8(index)]), for: table.log) }
            try await bridge.waitForApp { app.lines.filter { $0.hasPrefix("value log") }.count == 3 }
            app.perform { peripheral.setNotifyValue(false, for: status) }
            try await bridge.waitForApp { app.lines.contains("notifying status false nil") }
            watch.simulateValueUpdate(Data([0x13]), for: table.status)
            // A read after it shows the notification was not heard (and the read's order).
            app.perform { app.read(.watchStatus) }
            try await bridge.waitForApp { app.lines.contains { $0.hasPrefix("read status") } }
            return (status.value, log.value)
        }
        let values = app.lines.filter { $0.hasPrefix("value") || $0.hasPrefix("read") }
        #expect(
            values == [
                "value status 12 nil", "value log 00 nil", "value log 01 nil", "value log 02 nil",
                "read status 00000000 nil",
            ])
        #expect(statusValue == WatchApp.encode(0))
        #expect(logValue == Data([2]))
        #expect(table.status.value == Data([0x13]))
    }

    // CoreBluetoothMock: every `simulateValueUpdate` reaches a subscribed app, a burst too, in
    // order (its delegate cannot be told to try again). The spec's peripheral had a realistic
    // peripheral manager's queue of 20 updates in realistic mode, and dropped what did not fit:
    // of 30 indications sent at once, the app heard the first 20.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(arguments: AppQueue.allCases, [false, true])
    func aBurstOfIndicationsArrivesWholeAndInOrder(queue: AppQueue, realistic: Bool) async throws {
        let bridge = Self.bridge(realistic: realistic, seed: 932)
        let table = WatchTable()
        let watch = Self.watch(table, firmware: WatchFirmware())
        let app = WatchApp(queue: queue.make())
        let value = try await bridge.run { @MainActor () -> Data? in
            try await Self.connect(app, to: watch, on: bridge)
            let peripheral = try #require(app.peripheral)
            let log = try #require(app.characteristic(.watchLog))
            app.perform { peripheral.setNotifyValue(true, for: log) }
            try await bridge.waitForApp { app.lines.contains("notifying log true nil") }
            for index in 0..<30 { watch.simulateValueUpdate(Data([UInt8(index)]), for: table.log) }
            // A read queued behind them shows whether any is still to come.
            app.perform { app.read(.watchStatus) }
            try await bridge.waitForApp { app.lines.contains { $0.hasPrefix("read status") } }
            try await bridge.waitForApp { app.lines.filter { $0.hasPrefix("value log") }.count >= 30 }
            return log.value
        }
        let heard = app.lines.filter { $0.hasPrefix("value log") }
        #expect(heard == (0..<30).map { "value log \(String(format: "%02x", $0)) nil" })
        #expect(value == Data([29]))
    }

    // CoreBluetoothMock: `simulateValueUpdate` sets the spec's characteristic's value, also
    // before the spec is simulated. Called so outside any run, it installed the process-wide
    // simulated system (as the calls that change a spec's state do, to keep that state), which
    // then stayed for every later test of the process: a value needs no system.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test func aValueUpdateOutsideAnyRunSetsTheValueAndInstallsNoSystem() async throws {
        let table = WatchTable()
        let watch = Self.watch(table, firmware: WatchFirmware())
        watch.simulateValueUpdate(Data([0x10]), for: table.status)
        #expect(table.status.value == Data([0x10]))
        #expect(SimulatedSystem.current == nil)
        // Not one of the spec's characteristics: nothing changes.
        let stranger = CBMCharacteristicMock(type: .watchStatus, properties: [.notify])
        watch.simulateValueUpdate(Data([0x10]), for: stranger)
        #expect(stranger.value == nil)
        // Simulated later, the spec's peripheral starts with nothing to send: a subscribed app
        // hears only what comes after.
        let bridge = Self.bridge(realistic: false, seed: 933)
        let app = WatchApp(queue: nil)
        try await bridge.run { @MainActor in
            try await Self.connect(app, to: watch, on: bridge)
            let peripheral = try #require(app.peripheral)
            peripheral.setNotifyValue(true, for: try #require(app.characteristic(.watchStatus)))
            try await bridge.waitForApp { app.lines.contains("notifying status true nil") }
            watch.simulateValueUpdate(Data([0x11]), for: table.status)
            try await bridge.waitForApp { app.lines.contains { $0.hasPrefix("value status") } }
        }
        #expect(app.lines.filter { $0.hasPrefix("value") } == ["value status 11 nil"])
    }

    // A call made on the main queue (the test's body, on the main actor) comes before one an app
    // queue makes after it at the same instant (FrontEndLane.swift's order: the run's body, the
    // main queue, then app queues). On Linux the main queue counted as an app queue, ranked by
    // the smallest identifier of the objects on it (`DispatchQueue.main` is a new object at each
    // access there, and a worker thread serves it): with the spec's identifier above the
    // central's, the app's subscription, made after the update, went first, and the app heard a
    // value sent while it was not subscribed.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(arguments: AppQueue.allCases, [false, true])
    func aValueUpdateMadeBeforeTheSubscriptionIsNotHeard(queue: AppQueue, realistic: Bool) async throws {
        let bridge = Self.bridge(realistic: realistic, seed: 931)
        let table = WatchTable()
        let watch =
            CBMPeripheralSpec
            .simulatePeripheral(identifier: UUID(uuidString: "FFFFFFFF-0000-4000-8000-000000000931")!, proximity: .near)
            .advertising(advertisementData: [CBMAdvertisementDataLocalNameKey: "Hybrid"], withInterval: 0.100)
            .connectable(name: "Hybrid", services: [table.service], delegate: WatchFirmware(), mtu: 23)
            .allowForRetrieval()
            .build()
        let app = WatchApp(queue: queue.make())
        try await bridge.run { @MainActor in
            CBMCentralManagerMock.simulatePeripherals([watch])
            app.start()
            try await bridge.waitForApp { app.lines.contains("state \(CBMManagerState.poweredOn.rawValue)") }
            app.connect(watch.identifier)
            try await bridge.waitForApp { app.lines.contains { $0.hasPrefix("characteristics") } }
            let peripheral = try #require(app.peripheral)
            let status = try #require(app.characteristic(.watchStatus))
            watch.simulateValueUpdate(Data([0x11]), for: table.status)
            app.perform { peripheral.setNotifyValue(true, for: status) }
            try await bridge.waitForApp { app.lines.contains("notifying status true nil") }
            watch.simulateValueUpdate(Data([0x12]), for: table.status)
            try await bridge.waitForApp { app.lines.contains { $0.hasPrefix("value status") } }
        }
        #expect(app.lines.filter { $0.hasPrefix("value") } == ["value status 12 nil"])
    }

    // CoreBluetooth: a notification carries at most ATT_MTU − 3 bytes (the kit cuts it, as a
    // device's stack does; CoreBluetoothMock hands it whole: MIGRATION.md says so).
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(arguments: [false, true])
    func aNotificationLongerThanTheLinkCarriesIsCut(realistic: Bool) async throws {
        let (bridge, _, table, watch) = Self.rig(realistic: realistic, seed: 935)
        let app = WatchApp(queue: nil)
        try await bridge.run { @MainActor in
            try await Self.connect(app, to: watch, on: bridge)
            let peripheral = try #require(app.peripheral)
            let status = try #require(app.characteristic(.watchStatus))
            peripheral.setNotifyValue(true, for: status)
            try await bridge.waitForApp { app.lines.contains("notifying status true nil") }
            watch.simulateValueUpdate(Data(repeating: 0xAB, count: 60), for: table.status)
            try await bridge.waitForApp { app.lines.contains { $0.hasPrefix("value status") } }
        }
        #expect(app.lines.last == "value status \(String(repeating: "ab", count: 20)) nil")
        let log = await bridge.log
        #expect(log.contains { $0.kind == .truncated })
    }

    // CoreBluetoothMock: `didReceiveSetNotifyRequest` answering a failure fails the app's
    // subscription with it (`isNotifying` stays false), and the firmware hears the result.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(arguments: AppQueue.allCases, [false, true])
    func aSubscriptionTheFirmwareRefusesFailsWithItsError(queue: AppQueue, realistic: Bool) async throws {
        let bridge = Self.bridge(realistic: realistic, seed: 940)
        let firmware = WatchFirmware(refusesLog: true)
        let table = WatchTable()
        let watch = Self.watch(table, firmware: firmware)
        let app = WatchApp(queue: queue.make())
        try await bridge.run { @MainActor in
            try await Self.connect(app, to: watch, on: bridge)
            let peripheral = try #require(app.peripheral)
            let log = try #require(app.characteristic(.watchLog))
            app.perform { peripheral.setNotifyValue(true, for: log) }
            try await bridge.waitForApp { app.lines.contains { $0.hasPrefix("notifying log") } }
            // Refused: an update is not heard.
            watch.simulateValueUpdate(Data([1]), for: table.log)
            app.perform { app.read(.watchStatus) }
            try await bridge.waitForApp { app.lines.contains { $0.hasPrefix("read status") } }
        }
        #expect(
            Array(app.lines.suffix(2)) == [
                "notifying log false \(CBMATTErrorDomain) \(CBMATTError.Code.insufficientAuthorization.rawValue)",
                "read status 00000000 nil",
            ])
        #expect(firmware.heard.contains("notify log true"))
    }

    // CoreBluetooth: descriptors are discovered per characteristic; a read gets the value, a
    // write `didWriteValueFor` for the descriptor. CoreBluetoothMock: both go to the delegate.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(arguments: AppQueue.allCases, [false, true])
    func descriptorsAreReadAndWrittenThroughTheFirmware(queue: AppQueue, realistic: Bool) async throws {
        let (bridge, firmware, _, watch) = Self.rig(realistic: realistic, seed: 950)
        let app = WatchApp(queue: queue.make())
        try await bridge.run { @MainActor in
            try await Self.connect(app, to: watch, on: bridge)
            let peripheral = try #require(app.peripheral)
            let status = try #require(app.characteristic(.watchStatus))
            app.perform { peripheral.discoverDescriptors(for: status) }
            try await bridge.waitForApp { app.lines.contains { $0.hasPrefix("descriptors") } }
            let description = try #require(status.descriptors?.first)
            app.perform {
                peripheral.readValue(for: description)
                peripheral.writeValue(Data("Sent".utf8), for: description)
            }
            try await bridge.waitForApp { app.lines.contains { $0.hasPrefix("descriptor written") } }
        }
        #expect(
            Array(app.lines.suffix(3)) == [
                "descriptors status [\"2901\", \"2902\"] nil", "descriptor read 2901 Bytes received nil",
                "descriptor written 2901 nil",
            ])
        #expect(Array(firmware.heard.suffix(2)) == ["read descriptor 2901", "write descriptor 2901 Sent"])
    }

    // CoreBluetooth: `readRSSI` answers `didReadRSSI` with the link's RSSI; CoreBluetoothMock: the
    // spec's proximity (near: −70 dBm) with the deviation (none here).
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(arguments: AppQueue.allCases, [false, true])
    func readRSSIAnswersTheProximity(queue: AppQueue, realistic: Bool) async throws {
        let bridge = Self.bridge(realistic: realistic, seed: 960)
        let table = WatchTable()
        let watch = Self.watch(table, firmware: WatchFirmware())
        let app = WatchApp(queue: queue.make())
        let rssi = try await bridge.run { @MainActor () -> NSNumber? in
            try await Self.connect(app, to: watch, on: bridge)
            let peripheral = try #require(app.peripheral)
            app.perform { peripheral.readRSSI() }
            try await bridge.waitForApp { app.lines.contains { $0.hasPrefix("rssi") } }
            return peripheral.rssi
        }
        #expect(app.lines.last == "rssi -70 nil")
        #expect(rssi == -70)
    }

    // CoreBluetooth: a link the peripheral drops reports `didDisconnectPeripheral` with its error
    // (`CBErrorDomain` 7, peripheralDisconnected); the peripheral's services are gone and
    // `canSendWriteWithoutResponse` is false; once connected again the app discovers anew and
    // resumes. CoreBluetoothMock: the firmware hears `didDisconnect` with the error, once.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(arguments: AppQueue.allCases, [false, true])
    func aTransferCutByADisconnectionResumesAfterReconnecting(queue: AppQueue, realistic: Bool) async throws {
        let bridge = Self.bridge(realistic: realistic, seed: 970)
        let firmware = WatchFirmware()
        firmware.dropLink(after: 500)
        let table = WatchTable()
        let watch = Self.watch(table, firmware: firmware)
        let app = WatchApp(queue: queue.make())
        try await bridge.run { @MainActor in
            try await Self.connect(app, to: watch, on: bridge)
            app.perform { app.send(Self.file) }
            try await bridge.waitForApp { app.lines.contains { $0.hasPrefix("disconnected") } }
            let peripheral = try #require(app.peripheral)
            #expect(peripheral.state == .disconnected)
            #expect(peripheral.services == nil)
            #expect(peripheral.maximumWriteValueLength(for: .withoutResponse) == 20)
            let manager = try #require(app.manager)
            app.perform { manager.connect(peripheral) }
            try await bridge.waitForApp { app.lines.filter { $0.hasPrefix("characteristics") }.count == 4 }
            app.perform { app.read(.watchStatus) }
            try await bridge.waitForApp { app.lines.contains { $0.hasPrefix("read status") } }
            let line = try #require(app.lines.last { $0.hasPrefix("read status") })
            let hex = line.split(separator: " ")[2]
            let bytes = stride(from: 0, to: hex.count, by: 2).map {
                UInt8(hex.dropFirst($0).prefix(2), radix: 16)!
            }
            let received = Int(bytes[0]) | Int(bytes[1]) << 8
            #expect(received >= 500)
            // In fast mode every chunk crossed the link at the instant the app wrote it, before
            // the firmware, told of the first ones, dropped the link: it got them all (as
            // CoreBluetoothMock calls its delegate for each write in the app's loop). Paced by
            // the link, the transfer was cut.
            #expect(realistic ? received < Self.file.count : received == Self.file.count)
            app.perform { app.send(Self.file, from: received) }
            try await bridge.waitForApp { firmware.file.count == Self.file.count }
        }
        #expect(firmware.file == Self.file)
        let disconnected = app.lines.filter { $0.hasPrefix("disconnected") }
        #expect(disconnected == ["disconnected \(CBMErrorDomain) 7 canSend=false services=nil"])
        #expect(app.lines.filter { $0.hasPrefix("connected") } == ["connected services=nil", "connected services=nil"])
        #expect(
            firmware.heard.filter { $0.hasPrefix("disconnected") || $0 == "connect" } == [
                "connect", "disconnected \(CBMErrorDomain) 7", "connect",
            ])
    }

    // CoreBluetoothMock: after `simulateReset()` (or a disconnection with `connectionTimeout`)
    // the device is silent: the app's link stays up for the spec's supervision timeout, then
    // ends with `connectionTimeout` (CBErrorDomain 6). The firmware, restarted, hears nothing
    // the app writes meanwhile: no write command, no write request (which gets no answer).
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(arguments: [false, true], [false, true])
    func aSilentWatchHearsNothingTheAppWritesUntilTheLinkTimesOut(reset: Bool, realistic: Bool) async throws {
        let (bridge, firmware, _, watch) = Self.rig(realistic: realistic, seed: 975)
        let app = WatchApp(queue: nil)
        try await bridge.run { @MainActor in
            try await Self.connect(app, to: watch, on: bridge)
            let peripheral = try #require(app.peripheral)
            let control = try #require(app.characteristic(.watchControl))
            if reset {
                watch.simulateReset()
            } else {
                watch.simulateDisconnection(withError: CBMError(.connectionTimeout))
            }
            #expect(peripheral.state == .connected)
            app.send(Data(repeating: 0x33, count: 100))
            peripheral.writeValue(Data([0x01]), for: control, type: .withResponse)
            try await bridge.waitForApp { app.lines.contains { $0.hasPrefix("disconnected") } }
        }
        #expect(firmware.file.isEmpty)
        #expect(!firmware.heard.contains { $0.hasPrefix("write") })
        #expect(!app.lines.contains { $0.hasPrefix("written") })
        #expect(app.lines.last == "disconnected \(CBMErrorDomain) 6 canSend=false services=nil")
    }

    // CoreBluetoothMock, simulateServiceChange: a service listed again stays discovered with its
    // characteristics and subscriptions (notifications keep coming); the others are invalidated
    // (`didModifyServices`), then the name changes. A value update for a characteristic of a
    // removed service reaches nobody; a discovery finds the new services.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(arguments: AppQueue.allCases, [false, true])
    func aServiceChangeKeepsTheWatchServiceAndItsSubscription(queue: AppQueue, realistic: Bool) async throws {
        let (bridge, _, table, watch) = Self.rig(realistic: realistic, seed: 980)
        let app = WatchApp(queue: queue.make())
        let (kept, legacyServiceAfter) = try await bridge.run { @MainActor () -> (Bool, CBMService?) in
            try await Self.connect(app, to: watch, on: bridge)
            let peripheral = try #require(app.peripheral)
            let status = try #require(app.characteristic(.watchStatus))
            let legacy = try #require(app.characteristic(.watchLegacy))
            app.perform {
                peripheral.setNotifyValue(true, for: status)
                peripheral.setNotifyValue(true, for: legacy)
            }
            try await bridge.waitForApp { app.lines.contains { $0.hasPrefix("notifying legacy") } }
            let before = peripheral.services?.first { $0.uuid == .watchService }
            watch.simulateCaching()
            watch.simulateServiceChange(newName: "Hybrid 2", newServices: [table.service, table.ota])
            try await bridge.waitForApp { app.lines.contains("name Hybrid 2") }
            watch.simulateValueUpdate(Data([0x21]), for: table.legacyValue)
            watch.simulateValueUpdate(Data([0x22]), for: table.status)
            try await bridge.waitForApp { app.lines.contains { $0.hasPrefix("value status") } }
            let after = peripheral.services?.first { $0.uuid == .watchService }
            app.perform { peripheral.discoverServices(nil) }
            try await bridge.waitForApp { app.lines.filter { $0.hasPrefix("services") }.count == 2 }
            return (before === after && status.isNotifying, peripheral.services?.first { $0.uuid == .watchLegacy })
        }
        #expect(kept)
        #expect(legacyServiceAfter == nil)
        let tail = Array(app.lines.drop { !$0.hasPrefix("modified") })
        #expect(
            Array(tail.prefix(4)) == [
                "modified [\"legacy\"]", "name Hybrid 2", "value status 22 nil",
                "services [\"watch\", \"ota\"] nil",
            ])
    }

    // CoreBluetoothMock, simulateServiceChange: the new services are the spec's from then on, so
    // a request on one reaches the delegate with its own mock; a service removed and listed
    // again comes back, discovered anew, with its characteristic notifying again once
    // subscribed. (On iOS a removed service's objects are invalid: a new discovery gives new
    // ones.)
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(arguments: AppQueue.allCases, [false, true])
    func servicesAddedByAChangeAreServedByTheFirmware(queue: AppQueue, realistic: Bool) async throws {
        let (bridge, firmware, table, watch) = Self.rig(realistic: realistic, seed: 982)
        let app = WatchApp(queue: queue.make())
        let (oldLegacy, newLegacy) = try await bridge.run { @MainActor () -> (CBMService?, CBMService?) in
            try await Self.connect(app, to: watch, on: bridge)
            let peripheral = try #require(app.peripheral)
            let oldLegacy = peripheral.services?.first { $0.uuid == .watchLegacy }
            watch.simulateServiceChange(newName: "Hybrid", newServices: [table.service, table.ota])
            try await bridge.waitForApp { app.lines.contains { $0.hasPrefix("modified") } }
            watch.simulateServiceChange(newName: "Hybrid", newServices: [table.service, table.ota, table.legacy])
            app.perform { peripheral.discoverServices(nil) }
            try await bridge.waitForApp { app.lines.filter { $0.hasPrefix("characteristics") }.count == 5 }
            let ota = try #require(app.characteristic(.watchOTA))
            let legacy = try #require(app.characteristic(.watchLegacy))
            app.perform {
                peripheral.writeValue(Data([0x0A]), for: ota, type: .withResponse)
                peripheral.setNotifyValue(true, for: legacy)
            }
            try await bridge.waitForApp { app.lines.contains { $0.hasPrefix("notifying legacy") } }
            watch.simulateValueUpdate(Data([0x44]), for: table.legacyValue)
            try await bridge.waitForApp { app.lines.contains { $0.hasPrefix("value legacy") } }
            return (oldLegacy, peripheral.services?.first { $0.uuid == .watchLegacy })
        }
        #expect(oldLegacy != nil && newLegacy != nil && oldLegacy !== newLegacy)
        #expect(
            Array(app.lines.suffix(3)) == ["written ota nil", "notifying legacy true nil", "value legacy 44 nil"])
        #expect(firmware.heard.contains("write other 1"))
        // The name given is the name it had: no `peripheralDidUpdateName` (CoreBluetoothMock
        // tells centrals only when it differs; iOS, when the device's name changes).
        #expect(!app.lines.contains { $0.hasPrefix("name") })
    }

    // Requests the watch's GATT table does not allow, and values beyond what the link carries:
    // a write without response longer than `maximumWriteValueLength(for: .withoutResponse)` is
    // cut to it (MIGRATION.md: as on a device); a write with response is at most 512 bytes
    // (`maximumWriteValueLength(for: .withResponse)`); a read of a characteristic without `.read`
    // fails with ATT 0x02 and subscribing to one that neither notifies nor indicates fails,
    // whatever the firmware would answer (a GATT server checks first); `readRSSI` on a
    // disconnected peripheral gets no callback.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(arguments: [false, true])
    func requestsTheTableDoesNotAllowFailAndLongValuesAreCut(realistic: Bool) async throws {
        let (bridge, firmware, _, watch) = Self.rig(realistic: realistic, seed: 985)
        let app = WatchApp(queue: nil)
        let longest = try await bridge.run { @MainActor () -> Int in
            try await Self.connect(app, to: watch, on: bridge)
            let peripheral = try #require(app.peripheral)
            let file = try #require(app.characteristic(.watchFile))
            let control = try #require(app.characteristic(.watchControl))
            peripheral.writeValue(Data(repeating: 0x5A, count: 100), for: file, type: .withoutResponse)
            // Neither reaches the firmware: the file takes no write with response, the control
            // point no write without response (CoreBluetooth drops it, noting the misuse).
            peripheral.writeValue(Data([0x01]), for: file, type: .withResponse)
            peripheral.writeValue(Data([0x02]), for: control, type: .withoutResponse)
            peripheral.writeValue(Data(repeating: 0x01, count: 513), for: control, type: .withResponse)
            try await bridge.waitForApp { app.lines.contains { $0.hasPrefix("written control") } }
            #expect(app.lines.filter { $0.hasPrefix("written file") } == ["written file \(CBMATTErrorDomain) 3"])
            let manager = try #require(app.manager)
            #expect(manager.apiMisuses.contains { $0.contains("does not allow writes without response") })
            peripheral.readValue(for: control)
            try await bridge.waitForApp { app.lines.contains { $0.hasPrefix("value control") } }
            peripheral.setNotifyValue(true, for: control)
            try await bridge.waitForApp { app.lines.contains { $0.hasPrefix("notifying control") } }
            return peripheral.maximumWriteValueLength(for: .withResponse)
        }
        #expect(longest == 512)
        #expect(firmware.chunks == [20])
        #expect(
            Array(app.lines.suffix(3)) == [
                "written control \(CBMATTErrorDomain) \(CBMATTError.Code.invalidAttributeValueLength.rawValue)",
                "value control nil \(CBMATTErrorDomain) \(CBMATTError.Code.readNotPermitted.rawValue)",
                "notifying control false \(CBMATTErrorDomain) \(CBMATTError.Code.requestNotSupported.rawValue)",
            ])
        #expect(!firmware.heard.contains { $0.hasPrefix("write control") })
    }

    // Two apps at once (the companion on the main queue, a widget on its own queue), both
    // sending files and subscribed, while the test's body sends values: the same seed still
    // gives the same bridge log, and each app's file arrives whole.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(arguments: [false, true])
    func twoAppsOnTwoQueuesGiveTheSameBridgeLogForTheSameSeed(realistic: Bool) async throws {
        func session() async throws -> ([BridgeLogEntry], Int) {
            let (bridge, firmware, table, watch) = Self.rig(realistic: realistic, seed: 995, mtu: 185)
            let apps = [WatchApp(queue: nil), WatchApp(queue: DispatchQueue(label: "widget"))]
            try await bridge.run { @MainActor in
                CBMCentralManagerMock.simulatePeripherals([watch])
                for app in apps { app.start() }
                try await bridge.waitForApp {
                    apps.allSatisfy { $0.lines.contains("state \(CBMManagerState.poweredOn.rawValue)") }
                }
                let identifier = watch.identifier
                // Each app's calls on its own queue: the body hands the companion's to the main
                // queue (`DispatchQueue.main.async`, as a test driving an app on the main queue
                // does) at the instant the widget makes its own. (They were applied before or
                // after the widget's from run to run: the run's driver passed the main queue with
                // a probe queued before the body handed it the block.)
                for app in apps { app.perform { app.connect(identifier) } }
                try await bridge.waitForApp {
                    apps.allSatisfy { $0.lines.filter { $0.hasPrefix("characteristics") }.count == 2 }
                }
                for (index, app) in apps.enumerated() {
                    let peripheral = try #require(app.peripheral)
                    let status = try #require(app.characteristic(.watchStatus))
                    let start: @Sendable () -> Void = {
                        peripheral.setNotifyValue(true, for: status)
                        app.send(Self.file)
                    }
                    if index == 0 { start() } else { app.perform(start) }
                }
                for index in 0..<10 { watch.simulateValueUpdate(Data([UInt8(index)]), for: table.status) }
                try await bridge.waitForApp {
                    firmware.file.count == 2 * Self.file.count
                        && apps.allSatisfy { $0.lines.contains("notifying status true nil") }
                }
            }
            return (await bridge.log, firmware.file.count)
        }
        let (first, count) = try await session()
        #expect(count == 2 * Self.file.count)
        #expect(first.filter { $0.kind == .connected }.count == 2)
        for _ in 0..<3 {
            let (again, _) = try await session()
            #expect(again == first)
            if again != first { break }
        }
    }

    // The kit draws nothing at random but from the seed: the same seed gives the same bridge log.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(arguments: AppQueue.allCases)
    func theSameSeedGivesTheSameBridgeLog(queue: AppQueue) async throws {
        func session() async throws -> [BridgeLogEntry] {
            let bridge = Self.bridge(realistic: true, seed: 990)
            let firmware = WatchFirmware()
            firmware.dropLink(after: 300)
            let table = WatchTable()
            let watch = Self.watch(table, firmware: firmware, mtu: 185)
            let app = WatchApp(queue: queue.make())
            try await bridge.run { @MainActor in
                try await Self.connect(app, to: watch, on: bridge)
                let peripheral = try #require(app.peripheral)
                let status = try #require(app.characteristic(.watchStatus))
                app.perform { peripheral.setNotifyValue(true, for: status) }
                try await bridge.waitForApp { app.lines.contains("notifying status true nil") }
                for index in 0..<5 { watch.simulateValueUpdate(Data([UInt8(index)]), for: table.status) }
                app.perform {
                    peripheral.readRSSI()
                    app.send(Self.file)
                }
                try await bridge.waitForApp { app.lines.contains { $0.hasPrefix("disconnected") } }
                let manager = try #require(app.manager)
                app.perform { manager.connect(peripheral) }
                try await bridge.waitForApp { app.lines.filter { $0.hasPrefix("characteristics") }.count == 4 }
            }
            return await bridge.log
        }
        let first = try await session()
        let second = try await session()
        #expect(first.filter { $0.kind == .write }.count >= 11)
        #expect(first.filter { $0.kind == .connected }.count == 2)
        #expect(first.contains { $0.kind == .notification } && first.contains { $0.kind == .rssiRead })
        #expect(first == second)
    }
}
