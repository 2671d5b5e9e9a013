// swift-format-ignore-file: AlwaysUseLowerCamelCase
// (These names mirror CoreBluetooth's API.)

import BLECBM
import BLECore
import BLEMockKit
import Foundation
import Testing

/// A smartwatch's firmware simulator, as an iOS team writes one against CoreBluetooth's
/// peripheral role: a heart-rate stream it pumps (send until `updateValue` says no, go on when
/// told it is ready), a 300-byte device log read by offset, and a settings characteristic that
/// takes writes with response only (long ones in parts).
final class WatchFirmware: NSObject, CBMPeripheralManagerDelegate, @unchecked Sendable {
    // @unchecked Sendable: only touched on the main queue.
    static let service = CBMUUID(string: "6E430001-B5A3-F393-E0A9-E50E24DCCA9E")
    static let heartRateUUID = CBMUUID(string: "6E430002-B5A3-F393-E0A9-E50E24DCCA9E")
    static let logUUID = CBMUUID(string: "6E430003-B5A3-F393-E0A9-E50E24DCCA9E")
    static let settingsUUID = CBMUUID(string: "6E430004-B5A3-F393-E0A9-E50E24DCCA9E")
    static let batteryUUID = CBMUUID(string: "6E430005-B5A3-F393-E0A9-E50E24DCCA9E")
    static let alertsUUID = CBMUUID(string: "6E430006-B5A3-F393-E0A9-E50E24DCCA9E")
    static let commandsUUID = CBMUUID(string: "6E430007-B5A3-F393-E0A9-E50E24DCCA9E")

    /// How the app answers a read of its log.
    enum ReadAnswer {
        /// The value's part from the request's offset (`invalidOffset` past its end).
        case slice
        /// No answer at all.
        case never
        /// The right answer, twice.
        case twice
        /// An answer to the previous read request instead of this one.
        case previousRequest
        /// The whole value whatever the offset (a common bug).
        case wholeValue
    }

    /// How the app answers a write to its settings.
    enum WriteAnswer {
        /// The first request of the batch, as CoreBluetooth asks.
        case first
        /// The last request of the batch instead.
        case last
        /// Each request of the batch.
        case each
        /// The first request, with this error.
        case error(CBMATTError.Code)
        /// None yet: the batch is kept in ``heldWrites`` for the test to answer.
        case hold
    }

    var manager: CBMPeripheralManager!
    let heartRate = CBMMutableCharacteristic(type: heartRateUUID, properties: [.notify], value: nil, permissions: [])
    let battery = CBMMutableCharacteristic(
        type: batteryUUID, properties: [.read, .notify], value: nil, permissions: [.readable])
    let log = CBMMutableCharacteristic(type: logUUID, properties: [.read], value: nil, permissions: [.readable])
    let settings = CBMMutableCharacteristic(
        type: settingsUUID, properties: [.write], value: nil, permissions: [.writeable])
    let alerts = CBMMutableCharacteristic(type: alertsUUID, properties: [.indicate], value: nil, permissions: [])
    let commands = CBMMutableCharacteristic(
        type: commandsUUID, properties: [.write, .writeWithoutResponse], value: nil, permissions: [.writeable])
    /// The characteristic the pump sends on.
    lazy var pumped = heartRate
    static let logValue = Data((0..<300).map { UInt8(truncatingIfNeeded: $0 &* 13) })
    var logValue: Data { Self.logValue }
    var readAnswer = ReadAnswer.slice
    var writeAnswer = WriteAnswer.first
    /// The last write batch held unanswered (``WriteAnswer/hold``).
    var heldWrites: [CBMATTRequest] = []
    var calls: [String] = []
    var readRequests: [CBMATTRequest] = []
    /// Each didReceiveWrite's requests: their offsets and values.
    var writes: [[(offset: Int, value: Data)]] = []
    /// The length of the central's updates as each request and subscription told it.
    var updateLengths: [Int] = []
    /// The pump: the next value to send, the last one, and how often it was refused.
    var nextBeat = 0
    var lastBeat = -1
    var refusals = 0

    override init() {
        super.init()
        manager = CBMPeripheralManager(delegate: self, queue: nil)
    }

    var readies: Int { calls.filter { $0 == "ready" }.count }

    func peripheralManagerDidUpdateState(_ peripheral: CBMPeripheralManager) {
        calls.append("state \(peripheral.state)")
        guard peripheral.state == .poweredOn else { return }
        let service = CBMMutableService(type: Self.service, primary: true)
        service.characteristics = [heartRate, battery, log, settings, alerts, commands]
        peripheral.add(service)
    }

    func peripheralManager(_ peripheral: CBMPeripheralManager, didAdd service: CBMService, error: (any Error)?) {
        calls.append("added \(service.uuid)" + (error.map { " error \($0)" } ?? ""))
        guard service.uuid == Self.service else { return }
        peripheral.startAdvertising([
            CBMAdvertisementDataLocalNameKey: "Watch", CBMAdvertisementDataServiceUUIDsKey: [Self.service],
        ])
    }

    func peripheralManagerDidStartAdvertising(_ peripheral: CBMPeripheralManager, error: (any Error)?) {
        calls.append("advertising" + (error.map { " error \(($0 as NSError).domain)/\(($0 as NSError).code)" } ?? ""))
    }

    func peripheralManager(_ peripheral: CBMPeripheralManager, didReceiveRead request: CBMATTRequest) {
        calls.append("read offset \(request.offset)")
        updateLengths.append(request.central.maximumUpdateValueLength)
        let previous = readRequests.last
        readRequests.append(request)
        switch readAnswer {
        case .never: return
        case .previousRequest:
            if let previous { return peripheral.respond(to: previous, withResult: .success) }
        case .wholeValue:
            request.value = logValue
            return peripheral.respond(to: request, withResult: .success)
        case .slice, .twice: break
        }
        guard request.offset <= logValue.count else {
            return peripheral.respond(to: request, withResult: .invalidOffset)
        }
        request.value = logValue.subdata(in: request.offset..<logValue.count)
        peripheral.respond(to: request, withResult: .success)
        if case .twice = readAnswer { peripheral.respond(to: request, withResult: .success) }
    }

    func peripheralManager(_ peripheral: CBMPeripheralManager, didReceiveWrite requests: [CBMATTRequest]) {
        calls.append("write \(requests.count)")
        writes.append(requests.map { ($0.offset, $0.value ?? Data()) })
        switch writeAnswer {
        case .first: peripheral.respond(to: requests[0], withResult: .success)
        case .last: peripheral.respond(to: requests[requests.count - 1], withResult: .success)
        case .each: for request in requests { peripheral.respond(to: request, withResult: .success) }
        case .error(let code): peripheral.respond(to: requests[0], withResult: code)
        case .hold: heldWrites = requests
        }
    }

    func peripheralManager(
        _ peripheral: CBMPeripheralManager, central: CBMCentral, didSubscribeTo characteristic: CBMCharacteristic
    ) {
        calls.append("subscribed \(characteristic.uuid)")
        updateLengths.append(central.maximumUpdateValueLength)
    }

    func peripheralManager(
        _ peripheral: CBMPeripheralManager, central: CBMCentral, didUnsubscribeFrom characteristic: CBMCharacteristic
    ) {
        calls.append("unsubscribed \(characteristic.uuid)")
    }

    func peripheralManagerIsReady(toUpdateSubscribers peripheral: CBMPeripheralManager) {
        calls.append("ready")
        pump()
    }

    /// Sends heart-rate values (two bytes each, big-endian) up to `last`, from where it stopped.
    func pump(upTo last: Int? = nil) {
        if let last { lastBeat = last }
        while nextBeat <= lastBeat {
            let value = Data([UInt8(nextBeat >> 8), UInt8(nextBeat & 0xFF)])
            guard manager.updateValue(value, for: pumped, onSubscribedCentrals: nil) else {
                refusals += 1
                return
            }
            nextBeat += 1
        }
    }
}

@Suite(.timeLimit(.minutes(10)))
struct PeripheralRoleProbeTests {
    /// The heart-rate values 0..<count, as the watch sends them.
    static func beats(_ count: Int) -> [Data] { (0..<count).map { Data([UInt8($0 >> 8), UInt8($0 & 0xFF)]) } }

    /// Runs `body` on a new bridge (realistic or fast) with a central of the async API (the
    /// mode's preset unless `configuration` is given) connected to the watch app, its
    /// characteristics found; returns what `body` returns, and the bridge.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    static func withConnectedWatch<T: Sendable>(
        realistic: Bool, seed: UInt64, configuration: MockCentralManager.Configuration? = nil,
        _ body:
            @escaping @MainActor @Sendable (MockCentralManager, WatchFirmware, [RemoteCharacteristic]) async throws
            -> T
    ) async throws -> (T, MockBLEBridge) {
        let bridge = MockBLEBridge(configuration: realistic ? .realistic(seed: seed) : .init(seed: seed))
        let central = MockCentralManager(
            configuration: configuration ?? (realistic ? .realistic(seed: seed) : .fast), bridge: bridge)
        let value = try await bridge.run { @MainActor () -> T in
            let app = WatchFirmware()
            try await bridge.waitForApp { app.manager.isAdvertising }
            let identifier = try #require(app.manager.simulatedPeripheral?.identifier)
            try await central.scanForPeripherals(withServices: [WatchFirmware.service.bluetoothUUID])
            await bridge.waitUntil { bridge in
                bridge.log.contains { $0.kind == .discovered && $0.peripheral == identifier }
            }
            await central.stopScan()
            try await central.connect(identifier)
            return try await body(central, app, try await central.discoverAll(for: identifier))
        }
        return (value, bridge)
    }

    /// The characteristic of `uuid` among `found`.
    static func characteristic(_ uuid: CBMUUID, in found: [RemoteCharacteristic]) throws -> RemoteCharacteristic {
        try #require(found.first { $0.uuid == uuid.bluetoothUUID })
    }

    /// What `body` returns or throws.
    @MainActor static func outcome<T: Sendable>(_ body: () async throws -> T) async -> Result<T, any Error> {
        do { return .success(try await body()) } catch { return .failure(error) }
    }

    /// The error `result` holds, if any.
    static func error<T>(of result: Result<T, any Error>) -> (any Error)? {
        if case .failure(let error) = result { return error }
        return nil
    }

    /// The values `central` received without error, as the bridge's log has them.
    static func received(by central: UUID, on bridge: MockBLEBridge) async -> [Data] {
        await bridge.log.filter {
            [.notification, .indication].contains($0.kind) && $0.central == central && $0.error == nil
        }.compactMap(\.value)
    }
}

// MARK: The update queue

extension PeripheralRoleProbeTests {
    /// A burst of 500 values pumped as CoreBluetooth's documentation says (send until
    /// `updateValue` returns `false`, send the rest from `peripheralManagerIsReady`), as
    /// notifications or indications: every value reaches the central once, in order. Realistic
    /// mode's queue of 20 refuses some, each refusal followed by one ready callback; fast mode's
    /// queue never fills.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(arguments: [false, true], [false, true])
    func aPumpedBurstReachesTheCentralWholeAndInOrder(realistic: Bool, indicating: Bool) async throws {
        let ((refusals, readies, heard), _) = try await Self.withConnectedWatch(realistic: realistic, seed: 61) {
            central, app, found in
            let bridge = central.bridge
            let uuid = indicating ? WatchFirmware.alertsUUID : WatchFirmware.heartRateUUID
            if indicating { app.pumped = app.alerts }
            try await central.setNotifyValue(true, for: try Self.characteristic(uuid, in: found))
            try await bridge.waitForApp { app.calls.contains("subscribed \(uuid)") }
            app.pump(upTo: 499)
            try await bridge.waitForApp { app.nextBeat == 500 }
            await bridge.waitUntil { bridge in
                bridge.log.filter {
                    [.notification, .indication].contains($0.kind) && $0.central == central.identifier
                        && $0.error == nil
                }.count >= 500
            }
            await bridge.advance(by: .seconds(1))
            return (app.refusals, app.readies, await Self.received(by: central.identifier, on: bridge))
        }
        #expect(heard == Self.beats(500))
        #expect(refusals == readies)
        #expect((refusals > 0) == realistic)
    }
}

// MARK: Reads

extension PeripheralRoleProbeTests {
    /// A central on a link of ATT_MTU 23 or 247 reads the 300-byte log: the app is asked from
    /// offsets 0, ATT_MTU − 1, … (ATT_MTU − 1 bytes a response) and the central gets the value
    /// whole; each request's central says its updates take ATT_MTU − 3 bytes.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(arguments: [23, 247])
    func aLongReadAsksTheAppFromEachOffset(mtu: Int) async throws {
        var configuration = MockCentralManager.Configuration.realistic(seed: 62)
        configuration.mtu = .fixed(mtu)
        let ((value, offsets, lengths), _) = try await Self.withConnectedWatch(
            realistic: true, seed: 62, configuration: configuration
        ) { central, app, found in
            let value = try await central.readValue(for: try Self.characteristic(WatchFirmware.logUUID, in: found))
            return (value, app.readRequests.map(\.offset), app.updateLengths)
        }
        #expect(value == WatchFirmware.logValue)
        #expect(offsets == Array(stride(from: 0, to: 300, by: mtu - 1)))
        #expect(Set(lengths) == [mtu - 3])
    }

    /// An app that answers every read with its whole value, whatever the offset (a common bug),
    /// garbles a long read as a device does: each Read Blob gets the value's start again, until
    /// 512 bytes, the most an attribute holds (the excess noted as a truncation). On fast
    /// mode's link the value fits in one response and the bug does not show.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(arguments: [false, true])
    func anAppIgnoringTheOffsetGarblesALongRead(realistic: Bool) async throws {
        let ((value, offsets, misuses), bridge) = try await Self.withConnectedWatch(realistic: realistic, seed: 71) {
            central, app, found in
            app.readAnswer = .wholeValue
            let value = try await central.readValue(for: try Self.characteristic(WatchFirmware.logUUID, in: found))
            return (value, app.readRequests.map(\.offset), app.manager.apiMisuses)
        }
        let log = WatchFirmware.logValue
        if realistic {
            #expect(offsets == [0, 184, 368])
            #expect(value == log.prefix(184) + log.prefix(184) + log.prefix(144))
            #expect(await bridge.misuses.map(\.kind) == [.valueTruncated])
        } else {
            #expect(offsets == [0])
            #expect(value == log)
        }
        #expect(misuses.isEmpty)
    }

    /// Two answers to one read: the central gets the first, the second is noted as a misuse.
    /// An answer given to the previous (already answered) request instead of the one at hand
    /// is noted too, and the request at hand goes unanswered: the central's read fails once
    /// ATT's 30-second transaction timeout has passed, the link dropped.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(arguments: [false, true])
    func answersToTheWrongRequestAreNotedAndTheReadTimesOut(realistic: Bool) async throws {
        let ((twice, wrong, misuses, elapsed), bridge) = try await Self.withConnectedWatch(
            realistic: realistic, seed: 63
        ) { central, app, found in
            let log = try Self.characteristic(WatchFirmware.logUUID, in: found)
            app.readAnswer = .twice
            let twice = try await central.readValue(for: log)
            app.readAnswer = .previousRequest
            let start = central.bridge.clock.now
            let wrong = await Self.outcome { try await central.readValue(for: log) }
            return (twice, wrong, app.manager.apiMisuses, start.duration(to: central.bridge.clock.now))
        }
        #expect(twice == WatchFirmware.logValue)
        #expect(throws: CoreBluetoothError.self) { try wrong.get() }
        #expect((Self.error(of: wrong) as? CoreBluetoothError)?.code == .connectionTimeout)
        #expect(elapsed == .seconds(30))
        // A second answer to each request of the long read (one in fast mode, two in realistic),
        // then the answer to the previous request.
        #expect(misuses.count == (realistic ? 3 : 2))
        #expect(misuses.allSatisfy { $0.hasPrefix("respond(to:withResult:): No pending request has id ") })
        #expect("\(await bridge.finish())".contains("was never answered"))
    }

    /// A read the watch app never answers: the phone's app (CoreBluetooth delegates) hears no
    /// read callback, and 30 s later (ATT's transaction timeout) the link drops and it hears
    /// didDisconnectPeripheral with no error, as iOS reports it. The bridge's finish report
    /// names the request never answered.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(arguments: [false, true])
    func aReadTheAppNeverAnswersDropsTheLinkAfterThirtySeconds(realistic: Bool) async throws {
        nonisolated(unsafe) var finished: FinishReport?
        let (calls, watchCalls, elapsed) = try await Self.withSubscribedPhone(realistic: realistic, seed: 76) {
            bridge, app, phone in
            app.readAnswer = .never
            let start = phone.calls.count
            let watch = try #require(phone.watch)
            let log = try #require(watch.services?.first?.characteristics?.first { $0.uuid == WatchFirmware.logUUID })
            let began = bridge.clock.now
            watch.readValue(for: log)
            try await bridge.waitForApp { phone.calls.count > start }
            let elapsed = began.duration(to: bridge.clock.now)
            try await bridge.clock.sleep(for: .seconds(1))
            finished = await bridge.finish()
            return (Array(phone.calls[start...]), Array(app.calls.suffix(3)), elapsed)
        }
        #expect(calls == ["disconnected"])
        #expect(elapsed == .seconds(30))
        #expect(watchCalls.first == "read offset 0")
        #expect("\(finished ?? .clean)".contains("offset 0) was never answered"))
    }
}

// MARK: Writes

extension PeripheralRoleProbeTests {
    /// A 200-byte write with response on a realistic link (ATT_MTU 185) is a long write, which
    /// the app gets as one didReceiveWrite with two requests, at offsets 0 and 180 (ATT_MTU − 5
    /// bytes a Prepare Write); one answer, to the first, completes the central's write. On
    /// fast mode's link (ATT_MTU 517) it is one request.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(arguments: [false, true])
    func aLongWriteComesAsOneCallWithARequestPerPart(realistic: Bool) async throws {
        let written = Data((0..<200).map { UInt8(truncatingIfNeeded: $0 &* 3) })
        let ((writes, misuses), _) = try await Self.withConnectedWatch(realistic: realistic, seed: 65) {
            central, app, found in
            let settings = try Self.characteristic(WatchFirmware.settingsUUID, in: found)
            try await central.writeValue(written, for: settings, type: .withResponse)
            return (app.writes, app.manager.apiMisuses)
        }
        #expect(writes.count == 1)
        #expect(writes.first?.map(\.offset) == (realistic ? [0, 180] : [0]))
        #expect(writes.first?.reduce(Data()) { $0 + $1.value } == written)
        #expect(misuses.isEmpty)
    }

    /// A long write's batch answered with an error fails the central's write with it; answered
    /// at each of its requests, the first answer completes the write and the second is noted.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(arguments: [true, false])
    func aLongWriteAnsweredWithAnErrorOrAtEachRequest(withError: Bool) async throws {
        let ((outcome, misuses), _) = try await Self.withConnectedWatch(realistic: true, seed: 66) {
            central, app, found in
            app.writeAnswer = withError ? .error(.invalidAttributeValueLength) : .each
            let settings = try Self.characteristic(WatchFirmware.settingsUUID, in: found)
            let outcome = await Self.outcome {
                try await central.writeValue(Data(repeating: 5, count: 200), for: settings, type: .withResponse)
            }
            return (outcome, app.manager.apiMisuses)
        }
        if withError {
            #expect(throws: ATTError(.invalidAttributeValueLength)) { try outcome.get() }
            #expect(misuses.isEmpty)
        } else {
            #expect(throws: Never.self) { try outcome.get() }
            #expect(misuses.count == 1)
        }
    }

    /// An answer to a long write's last request instead of its first: noted, saying it is not
    /// the first of its batch (not that the request was answered already, or its central gone),
    /// and the write, unanswered, fails after ATT's 30-second transaction timeout.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test func anAnswerToALongWritesLastRequestIsNotedAsNotTheFirst() async throws {
        let ((outcome, misuses, elapsed), _) = try await Self.withConnectedWatch(realistic: true, seed: 66) {
            central, app, found in
            app.writeAnswer = .last
            let settings = try Self.characteristic(WatchFirmware.settingsUUID, in: found)
            let start = central.bridge.clock.now
            let outcome = await Self.outcome {
                try await central.writeValue(Data(repeating: 5, count: 200), for: settings, type: .withResponse)
            }
            return (outcome, app.manager.apiMisuses, start.duration(to: central.bridge.clock.now))
        }
        #expect((Self.error(of: outcome) as? CoreBluetoothError)?.code == .connectionTimeout)
        #expect(elapsed > .seconds(30) && elapsed < .seconds(31))
        #expect(misuses.count == 1)
        #expect(
            misuses.first?.hasPrefix(
                "respond(to:withResult:): request 2 is part 2 of a write batch whose first is request 1") == true)
    }

    /// An answer to a long write's later request after its central disconnected: noted as an
    /// answer to a batch that no longer waits (not as one the batch still waits for), as is the
    /// answer to its first request after it.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test func anAnswerToALongWritesLaterRequestAfterItsCentralLeftIsNotedAsAnsweringNothing() async throws {
        let (misuses, _) = try await Self.withConnectedWatch(realistic: true, seed: 91) { central, app, found in
            app.writeAnswer = .hold
            let settings = try Self.characteristic(WatchFirmware.settingsUUID, in: found)
            // (The write fails as the link goes; its task is not awaited: the run waits only for
            // what the bridge knows of.)
            Task { @MainActor in
                try await central.writeValue(Data(repeating: 5, count: 200), for: settings, type: .withResponse)
            }
            try await central.bridge.waitForApp { app.heldWrites.count == 2 }
            try await central.cancelPeripheralConnection(found[0].peripheral)
            app.manager.respond(to: app.heldWrites[1], withResult: .success)
            app.manager.respond(to: app.heldWrites[0], withResult: .success)
            try await central.bridge.waitForApp { app.manager.apiMisuses.count == 2 }
            return app.manager.apiMisuses
        }
        #expect(
            misuses == [
                "respond(to:withResult:): request 2 is part 2 of a write batch whose first is request 1, which no "
                    + "longer waits for an answer: it was already answered, its central disconnected, or its service "
                    + "was removed",
                "respond(to:withResult:): No pending request has id 1: it was already answered, its central "
                    + "disconnected, or its service was removed. Answer each read request, and the first request of "
                    + "each write batch, exactly once.",
            ])
    }

    /// Writes without response reach the app as one request each; its answer to them (which
    /// CoreBluetooth ignores) is taken quietly.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(arguments: [false, true])
    func writesWithoutResponseReachTheAppAndTheirAnswerIsIgnored(realistic: Bool) async throws {
        let ((writes, misuses), bridge) = try await Self.withConnectedWatch(realistic: realistic, seed: 72) {
            central, app, found in
            let commands = try Self.characteristic(WatchFirmware.commandsUUID, in: found)
            try await central.writeValue(Data([1]), for: commands, type: .withoutResponse)
            try await central.writeValue(Data([2]), for: commands, type: .withoutResponse)
            try await central.writeValue(Data([3]), for: commands, type: .withResponse)
            try await central.bridge.waitForApp { app.writes.count == 3 }
            return (app.writes.map { $0.map(\.value) }, app.manager.apiMisuses)
        }
        #expect(writes == [[Data([1])], [Data([2])], [Data([3])]])
        #expect(misuses.isEmpty)
        #expect(await bridge.misuses.isEmpty)
    }
}

/// The phone's companion app, in CoreBluetooth delegate style: it connects to the watch, finds
/// its characteristics, subscribes to the heart rate and the battery, and notes what it hears.
final class WatchCompanion: NSObject, CBMCentralManagerDelegate, CBMPeripheralDelegate, @unchecked Sendable {
    // @unchecked Sendable: only touched on the main queue.
    var manager: CBMCentralManager!
    var watch: CBMPeripheral?
    var calls: [String] = []
    var subscribed = 0

    override init() {
        super.init()
        manager = CBMCentralManager(delegate: self, queue: nil)
    }

    func centralManagerDidUpdateState(_ central: CBMCentralManager) {
        if central.state == .poweredOn { central.scanForPeripherals(withServices: [WatchFirmware.service]) }
    }

    func centralManager(
        _ central: CBMCentralManager, didDiscover peripheral: CBMPeripheral, advertisementData: [String: Any],
        rssi: NSNumber
    ) {
        guard watch == nil else { return }
        central.stopScan()
        watch = peripheral
        peripheral.delegate = self
        central.connect(peripheral)
    }

    func centralManager(_ central: CBMCentralManager, didConnect peripheral: CBMPeripheral) {
        calls.append("connected")
        peripheral.discoverServices(nil)
    }

    func centralManager(
        _ central: CBMCentralManager, didDisconnectPeripheral peripheral: CBMPeripheral, error: (any Error)?
    ) {
        calls.append("disconnected" + (error.map { " \(($0 as NSError).domain)/\(($0 as NSError).code)" } ?? ""))
    }

    func peripheral(_ peripheral: CBMPeripheral, didDiscoverServices error: (any Error)?) {
        calls.append("services \((peripheral.services ?? []).map(\.uuid.uuidString).sorted())")
        for service in peripheral.services ?? [] where service.characteristics == nil {
            peripheral.discoverCharacteristics(nil, for: service)
        }
    }

    func peripheral(
        _ peripheral: CBMPeripheral, didDiscoverCharacteristicsFor service: CBMService, error: (any Error)?
    ) {
        for characteristic in service.characteristics ?? []
        where [WatchFirmware.heartRateUUID, WatchFirmware.batteryUUID].contains(characteristic.uuid) {
            peripheral.setNotifyValue(true, for: characteristic)
        }
    }

    func peripheral(
        _ peripheral: CBMPeripheral, didUpdateNotificationStateFor characteristic: CBMCharacteristic,
        error: (any Error)?
    ) {
        if error == nil, characteristic.isNotifying { subscribed += 1 }
    }

    func peripheral(
        _ peripheral: CBMPeripheral, didUpdateValueFor characteristic: CBMCharacteristic, error: (any Error)?
    ) {
        guard characteristic.uuid == WatchFirmware.logUUID else { return }
        calls.append(
            "read \(characteristic.value?.count ?? -1)"
                + (error.map { " error \(($0 as NSError).domain)/\(($0 as NSError).code)" } ?? ""))
    }

    func peripheral(_ peripheral: CBMPeripheral, didModifyServices invalidatedServices: [CBMService]) {
        calls.append("modified \(invalidatedServices.map(\.uuid.uuidString))")
    }
}

// MARK: Subscriptions, advertising, services, power

extension PeripheralRoleProbeTests {
    /// Runs `body` with the watch app and the phone's companion app subscribed to its two
    /// notifying characteristics, on a new bridge (realistic or fast).
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    static func withSubscribedPhone<T: Sendable>(
        realistic: Bool, seed: UInt64,
        _ body: @escaping @MainActor @Sendable (MockBLEBridge, WatchFirmware, WatchCompanion) async throws -> T
    ) async throws -> T {
        let bridge = MockBLEBridge(configuration: realistic ? .realistic(seed: seed) : .init(seed: seed))
        return try await bridge.run { @MainActor () -> T in
            let app = WatchFirmware()
            try await bridge.waitForApp { app.manager.isAdvertising }
            let phone = WatchCompanion()
            try await bridge.waitForApp {
                phone.subscribed == 2 && app.calls.filter { $0.hasPrefix("subscribed") }.count == 2
            }
            return try await body(bridge, app, phone)
        }
    }

    /// A subscribed central that disconnects unsubscribes the app from each characteristic it
    /// was subscribed to (CoreBluetooth calls didUnsubscribeFrom for each), and the
    /// characteristics' subscribedCentrals empty.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(arguments: [false, true])
    func aCentralThatDisconnectsUnsubscribesFromEachCharacteristic(realistic: Bool) async throws {
        let (calls, left) = try await Self.withSubscribedPhone(realistic: realistic, seed: 67) { bridge, app, phone in
            #expect(app.heartRate.subscribedCentrals?.count == 1 && app.battery.subscribedCentrals?.count == 1)
            let start = app.calls.count
            phone.manager.cancelPeripheralConnection(try #require(phone.watch))
            try await bridge.waitForApp { app.calls.count == start + 2 }
            return (
                Array(app.calls[start...]),
                (app.heartRate.subscribedCentrals ?? []) + (app.battery.subscribedCentrals ?? [])
            )
        }
        #expect(
            Set(calls) == ["unsubscribed \(WatchFirmware.heartRateUUID)", "unsubscribed \(WatchFirmware.batteryUUID)"])
        #expect(left.isEmpty)
    }

    /// Advertising: one didStartAdvertising per start; a start while advertising fails with
    /// `alreadyAdvertising` (CBErrorDomain 9) and advertising goes on; stop has no callback.
    /// A service added while advertising is published, advertising unchanged.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(arguments: [false, true])
    func advertisingStartsOnceAndASecondStartFails(realistic: Bool) async throws {
        let bridge = MockBLEBridge(configuration: realistic ? .realistic(seed: 68) : .init(seed: 68))
        let (calls, states) = try await bridge.run { @MainActor () -> ([String], [Bool]) in
            let app = WatchFirmware()
            try await bridge.waitForApp { app.manager.isAdvertising }
            var states = [app.manager.isAdvertising]
            app.manager.startAdvertising([CBMAdvertisementDataLocalNameKey: "Again"])
            try await bridge.waitForApp { app.calls.filter { $0.hasPrefix("advertising") }.count == 2 }
            states.append(app.manager.isAdvertising)
            let extra = CBMMutableService(type: CBMUUID(string: "180F"), primary: true)
            app.manager.add(extra)
            try await bridge.waitForApp { app.calls.last == "added 180F" }
            states.append(app.manager.isAdvertising)
            app.manager.stopAdvertising()
            states.append(app.manager.isAdvertising)
            try await bridge.clock.sleep(for: .seconds(1))
            states.append(await app.manager.simulatedPeripheral!.isAdvertising)
            return (app.calls, states)
        }
        #expect(
            calls == [
                "state poweredOn", "added \(WatchFirmware.service)", "advertising", "advertising error CBErrorDomain/9",
                "added 180F",
            ])
        #expect(states == [true, true, true, false, false])
    }

    /// The phone connected to the watch: a service the watch adds is announced with nothing
    /// invalidated; the watch's service the phone discovered, removed (alone, or with
    /// removeAllServices), is announced invalidated and leaves the phone's peripheral.services.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(arguments: [false, true], [false, true])
    func servicesAddedAndRemovedAreAnnouncedToTheConnectedPhone(realistic: Bool, removingAll: Bool) async throws {
        let (calls, services, watchCalls) = try await Self.withSubscribedPhone(realistic: realistic, seed: 69) {
            bridge, app, phone in
            let start = phone.calls.count
            app.manager.add(CBMMutableService(type: CBMUUID(string: "180F"), primary: true))
            try await bridge.waitForApp { phone.calls.count == start + 1 }
            if removingAll {
                app.manager.removeAllServices()
            } else {
                app.manager.remove(try #require(app.heartRate.service as? CBMMutableService))
            }
            try await bridge.waitForApp { phone.calls.count == start + 2 }
            try await bridge.clock.sleep(for: .seconds(1))
            return (
                Array(phone.calls[start...]), (phone.watch?.services ?? []).map(\.uuid.uuidString),
                app.calls.filter { $0.hasPrefix("unsubscribed") }
            )
        }
        #expect(calls == ["modified []", "modified [\"\(WatchFirmware.service.uuidString)\"]"])
        #expect(services == [])
        // (The kit tells the app nothing of the subscriptions that end with its service.)
        #expect(watchCalls == [])
    }

    /// Bluetooth turned off on the watch while the phone is subscribed: the phone's link drops
    /// (didDisconnectPeripheral with CBErrorDomain 7, peripheralDisconnected), the watch stops
    /// advertising, and its subscriptions end.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(arguments: [false, true])
    func poweringOffTheWatchDropsThePhonesLink(realistic: Bool) async throws {
        let (phoneCalls, watchCalls, advertising, left) = try await Self.withSubscribedPhone(
            realistic: realistic, seed: 70
        ) { bridge, app, phone in
            let (phoneStart, watchStart) = (phone.calls.count, app.calls.count)
            let identifier = try #require(app.manager.simulatedPeripheral?.identifier)
            await bridge.simulate(.peripheralState(identifier, .poweredOff))
            try await bridge.waitForApp { phone.calls.count > phoneStart && app.manager.state == .poweredOff }
            try await bridge.clock.sleep(for: .seconds(1))
            return (
                Array(phone.calls[phoneStart...]), Array(app.calls[watchStart...]), app.manager.isAdvertising,
                (app.heartRate.subscribedCentrals ?? []) + (app.battery.subscribedCentrals ?? [])
            )
        }
        #expect(phoneCalls == ["disconnected CBErrorDomain/7"])
        // The state change first, then the subscriptions the power loss ended.
        #expect(watchCalls.first == "state poweredOff")
        #expect(
            Set(watchCalls.dropFirst())
                == ["unsubscribed \(WatchFirmware.heartRateUUID)", "unsubscribed \(WatchFirmware.batteryUUID)"])
        #expect(watchCalls.count == 3)
        #expect(!advertising)
        #expect(left.isEmpty)
    }
}

// MARK: More

extension PeripheralRoleProbeTests {
    /// The watch goes on advertising while a central is connected (as iOS's peripheral manager
    /// does), and a central's explicit unsubscription reaches the app and empties
    /// subscribedCentrals.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(arguments: [false, true])
    func advertisingGoesOnWhileConnectedAndAnUnsubscriptionReachesTheApp(realistic: Bool) async throws {
        let ((mirror, simulated, last, subscribers), _) = try await Self.withConnectedWatch(
            realistic: realistic, seed: 73
        ) { central, app, found in
            let heartRate = try Self.characteristic(WatchFirmware.heartRateUUID, in: found)
            try await central.setNotifyValue(true, for: heartRate)
            try await central.bridge.waitForApp { app.heartRate.subscribedCentrals?.count == 1 }
            try await central.setNotifyValue(false, for: heartRate)
            try await central.bridge.waitForApp { app.heartRate.subscribedCentrals?.isEmpty == true }
            let simulated = await app.manager.simulatedPeripheral!.isAdvertising
            return (app.manager.isAdvertising, simulated, app.calls.last, app.heartRate.subscribedCentrals?.count)
        }
        #expect(mirror && simulated)
        #expect(last == "unsubscribed \(WatchFirmware.heartRateUUID)")
        #expect(subscribers == 0)
    }

    /// Two centrals subscribed (realistic: ATT_MTU 23 and 247), the first leaving mid-pump: the
    /// first gets the values up to its leaving, in order, the second every value, in order, and
    /// the app hears one unsubscription.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(arguments: [false, true])
    func aPumpToTwoCentralsGoesOnWhenOneLeaves(realistic: Bool) async throws {
        let bridge = MockBLEBridge(configuration: realistic ? .realistic(seed: 74) : .init(seed: 74))
        let centrals = (0..<2).map { index in
            var configuration: MockCentralManager.Configuration = realistic ? .realistic(seed: 74) : .fast
            if realistic { configuration.mtu = .fixed(index == 0 ? 23 : 247) }
            return MockCentralManager(configuration: configuration, bridge: bridge)
        }
        let (calls, lengths) = try await bridge.run { @MainActor () -> ([String], [Int]) in
            let app = WatchFirmware()
            try await bridge.waitForApp { app.manager.isAdvertising }
            let identifier = try #require(app.manager.simulatedPeripheral?.identifier)
            for (index, central) in centrals.enumerated() {
                try await central.scanForPeripherals(withServices: [WatchFirmware.service.bluetoothUUID])
                await bridge.waitUntil { bridge in
                    bridge.log.contains {
                        $0.kind == .discovered && $0.peripheral == identifier && $0.central == central.identifier
                    }
                }
                await central.stopScan()
                try await central.connect(identifier)
                let found = try await central.discoverAll(for: identifier)
                try await central.setNotifyValue(
                    true, for: try Self.characteristic(WatchFirmware.heartRateUUID, in: found))
                try await bridge.waitForApp { app.heartRate.subscribedCentrals?.count == index + 1 }
            }
            let lengths = (app.heartRate.subscribedCentrals ?? []).map(\.maximumUpdateValueLength)
            app.pump(upTo: 99)
            try await bridge.waitForApp { app.nextBeat >= 40 }
            try await centrals[0].cancelPeripheralConnection(identifier)
            app.pump(upTo: 299)
            try await bridge.waitForApp { app.nextBeat == 300 }
            await bridge.advance(by: .seconds(2))
            return (app.calls, lengths)
        }
        let first = await Self.received(by: centrals[0].identifier, on: bridge)
        #expect(first.count >= 20 && first == Array(Self.beats(300).prefix(first.count)))
        #expect(await Self.received(by: centrals[1].identifier, on: bridge) == Self.beats(300))
        #expect(lengths == (realistic ? [20, 244] : [512, 512]))
        #expect(calls.filter { $0.hasPrefix("unsubscribed") } == ["unsubscribed \(WatchFirmware.heartRateUUID)"])
    }

    /// An injected `.updateValue` failure loses the update: CoreBluetooth's `updateValue` has
    /// no error to report, and the kit's answer (`true`) was given before the simulation saw
    /// the call, so the app is not told; the bridge's log has the update, with its error.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(arguments: [false, true])
    func anInjectedUpdateFailureLosesTheUpdate(realistic: Bool) async throws {
        let ((sent, misuses), bridge) = try await Self.withConnectedWatch(realistic: realistic, seed: 77) {
            central, app, found in
            let bridge = central.bridge
            try await central.setNotifyValue(true, for: try Self.characteristic(WatchFirmware.heartRateUUID, in: found))
            try await bridge.waitForApp { app.heartRate.subscribedCentrals?.count == 1 }
            await app.manager.simulatedPeripheral!.inject(
                ErrorInjection(.updateValue, failure: .coreBluetooth(.unknown)))
            let sent = [
                app.manager.updateValue(Data([1]), for: app.heartRate, onSubscribedCentrals: nil),
                app.manager.updateValue(Data([2]), for: app.heartRate, onSubscribedCentrals: nil),
            ]
            await bridge.advance(by: .seconds(1))
            return (sent, app.manager.apiMisuses)
        }
        let central = try #require(await bridge.log.first { $0.kind == .connected }?.central)
        #expect(sent == [true, true])
        #expect(await Self.received(by: central, on: bridge) == [Data([2])])
        #expect(misuses.isEmpty)
        let failed = await bridge.log.filter { $0.kind == .notification && $0.error != nil }
        #expect(failed.map(\.value) == [Data([1])])
    }
}
