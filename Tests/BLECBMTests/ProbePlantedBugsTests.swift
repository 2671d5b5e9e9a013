// swift-format-ignore-file: AlwaysUseLowerCamelCase
// (These names mirror CoreBluetooth's API.)

import BLECBM
import BLECore
import BLEMockKit
import BLEMockKitTesting
import Foundation
import Testing

@testable import BlinkyExample

// A probe written as a user of the kit would: a smartwatch companion app in plain
// CoreBluetooth delegate style (through BLECBM's names), which uploads a ~4 KB file to a watch
// with writes without response and flow control, waits for the watch's "done" notification and
// reconnects after a lost link; the watch is a CBMPeripheralManager app. One planted bug at a
// time (`ProbeBug`) shows whether realistic mode and exploration catch what an iPhone would.

/// The watch's file service.
enum ProbeWatchService {
    static let service = CBMUUID(string: "6E400001-0000-4000-8000-00805F9B34FB")
    /// Written with response: `[1, size (UInt32 LE)]` starts an upload, `[2]` commits it.
    static let control = CBMUUID(string: "6E400002-0000-4000-8000-00805F9B34FB")
    /// Written without response: the file's bytes in order.
    static let data = CBMUUID(string: "6E400003-0000-4000-8000-00805F9B34FB")
    /// Notified: `[0xD0, bytes received (UInt32 LE), checksum (UInt32 LE)]` after a commit.
    static let status = CBMUUID(string: "6E400004-0000-4000-8000-00805F9B34FB")

    static let file: [UInt8] = (0..<4_000).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }
}

/// The bugs the companion app can be built with, one at a time.
enum ProbeBug: String, Sendable, CaseIterable {
    /// (a) Writes every chunk in one loop, never looking at `canSendWriteWithoutResponse`.
    case ignoresFlowControl
    /// (b) Cuts the file into 182-byte chunks, as if every link had ATT_MTU 185.
    case fixedChunk182
    /// (b') Cuts the file into 512-byte chunks.
    case fixedChunk512
    /// (c) Starts the upload right after `setNotifyValue`, without waiting for the notification
    /// state (and so never learns that the subscription failed).
    case startsBeforeSubscribed
    /// (d) Subscribes only on the first connection: thinks `isNotifying` survives a reconnect.
    case noResubscribe
    /// (e) Keeps the characteristic objects of the first connection and uses them after a
    /// reconnect, without rediscovering.
    case reusesStaleCharacteristics
    /// (f) Does not reconnect after the link drops (the upload hangs).
    case noReconnect
    /// (g) Scans as soon as the manager is created, before `poweredOn`.
    case scansBeforePoweredOn
    /// (h) Ignores the error of the start write (with response) and streams anyway.
    case ignoresWriteErrors
}

/// The phone: a companion app as apps are written, on a queue of its own.
final class ProbeCompanionApp: NSObject, CBMCentralManagerDelegate, CBMPeripheralDelegate, @unchecked Sendable {
    // @unchecked Sendable: state only touched on `queue` (callbacks arrive there; readers sync).
    enum Phase: String, Sendable { case idle, subscribing, starting, streaming, committing, awaitingDone, done, failed }

    let queue = DispatchQueue(label: "probe.phone")
    let bug: ProbeBug?
    let file: [UInt8]
    private(set) var manager: CBMCentralManager!
    private var watch: CBMPeripheral?
    private var control: CBMCharacteristic?
    private var data: CBMCharacteristic?
    private var status: CBMCharacteristic?
    private var staleControl: CBMCharacteristic?
    private var staleData: CBMCharacteristic?
    private var staleStatus: CBMCharacteristic?
    private var chunk = 0
    private var sent = 0
    private var phase: Phase = .idle
    private var subscribedOnce = false
    private var retries = 0
    private var events: [String] = []
    private var issues: [String] = []
    private var writeErrors: [any Error] = []
    private var connectCount = 0
    private var dropCount = 0
    private var chunks: [Int] = []
    private var restored = false

    init(
        file: [UInt8] = ProbeWatchService.file, bug: ProbeBug? = nil, restoreIdentifier: String? = nil,
        bridge: MockBLEBridge? = nil, configuration: MockCentralManager.Configuration? = nil
    ) {
        self.file = file
        self.bug = bug
        super.init()
        let options: [String: Any]? = restoreIdentifier.map { [CBMCentralManagerOptionRestoreIdentifierKey: $0] }
        let made: CBMCentralManager
        if let bridge {
            made = CBMCentralManager(
                bridge: bridge, delegate: self, queue: queue, options: options, configuration: configuration)
        } else {
            made = CBMCentralManager(delegate: self, queue: queue, options: options)
        }
        queue.sync { manager = made }
        if bug == .scansBeforePoweredOn {
            made.scanForPeripherals(withServices: [ProbeWatchService.service])
        }
    }

    // What the test reads.
    var currentPhase: Phase { queue.sync { phase } }
    var isSettled: Bool { queue.sync { phase == .done || phase == .failed } }
    var problems: [String] { queue.sync { issues } }
    var history: [String] { queue.sync { events } }
    var errors: [any Error] { queue.sync { writeErrors } }
    var connections: Int { queue.sync { connectCount } }
    var drops: Int { queue.sync { dropCount } }
    var chunkSizes: [Int] { queue.sync { chunks } }
    var bytesSent: Int { queue.sync { sent } }
    var wasRestored: Bool { queue.sync { restored } }

    private func note(_ event: String) { events.append(event) }

    private func fail(_ problem: String) {
        issues.append(problem)
        phase = .failed
    }

    // MARK: Central

    func centralManagerDidUpdateState(_ central: CBMCentralManager) {
        note("state \(central.state)")
        guard central.state == .poweredOn else {
            // Below poweredOn every peripheral object is invalid (Apple's documentation).
            if central.state == .poweredOff || central.state == .resetting {
                if phase != .done && phase != .failed { phase = .idle }
                watch = nil
                control = nil
                data = nil
                status = nil
            }
            return
        }
        if let watch, restored {
            // Restored: the system kept the link; take over where it is.
            if watch.state == .connected {
                setUp(watch)
            } else {
                central.connect(watch)
            }
            return
        }
        guard bug != .scansBeforePoweredOn else { return }
        central.scanForPeripherals(withServices: [ProbeWatchService.service])
    }

    func centralManager(_ central: CBMCentralManager, willRestoreState dict: [String: Any]) {
        let peripherals = dict[CBMCentralManagerRestoredStatePeripheralsKey] as? [CBMPeripheral] ?? []
        note("restored \(peripherals.count)")
        guard let peripheral = peripherals.first else { return }
        restored = true
        watch = peripheral
        peripheral.delegate = self
    }

    func centralManager(
        _ central: CBMCentralManager, didDiscover peripheral: CBMPeripheral, advertisementData: [String: Any],
        rssi RSSI: NSNumber
    ) {
        guard watch == nil else { return }
        note("discovered")
        central.stopScan()
        watch = peripheral
        peripheral.delegate = self
        central.connect(peripheral)
    }

    func centralManager(_ central: CBMCentralManager, didConnect peripheral: CBMPeripheral) {
        connectCount += 1
        note("connected")
        if bug == .reusesStaleCharacteristics, let staleControl, let staleData, let staleStatus {
            // Bug: the objects of the first connection, as if they were still valid.
            control = staleControl
            data = staleData
            status = staleStatus
            chunk = peripheral.maximumWriteValueLength(for: .withoutResponse)
            startUpload(peripheral)
            return
        }
        peripheral.discoverServices([ProbeWatchService.service])
    }

    func centralManager(_ central: CBMCentralManager, didFailToConnect peripheral: CBMPeripheral, error: (any Error)?) {
        note("failed to connect \(String(describing: error))")
        central.connect(peripheral)
    }

    func centralManager(
        _ central: CBMCentralManager, didDisconnectPeripheral peripheral: CBMPeripheral, error: (any Error)?
    ) {
        dropCount += 1
        note("disconnected \(String(describing: error))")
        control = nil
        data = nil
        status = nil
        guard phase != .done, phase != .failed else { return }
        phase = .idle
        guard bug != .noReconnect else { return }
        // CoreBluetooth keeps trying until the watch is back.
        central.connect(peripheral)
    }

    // MARK: Peripheral

    private func setUp(_ peripheral: CBMPeripheral) {
        let characteristics = peripheral.services?.first { $0.uuid == ProbeWatchService.service }?.characteristics
        guard let characteristics, !characteristics.isEmpty else {
            peripheral.discoverServices([ProbeWatchService.service])
            return
        }
        take(characteristics, of: peripheral)
    }

    func peripheral(_ peripheral: CBMPeripheral, didDiscoverServices error: (any Error)?) {
        guard error == nil, let service = peripheral.services?.first(where: { $0.uuid == ProbeWatchService.service })
        else {
            note("service discovery failed \(String(describing: error))")
            return retryConnection(peripheral)
        }
        peripheral.discoverCharacteristics(
            [ProbeWatchService.control, ProbeWatchService.data, ProbeWatchService.status], for: service)
    }

    func peripheral(
        _ peripheral: CBMPeripheral, didDiscoverCharacteristicsFor service: CBMService, error: (any Error)?
    ) {
        guard error == nil, let characteristics = service.characteristics else {
            note("characteristic discovery failed \(String(describing: error))")
            return retryConnection(peripheral)
        }
        take(characteristics, of: peripheral)
    }

    private func take(_ characteristics: [CBMCharacteristic], of peripheral: CBMPeripheral) {
        for characteristic in characteristics {
            switch characteristic.uuid {
            case ProbeWatchService.control: control = characteristic
            case ProbeWatchService.data: data = characteristic
            case ProbeWatchService.status: status = characteristic
            default: break
            }
        }
        guard let status, control != nil, data != nil else { return fail("the watch lacks a characteristic") }
        if staleControl == nil {
            staleControl = control
            staleData = data
            staleStatus = status
        }
        if status.isNotifying || (bug == .noResubscribe && subscribedOnce) {
            // Restored with its subscription, or (bug) assumed to be still subscribed.
            return subscribed(peripheral)
        }
        phase = .subscribing
        retries = 0
        peripheral.setNotifyValue(true, for: status)
        if bug == .startsBeforeSubscribed { subscribed(peripheral) }
    }

    func peripheral(
        _ peripheral: CBMPeripheral, didUpdateNotificationStateFor characteristic: CBMCharacteristic,
        error: (any Error)?
    ) {
        note("notifying \(characteristic.isNotifying) \(String(describing: error))")
        guard bug != .startsBeforeSubscribed else { return }
        guard error == nil, characteristic.isNotifying else {
            retries += 1
            guard retries < 4 else { return retryConnection(peripheral) }
            return peripheral.setNotifyValue(true, for: characteristic)
        }
        subscribed(peripheral)
    }

    private func subscribed(_ peripheral: CBMPeripheral) {
        subscribedOnce = true
        switch bug {
        case .fixedChunk182: chunk = 182
        case .fixedChunk512: chunk = 512
        default: chunk = peripheral.maximumWriteValueLength(for: .withoutResponse)
        }
        startUpload(peripheral)
    }

    private func startUpload(_ peripheral: CBMPeripheral) {
        guard let control else { return }
        phase = .starting
        sent = 0
        retries = 0
        peripheral.writeValue(
            Data([1] + TransferService.littleEndian(UInt32(file.count))), for: control, type: .withResponse)
    }

    func peripheral(
        _ peripheral: CBMPeripheral, didWriteValueFor characteristic: CBMCharacteristic, error: (any Error)?
    ) {
        if let error {
            writeErrors.append(error)
            note("write failed \(error)")
            if bug != .ignoresWriteErrors {
                if case CBMATTError.insufficientAuthentication = error {
                    return fail("the watch needs pairing: \(error)")
                }
                if case CBMATTError.insufficientEncryption = error {
                    return fail("the watch needs pairing: \(error)")
                }
                retries += 1
                guard retries < 4 else { return retryConnection(peripheral) }
                // Sends the same request again.
                if phase == .starting { return startUpload(peripheral) }
                if phase == .committing { return commit(peripheral) }
                return
            }
        }
        switch phase {
        case .starting:
            phase = .streaming
            stream(peripheral)
        case .committing:
            phase = .awaitingDone
        default:
            note("unexpected write answer in \(phase)")
        }
    }

    func peripheralIsReady(toSendWriteWithoutResponse peripheral: CBMPeripheral) {
        guard phase == .streaming else { return }
        stream(peripheral)
    }

    private func stream(_ peripheral: CBMPeripheral) {
        guard let data, chunk > 0 else { return }
        while sent < file.count, bug == .ignoresFlowControl || peripheral.canSendWriteWithoutResponse {
            let end = min(sent + chunk, file.count)
            peripheral.writeValue(Data(file[sent..<end]), for: data, type: .withoutResponse)
            chunks.append(end - sent)
            sent = end
        }
        if sent == file.count { commit(peripheral) }
    }

    private func commit(_ peripheral: CBMPeripheral) {
        guard let control else { return }
        phase = .committing
        peripheral.writeValue(Data([2]), for: control, type: .withResponse)
    }

    func peripheral(
        _ peripheral: CBMPeripheral, didUpdateValueFor characteristic: CBMCharacteristic, error: (any Error)?
    ) {
        guard characteristic.uuid == ProbeWatchService.status, let value = characteristic.value, value.first == 0xD0,
            let count = TransferService.uint32(value, at: 1), let checksum = TransferService.uint32(value, at: 5)
        else { return note("odd status \(String(describing: characteristic.value))") }
        guard phase == .awaitingDone || phase == .committing else {
            return note("status \(count) while \(phase)")
        }
        guard Int(count) == file.count, checksum == TransferService.checksum(file) else {
            return fail("the watch got \(count) of \(file.count) bytes (checksum \(checksum))")
        }
        note("done")
        phase = .done
    }

    private func retryConnection(_ peripheral: CBMPeripheral) {
        // Starts over on a new link.
        manager.cancelPeripheralConnection(peripheral)
    }
}

/// The watch: a CBMPeripheralManager app that takes a file and notifies what it got.
final class ProbeWatchApp: NSObject, CBMPeripheralManagerDelegate, @unchecked Sendable {
    // @unchecked Sendable: state only touched on `queue`.
    let queue = DispatchQueue(label: "probe.watch")
    private(set) var manager: CBMPeripheralManager!
    private let encryptedControl: Bool
    private var status: CBMMutableCharacteristic?
    private var expected: Int?
    private var received: [UInt8] = []
    private var unsent: [Data] = []
    private var issues: [String] = []
    private var commits = 0

    init(encryptedControl: Bool = false) {
        self.encryptedControl = encryptedControl
        super.init()
        let made = CBMPeripheralManager(delegate: self, queue: queue)
        queue.sync { manager = made }
    }

    var receivedBytes: [UInt8] { queue.sync { received } }
    var receivedCount: Int { queue.sync { received.count } }
    var problems: [String] { queue.sync { issues } }
    var commitCount: Int { queue.sync { commits } }

    func peripheralManagerDidUpdateState(_ peripheral: CBMPeripheralManager) {
        guard peripheral.state == .poweredOn else { return }
        let control = CBMMutableCharacteristic(
            type: ProbeWatchService.control, properties: [.write], value: nil,
            permissions: encryptedControl ? [.writeEncryptionRequired] : [.writeable])
        let data = CBMMutableCharacteristic(
            type: ProbeWatchService.data, properties: [.writeWithoutResponse], value: nil, permissions: [.writeable])
        let status = CBMMutableCharacteristic(
            type: ProbeWatchService.status, properties: [.notify], value: nil, permissions: [.readable])
        let service = CBMMutableService(type: ProbeWatchService.service, primary: true)
        service.characteristics = [control, data, status]
        self.status = status
        peripheral.add(service)
    }

    func peripheralManager(_ peripheral: CBMPeripheralManager, didAdd service: CBMService, error: (any Error)?) {
        guard error == nil else { return issues.append("add failed \(String(describing: error))") }
        peripheral.startAdvertising([
            CBMAdvertisementDataLocalNameKey: "Watch", CBMAdvertisementDataServiceUUIDsKey: [ProbeWatchService.service],
        ])
    }

    func peripheralManager(_ peripheral: CBMPeripheralManager, didReceiveWrite requests: [CBMATTRequest]) {
        var answer: CBMATTRequest?
        for request in requests {
            let value = request.value ?? Data()
            switch request.characteristic.uuid {
            case ProbeWatchService.control:
                answer = answer ?? request
                if value.first == 1, let size = TransferService.uint32(value, at: 1) {
                    expected = Int(size)
                    received = []
                    unsent = []
                } else if value == Data([2]) {
                    commits += 1
                    send(
                        Data(
                            [0xD0] + TransferService.littleEndian(UInt32(received.count))
                                + TransferService.littleEndian(TransferService.checksum(received))))
                } else {
                    issues.append("bad control \(Array(value))")
                }
            case ProbeWatchService.data:
                guard let expected, received.count + value.count <= expected else {
                    issues.append("data beyond the file (\(received.count) + \(value.count))")
                    continue
                }
                received.append(contentsOf: value)
            default:
                issues.append("write to \(request.characteristic.uuid)")
            }
        }
        if let answer { peripheral.respond(to: answer, withResult: .success) }
    }

    func peripheralManagerIsReady(toUpdateSubscribers peripheral: CBMPeripheralManager) {
        let waiting = unsent
        unsent = []
        for value in waiting { send(value) }
    }

    private func send(_ value: Data) {
        guard let manager, let status else { return }
        if !unsent.isEmpty || !manager.updateValue(value, for: status, onSubscribedCentrals: nil) {
            unsent.append(value)
        }
    }
}

/// Runs the companion against the watch until it is done or failed (a stall throws).
@available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
func probeUpload(
    bug: ProbeBug?, bridge: MockBLEBridge, dropMidUpload: Bool = false, encryptedControl: Bool = false,
    centralConfiguration: MockCentralManager.Configuration? = nil
) async throws -> (phone: ProbeCompanionApp, watch: ProbeWatchApp) {
    let watch = ProbeWatchApp(encryptedControl: encryptedControl)
    let phone = ProbeCompanionApp(
        bug: bug, bridge: centralConfiguration == nil ? nil : bridge, configuration: centralConfiguration)
    if dropMidUpload {
        try await bridge.waitForApp { watch.receivedCount >= 1_000 || phone.isSettled }
        if let central = phone.manager.simulatedCentral?.identifier,
            let peripheral = watch.manager.simulatedPeripheral?.identifier
        {
            await bridge.simulateDisconnection(
                central: central, peripheral: peripheral, error: CoreBluetoothError(.connectionTimeout))
        }
    }
    try await bridge.waitForApp { phone.isSettled }
    return (phone, watch)
}

/// The companion app above, correct and with one planted bug at a time: the correct app passes
/// in fast mode, in realistic mode on many seeds with its link dropped mid-upload, through a
/// relaunch with state restoration and under exploration; each planted bug fails, in the mode
/// and the way asserted.
@Suite(.timeLimit(.minutes(10)))
struct ProbePlantedBugsTests {
    // MARK: The correct app

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(.mockBridge)
    func theCorrectAppUploadsInFastMode() async throws {
        let bridge = try #require(MockBLEBridge.current)
        let (phone, watch) = try await probeUpload(bug: nil, bridge: bridge)
        #expect(phone.currentPhase == .done, "\(phone.problems) \(phone.history)")
        #expect(watch.receivedBytes == ProbeWatchService.file)
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(.mockBridge(seedCount: 30))
    func theCorrectAppUploadsInRealisticModeThroughADroppedLink() async throws {
        let bridge = try #require(MockBLEBridge.current)
        let (phone, watch) = try await probeUpload(bug: nil, bridge: bridge, dropMidUpload: true)
        #expect(phone.currentPhase == .done, "\(phone.problems) \(phone.history)")
        #expect(watch.receivedBytes == ProbeWatchService.file)
        #expect(phone.drops == 1 && phone.connections == 2)
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test func theCorrectAppPassesExplorationWithEveryFaultKind() async throws {
        // The watch's control characteristic needs encryption, so pairing refusals reach the app
        // too; an app that tells its user the watch needs pairing has done its job.
        let report = await Exploration(seeds: 200).run { run in
            let (phone, watch) = try await probeUpload(bug: nil, bridge: run.bridge, encryptedControl: true)
            if phone.problems.contains(where: { $0.hasPrefix("the watch needs pairing") }) { return }
            try Exploration.require(phone.currentPhase == .done, "phone \(phone.currentPhase): \(phone.problems)")
            try Exploration.require(
                watch.receivedBytes == ProbeWatchService.file, "the watch got \(watch.receivedCount) bytes")
        }
        #expect(report.passed, "\(report)")
        #expect(report.coverage.neverFired(budget: ExplorationBudget()).isEmpty, "\(report.coverage)")
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(arguments: [false, true])
    func aRelaunchedAppFinishesTheUploadOnTheRestoredLink(realistic: Bool) async throws {
        let bridge = MockBLEBridge(configuration: realistic ? .realistic(seed: 11) : .fast)
        try await bridge.run {
            let watch = ProbeWatchApp()
            var first: ProbeCompanionApp? = ProbeCompanionApp(restoreIdentifier: "companion")
            try await bridge.waitForApp { first!.currentPhase == .streaming || first!.currentPhase == .committing }
            await first!.manager.simulatedCentral!.simulateAppTermination()
            first = nil
            let relaunched = ProbeCompanionApp(restoreIdentifier: "companion")
            try await bridge.waitForApp { relaunched.isSettled }
            #expect(relaunched.wasRestored)
            #expect(relaunched.connections == 0)  // the system kept the link
            #expect(relaunched.currentPhase == .done, "\(relaunched.problems) \(relaunched.history)")
            #expect(watch.receivedBytes == ProbeWatchService.file)
        }
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test func theSameSeedGivesTheSameLogWhileTheAppsAreKept() async throws {
        func once(_ seed: UInt64) async throws -> [String] {
            let bridge = MockBLEBridge(configuration: .realistic(seed: seed))
            let apps = try await bridge.run { try await probeUpload(bug: nil, bridge: bridge, dropMidUpload: true) }
            let log = await bridge.log.map { "\($0)" }
            // (Kept until the log is read: let go of after the run, their managers shut down
            // outside it, as their last callbacks end.)
            withExtendedLifetime(apps) {}
            return log
        }
        for seed: UInt64 in [1, 9] {
            #expect(try await once(seed) == once(seed), "seed \(seed)")
        }
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test func theSameSeedGivesTheSameLogWhenTheAppsAreLetGoOfInTheRun() async throws {
        // Let go of as the run's body returns, the apps' managers shut down once the last
        // callback that holds them has run on the app's queue; the run applies that before it
        // returns, so the log ends with the watch leaving the air on every run.
        func once(_ seed: UInt64) async throws -> [String] {
            let bridge = MockBLEBridge(configuration: .realistic(seed: seed))
            try await bridge.run { _ = try await probeUpload(bug: nil, bridge: bridge, dropMidUpload: true) }
            return await bridge.log.map { "\($0)" }
        }
        for seed: UInt64 in [1, 9, 23] {
            let first = try await once(seed)
            // Both managers shut down in the run: the log ends with them.
            #expect(first.suffix(5).filter { $0.contains("stateChanged shut down") }.count == 2, "seed \(seed)")
            for _ in 0..<4 { #expect(try await once(seed) == first, "seed \(seed)") }
        }
    }

    // MARK: Planted bugs

    /// Runs the app with `bug` on a bridge and returns the stall it ends in.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    static func stall(
        of bug: ProbeBug?, on bridge: MockBLEBridge, dropMidUpload: Bool = true, encryptedControl: Bool = false,
        centralConfiguration: MockCentralManager.Configuration? = nil,
        _ check: @escaping @Sendable (ProbeCompanionApp, ProbeWatchApp) -> Void = { _, _ in }
    ) async throws -> MockBLEBridge.Stall {
        try await #require(throws: MockBLEBridge.Stall.self) {
            try await bridge.run {
                let watch = ProbeWatchApp(encryptedControl: encryptedControl)
                let phone = ProbeCompanionApp(
                    bug: bug, bridge: centralConfiguration == nil ? nil : bridge, configuration: centralConfiguration)
                defer { check(phone, watch) }
                if dropMidUpload {
                    try await bridge.waitForApp { watch.receivedCount >= 1_000 }
                    await bridge.simulateDisconnection(
                        central: phone.manager.simulatedCentral!.identifier,
                        peripheral: watch.manager.simulatedPeripheral!.identifier,
                        error: CoreBluetoothError(.connectionTimeout))
                }
                try await bridge.waitForApp { phone.isSettled }
            }
        }
    }

    /// (a) Writing every chunk without looking at canSendWriteWithoutResponse: the full queue
    /// drops writes, the watch reports fewer bytes, and the bridge names each dropped write.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test func ignoringFlowControlLosesChunksInRealisticMode() async throws {
        let bridge = MockBLEBridge(configuration: .realistic(seed: 0))
        let (phone, watch) = try await bridge.run { try await probeUpload(bug: .ignoresFlowControl, bridge: bridge) }
        #expect(phone.currentPhase == .failed)
        #expect(watch.receivedCount < ProbeWatchService.file.count)
        let misuses = await bridge.misuses
        #expect(!misuses.isEmpty && misuses.allSatisfy { $0.kind == .writeWithoutResponseDropped })
        // Fast mode's queue never fills: the bug passes there.
        let fast = MockBLEBridge()
        let (fastPhone, _) = try await fast.run { try await probeUpload(bug: .ignoresFlowControl, bridge: fast) }
        #expect(fastPhone.currentPhase == .done)
    }

    /// (b) A fixed chunk of 512 bytes: cut at the iPhone's ATT_MTU of 185 in realistic mode.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test func aFixedChunkOf512IsCutInRealisticMode() async throws {
        let bridge = MockBLEBridge(configuration: .realistic(seed: 0))
        let (phone, watch) = try await bridge.run { try await probeUpload(bug: .fixedChunk512, bridge: bridge) }
        #expect(phone.problems == ["the watch got 1456 of 4000 bytes (checksum 3075988535)"])
        #expect(watch.receivedCount == 8 * 182)
        #expect(await bridge.misuses.map(\.kind) == Array(repeating: .valueTruncated, count: 8))
    }

    /// (b) A fixed chunk of 182 bytes fits the realistic preset's ATT_MTU (185 on every seed):
    /// only exploration, which draws the ATT_MTU, finds it, and shrinks it to ATT_MTU 184.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test func aFixedChunkOf182IsFoundByExplorationOnly() async throws {
        for seed: UInt64 in 0..<5 {
            let bridge = MockBLEBridge(configuration: .realistic(seed: seed))
            let (phone, _) = try await bridge.run { try await probeUpload(bug: .fixedChunk182, bridge: bridge) }
            #expect(phone.currentPhase == .done, "seed \(seed)")
        }
        let report = await Exploration(budget: .conditionsOnly, seeds: 50).run { run in
            let (phone, _) = try await probeUpload(bug: .fixedChunk182, bridge: run.bridge)
            try Exploration.require(phone.currentPhase == .done, "phone \(phone.currentPhase): \(phone.problems)")
        }
        let failure = try #require(report.failures.first)
        #expect(failure.minimal.plan.faults.isEmpty)
        #expect(failure.minimal.plan.conditions.mtu == 184)
        #expect("\(failure)".contains("the watch got 3979 of 4000 bytes"))
    }

    /// (c) Starting the upload before the notification state arrives: harmless while the
    /// subscription succeeds (as on an iPhone, whose ATT requests go one at a time), a stall
    /// once it fails; the correct app subscribes again.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test func startingBeforeTheSubscriptionIsConfirmedHangsWhenItFails() async throws {
        let failing = ErrorInjection(.subscribe, failure: .att(.unlikelyError), frequency: .once)
        let correct = MockBLEBridge(configuration: .realistic(seed: 2))
        await correct.inject(failing)
        let (phone, _) = try await correct.run { try await probeUpload(bug: nil, bridge: correct) }
        #expect(phone.currentPhase == .done)
        #expect(phone.history.contains { $0.hasPrefix("notifying false") })

        let lucky = MockBLEBridge(configuration: .realistic(seed: 2))
        let (luckyPhone, _) = try await lucky.run {
            try await probeUpload(bug: .startsBeforeSubscribed, bridge: lucky)
        }
        #expect(luckyPhone.currentPhase == .done)

        let bridge = MockBLEBridge(configuration: .realistic(seed: 2))
        await bridge.inject(failing)
        let stall = try await Self.stall(of: .startsBeforeSubscribed, on: bridge, dropMidUpload: false) {
            phone, watch in
            #expect(phone.currentPhase == .awaitingDone)
            #expect(watch.commitCount == 1)  // the watch answered; the app never heard it
        }
        #expect(stall.reason == .nothingScheduled)
        #expect(stall.seed == 2)
    }

    /// (d) Not subscribing again after a reconnect: the watch's "done" reaches nobody.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test func notSubscribingAgainAfterAReconnectHangs() async throws {
        let stall = try await Self.stall(of: .noResubscribe, on: MockBLEBridge(configuration: .realistic(seed: 0))) {
            phone, watch in
            #expect(phone.connections == 2)
            #expect(phone.currentPhase == .awaitingDone)
            #expect(watch.commitCount == 1)
        }
        #expect(stall.reason == .nothingScheduled)
        #expect(stall.description.contains("ProbePlantedBugsTests.swift"))
        // The report says the watch's update reached nobody.
        #expect(
            stall.hints.contains { $0.contains("with no central subscribed, so nobody received it") }, "\(stall.hints)")
        #expect(stall.description.contains("What may explain it:"))
    }

    /// (e) Characteristic objects kept across a reconnect: ignored as CoreBluetooth ignores
    /// them, and named as the calls that got no callback.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test func characteristicsKeptAcrossAReconnectAreRefused() async throws {
        let stall = try await Self.stall(
            of: .reusesStaleCharacteristics, on: MockBLEBridge(configuration: .realistic(seed: 0))
        ) { phone, _ in
            #expect(
                phone.manager.apiMisuses.contains { $0.contains("current attributes") }, "\(phone.manager.apiMisuses)")
        }
        #expect(stall.unansweredCalls.contains { $0.contains("ignored: writeValue: the attribute is not one of") })
    }

    /// (f) No reconnection after the link drops mid-upload: a stall with the seed, not a hang.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test func notReconnectingStallsWithTheSeed() async throws {
        let stall = try await Self.stall(of: .noReconnect, on: MockBLEBridge(configuration: .realistic(seed: 3))) {
            phone, _ in
            #expect(phone.drops == 1 && phone.connections == 1)
        }
        #expect(stall.reason == .nothingScheduled)
        #expect(stall.description.contains("Seed 3"))
        // The report says the link went down and the app did not connect again.
        #expect(
            stall.hints.contains {
                $0.contains("lost its link to peripheral") && $0.contains("connection timed out")
                    && $0.hasSuffix("has not connected to it again: nothing the app waits for over that link can come")
            }, "\(stall.hints)")
    }

    /// (g) Scanning before poweredOn: ignored, in fast mode as in realistic mode (a manager is
    /// `unknown` as it is created, as on an iPhone), and named in the stall.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(arguments: [false, true])
    func scanningBeforePoweredOnIsIgnored(realistic: Bool) async throws {
        let bridge = MockBLEBridge(configuration: realistic ? .realistic(seed: 1) : .fast)
        let stall = try await Self.stall(of: .scansBeforePoweredOn, on: bridge, dropMidUpload: false)
        #expect(
            stall.unansweredCalls.contains {
                $0.hasSuffix("ignored: scanForPeripherals: the manager is not powered on")
            }, "\(stall.unansweredCalls)")
    }

    /// (h) A watch that needs encryption and a user who declines pairing: the start write
    /// fails with ATT 0x05; the correct app says so, the buggy one streams into the void.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(arguments: [false, true])
    func aDeclinedPairingFailsTheStartWrite(realistic: Bool) async throws {
        var declining: MockCentralManager.Configuration = realistic ? .realistic(seed: 3) : .fast
        declining.pairing = .automatic(duration: .seconds(1), outcome: .rejected)
        let configuration = declining
        let correct = MockBLEBridge(configuration: realistic ? .realistic(seed: 3) : .fast)
        let (phone, watch) = try await correct.run {
            try await probeUpload(
                bug: nil, bridge: correct, encryptedControl: true, centralConfiguration: configuration)
        }
        #expect(phone.currentPhase == .failed)
        #expect(phone.errors.count == 1)
        #expect((phone.errors.first as? CBMATTError)?.code == .insufficientAuthentication)
        #expect(watch.receivedCount == 0)

        let bridge = MockBLEBridge(configuration: realistic ? .realistic(seed: 3) : .fast)
        let stall = try await Self.stall(
            of: .ignoresWriteErrors, on: bridge, dropMidUpload: false, encryptedControl: true,
            centralConfiguration: configuration
        ) { _, watch in
            #expect(watch.problems.first?.hasPrefix("data beyond the file") == true, "\(watch.problems)")
        }
        #expect(stall.reason == .nothingScheduled)
        // The report recalls the write the app ignored the error of.
        #expect(
            stall.hints.contains {
                $0.hasPrefix("an operation failed (did the app handle it?):") && $0.contains(" write ")
                    && $0.contains("ATT error 0x05 insufficientAuthentication")
            }, "\(stall.hints)")
    }
}
