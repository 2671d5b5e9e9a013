import BLECBM
import BLECore
import BLEMockKit
import Foundation
import Testing

/// A watch's firmware on its own queue that echoes each value written to it as a notification,
/// sending what `updateValue` refuses again from `peripheralManagerIsReady(toUpdateSubscribers:)`
/// (and, as many apps do, trying again at each write too, even while it waits for that callback).
private final class EchoFirmware: NSObject, CBMPeripheralManagerDelegate, @unchecked Sendable {
    // @unchecked Sendable: state only touched on `queue` (the manager's queue).
    static let service = CBMUUID(string: "7A200001-9C2B-4F1A-8D3E-6B0F1C2D3E4F")
    static let echo = CBMUUID(string: "7A200002-9C2B-4F1A-8D3E-6B0F1C2D3E4F")
    static let inbox = CBMUUID(string: "7A200003-9C2B-4F1A-8D3E-6B0F1C2D3E4F")

    let queue = DispatchQueue(label: "echo-firmware")
    let journal = LockedValue<[String]>([])
    private var manager: CBMPeripheralManager?
    private let echo = CBMMutableCharacteristic(type: echo, properties: [.notify], value: nil, permissions: [])
    private var pending: [Data] = []
    private var received = 0

    func start(on bridge: MockBLEBridge) {
        queue.async { self.manager = CBMPeripheralManager(bridge: bridge, delegate: self, queue: self.queue) }
    }

    var hasManager: Bool { queue.sync { manager != nil } }
    var isIdle: Bool { queue.sync { pending.isEmpty } }
    var receivedCount: Int { queue.sync { received } }

    private func note(_ line: String) { journal.value.append(line) }

    func peripheralManagerDidUpdateState(_ peripheral: CBMPeripheralManager) {
        guard peripheral.state == .poweredOn else { return }
        let service = CBMMutableService(type: Self.service, primary: true)
        service.characteristics = [
            echo,
            CBMMutableCharacteristic(
                type: Self.inbox, properties: [.writeWithoutResponse], value: nil, permissions: [.writeable]),
        ]
        peripheral.add(service)
    }

    func peripheralManager(_ peripheral: CBMPeripheralManager, didAdd service: CBMService, error: (any Error)?) {
        peripheral.startAdvertising([CBMAdvertisementDataServiceUUIDsKey: [Self.service]])
    }

    func peripheralManager(_ peripheral: CBMPeripheralManager, didReceiveWrite requests: [CBMATTRequest]) {
        for request in requests {
            received += 1
            pending.append(request.value ?? Data())
        }
        send(peripheral)
    }

    func peripheralManagerIsReady(toUpdateSubscribers peripheral: CBMPeripheralManager) {
        note("ready")
        send(peripheral)
    }

    private func send(_ peripheral: CBMPeripheralManager) {
        while let next = pending.first {
            guard peripheral.updateValue(next, for: echo, onSubscribedCentrals: nil) else {
                return note("refused \(next.map(String.init).joined(separator: ","))")
            }
            note("sent \(next.map(String.init).joined(separator: ","))")
            pending.removeFirst()
        }
    }
}

/// A phone app on its own queue that connects to the first peripheral advertising `service`
/// (one at a time: it stops scanning) and discovers the characteristics of the first service it
/// finds (discovering those in `discovering`), then hands over to its subclass's
/// `peripheral(_:didDiscoverCharacteristicsFor:error:)`. The peripheral callbacks its subclasses
/// answer are here, doing nothing: a subclass's own method is the delegate's only where it
/// overrides one of the class that conforms.
private class ScanningPhone: NSObject, CBMCentralManagerDelegate, CBMPeripheralDelegate, @unchecked Sendable {
    // @unchecked Sendable: state only touched on `queue` (the manager's queue).
    let queue: DispatchQueue
    private let service: CBMUUID
    private let discovering: [CBMUUID]?
    private var manager: CBMCentralManager?
    private var peripheral: CBMPeripheral?

    init(service: CBMUUID, discovering: [CBMUUID]?, label: String) {
        self.service = service
        self.discovering = discovering
        queue = DispatchQueue(label: label)
    }

    func start(on bridge: MockBLEBridge) {
        queue.async { self.manager = CBMCentralManager(bridge: bridge, delegate: self, queue: self.queue) }
    }

    var hasManager: Bool { queue.sync { manager != nil } }

    func centralManagerDidUpdateState(_ central: CBMCentralManager) {
        if central.state == .poweredOn { central.scanForPeripherals(withServices: [service]) }
    }

    func centralManager(
        _ central: CBMCentralManager, didDiscover peripheral: CBMPeripheral, advertisementData: [String: Any],
        rssi: NSNumber
    ) {
        guard self.peripheral == nil else { return }
        central.stopScan()
        self.peripheral = peripheral
        peripheral.delegate = self
        central.connect(peripheral)
    }

    func centralManager(_ central: CBMCentralManager, didConnect peripheral: CBMPeripheral) {
        peripheral.discoverServices(discovering)
    }

    func peripheral(_ peripheral: CBMPeripheral, didDiscoverServices error: (any Error)?) {
        guard let service = peripheral.services?.first else { return }
        peripheral.discoverCharacteristics(nil, for: service)
    }

    func peripheral(
        _ peripheral: CBMPeripheral, didDiscoverCharacteristicsFor service: CBMService, error: (any Error)?
    ) {}

    func peripheral(
        _ peripheral: CBMPeripheral, didUpdateNotificationStateFor characteristic: CBMCharacteristic,
        error: (any Error)?
    ) {}

    func peripheralIsReady(toSendWriteWithoutResponse peripheral: CBMPeripheral) {}

    func peripheral(
        _ peripheral: CBMPeripheral, didWriteValueFor characteristic: CBMCharacteristic, error: (any Error)?
    ) {}

    func peripheral(
        _ peripheral: CBMPeripheral, didUpdateValueFor characteristic: CBMCharacteristic, error: (any Error)?
    ) {}
}

/// A phone app on its own queue: subscribes to the firmware's echo and writes `count` values
/// without response (its `tag`, then a number) as fast as `canSendWriteWithoutResponse` lets it.
private final class WritingPhone: ScanningPhone, @unchecked Sendable {
    // @unchecked Sendable: state only touched on `queue` (the manager's queue).
    let count: Int
    let tag: UInt8
    private var inbox: CBMCharacteristic?
    private var written = 0
    private var echoes = 0

    init(count: Int, tag: UInt8 = 0x41, label: String = "writing-phone") {
        self.count = count
        self.tag = tag
        super.init(service: EchoFirmware.service, discovering: [EchoFirmware.service], label: label)
    }

    var echoesHeard: Int { queue.sync { echoes } }

    override func peripheral(
        _ peripheral: CBMPeripheral, didDiscoverCharacteristicsFor service: CBMService, error: (any Error)?
    ) {
        let characteristics = service.characteristics ?? []
        inbox = characteristics.first { $0.uuid == EchoFirmware.inbox }
        if let echo = characteristics.first(where: { $0.uuid == EchoFirmware.echo }) {
            peripheral.setNotifyValue(true, for: echo)
        }
    }

    override func peripheral(
        _ peripheral: CBMPeripheral, didUpdateNotificationStateFor characteristic: CBMCharacteristic,
        error: (any Error)?
    ) {
        write(peripheral)
    }

    override func peripheralIsReady(toSendWriteWithoutResponse peripheral: CBMPeripheral) { write(peripheral) }

    private func write(_ peripheral: CBMPeripheral) {
        guard let inbox else { return }
        while written < count, peripheral.canSendWriteWithoutResponse {
            peripheral.writeValue(Data([tag, UInt8(written)]), for: inbox, type: .withoutResponse)
            written += 1
        }
    }

    override func peripheral(
        _ peripheral: CBMPeripheral, didUpdateValueFor characteristic: CBMCharacteristic, error: (any Error)?
    ) {
        echoes += 1
    }
}

/// `peripheralManagerIsReady(toUpdateSubscribers:)` through the CoreBluetooth-shaped API: one
/// callback each time the transmit queue has room again after refusing the app, decided in the
/// simulation's order (not by which of the bridge's and the app's threads got to the front end's
/// bookkeeping first), so the same seed gives the same log.
@Suite(.timeLimit(.minutes(10)))
struct UpdateQueueReadyTests {
    /// The firmware's journal and the bridge's log of one echo session: the phone writes 12
    /// values, the firmware's transmit queue holds 2.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    private static func echoSession(seed: UInt64) async throws -> (journal: [String], log: [String], echoes: Int) {
        var configuration = MockBLEBridge.Configuration.realistic(seed: seed)
        configuration.limits.updateQueueCapacity = 2
        let bridge = MockBLEBridge(configuration: configuration)
        let firmware = EchoFirmware()
        let phone = WritingPhone(count: 12)
        try await bridge.run(timeLimit: .seconds(120)) {
            firmware.start(on: bridge)
            phone.start(on: bridge)
            try await bridge.waitForApp(pausingSimulation: true) { firmware.hasManager && phone.hasManager }
            try await bridge.waitForApp { firmware.receivedCount == 12 && firmware.isIdle && phone.echoesHeard == 12 }
        }
        let log = await bridge.log.map(\.description)
        #expect(await bridge.finish() == .clean)
        return (firmware.journal.value, log, phone.echoesHeard)
    }

    /// The firmware used to hear a ready callback for each refusal it made while the queue was
    /// draining at the same instant (its `updateValue` decided from the front end's view of the
    /// queue, which the bridge had already emptied), each followed by a refusal of the same
    /// value; how many depended on thread timing, so 25 of 39 reruns of one seed gave another
    /// log.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(arguments: [1, 7] as [UInt64])
    func aFirmwareEchoingWritesHearsOneReadyPerRefusalAndTheSameSeedGivesTheSameLog(seed: UInt64) async throws {
        let first = try await Self.echoSession(seed: seed)
        #expect(first.echoes == 12)
        // The queue of 2 refused the firmware: each refusal is answered by one ready, and the
        // first update after a ready is sent (CoreBluetooth calls back once there is room).
        let readies = first.journal.indices.filter { first.journal[$0] == "ready" }
        #expect(!readies.isEmpty)
        for index in readies {
            #expect(index > 0 && first.journal[index - 1].hasPrefix("refused"), "\(first.journal)")
            if index + 1 < first.journal.count {
                #expect(first.journal[index + 1].hasPrefix("sent"), "\(first.journal)")
            }
        }
        let readiesLogged = first.log.filter { $0.contains(" readyToUpdateSubscribers ") }.count
        #expect(readiesLogged == readies.count, "\(first.log.joined(separator: "\n"))")
        for _ in 0..<15 {
            let again = try await Self.echoSession(seed: seed)
            #expect(firstDifference(again.log, first.log) == nil)
            #expect(firstDifference(again.journal, first.journal) == nil)
        }
    }
}

/// The first line at which two runs differ, with its number (`nil` when they are the same).
private func firstDifference(_ lines: [String], _ reference: [String]) -> String? {
    guard lines != reference else { return nil }
    let common = min(lines.count, reference.count)
    let index = (0..<common).first { lines[$0] != reference[$0] } ?? common
    let line = index < lines.count ? lines[index] : "(end)"
    let expected = index < reference.count ? reference[index] : "(end)"
    return "line \(index): \(line), first run: \(expected)"
}

/// A watch app on its own queue (labelled with its name) that advertises its name once powered on.
private final class AdvertisingWatch: NSObject, CBMPeripheralManagerDelegate, @unchecked Sendable {
    // @unchecked Sendable: state only touched on `queue` (the manager's queue).
    let name: String
    let queue: DispatchQueue
    private var manager: CBMPeripheralManager?

    init(name: String) {
        self.name = name
        queue = DispatchQueue(label: name)
    }

    func start(on bridge: MockBLEBridge) {
        queue.async { self.manager = CBMPeripheralManager(bridge: bridge, delegate: self, queue: self.queue) }
    }

    var hasManager: Bool { queue.sync { manager != nil } }

    func peripheralManagerDidUpdateState(_ peripheral: CBMPeripheralManager) {
        if peripheral.state == .poweredOn { peripheral.startAdvertising([CBMAdvertisementDataLocalNameKey: name]) }
    }
}

/// Managers that apps make on their own queues, in `queue.async`, at the same moment: which one
/// gets there first depends on thread timing, and the identifiers they take must not.
@Suite(.timeLimit(.minutes(10)))
struct AppQueueIdentifierTests {
    /// The central each phone's writes came from, by the phone's tag, and the bridge's log, of a
    /// session in which two phones on their own queues (`phone-a`, `phone-b`) and the firmware
    /// make their managers at once.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    private static func twoPhones(seed: UInt64) async throws -> (writers: [UInt8: String], log: [String]) {
        let bridge = MockBLEBridge(seed: seed)
        let firmware = EchoFirmware()
        let phones = [
            WritingPhone(count: 4, tag: 0x41, label: "phone-a"), WritingPhone(count: 4, tag: 0x42, label: "phone-b"),
        ]
        try await bridge.run(timeLimit: .seconds(120)) {
            firmware.start(on: bridge)
            for phone in phones { phone.start(on: bridge) }
            try await bridge.waitForApp(pausingSimulation: true) {
                firmware.hasManager && phones.allSatisfy(\.hasManager)
            }
            try await bridge.waitForApp {
                firmware.receivedCount == 8 && firmware.isIdle && phones.allSatisfy { $0.echoesHeard == 8 }
            }
        }
        let log = await bridge.log
        var writers: [UInt8: String] = [:]
        for entry in log where entry.kind == .write {
            if let tag = entry.value?.first, let central = entry.central { writers[tag] = central.uuidString }
        }
        #expect(await bridge.finish() == .clean)
        return (writers, log.map(\.description))
    }

    /// The first to get there used to take the role's first identifier: 7 of 39 reruns of one seed
    /// gave the phones each other's identifiers (and another log), which a restore identifier was
    /// the only way around. A manager made on its own queue now draws its identifier from that
    /// queue's label.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test func managersMadeOnTheirOwnQueuesAtOnceTakeTheSameIdentifiersOnEveryRun() async throws {
        let first = try await Self.twoPhones(seed: 3)
        #expect(first.writers.count == 2 && Set(first.writers.values).count == 2)
        for _ in 0..<30 {
            let again = try await Self.twoPhones(seed: 3)
            #expect(again.writers == first.writers)
            #expect(firstDifference(again.log, first.log) == nil)
        }
    }

    /// The identifier each watch took, by name, as a central scanning for them hears it.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    private static func twoWatches(seed: UInt64) async throws -> [String: UUID] {
        let bridge = MockBLEBridge(seed: seed)
        let watches = [AdvertisingWatch(name: "watch-a"), AdvertisingWatch(name: "watch-b")]
        return try await bridge.run(timeLimit: .seconds(60)) {
            for watch in watches { watch.start(on: bridge) }
            try await bridge.waitForApp(pausingSimulation: true) { watches.allSatisfy(\.hasManager) }
            let central = MockCentralManager(bridge: bridge)
            let events = central.events()
            try await central.scanForPeripherals(withServices: nil)
            var heard: [String: UUID] = [:]
            for await event in events {
                guard case .discovered(let discovery) = event else { continue }
                heard[discovery.advertisementData.localName ?? ""] = discovery.peripheral.identifier
                if heard.count == 2 { break }
            }
            return heard
        }
    }

    /// The identifier a peripheral manager takes is what centrals know it by: two watches coming up
    /// at once on their own queues are known by the same identifiers on every run.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test func peripheralManagersMadeOnTheirOwnQueuesAtOnceAreKnownByTheSameIdentifiersOnEveryRun() async throws {
        let first = try await Self.twoWatches(seed: 5)
        #expect(first.keys.sorted() == ["watch-a", "watch-b"] && Set(first.values).count == 2)
        for _ in 0..<100 { #expect(try await Self.twoWatches(seed: 5) == first) }
    }
}

/// A phone app on its own queue that scans for the echo firmware and, as it hears of it, stops
/// scanning and connects; then, if given a signal, tells the test it has called; and, if given a
/// gate, waits on it (for the test, bounded: telling it so, if asked) and notes whether the test
/// opened it. Asked to (`endsSession`), it ends its session once connected.
private final class ConnectingPhone: NSObject, CBMCentralManagerDelegate, @unchecked Sendable {
    // @unchecked Sendable: `manager` and `peripheral` are only touched on `queue`, `endsSession` is set
    // before `start(on:)`; `opened` and `done` are locked.
    let queue: DispatchQueue
    private let gate: DispatchSemaphore?
    private let signal: AsyncStream<Void>.Continuation?
    /// Whether the test opened the gate while the callback waited on it (`nil`: not yet).
    let opened = LockedValue<Bool?>(nil)
    private var manager: CBMCentralManager?
    private var peripheral: CBMPeripheral?

    /// Told as the callback begins to wait on the gate.
    private let blocked: AsyncStream<Void>.Continuation?
    /// Whether the app ends its session once connected: it notes it is done, then disconnects, in
    /// the same callback.
    var endsSession = false
    /// Whether it has ended its session (see `endsSession`).
    let done = LockedValue(false)

    init(
        label: String, gate: DispatchSemaphore? = nil, signal: AsyncStream<Void>.Continuation? = nil,
        blocked: AsyncStream<Void>.Continuation? = nil
    ) {
        queue = DispatchQueue(label: label)
        self.gate = gate
        self.signal = signal
        self.blocked = blocked
    }

    func start(on bridge: MockBLEBridge) {
        queue.async { self.manager = CBMCentralManager(bridge: bridge, delegate: self, queue: self.queue) }
    }

    var hasManager: Bool { queue.sync { manager != nil } }
    var identifier: UUID? { queue.sync { manager?.simulatedCentral?.identifier } }

    func centralManagerDidUpdateState(_ central: CBMCentralManager) {
        if central.state == .poweredOn { central.scanForPeripherals(withServices: [EchoFirmware.service]) }
    }

    func centralManager(_ central: CBMCentralManager, didConnect peripheral: CBMPeripheral) {
        guard endsSession else { return }
        done.value = true
        central.cancelPeripheralConnection(peripheral)
    }

    func centralManager(
        _ central: CBMCentralManager, didDiscover peripheral: CBMPeripheral, advertisementData: [String: Any],
        rssi: NSNumber
    ) {
        guard self.peripheral == nil else { return }
        central.stopScan()
        self.peripheral = peripheral
        central.connect(peripheral)
        signal?.yield()
        if let gate {
            blocked?.yield()
            opened.value = gate.wait(timeout: .now() + .seconds(30)) == .success
        }
    }
}

/// A phone app on its own queue that connects to the first peripheral advertising `service`, then
/// writes its `tag` and a round number with response and reads the value back, `rounds` times.
private final class ReadWritePhone: ScanningPhone, @unchecked Sendable {
    // @unchecked Sendable: state only touched on `queue` (the manager's queue); `finished` is locked.
    static let service = CBMUUID(string: "180F")
    private let rounds: Int
    private let tag: UInt8
    private var characteristic: CBMCharacteristic?
    private var done = 0
    let finished = LockedValue(false)

    init(rounds: Int, tag: UInt8, label: String) {
        self.rounds = rounds
        self.tag = tag
        super.init(service: Self.service, discovering: nil, label: label)
    }

    override func peripheral(
        _ peripheral: CBMPeripheral, didDiscoverCharacteristicsFor service: CBMService, error: (any Error)?
    ) {
        characteristic = service.characteristics?.first
        next(peripheral)
    }

    private func next(_ peripheral: CBMPeripheral) {
        guard let characteristic else { return }
        guard done < rounds else { return finished.value = true }
        peripheral.writeValue(Data([tag, UInt8(done)]), for: characteristic, type: .withResponse)
    }

    override func peripheral(
        _ peripheral: CBMPeripheral, didWriteValueFor characteristic: CBMCharacteristic, error: (any Error)?
    ) {
        peripheral.readValue(for: characteristic)
    }

    override func peripheral(
        _ peripheral: CBMPeripheral, didUpdateValueFor characteristic: CBMCharacteristic, error: (any Error)?
    ) {
        done += 1
        next(peripheral)
    }
}

/// A central of the async API that scans for the echo firmware; as it hears of it, it stops
/// scanning and connects. Returns its identifier.
@available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
private func connectAsTheTest(
    _ central: MockCentralManager, then: @Sendable () async -> Void = {}
) async throws {
    let events = central.events()
    try await central.scanForPeripherals(withServices: [EchoFirmware.service.bluetoothUUID])
    for await event in events {
        guard case .discovered(let discovery) = event else { continue }
        await central.stopScan()
        await then()
        try await central.connect(discovery.peripheral.identifier, options: ConnectOptions())
        return
    }
}

/// The test's own calls (the body's, through the async API or a hook) made at an instant apps
/// are called back: they come after the calls those callbacks make, whichever thread gets where
/// first, so the same seed gives the same log.
@Suite(.timeLimit(.minutes(10)))
struct TestCallOrderTests {
    /// The log of a session in which two phones on their own queues and a central of the test's
    /// own hear of the echo firmware at one instant, and each stops scanning and connects; the
    /// phones' identifiers.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    private static func session(seed: UInt64, realistic: Bool) async throws -> (log: [String], phones: [String]) {
        let bridge = MockBLEBridge(configuration: realistic ? .realistic(seed: seed) : .init(seed: seed))
        let firmware = EchoFirmware()
        let phones = [ConnectingPhone(label: "phone-a"), ConnectingPhone(label: "phone-b")]
        let central = MockCentralManager(bridge: bridge)
        try await bridge.run(timeLimit: .seconds(60)) {
            firmware.start(on: bridge)
            for phone in phones { phone.start(on: bridge) }
            try await bridge.waitForApp(pausingSimulation: true) {
                firmware.hasManager && phones.allSatisfy(\.hasManager)
            }
            try await connectAsTheTest(central)
        }
        let log = await bridge.log
        let phoneIdentifiers = Set(log.compactMap(\.central)).subtracting([central.identifier])
        return (log.map(\.description), phoneIdentifiers.map(\.uuidString).sorted())
    }

    /// The test's central used to stop scanning and connect before the phones, between them or
    /// after them, as far as their callbacks had got when the body woke: in realistic mode 16 to
    /// 26 of 30 reruns of one seed gave another log (four processes).
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(arguments: [false, true])
    func aCentralOfTheTestsOwnThatHearsWhatAppsHearAtOneInstantActsAfterThemOnEveryRun(realistic: Bool)
        async throws
    {
        let first = try await Self.session(seed: 3, realistic: realistic)
        #expect(first.phones.count == 2)
        // The phones' reaction to the discovery, then the test's.
        let connects = first.log.indices.filter { first.log[$0].contains(" connecting ") }
        #expect(connects.count == 3)
        if let last = connects.last {
            let phonesConnected = first.phones.allSatisfy { phone in
                connects.dropLast().contains { first.log[$0].contains("central=\(phone.prefix(8))") }
            }
            #expect(phonesConnected && !first.phones.contains { first.log[last].contains($0.prefix(8)) })
        }
        for _ in 0..<30 {
            #expect(firstDifference(try await Self.session(seed: 3, realistic: realistic).log, first.log) == nil)
        }
    }

    /// A callback that waits for the test (on a semaphore the body signals after its call) holds
    /// the body's call back only for the run's stall patience: then it goes on, with the calls
    /// the app made before it waited first.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test func aCallbackWaitingForTheTestHoldsTheTestsCallOnlyForTheStallPatience() async throws {
        let bridge = MockBLEBridge(configuration: .realistic(seed: 3))
        let firmware = EchoFirmware()
        let gate = DispatchSemaphore(value: 0)
        let phone = ConnectingPhone(label: "phone-a", gate: gate)
        let central = MockCentralManager(bridge: bridge)
        try await bridge.run(timeLimit: .seconds(60), stallPatience: .milliseconds(300)) {
            firmware.start(on: bridge)
            phone.start(on: bridge)
            try await bridge.waitForApp(pausingSimulation: true) { firmware.hasManager && phone.hasManager }
            try await connectAsTheTest(central) { gate.signal() }
            try await bridge.waitForApp { phone.opened.value != nil }
        }
        #expect(phone.opened.value == true)
        let stops = await bridge.log.filter { $0.kind == .scanStopped }.map(\.central)
        #expect(stops.count == 2 && stops.last == central.identifier)
    }

    /// An app that calls, then tells the test it has (a continuation, a stream), while its callback
    /// is still running: the test's next call comes after the app's calls, as on a device.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test func anAppsCallsMadeBeforeItTellsTheTestComeBeforeTheTestsNextCall() async throws {
        let bridge = MockBLEBridge(configuration: .realistic(seed: 3))
        let firmware = EchoFirmware()
        let (signals, signal) = AsyncStream<Void>.makeStream()
        let gate = DispatchSemaphore(value: 0)
        let phone = ConnectingPhone(label: "phone-a", gate: gate, signal: signal)
        let central = MockCentralManager(bridge: bridge)
        try await bridge.run(timeLimit: .seconds(60), stallPatience: .milliseconds(300)) {
            firmware.start(on: bridge)
            phone.start(on: bridge)
            try await bridge.waitForApp(pausingSimulation: true) { firmware.hasManager && phone.hasManager }
            for await _ in signals { break }
            try await central.scanForPeripherals(withServices: nil)
            gate.signal()
            try await bridge.waitForApp { phone.opened.value != nil }
        }
        let log = await bridge.log
        let connecting = log.firstIndex { $0.kind == .connecting }
        let scan = log.lastIndex { $0.kind == .scanStarted && $0.central == central.identifier }
        #expect(connecting != nil && scan != nil && connecting! < scan!)
    }

    /// What the test does after `waitForApp` returns comes after the calls the app made before its
    /// condition held (in the callback that made it hold): the log read then has them, and the app
    /// let go of as the body returns shuts down after them. The app's last call (a disconnection)
    /// used to be held past the wait, then refused as its manager shut down first ("called on a
    /// manager that was shut down"), and the log read just after the wait lacked it.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(arguments: [false, true])
    func whatTheTestDoesAfterAWaitComesAfterTheCallsTheAppMadeBeforeItsConditionHeld(realistic: Bool)
        async throws
    {
        let bridge = MockBLEBridge(configuration: realistic ? .realistic(seed: 7) : .init(seed: 7))
        let firmware = EchoFirmware()
        let (central, logRightAfter) = try await bridge.run(timeLimit: .seconds(60)) {
            () -> (UUID?, [BridgeLogEntry]) in
            let phone = ConnectingPhone(label: "session-ending-phone")
            phone.endsSession = true
            firmware.start(on: bridge)
            phone.start(on: bridge)
            try await bridge.waitForApp(pausingSimulation: true) { firmware.hasManager && phone.hasManager }
            try await bridge.waitForApp { phone.done.value }
            return (phone.identifier, await bridge.log)
        }
        let phone = try #require(central)
        #expect(logRightAfter.last?.kind == .disconnected && logRightAfter.last?.central == phone)
        let log = await bridge.log
        #expect(!log.contains { $0.kind == .refused }, "\(log.filter { $0.kind == .refused })")
        #expect(log.filter { $0.kind == .disconnected && $0.central == phone }.count == 1)
    }

    /// An injection the test installs as it hears what the apps hear comes after their reaction,
    /// as the other hooks do: the phones' connections, asked for in their discovery callbacks, go
    /// through; the test's own, asked for after it, fails. (It used to take its place among the
    /// phones' calls as far as their threads had got, failing some of their connections.)
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(arguments: [false, true])
    func anInjectionTheTestInstallsAsAppsAreCalledBackComesAfterWhatTheyCall(realistic: Bool) async throws {
        for _ in 0..<10 {
            let bridge = MockBLEBridge(configuration: realistic ? .realistic(seed: 3) : .init(seed: 3))
            let firmware = EchoFirmware()
            let phones = [ConnectingPhone(label: "phone-a"), ConnectingPhone(label: "phone-b")]
            let central = MockCentralManager(bridge: bridge)
            let failure = try await bridge.run(timeLimit: .seconds(60)) { () -> CoreBluetoothError? in
                firmware.start(on: bridge)
                for phone in phones { phone.start(on: bridge) }
                try await bridge.waitForApp(pausingSimulation: true) {
                    firmware.hasManager && phones.allSatisfy(\.hasManager)
                }
                let events = central.events()
                try await central.scanForPeripherals(withServices: [EchoFirmware.service.bluetoothUUID])
                for await event in events {
                    guard case .discovered(let discovery) = event else { continue }
                    await bridge.inject(
                        ErrorInjection(.connect, failure: .coreBluetooth(.connectionFailed), frequency: .always))
                    await central.stopScan()
                    do {
                        try await central.connect(discovery.peripheral.identifier, options: ConnectOptions())
                    } catch let error as CoreBluetoothError {
                        return error
                    }
                    return nil
                }
                return nil
            }
            #expect(failure?.code == .connectionFailed)
            let log = await bridge.log
            let connected = Set(log.filter { $0.kind == .connected }.compactMap(\.central))
            #expect(connected.count == 2 && !connected.contains(central.identifier))
        }
    }

    /// Later calls wait only for callbacks beyond the one a call gave up on: a callback waiting
    /// for the test costs the stall patience once, not once per call (each of the 7 calls after
    /// the first waited the whole 2 s again).
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test func aCallbackWaitingForTheTestHoldsOnlyTheFirstOfTheTestsCalls() async throws {
        let bridge = MockBLEBridge(configuration: .realistic(seed: 3))
        let firmware = EchoFirmware()
        let gate = DispatchSemaphore(value: 0)
        let phone = ConnectingPhone(label: "phone-a", gate: gate)
        let central = MockCentralManager(bridge: bridge)
        let laterCalls = LockedValue<Duration?>(nil)
        try await bridge.run(timeLimit: .seconds(60), stallPatience: .seconds(2)) {
            firmware.start(on: bridge)
            phone.start(on: bridge)
            try await bridge.waitForApp(pausingSimulation: true) { firmware.hasManager && phone.hasManager }
            // The first call (stopping the scan) waits the patience for the blocked callback.
            try await connectAsTheTest(central) {
                let clock = ContinuousClock()
                let start = clock.now
                for _ in 0..<7 { _ = await central.isConnected(UUID()) }
                laterCalls.value = start.duration(to: clock.now)
                gate.signal()
            }
            try await bridge.waitForApp { phone.opened.value != nil }
        }
        #expect(phone.opened.value == true)
        // (Waiting, the 7 calls would take 14 s at the least: half of that leaves room for a
        // loaded machine.)
        #expect(try #require(laterCalls.value) < .seconds(7))
    }

    /// A test cancelled while its call waits for a callback that waits for the test: the call
    /// goes on at once (it waited the whole 60 s patience before), and the run ends cancelled.
    /// (The bound leaves room for a loaded machine: waiting, it would take 60 s at the least.)
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test func aCallWaitingForCallbacksGoesOnWhenTheTestIsCancelled() async throws {
        let bridge = MockBLEBridge(configuration: .realistic(seed: 3))
        let firmware = EchoFirmware()
        let gate = DispatchSemaphore(value: 0)
        let (blockedSignals, blocked) = AsyncStream<Void>.makeStream()
        let phone = ConnectingPhone(label: "phone-a", gate: gate, blocked: blocked)
        let central = MockCentralManager(bridge: bridge)
        let run = Task {
            try await bridge.run(timeLimit: .seconds(120), stallPatience: .seconds(60)) {
                firmware.start(on: bridge)
                phone.start(on: bridge)
                try await bridge.waitForApp(pausingSimulation: true) { firmware.hasManager && phone.hasManager }
                try await connectAsTheTest(central) { gate.signal() }
            }
        }
        for await _ in blockedSignals { break }
        let clock = ContinuousClock()
        let cancelled = clock.now
        run.cancel()
        let result = await run.result
        #expect(throws: CancellationError.self) { try result.get() }
        #expect(phone.opened.value == true)
        #expect(cancelled.duration(to: clock.now) < .seconds(45))
    }

    /// The log of a session in which a device of the async API, served by a `bridge.task` started
    /// before the apps make their managers, answers two phones' writes and reads.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    private static func deviceSession(seed: UInt64, realistic: Bool) async throws -> [String] {
        let bridge = MockBLEBridge(configuration: realistic ? .realistic(seed: seed) : .init(seed: seed))
        let device = MockPeripheralManager(
            configuration: .init(name: "Device", requestHandling: .manual), bridge: bridge)
        let events = device.events()
        let phones = [
            ReadWritePhone(rounds: 12, tag: 0x41, label: "phone-a"),
            ReadWritePhone(rounds: 12, tag: 0x42, label: "phone-b"),
        ]
        try await bridge.run(timeLimit: .seconds(120)) {
            _ = try await device.add(
                GATTService(
                    uuid: "180F",
                    characteristics: [
                        GATTCharacteristic(
                            uuid: "2A19", properties: [.read, .write], permissions: [.readable, .writeable])
                    ]))
            try await device.startAdvertising(AdvertisementData(localName: "Device", serviceUUIDs: ["180F"]))
            let server = bridge.task {
                var last: [UUID: UInt8] = [:]
                for await event in events {
                    switch event {
                    case .readRequest(let request):
                        try await device.respond(
                            to: request, withResult: .success, value: Data([last[request.central.identifier] ?? 0]))
                    case .writeRequests(let requests):
                        for request in requests { last[request.central.identifier] = request.value?.last ?? 0 }
                        try await device.respond(to: requests[0], withResult: .success, value: nil)
                    default: break
                    }
                }
            }
            for phone in phones { phone.start(on: bridge) }
            try await bridge.waitForApp(pausingSimulation: true) { phones.allSatisfy(\.hasManager) }
            try await bridge.waitForApp { phones.allSatisfy { $0.finished.value } }
            server.cancel()
        }
        return await bridge.log.map(\.description)
    }

    /// A device's task answering requests while a pausing `waitForApp` applies the app's calls as
    /// it ends (in fast mode the whole exchange happens there) answered before or after the calls
    /// the callbacks of its last answer made, as the threads went: 3 to 30 of 30 reruns of one seed
    /// gave another log.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(arguments: [false, true])
    func aDeviceTaskAnsweringAppsAsAPausingWaitEndsGivesTheSameLogOnEveryRun(realistic: Bool) async throws {
        let first = try await Self.deviceSession(seed: 11, realistic: realistic)
        #expect(first.filter { $0.contains(" response ") }.count == 48)
        for _ in 0..<30 {
            #expect(firstDifference(try await Self.deviceSession(seed: 11, realistic: realistic), first) == nil)
        }
    }
}
