import BLECore
import BLEMockKit
import Foundation

/// A central manager that forwards to a `MockCentralManager` but whose transmit queue for
/// writes without response fills up every `burst` writes: `canSendWriteWithoutResponse`
/// then answers `false`, and `readyToSendWriteWithoutResponse` follows from a separate task.
/// Writes made while the queue is full are counted as violations (a device drops them).
actor ThrottledCentral: CentralManaging {
    let inner: MockCentralManager
    let burst: Int
    private var writesSinceReady = 0
    private var isFull = false
    private(set) var fullReports = 0
    private(set) var violations = 0
    private let ownEvents: AsyncStream<CentralEvent>
    private let ownSink: AsyncStream<CentralEvent>.Continuation
    private var forwarding: Task<Void, Never>?

    /// Runs on the bridge's executor, like the mock it wraps, so it can call the mock
    /// synchronously where the protocol's requirements are synchronous.
    nonisolated var unownedExecutor: UnownedSerialExecutor { inner.bridge.unownedExecutor }

    init(_ inner: MockCentralManager, burst: Int) {
        self.inner = inner
        self.burst = burst
        (ownEvents, ownSink) = AsyncStream.makeStream()
    }

    /// One stream only (enough for one channel): the inner manager's events plus the
    /// simulated ready events.
    func events() -> AsyncStream<CentralEvent> {
        let sink = ownSink
        let innerEvents = inner.events()
        forwarding = Task {
            for await event in innerEvents { sink.yield(event) }
        }
        return ownEvents
    }

    func stop() {
        forwarding?.cancel()
        ownSink.finish()
    }

    func canSendWriteWithoutResponse(to peripheral: UUID) -> Bool {
        guard !isFull else { return false }
        guard writesSinceReady >= burst else {
            return inner.assumeIsolated { $0.canSendWriteWithoutResponse(to: peripheral) }
        }
        isFull = true
        fullReports += 1
        Task { self.drain(peripheral) }
        return false
    }

    private func drain(_ peripheral: UUID) {
        isFull = false
        writesSinceReady = 0
        ownSink.yield(.readyToSendWriteWithoutResponse(RemotePeripheral(identifier: peripheral, name: nil)))
    }

    func writeValue(_ value: Data, for characteristic: RemoteCharacteristic, type: WriteType) async throws {
        if type == .withoutResponse {
            if isFull { violations += 1 }
            writesSinceReady += 1
        }
        try await inner.writeValue(value, for: characteristic, type: type)
    }

    // Everything else is forwarded unchanged.

    var state: ManagerState { inner.assumeIsolated { $0.state } }
    func waitForPoweredOn() async -> ManagerState { await inner.waitForPoweredOn() }
    var isScanning: Bool { inner.assumeIsolated { $0.isScanning } }
    func scanForPeripherals(withServices serviceUUIDs: [BluetoothUUID]?, options: ScanOptions) async throws {
        try await inner.scanForPeripherals(withServices: serviceUUIDs, options: options)
    }
    func stopScan() async { await inner.stopScan() }
    func connect(_ peripheral: UUID, options: ConnectOptions) async throws {
        try await inner.connect(peripheral, options: options)
    }
    func cancelPeripheralConnection(_ peripheral: UUID) async throws {
        try await inner.cancelPeripheralConnection(peripheral)
    }
    func isConnected(_ peripheral: UUID) -> Bool { inner.assumeIsolated { $0.isConnected(peripheral) } }
    func registerForConnectionEvents(options: ConnectionEventOptions?) {
        inner.assumeIsolated { $0.registerForConnectionEvents(options: options) }
    }
    func isANCSAuthorized(_ peripheral: UUID) -> Bool { inner.assumeIsolated { $0.isANCSAuthorized(peripheral) } }
    func shutDown() { inner.assumeIsolated { $0.shutDown() } }
    func openL2CAPChannel(_ psm: UInt16, on peripheral: UUID) async throws -> L2CAPChannel {
        try await inner.openL2CAPChannel(psm, on: peripheral)
    }
    func retrievePeripherals(withIdentifiers identifiers: [UUID]) -> [RemotePeripheral] {
        inner.assumeIsolated { $0.retrievePeripherals(withIdentifiers: identifiers) }
    }
    func retrieveConnectedPeripherals(withServices serviceUUIDs: [BluetoothUUID]) -> [RemotePeripheral] {
        inner.assumeIsolated { $0.retrieveConnectedPeripherals(withServices: serviceUUIDs) }
    }
    func discoverServices(_ serviceUUIDs: [BluetoothUUID]?, for peripheral: UUID) async throws -> [RemoteService] {
        try await inner.discoverServices(serviceUUIDs, for: peripheral)
    }
    func discoverIncludedServices(_ serviceUUIDs: [BluetoothUUID]?, for service: RemoteService) async throws
        -> [RemoteService]
    {
        try await inner.discoverIncludedServices(serviceUUIDs, for: service)
    }
    func discoverCharacteristics(_ characteristicUUIDs: [BluetoothUUID]?, for service: RemoteService) async throws
        -> [RemoteCharacteristic]
    {
        try await inner.discoverCharacteristics(characteristicUUIDs, for: service)
    }
    func discoverDescriptors(for characteristic: RemoteCharacteristic) async throws -> [RemoteDescriptor] {
        try await inner.discoverDescriptors(for: characteristic)
    }
    func services(of peripheral: UUID) -> [RemoteService] { inner.assumeIsolated { $0.services(of: peripheral) } }
    func characteristics(of service: RemoteService) -> [RemoteCharacteristic] {
        inner.assumeIsolated { $0.characteristics(of: service) }
    }
    func readValue(for characteristic: RemoteCharacteristic) async throws -> Data {
        try await inner.readValue(for: characteristic)
    }
    func readValue(for descriptor: RemoteDescriptor) async throws -> Data { try await inner.readValue(for: descriptor) }
    func writeValue(_ value: Data, for descriptor: RemoteDescriptor) async throws {
        try await inner.writeValue(value, for: descriptor)
    }
    func setNotifyValue(_ enabled: Bool, for characteristic: RemoteCharacteristic) async throws {
        try await inner.setNotifyValue(enabled, for: characteristic)
    }
    func readRSSI(for peripheral: UUID) async throws -> Int { try await inner.readRSSI(for: peripheral) }
    func maximumWriteValueLength(for peripheral: UUID, type: WriteType) throws -> Int {
        try inner.assumeIsolated { try $0.maximumWriteValueLength(for: peripheral, type: type) }
    }
}
