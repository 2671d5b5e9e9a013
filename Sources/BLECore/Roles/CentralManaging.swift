#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The central role: what an app does with `CBCentralManager` and `CBPeripheral`, as one
/// async actor interface.
///
/// Write production code against this protocol. Tests inject a mock (BLEMockKit's
/// `MockCentralManager`); apps inject a CoreBluetooth-backed implementation.
///
/// Errors: operations throw ``ATTError`` when the peripheral answers with an ATT error,
/// ``CoreBluetoothError`` for link and stack failures (not connected, disconnected, timeouts,
/// stale handles), and ``APIMisuseError`` for calls the stack refuses (not powered on,
/// ambiguous lookups).
public protocol CentralManaging: Actor {
    /// The manager's current state.
    var state: ManagerState { get }

    /// Waits until the state is settled and returns it: ``ManagerState/poweredOn`` when the
    /// radio is usable, otherwise the state that prevents it (e.g. ``ManagerState/unauthorized``).
    func waitForPoweredOn() async -> ManagerState

    /// A new stream of this manager's events. Every call returns its own stream, and every
    /// stream receives every event from the moment it was created; streams finish when the
    /// manager shuts down.
    func events() -> AsyncStream<CentralEvent>

    /// Whether the manager is scanning.
    var isScanning: Bool { get }

    /// Starts scanning: matching advertisements arrive as ``CentralEvent/discovered(_:)``.
    ///
    /// - Parameters:
    ///   - serviceUUIDs: report only peripherals advertising one of these services (in the
    ///     advertisement or its overflow area); `nil` reports all.
    ///   - options: duplicate reporting and solicited services.
    func scanForPeripherals(withServices serviceUUIDs: [BluetoothUUID]?, options: ScanOptions) async throws

    /// Stops scanning.
    func stopScan() async

    /// Connects to a discovered or retrieved peripheral and returns when connected.
    func connect(_ peripheral: UUID, options: ConnectOptions) async throws

    /// Disconnects, or cancels a pending connection. Pending operations on the link fail
    /// with ``CoreBluetoothError/Code/operationCancelled``.
    func cancelPeripheralConnection(_ peripheral: UUID) async throws

    /// Whether the peripheral is connected to this manager.
    func isConnected(_ peripheral: UUID) -> Bool

    /// The peripherals among `identifiers` that this manager knows (discovered or connected
    /// before); unknown identifiers are left out.
    func retrievePeripherals(withIdentifiers identifiers: [UUID]) -> [RemotePeripheral]

    /// The peripherals connected to the system that have any of `serviceUUIDs`.
    func retrieveConnectedPeripherals(withServices serviceUUIDs: [BluetoothUUID]) -> [RemotePeripheral]

    /// Discovers the peripheral's primary services, all or those with the given UUIDs.
    func discoverServices(_ serviceUUIDs: [BluetoothUUID]?, for peripheral: UUID) async throws -> [RemoteService]

    /// Discovers the services a service includes.
    func discoverIncludedServices(_ serviceUUIDs: [BluetoothUUID]?, for service: RemoteService) async throws
        -> [RemoteService]

    /// Discovers a service's characteristics, all or those with the given UUIDs.
    func discoverCharacteristics(_ characteristicUUIDs: [BluetoothUUID]?, for service: RemoteService) async throws
        -> [RemoteCharacteristic]

    /// Discovers a characteristic's descriptors.
    func discoverDescriptors(for characteristic: RemoteCharacteristic) async throws -> [RemoteDescriptor]

    /// Discovers every service, characteristic and descriptor of a connected peripheral, in
    /// that order (each service's characteristics, then each characteristic's descriptors),
    /// and returns the characteristics. A default implementation makes those calls one by one.
    @discardableResult
    func discoverAll(for peripheral: UUID) async throws -> [RemoteCharacteristic]

    /// The services discovered so far on a peripheral (as `CBPeripheral.services`).
    func services(of peripheral: UUID) -> [RemoteService]

    /// The characteristics discovered so far in a service (as `CBService.characteristics`).
    func characteristics(of service: RemoteService) -> [RemoteCharacteristic]

    /// Reads a characteristic's value (a long value is read in parts by the stack).
    func readValue(for characteristic: RemoteCharacteristic) async throws -> Data

    /// Reads a descriptor's value.
    func readValue(for descriptor: RemoteDescriptor) async throws -> Data

    /// Writes a characteristic's value. With response, returns once the peripheral confirmed;
    /// without response, returns once the write is queued. As CoreBluetooth does, a write
    /// without response is quietly cut to the link's maximum length, dropped while the queue
    /// is full (check `canSendWriteWithoutResponse(to:)`), and not sent at all to a
    /// characteristic without the `writeWithoutResponse` property; it never throws an ATT
    /// error (a Write Command has no response).
    func writeValue(_ value: Data, for characteristic: RemoteCharacteristic, type: WriteType) async throws

    /// Writes a descriptor's value.
    func writeValue(_ value: Data, for descriptor: RemoteDescriptor) async throws

    /// Enables or disables notifications or indications for a characteristic.
    func setNotifyValue(_ enabled: Bool, for characteristic: RemoteCharacteristic) async throws

    /// Reads the signal strength of a connected peripheral, in dBm.
    func readRSSI(for peripheral: UUID) async throws -> Int

    /// The longest value one write of this type can carry on the peripheral's link.
    func maximumWriteValueLength(for peripheral: UUID, type: WriteType) throws -> Int

    /// Whether a write without response can be queued now; after `false`, a
    /// ``CentralEvent/readyToSendWriteWithoutResponse(_:)`` follows.
    func canSendWriteWithoutResponse(to peripheral: UUID) -> Bool

    /// Asks for ``CentralEvent/connectionEvent(_:_:)`` events about the system's
    /// connections to peripherals matching `options` (`nil` for all), replacing any earlier
    /// registration (as `registerForConnectionEvents(options:)`).
    func registerForConnectionEvents(options: ConnectionEventOptions?)

    /// Whether the user allowed the peripheral to receive ANCS notifications (as
    /// `CBPeripheral.ancsAuthorized`).
    func isANCSAuthorized(_ peripheral: UUID) -> Bool

    /// Opens an L2CAP connection-oriented channel to a PSM the connected peripheral published
    /// (as `openL2CAPChannel(_:)`). A channel the peripheral closes as it opens is still
    /// returned, as CoreBluetooth reports it open: its ``L2CAPChannel/incoming`` then ends.
    ///
    /// - Throws: `CoreBluetoothError` with `invalidParameters` for a PSM outside the LE dynamic
    ///   range 0x0080–0x00FF (refused before anything goes on the air, as CoreBluetooth does),
    ///   ``L2CAPError`` when the peripheral refuses (no channel at the PSM, encryption
    ///   missing), `CoreBluetoothError` when the link is down.
    func openL2CAPChannel(_ psm: UInt16, on peripheral: UUID) async throws -> L2CAPChannel

    /// Takes the manager out of service: it stops scanning, drops its connections, fails its
    /// waiting calls with `operationCancelled` and finishes its event streams. Calls after it
    /// fail with ``APIMisuseError/managerShutDown(operation:)``.
    func shutDown()
}

extension CentralManaging {
    /// Scans with default options.
    public func scanForPeripherals(withServices serviceUUIDs: [BluetoothUUID]?) async throws {
        try await scanForPeripherals(withServices: serviceUUIDs, options: ScanOptions())
    }

    /// Connects without a timeout.
    public func connect(_ peripheral: UUID) async throws {
        try await connect(peripheral, options: ConnectOptions())
    }

    /// Connects, giving up after `timeout`.
    public func connect(_ peripheral: UUID, timeout: Duration) async throws {
        try await connect(peripheral, options: ConnectOptions(timeout: timeout))
    }

    /// The discovered characteristic with a UUID, for the common case where the UUID is
    /// unique on the peripheral (or within `service`).
    ///
    /// - Throws: ``APIMisuseError/characteristicNotFound(_:service:peripheral:)`` when none
    ///   was discovered, ``APIMisuseError/ambiguousCharacteristic(_:peripheral:handles:)``
    ///   when several match.
    public func characteristic(_ uuid: BluetoothUUID, service: BluetoothUUID? = nil, of peripheral: UUID) throws
        -> RemoteCharacteristic
    {
        let matches = services(of: peripheral)
            .filter { service == nil || $0.uuid == service }
            .flatMap { characteristics(of: $0) }
            .filter { $0.uuid == uuid }
        guard let first = matches.first else {
            throw APIMisuseError.characteristicNotFound(uuid, service: service, peripheral: peripheral)
        }
        guard matches.count == 1 else {
            throw APIMisuseError.ambiguousCharacteristic(uuid, peripheral: peripheral, handles: matches.map(\.handle))
        }
        return first
    }

    /// Discovers every service, characteristic and descriptor of a connected peripheral,
    /// and returns the characteristics: ``discoverServices(_:for:)``, then
    /// ``discoverCharacteristics(_:for:)`` for each service and ``discoverDescriptors(for:)``
    /// for each characteristic.
    @discardableResult
    public func discoverAll(for peripheral: UUID) async throws -> [RemoteCharacteristic] {
        var all: [RemoteCharacteristic] = []
        for service in try await discoverServices(nil, for: peripheral) {
            for characteristic in try await discoverCharacteristics(nil, for: service) {
                _ = try await discoverDescriptors(for: characteristic)
                all.append(characteristic)
            }
        }
        return all
    }
}
