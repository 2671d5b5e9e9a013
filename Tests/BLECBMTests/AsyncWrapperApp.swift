// swift-format-ignore-file: AlwaysUseLowerCamelCase
// (These names mirror CoreBluetooth's API.)

import BLECBM
import Foundation

@testable import BlinkyExample

// A smartwatch companion app as iOS teams write one today: a `@MainActor` class is the
// CoreBluetooth delegate (its manager on the main queue, `queue: nil`) and turns each operation
// into an `async` call, keeping one `CheckedContinuation` per pending operation (writes and
// subscriptions in dictionaries keyed by the characteristic's UUID); notifications come out as
// an `AsyncStream`; every wait is raced against a timer in a task group; writes without
// response are paced by `canSendWriteWithoutResponse` and `peripheralIsReady(toSendWrite…)`;
// the upload reconnects with back-off after the link drops and resumes where the watch got to.
// The watch is a plain `CBMPeripheralManager` app speaking `TransferService`'s protocol
// (BlinkyExample's `FileReceiverApp` speaks it too). Neither knows about the kit.

/// The bugs such wrappers are known for, planted one at a time.
enum AsyncWrapperBug: String, Sendable, CaseIterable {
    /// Writes every chunk at once, never looking at `canSendWriteWithoutResponse`.
    case ignoresCanSendWriteWithoutResponse
    /// Subscribes to progress on the first connection only.
    case forgetsToResubscribe
    /// Fails the pending operations when the link drops but leaves them in their dictionaries,
    /// so a later callback for the same characteristic resumes a continuation a second time.
    case keepsFailedContinuations
    /// Waits for `peripheralIsReady(toSendWriteWithoutResponse:)` before every chunk, without
    /// asking `canSendWriteWithoutResponse` first (the callback comes only after a refusal).
    case waitsForReadyUnconditionally
}

/// What the client throws.
enum AsyncClientError: Error, Equatable, Sendable {
    /// The named operation took longer than the client's timeout.
    case timedOut(String)
    /// The link dropped while the named operation waited.
    case disconnected(String)
    /// Bluetooth is not on.
    case unavailable
    /// The watch lacks the transfer service or one of its characteristics.
    case missingAttribute
    /// The peripheral answered the named operation with an error (its description).
    case failed(String, String)
}

/// An operation's outcome, registered before the operation starts (so a callback that comes at
/// once finds it) and awaited by a task of the race against the timer. A continuation that may be
/// resumed once: a second resume is noted instead of trapping (a `CheckedContinuation` traps,
/// which would end the test process).
final class OnceContinuation<T: Sendable>: @unchecked Sendable {
    // @unchecked Sendable: `result` and `waiter` are only read and written under `lock`.
    private let lock = NSLock()
    private var result: Result<T, any Error>?
    private var waiter: CheckedContinuation<T, any Error>?
    private let secondResume: @Sendable (String) -> Void
    private let name: String

    init(_ name: String, secondResume: @escaping @Sendable (String) -> Void) {
        self.name = name
        self.secondResume = secondResume
    }

    func resume(with outcome: Result<T, any Error>) {
        lock.lock()
        guard result == nil else {
            lock.unlock()
            return secondResume(name)
        }
        result = outcome
        let taken = waiter
        waiter = nil
        lock.unlock()
        taken?.resume(with: outcome)
    }

    /// The outcome, once there is one.
    var value: T {
        get async throws {
            try await withCheckedThrowingContinuation { continuation in
                lock.lock()
                if let result {
                    lock.unlock()
                    return continuation.resume(with: result)
                }
                waiter = continuation
                lock.unlock()
            }
        }
    }
}

/// The phone's Bluetooth layer: async calls over CoreBluetooth's delegates.
@MainActor
final class AsyncBLEClient: NSObject {
    let bug: AsyncWrapperBug?
    private(set) var manager: CBMCentralManager!
    /// How long each operation may take.
    let timeout: Duration
    /// The clock the timeouts and back-off sleep on (`ContinuousClock()` in the app).
    let clock: any Clock<Duration>

    private var stateWaiters: [OnceContinuation<Void>] = []
    private var scanWaiter: OnceContinuation<CBMPeripheral>?
    private var connectWaiter: OnceContinuation<Void>?
    private var servicesWaiter: OnceContinuation<Void>?
    private var characteristicsWaiter: OnceContinuation<Void>?
    private var writeWaiters: [CBMUUID: OnceContinuation<Void>] = [:]
    private var notifyWaiters: [CBMUUID: OnceContinuation<Void>] = [:]
    private var readyWaiter: OnceContinuation<Void>?
    private var streams: [CBMUUID: AsyncStream<Data>.Continuation] = [:]
    private(set) var peripheral: CBMPeripheral?
    /// What the app saw that it should never see (a second resume, a callback for nothing).
    private(set) var problems: [String] = []
    private(set) var events: [String] = []
    private(set) var readyCallbacks = 0

    init(timeout: Duration = .seconds(5), clock: any Clock<Duration> = ContinuousClock(), bug: AsyncWrapperBug? = nil) {
        self.timeout = timeout
        self.clock = clock
        self.bug = bug
        super.init()
        manager = CBMCentralManager(delegate: self, queue: nil)
    }

    private func note(_ problem: String) { problems.append(problem) }

    private func once<T: Sendable>(_ name: String) -> OnceContinuation<T> {
        OnceContinuation(name) { name in
            Task { @MainActor in self.note("\(name) resumed twice") }
        }
    }

    // MARK: The wrapper

    /// Starts an operation (`park` registers its outcome and makes the call, here on the main
    /// actor, before anything else runs) and races its outcome against the timeout in a task
    /// group; the calling task's cancellation fails it.
    private func perform<T: Sendable>(
        _ name: String, park: @MainActor (OnceContinuation<T>) -> Void,
        unpark: @escaping @MainActor @Sendable () -> OnceContinuation<T>?
    ) async throws -> T {
        let pending: OnceContinuation<T> = once(name)
        park(pending)
        let timeout = timeout
        let clock = clock
        return try await withTaskCancellationHandler {
            try await withThrowingTaskGroup(of: T.self) { group in
                group.addTask { try await pending.value }
                group.addTask {
                    try await clock.sleep(for: timeout)
                    throw AsyncClientError.timedOut(name)
                }
                defer { group.cancelAll() }
                do {
                    return try await group.next()!
                } catch {
                    // Timed out: the operation's outcome no longer has a waiter.
                    if case AsyncClientError.timedOut = error { unpark()?.resume(with: .failure(error)) }
                    throw error
                }
            }
        } onCancel: {
            pending.resume(with: .failure(CancellationError()))
            Task { @MainActor in _ = unpark() }
        }
    }

    func waitUntilPoweredOn() async throws {
        // (The state is read where the waiter is registered: inside a run, calling an async
        // function on the main actor may let queued main-queue callbacks run first.)
        try await perform(
            "power on",
            park: { (pending: OnceContinuation<Void>) in
                if self.manager.state == .poweredOn { return pending.resume(with: .success(())) }
                self.stateWaiters.append(pending)
            },
            unpark: { self.stateWaiters.isEmpty ? nil : self.stateWaiters.removeFirst() })
    }

    func scan(for service: CBMUUID) async throws -> CBMPeripheral {
        defer { manager.stopScan() }
        return try await perform(
            "scan",
            park: {
                self.scanWaiter = $0
                self.manager.scanForPeripherals(withServices: [service])
            },
            unpark: {
                defer { self.scanWaiter = nil }; return self.scanWaiter
            })
    }

    func connect(_ peripheral: CBMPeripheral) async throws {
        self.peripheral = peripheral
        peripheral.delegate = self
        do {
            try await perform(
                "connect",
                park: {
                    self.connectWaiter = $0
                    self.manager.connect(peripheral)
                },
                unpark: {
                    defer { self.connectWaiter = nil }; return self.connectWaiter
                })
        } catch {
            manager.cancelPeripheralConnection(peripheral)
            throw error
        }
    }

    func disconnect() {
        if let peripheral { manager.cancelPeripheralConnection(peripheral) }
    }

    /// Discovers the transfer service's characteristics.
    func discover() async throws -> [CBMUUID: CBMCharacteristic] {
        guard let peripheral else { throw AsyncClientError.missingAttribute }
        try await perform(
            "discover services",
            park: {
                self.servicesWaiter = $0
                peripheral.discoverServices([TransferService.service])
            },
            unpark: {
                defer { self.servicesWaiter = nil }; return self.servicesWaiter
            })
        guard let service = peripheral.services?.first(where: { $0.uuid == TransferService.service }) else {
            throw AsyncClientError.missingAttribute
        }
        try await perform(
            "discover characteristics",
            park: {
                self.characteristicsWaiter = $0
                peripheral.discoverCharacteristics(nil, for: service)
            },
            unpark: {
                defer { self.characteristicsWaiter = nil }; return self.characteristicsWaiter
            })
        return Dictionary((service.characteristics ?? []).map { ($0.uuid, $0) }) { first, _ in first }
    }

    func subscribe(to characteristic: CBMCharacteristic) async throws {
        guard let peripheral else { throw AsyncClientError.missingAttribute }
        let key = characteristic.uuid
        try await perform(
            "subscribe \(key)",
            park: {
                self.notifyWaiters[key] = $0
                peripheral.setNotifyValue(true, for: characteristic)
            },
            unpark: {
                self.bug == .keepsFailedContinuations
                    ? self.notifyWaiters[key] : self.notifyWaiters.removeValue(forKey: key)
            })
    }

    func write(_ value: Data, to characteristic: CBMCharacteristic) async throws {
        guard let peripheral else { throw AsyncClientError.missingAttribute }
        let key = characteristic.uuid
        try await perform(
            "write \(key)",
            park: {
                self.writeWaiters[key] = $0
                peripheral.writeValue(value, for: characteristic, type: .withResponse)
            },
            unpark: {
                self.bug == .keepsFailedContinuations
                    ? self.writeWaiters[key] : self.writeWaiters.removeValue(forKey: key)
            })
    }

    /// Writes without response, waiting for room in the link's queue first.
    func send(_ value: Data, to characteristic: CBMCharacteristic) async throws {
        guard let peripheral else { throw AsyncClientError.missingAttribute }
        if bug != .ignoresCanSendWriteWithoutResponse {
            try await perform(
                "ready to send",
                park: { (pending: OnceContinuation<Void>) in
                    // (Asked where the waiter is registered, so no callback can come between.)
                    // The link may have dropped between two chunks: the write would be ignored.
                    if peripheral.state != .connected {
                        return pending.resume(with: .failure(AsyncClientError.disconnected("send")))
                    }
                    if self.bug != .waitsForReadyUnconditionally, peripheral.canSendWriteWithoutResponse {
                        return pending.resume(with: .success(()))
                    }
                    self.readyWaiter = pending
                },
                unpark: {
                    defer { self.readyWaiter = nil }; return self.readyWaiter
                })
        }
        peripheral.writeValue(value, for: characteristic, type: .withoutResponse)
    }

    /// The values notified on `uuid` from now on (one stream per characteristic: a new one
    /// finishes the last).
    func notifications(of uuid: CBMUUID) -> AsyncStream<Data> {
        let (stream, continuation) = AsyncStream<Data>.makeStream(bufferingPolicy: .unbounded)
        streams[uuid]?.finish()
        streams[uuid] = continuation
        return stream
    }

    func sleep(for duration: Duration) async throws {
        try await clock.sleep(for: duration)
    }

    /// Fails every pending operation (the link dropped).
    private func failPending(_ error: AsyncClientError) {
        let keep = bug == .keepsFailedContinuations
        for waiter in writeWaiters.values { waiter.resume(with: .failure(error)) }
        for waiter in notifyWaiters.values { waiter.resume(with: .failure(error)) }
        if !keep {
            writeWaiters = [:]
            notifyWaiters = [:]
        }
        for waiter in [servicesWaiter, characteristicsWaiter, readyWaiter, connectWaiter].compactMap({ $0 }) {
            waiter.resume(with: .failure(error))
        }
        servicesWaiter = nil
        characteristicsWaiter = nil
        readyWaiter = nil
        connectWaiter = nil
        // The notifications of the link that is gone end with it.
        for stream in streams.values { stream.finish() }
        streams = [:]
    }
}

extension AsyncBLEClient: @preconcurrency CBMCentralManagerDelegate {
    func centralManagerDidUpdateState(_ central: CBMCentralManager) {
        events.append("state \(central.state.rawValue)")
        if central.state == .poweredOn {
            let waiters = stateWaiters
            stateWaiters = []
            for waiter in waiters { waiter.resume(with: .success(())) }
        } else if central.state != .unknown {
            failPending(.unavailable)
        }
    }

    func centralManager(
        _ central: CBMCentralManager, didDiscover peripheral: CBMPeripheral, advertisementData: [String: Any],
        rssi RSSI: NSNumber
    ) {
        scanWaiter?.resume(with: .success(peripheral))
        scanWaiter = nil
    }

    func centralManager(_ central: CBMCentralManager, didConnect peripheral: CBMPeripheral) {
        events.append("connected")
        connectWaiter?.resume(with: .success(()))
        connectWaiter = nil
    }

    func centralManager(_ central: CBMCentralManager, didFailToConnect peripheral: CBMPeripheral, error: (any Error)?) {
        events.append("failed to connect")
        connectWaiter?.resume(with: .failure(AsyncClientError.failed("connect", "\(String(describing: error))")))
        connectWaiter = nil
    }

    func centralManager(
        _ central: CBMCentralManager, didDisconnectPeripheral peripheral: CBMPeripheral, error: (any Error)?
    ) {
        events.append(error == nil ? "disconnected" : "link lost")
        failPending(.disconnected(error.map { "\($0)" } ?? "cancelled"))
    }
}

extension AsyncBLEClient: @preconcurrency CBMPeripheralDelegate {
    func peripheral(_ peripheral: CBMPeripheral, didDiscoverServices error: (any Error)?) {
        let waiter = servicesWaiter
        servicesWaiter = nil
        guard let waiter else { return note("services discovered for nothing") }
        waiter.resume(with: error.map { .failure(AsyncClientError.failed("discover", "\($0)")) } ?? .success(()))
    }

    func peripheral(_ peripheral: CBMPeripheral, didDiscoverCharacteristicsFor service: CBMService, error: (any Error)?)
    {
        let waiter = characteristicsWaiter
        characteristicsWaiter = nil
        guard let waiter else { return note("characteristics discovered for nothing") }
        waiter.resume(with: error.map { .failure(AsyncClientError.failed("discover", "\($0)")) } ?? .success(()))
    }

    func peripheral(
        _ peripheral: CBMPeripheral, didUpdateNotificationStateFor characteristic: CBMCharacteristic,
        error: (any Error)?
    ) {
        let waiter =
            bug == .keepsFailedContinuations
            ? notifyWaiters[characteristic.uuid] : notifyWaiters.removeValue(forKey: characteristic.uuid)
        guard let waiter else { return note("notification state for nothing") }
        waiter.resume(with: error.map { .failure(AsyncClientError.failed("subscribe", "\($0)")) } ?? .success(()))
    }

    func peripheral(
        _ peripheral: CBMPeripheral, didWriteValueFor characteristic: CBMCharacteristic, error: (any Error)?
    ) {
        let waiter =
            bug == .keepsFailedContinuations
            ? writeWaiters[characteristic.uuid] : writeWaiters.removeValue(forKey: characteristic.uuid)
        guard let waiter else { return note("write answered for nothing") }
        waiter.resume(with: error.map { .failure(AsyncClientError.failed("write", "\($0)")) } ?? .success(()))
    }

    func peripheral(
        _ peripheral: CBMPeripheral, didUpdateValueFor characteristic: CBMCharacteristic, error: (any Error)?
    ) {
        guard error == nil, let value = characteristic.value else { return }
        streams[characteristic.uuid]?.yield(value)
    }

    func peripheralIsReady(toSendWriteWithoutResponse peripheral: CBMPeripheral) {
        readyCallbacks += 1
        readyWaiter?.resume(with: .success(()))
        readyWaiter = nil
    }
}

/// The companion's upload: connect, discover, subscribe to progress, start (or resume) the
/// transfer, stream the file in chunks of the link's write length, and wait for the watch to
/// report every byte; after the link drops, reconnect with back-off and resume where the watch
/// says it got to.
@MainActor
final class AsyncUploader {
    let client: AsyncBLEClient
    let file: [UInt8]
    /// The most reconnections the upload tries.
    let attempts: Int
    private(set) var connections = 0
    private(set) var drops = 0
    private(set) var resumedAt: [Int] = []
    private(set) var chunkLength = 0
    private(set) var progress: [UInt32] = []
    private(set) var failures: [AsyncClientError] = []
    private(set) var sentBytes = 0
    private var watch: CBMPeripheral?
    private var started = false
    private var subscribedOnce = false

    init(client: AsyncBLEClient, file: [UInt8], attempts: Int = 5) {
        self.client = client
        self.file = file
        self.attempts = attempts
    }

    /// Uploads the file; returns the watch's checksum.
    func upload() async throws -> UInt32 {
        try await client.waitUntilPoweredOn()
        var attempt = 0
        while true {
            do {
                return try await uploadOnce()
            } catch let error as AsyncClientError {
                failures.append(error)
                guard case .disconnected = error else {
                    client.disconnect()
                    throw error
                }
                drops += 1
                attempt += 1
                guard attempt < attempts else { throw error }
                try await client.sleep(for: .milliseconds(100 << attempt))  // back-off
            }
        }
    }

    private func uploadOnce() async throws -> UInt32 {
        let watch: CBMPeripheral
        if let known = self.watch {
            watch = known
        } else {
            watch = try await client.scan(for: TransferService.service)
            self.watch = watch
        }
        try await client.connect(watch)
        connections += 1
        let characteristics = try await client.discover()
        guard let control = characteristics[TransferService.control],
            let data = characteristics[TransferService.data],
            let progressCharacteristic = characteristics[TransferService.progress]
        else { throw AsyncClientError.missingAttribute }
        let reports = client.notifications(of: TransferService.progress)
        if client.bug != .forgetsToResubscribe || !subscribedOnce {
            try await client.subscribe(to: progressCharacteristic)
            subscribedOnce = true
        }
        var iterator = reports.makeAsyncIterator()
        var offset = 0
        if started {
            try await client.write(Data([3]), to: control)
            // The watch answers with a [4, count, checksum] report.
            var answer: Int?
            while answer == nil, let report = await iterator.next() {
                guard report.first == 4, let count = TransferService.uint32(report, at: 1) else { continue }
                answer = Int(count)
            }
            guard let answer else { throw AsyncClientError.disconnected("progress ended") }
            offset = answer
            resumedAt.append(offset)
        } else {
            try await client.write(Data([1] + TransferService.littleEndian(UInt32(file.count))), to: control)
            started = true
        }
        chunkLength = watch.maximumWriteValueLength(for: .withoutResponse)
        while offset < file.count {
            let end = min(offset + chunkLength, file.count)
            try await client.send(Data(file[offset..<end]), to: data)
            offset = end
            sentBytes = offset
        }
        // Wait for the watch to hold every byte (the stream ends if the link drops meanwhile).
        while let report = await iterator.next() {
            guard report.first == 2 || report.first == 4, let count = TransferService.uint32(report, at: 1),
                let checksum = TransferService.uint32(report, at: 5)
            else { continue }
            progress.append(count)
            if Int(count) == file.count { return checksum }
        }
        throw AsyncClientError.disconnected("progress ended")
    }
}

/// The watch: a `CBMPeripheralManager` app on its own queue that receives a file over
/// `TransferService`, notifies progress every `progressEvery` bytes and at the end, and answers
/// a resume request with how many bytes it holds.
final class AsyncWatchApp: NSObject, CBMPeripheralManagerDelegate, @unchecked Sendable {
    // @unchecked Sendable: state only touched on `queue` (callbacks arrive there; readers sync).
    private let queue = DispatchQueue(label: "async.watch")
    private let progressEvery: Int
    private(set) var manager: CBMPeripheralManager!
    private var progress: CBMMutableCharacteristic?
    private var expected: Int?
    private var received: [UInt8] = []
    private var lastReported = 0
    private var unsent: [Data] = []
    private var issues: [String] = []

    init(progressEvery: Int = 4_096) {
        self.progressEvery = progressEvery
        super.init()
        let made = CBMPeripheralManager(delegate: self, queue: queue)
        queue.sync { manager = made }
    }

    var receivedBytes: [UInt8] { queue.sync { received } }
    var receivedCount: Int { queue.sync { received.count } }
    var problems: [String] { queue.sync { issues } }

    func peripheralManagerDidUpdateState(_ peripheral: CBMPeripheralManager) {
        guard peripheral.state == .poweredOn else { return }
        let control = CBMMutableCharacteristic(
            type: TransferService.control, properties: [.write], value: nil, permissions: [.writeable])
        let data = CBMMutableCharacteristic(
            type: TransferService.data, properties: [.writeWithoutResponse], value: nil, permissions: [.writeable])
        let progress = CBMMutableCharacteristic(
            type: TransferService.progress, properties: [.notify], value: nil, permissions: [.readable])
        let service = CBMMutableService(type: TransferService.service, primary: true)
        service.characteristics = [control, data, progress]
        self.progress = progress
        peripheral.add(service)
    }

    func peripheralManager(_ peripheral: CBMPeripheralManager, didAdd service: CBMService, error: (any Error)?) {
        guard error == nil else { return issues.append("add failed \(String(describing: error))") }
        peripheral.startAdvertising([
            CBMAdvertisementDataLocalNameKey: "Watch", CBMAdvertisementDataServiceUUIDsKey: [TransferService.service],
        ])
    }

    func peripheralManager(_ peripheral: CBMPeripheralManager, didReceiveWrite requests: [CBMATTRequest]) {
        var answer: CBMATTRequest?
        for request in requests {
            let value = request.value ?? Data()
            switch request.characteristic.uuid {
            case TransferService.control:
                answer = answer ?? request
                if value.first == 1, let size = TransferService.uint32(value, at: 1) {
                    expected = Int(size)
                    received = []
                    lastReported = 0
                } else if value == Data([3]) {
                    report(kind: 4)
                } else {
                    issues.append("bad control \(Array(value))")
                }
            case TransferService.data:
                guard let expected, received.count + value.count <= expected else {
                    issues.append("data beyond the file (\(received.count) + \(value.count))")
                    continue
                }
                received.append(contentsOf: value)
                if received.count == expected || received.count - lastReported >= progressEvery {
                    lastReported = received.count
                    report(kind: 2)
                }
            default:
                issues.append("write to \(request.characteristic.uuid)")
            }
        }
        if let answer { peripheral.respond(to: answer, withResult: .success) }
    }

    func peripheralManager(
        _ peripheral: CBMPeripheralManager, central: CBMCentral, didUnsubscribeFrom characteristic: CBMCharacteristic
    ) {
        unsent = []
    }

    func peripheralManagerIsReady(toUpdateSubscribers peripheral: CBMPeripheralManager) {
        let waiting = unsent
        unsent = []
        for value in waiting { send(value) }
    }

    private func report(kind: UInt8) {
        send(
            Data(
                [kind] + TransferService.littleEndian(UInt32(received.count))
                    + TransferService.littleEndian(TransferService.checksum(received))))
    }

    private func send(_ value: Data) {
        guard let manager, let progress else { return }
        if !unsent.isEmpty || !manager.updateValue(value, for: progress, onSubscribedCentrals: nil) {
            unsent.append(value)
        }
    }
}
