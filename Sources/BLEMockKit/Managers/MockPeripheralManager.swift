import BLECore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A mock peripheral manager: the peripheral role (``PeripheralManaging``) on a simulated
/// radio — the app's own GATT server in tests, or a simulated device for a central to talk to.
///
/// ```swift
/// let bridge = MockBLEBridge()
/// let peripheral = MockPeripheralManager(bridge: bridge)
/// let battery = try await peripheral.add(
///     GATTService(uuid: "180F", characteristics: [
///         GATTCharacteristic(uuid: "2A19", properties: [.read, .notify], permissions: [.readable])
///     ]))
/// try await peripheral.startAdvertising(AdvertisementData(localName: "Battery", serviceUUIDs: ["180F"]))
/// ```
public actor MockPeripheralManager: PeripheralManaging {
    /// How the mock peripheral behaves.
    public struct Configuration: Sendable {
        /// The state the manager starts in. Defaults to ``ManagerState/poweredOn``.
        public var initialState: ManagerState
        /// The device's GAP name, which centrals see as the peripheral's name (else the
        /// advertised local name). Defaults to `nil`.
        public var name: String?
        /// The ATT_MTU this peripheral accepts on every link. Defaults to 517.
        public var preferredMTU: Int
        /// The time between advertisements, for scans that report duplicates. Defaults to 100 ms.
        public var advertisingInterval: Duration
        /// The signal strength centrals see, in dBm. Defaults to -50.
        public var rssi: Int
        /// How reads and writes of dynamic characteristics are answered. Defaults to
        /// ``RequestHandling/automatic``.
        public var requestHandling: RequestHandling
        /// The peripheral's identifier; `nil` derives one from the bridge's seed and the
        /// order managers are created in. Defaults to `nil`.
        public var identifier: UUID?

        /// Creates a configuration.
        public init(
            initialState: ManagerState = .poweredOn, name: String? = nil, preferredMTU: Int = 517,
            advertisingInterval: Duration = .milliseconds(100), rssi: Int = -50,
            requestHandling: RequestHandling = .automatic, identifier: UUID? = nil
        ) {
            self.initialState = initialState
            self.name = name
            self.preferredMTU = preferredMTU
            self.advertisingInterval = advertisingInterval
            self.rssi = rssi
            self.requestHandling = requestHandling
            self.identifier = identifier
        }

        /// Fast mode: powered on, instant, answering requests automatically.
        public static var fast: Configuration { Configuration() }
    }

    /// The bridge this peripheral is on.
    public nonisolated let bridge: MockBLEBridge
    /// The configuration it was created with.
    public nonisolated let configuration: Configuration
    /// The peripheral's identifier (as `CBPeripheral.identifier` on the central side).
    public nonisolated let identifier: UUID
    nonisolated let broadcaster = EventBroadcaster<PeripheralEvent>()

    /// Runs on the bridge's executor, so calls between the manager and its bridge do not hop.
    public nonisolated var unownedExecutor: UnownedSerialExecutor { bridge.unownedExecutor }

    /// Creates a mock peripheral on a bridge (a new one of its own by default).
    public init(configuration: Configuration = Configuration(), bridge: MockBLEBridge = MockBLEBridge()) {
        self.bridge = bridge
        self.configuration = configuration
        self.identifier = configuration.identifier ?? bridge.makeIdentifier(role: "peripheral")
    }

    deinit {
        // A manager that goes away ends its event streams (the bridge keeps nothing that
        // would call back into it).
        broadcaster.finish()
    }

    /// Takes this manager off the air and ends its event streams; see the bridge's log for
    /// what was dropped. The manager is unusable afterwards (its state is `unknown`).
    public func shutDown() {
        withBridge { $0.shutDown(peripheral: identifier) }
    }

    /// Runs `body` with the bridge, which shares this actor's executor; joins the bridge first.
    func withBridge<T: Sendable>(_ body: (isolated MockBLEBridge) throws -> T) rethrows -> T {
        try bridge.assumeIsolated { bridge in
            bridge.register(peripheral: identifier, events: broadcaster, configuration: configuration)
            return try body(bridge)
        }
    }

    public var state: ManagerState { withBridge { $0.peripheralState(identifier) } }

    public func waitForPoweredOn() async -> ManagerState { state }

    public nonisolated func events() -> AsyncStream<PeripheralEvent> { broadcaster.stream() }

    public func add(_ service: GATTService) throws -> LocalService {
        try withBridge { try $0.addService(peripheral: identifier, service: service) }
    }

    public func remove(_ service: LocalService) throws {
        try withBridge { try $0.removeService(peripheral: identifier, service: service) }
    }

    public func removeAllServices() { withBridge { $0.removeAllServices(peripheral: identifier) } }

    public var services: [LocalService] { withBridge { $0.localServices(peripheral: identifier) } }

    public func startAdvertising(_ advertisement: AdvertisementData) throws {
        try withBridge { try $0.startAdvertising(peripheral: identifier, advertisement: advertisement) }
    }

    public func stopAdvertising() { withBridge { $0.stopAdvertising(peripheral: identifier) } }

    public var isAdvertising: Bool { withBridge { $0.isAdvertising(peripheral: identifier) } }

    public func respond(to request: ATTRequest, withResult result: ATTError.Code, value: Data?) throws {
        try withBridge { try $0.respond(peripheral: identifier, request: request, result: result, value: value) }
    }

    public func updateValue(
        _ value: Data, for characteristic: LocalCharacteristic, onSubscribedCentrals centrals: [UUID]?
    ) throws -> Bool {
        try withBridge {
            try $0.updateValue(peripheral: identifier, value: value, characteristic: characteristic, centrals: centrals)
        }
    }

    public func subscribedCentrals(for characteristic: LocalCharacteristic) -> [RemoteCentral] {
        withBridge { $0.subscribedCentrals(peripheral: identifier, characteristic: characteristic) }
    }

    /// Sets the current value of a dynamic characteristic: what automatic request handling
    /// answers reads with (as setting `CBMutableCharacteristic.value`).
    public func setValue(_ value: Data, for characteristic: LocalCharacteristic) throws {
        try withBridge { try $0.setValue(peripheral: identifier, value: value, characteristic: characteristic) }
    }

    /// The longest notification a connected central receives (ATT_MTU − 3), or `nil` if it
    /// is not connected.
    public func maximumUpdateValueLength(for central: UUID) -> Int? {
        withBridge { $0.maximumUpdateValueLength(peripheral: identifier, central: central) }
    }

    /// Test hook: drops the link to a central from this side. The central sees a disconnect
    /// with `error`, its waiting operations fail with it, and its subscriptions end.
    public func simulateDisconnection(
        of central: UUID, error: CoreBluetoothError = CoreBluetoothError(.peripheralDisconnected)
    ) {
        withBridge { $0.simulateDisconnection(central: central, peripheral: identifier, error: error) }
    }
}
