import BLECore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A central that records what the app does and sees through another central: wrap the
/// CoreBluetooth adapter on a device (or a mock in a test), hand the wrapper to the app, and
/// keep the ``SessionRecorder``'s recording.
///
/// The wrapper is transparent: every call goes to the wrapped central, in the caller's task
/// (so it is cancelled with it), and returns what that central returned or throws what it
/// threw; the recorder only watches. It records scans and advertisements, connections with
/// their ATT_MTU, discoveries, reads, writes of both types, subscriptions, notifications and
/// indications with their values, errors and disconnections.
///
/// Events that arrive on their own (advertisements, notifications, disconnections) are
/// recorded when the wrapper receives them from the wrapped central's event stream, and only
/// then passed on to the app's streams, so an app reacting to an event finds it recorded.
///
/// ```swift
/// let recorder = SessionRecorder(clock: bridge.clock)
/// let central = await RecordingCentralManager(MockCentralManager(bridge: bridge), recorder: recorder)
/// ```
///
/// The wrapper runs on the wrapped central's executor, so it answers the protocol's
/// synchronous questions (state, services, `canSendWriteWithoutResponse`, …) from it directly
/// and adds no hop to any call.
public actor RecordingCentralManager<Base: CentralManaging>: CentralManaging {
    /// The central every call goes to.
    public nonisolated let base: Base
    /// The log the wrapper writes to.
    public nonisolated let recorder: SessionRecorder
    private nonisolated let broadcaster = EventBroadcaster<CentralEvent>()
    private var pump: Task<Void, Never>?
    /// Over the kit's mock, a tap on its events, read synchronously (see ``catchUp()``).
    private nonisolated let tap: (broadcaster: EventBroadcaster<CentralEvent>, id: Int)?
    /// What each discovered characteristic supports, by peripheral and value handle (to tell
    /// an indication from a notification).
    private var properties: [UUID: [UInt16: CharacteristicProperties]] = [:]
    /// Peripherals whose disconnection the app asked for and the wrapper recorded.
    private var cancelled: Set<UUID> = []

    /// The wrapped central's executor: the wrapper shares it.
    public nonisolated var unownedExecutor: UnownedSerialExecutor { base.unownedExecutor }

    /// Wraps `base`, recording into `recorder`. The wrapper subscribes to `base`'s events
    /// before it returns, so it misses none.
    public init(_ base: Base, recorder: SessionRecorder) async {
        self.base = base
        self.recorder = recorder
        if let mock = base as? MockCentralManager {
            tap = (mock.broadcaster, mock.broadcaster.openTap())
        } else {
            tap = nil
        }
        let stream = await base.events()
        pump = HelperTask.start { [weak self] in
            for await event in stream {
                guard let self else { return }
                await self.received(event)
            }
            await self?.catchUp()
            self?.broadcaster.finish()
        }
    }

    deinit {
        pump?.cancel()
        if let tap { tap.broadcaster.closeTap(tap.id) }
    }

    /// An event of the wrapped central's stream: recorded and passed on — or, over a mock,
    /// a signal to catch up with the mock's events in their order.
    private func received(_ event: CentralEvent) {
        if tap == nil {
            deliver(event)
        } else {
            catchUp()
        }
    }

    /// Over a mock: records and passes on every event the mock has delivered so far, in its
    /// order. Every call does so before it starts and before it records its own outcome, so
    /// the recording keeps the simulation's order whenever the pump task runs.
    private func catchUp() {
        guard let tap else { return }
        for event in tap.broadcaster.drain(tap.id) { deliver(event) }
    }

    /// Records an event of the wrapped central, then passes it on to the app's streams.
    private func deliver(_ event: CentralEvent) {
        switch event {
        case .discovered(let discovery):
            recorder.record(
                .discovered(
                    peripheral: discovery.identifier, name: discovery.peripheral.name,
                    advertisement: discovery.advertisementData, rssi: discovery.rssi))
        case .disconnected(let peripheral, nil) where cancelled.contains(peripheral.identifier):
            cancelled.remove(peripheral.identifier)
        case .disconnected(let peripheral, let error):
            cancelled.remove(peripheral.identifier)
            recorder.record(.disconnected(peripheral: peripheral.identifier, error: error.map { RecordedError($0) }))
        case .valueUpdated(let characteristic, let value):
            let declared = properties[characteristic.peripheral]?[characteristic.handle] ?? characteristic.properties
            recorder.record(
                .valueUpdated(
                    peripheral: characteristic.peripheral, handle: characteristic.handle, value: .bytes(value),
                    isIndication: declared.contains(.indicate) && !declared.contains(.notify)))
        default:
            break
        }
        broadcaster.yield(event)
    }

    /// Runs an operation of the wrapped central, records its result or its error, and returns
    /// or throws what the operation did.
    private func recording<T>(
        _ operation: () async throws -> T, success: (T) -> RecordedEvent?, failure: (RecordedError) -> RecordedEvent?
    ) async throws -> T {
        catchUp()
        let result: T
        do {
            result = try await operation()
        } catch {
            catchUp()
            if let event = failure(RecordedError(error)) { recorder.record(event) }
            throw error
        }
        catchUp()
        if let event = success(result) { recorder.record(event) }
        return result
    }

    public var state: ManagerState { base.assumeIsolated { $0.state } }

    public func waitForPoweredOn() async -> ManagerState { await base.waitForPoweredOn() }

    public nonisolated func events() -> AsyncStream<CentralEvent> { broadcaster.stream() }

    public var isScanning: Bool { base.assumeIsolated { $0.isScanning } }

    public func scanForPeripherals(withServices serviceUUIDs: [BluetoothUUID]?, options: ScanOptions) async throws {
        catchUp()
        try await base.scanForPeripherals(withServices: serviceUUIDs, options: options)
        catchUp()
        recorder.record(.scanStarted(services: serviceUUIDs, allowDuplicates: options.allowDuplicates))
    }

    public func stopScan() async {
        catchUp()
        await base.stopScan()
        catchUp()
        recorder.record(.scanStopped)
    }

    public func connect(_ peripheral: UUID, options: ConnectOptions) async throws {
        try await recording {
            try await base.connect(peripheral, options: options)
        } success: {
            // The app's view of the ATT_MTU: at most 512 + 3 (`SessionRecording.lowerBoundMTU`).
            let length = try? base.assumeIsolated {
                try $0.maximumWriteValueLength(for: peripheral, type: .withoutResponse)
            }
            return .connected(peripheral: peripheral, mtu: length.map { $0 + 3 } ?? 23)
        } failure: { error in
            .connectionFailed(peripheral: peripheral, error: error)
        }
    }

    /// Cancels the connection; when it was up, records the disconnection when the call returns.
    public func cancelPeripheralConnection(_ peripheral: UUID) async throws {
        catchUp()
        let wasConnected = await base.isConnected(peripheral)
        // The wrapped central's own disconnection event for it is passed on unrecorded.
        if wasConnected { cancelled.insert(peripheral) }
        do {
            try await base.cancelPeripheralConnection(peripheral)
        } catch {
            cancelled.remove(peripheral)
            throw error
        }
        catchUp()
        if wasConnected { recorder.record(.disconnected(peripheral: peripheral, error: nil)) }
    }

    public func isConnected(_ peripheral: UUID) -> Bool { base.assumeIsolated { $0.isConnected(peripheral) } }

    public func retrievePeripherals(withIdentifiers identifiers: [UUID]) -> [RemotePeripheral] {
        base.assumeIsolated { $0.retrievePeripherals(withIdentifiers: identifiers) }
    }

    public func retrieveConnectedPeripherals(withServices serviceUUIDs: [BluetoothUUID]) -> [RemotePeripheral] {
        base.assumeIsolated { $0.retrieveConnectedPeripherals(withServices: serviceUUIDs) }
    }

    public func discoverServices(_ serviceUUIDs: [BluetoothUUID]?, for peripheral: UUID) async throws -> [RemoteService]
    {
        try await recording {
            try await base.discoverServices(serviceUUIDs, for: peripheral)
        } success: { services in
            .servicesDiscovered(peripheral: peripheral, services: services.map(RecordedService.init))
        } failure: { _ in
            nil
        }
    }

    public func discoverIncludedServices(_ serviceUUIDs: [BluetoothUUID]?, for service: RemoteService) async throws
        -> [RemoteService]
    {
        try await recording {
            try await base.discoverIncludedServices(serviceUUIDs, for: service)
        } success: { services in
            .servicesDiscovered(peripheral: service.peripheral, services: services.map(RecordedService.init))
        } failure: { _ in
            nil
        }
    }

    public func discoverCharacteristics(_ characteristicUUIDs: [BluetoothUUID]?, for service: RemoteService)
        async throws -> [RemoteCharacteristic]
    {
        let found = try await recording {
            try await base.discoverCharacteristics(characteristicUUIDs, for: service)
        } success: { characteristics in
            .characteristicsDiscovered(
                peripheral: service.peripheral, service: service.handle,
                characteristics: characteristics.map(RecordedCharacteristic.init))
        } failure: { _ in
            nil
        }
        for characteristic in found {
            properties[service.peripheral, default: [:]][characteristic.handle] = characteristic.properties
        }
        return found
    }

    public func discoverDescriptors(for characteristic: RemoteCharacteristic) async throws -> [RemoteDescriptor] {
        try await recording {
            try await base.discoverDescriptors(for: characteristic)
        } success: { descriptors in
            .descriptorsDiscovered(
                peripheral: characteristic.peripheral, characteristic: characteristic.handle,
                descriptors: descriptors.map(RecordedDescriptor.init))
        } failure: { _ in
            nil
        }
    }

    public func services(of peripheral: UUID) -> [RemoteService] {
        base.assumeIsolated { $0.services(of: peripheral) }
    }

    public func characteristics(of service: RemoteService) -> [RemoteCharacteristic] {
        base.assumeIsolated { $0.characteristics(of: service) }
    }

    public func readValue(for characteristic: RemoteCharacteristic) async throws -> Data {
        try await read(characteristic.peripheral, characteristic.handle) {
            try await base.readValue(for: characteristic)
        }
    }

    public func readValue(for descriptor: RemoteDescriptor) async throws -> Data {
        try await read(descriptor.peripheral, descriptor.handle) { try await base.readValue(for: descriptor) }
    }

    private func read(_ peripheral: UUID, _ handle: UInt16, _ operation: () async throws -> Data) async throws -> Data {
        try await recording(operation) { value in
            .read(peripheral: peripheral, handle: handle, result: .success(.bytes(value)))
        } failure: { error in
            .read(peripheral: peripheral, handle: handle, result: .failure(error))
        }
    }

    /// Over the kit's mock, a write without response is recorded as the stack took it: with the
    /// value as it crossed (cut to the link's length), or, when it never crossed (the queue was
    /// full, or the characteristic lacks the property), with the error the bridge logs for it,
    /// so a replay of the recording does not deliver it. Over another central the wrapper
    /// cannot tell, and records the value the app wrote.
    public func writeValue(_ value: Data, for characteristic: RemoteCharacteristic, type: WriteType) async throws {
        if type == .withoutResponse, let mock = base as? MockCentralManager {
            let peripheral = characteristic.peripheral
            let handle = characteristic.handle
            _ = try await recording {
                try writeWithoutResponse(value, for: characteristic, on: mock)
            } success: { outcome in
                outcome.recordedEvent(peripheral: peripheral, handle: handle, value: value)
            } failure: { error in
                .write(peripheral: peripheral, handle: handle, value: .bytes(value), withResponse: false, error: error)
            }
            return
        }
        try await write(value, characteristic.peripheral, characteristic.handle, withResponse: type == .withResponse) {
            try await base.writeValue(value, for: characteristic, type: type)
        }
    }

    /// A write without response made on the mock at once (the wrapper runs on its executor).
    private func writeWithoutResponse(
        _ value: Data, for characteristic: RemoteCharacteristic, on mock: MockCentralManager
    ) throws -> WriteWithoutResponseOutcome {
        try mock.assumeIsolated { try $0.writeWithoutResponse(value, for: characteristic) }
    }

    public func writeValue(_ value: Data, for descriptor: RemoteDescriptor) async throws {
        try await write(value, descriptor.peripheral, descriptor.handle, withResponse: true) {
            try await base.writeValue(value, for: descriptor)
        }
    }

    private func write(
        _ value: Data, _ peripheral: UUID, _ handle: UInt16, withResponse: Bool, _ operation: () async throws -> Void
    ) async throws {
        let event = { (error: RecordedError?) in
            RecordedEvent.write(
                peripheral: peripheral, handle: handle, value: .bytes(value), withResponse: withResponse, error: error)
        }
        try await recording(operation) {
            event(nil)
        } failure: {
            event($0)
        }
    }

    public func setNotifyValue(_ enabled: Bool, for characteristic: RemoteCharacteristic) async throws {
        let event = { (error: RecordedError?) in
            RecordedEvent.notificationState(
                peripheral: characteristic.peripheral, handle: characteristic.handle, enabled: enabled, error: error)
        }
        try await recording {
            try await base.setNotifyValue(enabled, for: characteristic)
        } success: {
            event(nil)
        } failure: {
            event($0)
        }
    }

    public func readRSSI(for peripheral: UUID) async throws -> Int { try await base.readRSSI(for: peripheral) }

    public func maximumWriteValueLength(for peripheral: UUID, type: WriteType) throws -> Int {
        try base.assumeIsolated { try $0.maximumWriteValueLength(for: peripheral, type: type) }
    }

    public func canSendWriteWithoutResponse(to peripheral: UUID) -> Bool {
        base.assumeIsolated { $0.canSendWriteWithoutResponse(to: peripheral) }
    }

    public func registerForConnectionEvents(options: ConnectionEventOptions?) {
        base.assumeIsolated { $0.registerForConnectionEvents(options: options) }
    }

    public func isANCSAuthorized(_ peripheral: UUID) -> Bool {
        base.assumeIsolated { $0.isANCSAuthorized(peripheral) }
    }

    public func openL2CAPChannel(_ psm: UInt16, on peripheral: UUID) async throws -> L2CAPChannel {
        try await base.openL2CAPChannel(psm, on: peripheral)
    }

    /// Shuts the wrapped central down; the app's streams finish when its stream does.
    public func shutDown() {
        base.assumeIsolated { $0.shutDown() }
    }
}
