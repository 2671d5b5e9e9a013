import BLECore
import BLEMockKit
import Foundation

/// A ``CBMPeripheralSpec`` simulated on one bridge: a ``MockPeripheralManager`` whose requests
/// the spec's delegate answers, and the map between the spec's mocks and the handles the
/// simulated stack gave them.
final class SpecSimulation: @unchecked Sendable {
    // @unchecked Sendable: the maps are only read and written with `lock` held.
    typealias Command = @Sendable (isolated MockPeripheralManager) -> Void

    let spec: CBMPeripheralSpec
    private let bridge: MockBLEBridge
    private let router = Router()
    private let lock = Lock()
    /// The simulated peripheral now (a new one after `simulateMacChange`), and its lane.
    private var incarnation: (peripheral: MockPeripheralManager, lane: FrontEndLane<MockPeripheralManager>)!
    private var mocks: [UInt16: CBMCharacteristicMock] = [:]
    private var serviceMocks: [UInt16: CBMServiceMock] = [:]
    private var locals: [ObjectIdentifier: LocalCharacteristic] = [:]

    /// The simulations of specs on one bridge.
    final class Registry: @unchecked Sendable {
        // @unchecked Sendable: `simulations` is only read and written with `lock` held.
        private let lock = Lock()
        private var simulations: [ObjectIdentifier: SpecSimulation] = [:]

        func existing(_ spec: CBMPeripheralSpec) -> SpecSimulation? {
            lock.withLock { simulations[ObjectIdentifier(spec)] }
        }

        func add(_ simulation: SpecSimulation) {
            lock.withLock { simulations[ObjectIdentifier(simulation.spec)] = simulation }
        }

        /// The simulation of the spec with this peripheral identifier.
        func simulation(of peripheral: UUID) -> SpecSimulation? {
            lock.withLock { Array(simulations.values) }.first { $0.identifier == peripheral }
        }
    }

    /// The simulation of the spec with this peripheral identifier on `bridge`, if any.
    static func simulation(of peripheral: UUID, on bridge: MockBLEBridge) -> SpecSimulation? {
        registry(on: bridge).simulation(of: peripheral)
    }

    /// The spec's delegate, or CoreBluetoothMock's default answers.
    var delegate: any CBMPeripheralSpecDelegate { spec.connectionDelegate ?? DefaultAnswers() }

    /// The service mock published at a handle.
    func serviceMock(at handle: UInt16) -> CBMServiceMock? { lock.withLock { serviceMocks[handle] } }

    /// The characteristic mock published at a handle.
    func characteristicMock(at handle: UInt16) -> CBMCharacteristicMock? { lock.withLock { mocks[handle] } }

    /// The descriptor mock of a remote descriptor (by its characteristic and UUID).
    func descriptorMock(of descriptor: RemoteDescriptor) -> CBMDescriptorMock? {
        characteristicMock(at: descriptor.characteristic.handle)?.descriptors?
            .first { $0.uuid.bluetoothUUID == descriptor.uuid } as? CBMDescriptorMock
    }

    static func registry(on bridge: MockBLEBridge) -> Registry {
        bridge.frontEndSettings.object(for: ObjectIdentifier(Registry.self)) { Registry() }
    }

    /// The spec's simulation on `bridge`, if it was simulated there.
    static func existing(for spec: CBMPeripheralSpec, on bridge: MockBLEBridge) -> SpecSimulation? {
        registry(on: bridge).existing(spec)
    }

    /// Puts the spec on `bridge` (once).
    @discardableResult
    static func simulate(_ spec: CBMPeripheralSpec, on bridge: MockBLEBridge) -> SpecSimulation {
        let registry = registry(on: bridge)
        if let existing = registry.existing(spec) { return existing }
        let simulation = SpecSimulation(spec, on: bridge)
        registry.add(simulation)
        return simulation
    }

    private init(_ spec: CBMPeripheralSpec, on bridge: MockBLEBridge) {
        self.spec = spec
        self.bridge = bridge
        router.simulation = self
        incarnation = makeIncarnation(identifier: spec.identifier)
        setUp(startingOutOfRange: spec.proximity == .outOfRange)
        if spec.isKnown { command { $0.simulateCaching() } }
        if spec.isInitiallyConnected { command { $0.simulateConnectionBySystem(true) } }
    }

    /// The simulated peripheral now.
    var peripheral: MockPeripheralManager { lock.withLock { incarnation.peripheral } }

    /// The peripheral's identifier now.
    var identifier: UUID { peripheral.identifier }

    /// A simulated peripheral for the spec with an identifier.
    private func makeIncarnation(identifier: UUID) -> (MockPeripheralManager, FrontEndLane<MockPeripheralManager>) {
        var configuration =
            bridge.configuration.timing.isInstant ? MockPeripheralManager.Configuration.fast : .realistic(seed: 0)
        configuration.seed = nil
        // A spec's peripheral is on from the start, as in CoreBluetoothMock.
        configuration.initialState = .poweredOn
        configuration.stateTransition = .instant
        configuration.identifier = identifier
        configuration.name = spec.name
        if let mtu = spec.mtu { configuration.mtu = .fixed(min(max(mtu, 23), 517)) }
        configuration.rssi = spec.proximity == .outOfRange ? -100 : spec.proximity.RSSI
        configuration.rssiVariation = bridge.frontEndSettings[Self.deviationKey] ?? 0
        if let first = spec.advertisement?.first {
            if first.interval > 0 { configuration.advertisingInterval = Self.duration(first.interval) }
            configuration.advertisingDelay = Self.duration(first.delay)
            configuration.advertisesOnce = first.interval == 0
        }
        let router = router
        configuration.requestHandling = .handler { request in router.answer(request) }
        let peripheral = MockPeripheralManager(configuration: configuration, bridge: bridge)
        return (peripheral, FrontEndLane(bridge: bridge, target: peripheral, queue: nil, delivers: false))
    }

    /// Publishes the spec's services and starts its advertising sets.
    private func setUp(startingOutOfRange: Bool) {
        for service in spec.services ?? [] { add(service) }
        let connectable = spec.services != nil
        let extra = (spec.advertisement ?? []).dropFirst().map { set in
            (
                advertisement: Self.advertisementData(set.data, connectable: connectable),
                interval: Self.duration(set.interval), delay: Self.duration(set.delay), once: set.interval == 0
            )
        }
        if !extra.isEmpty { command { $0.setAdditionalAdvertisingSets(extra) } }
        if let first = spec.advertisement?.first {
            let data = Self.advertisementData(first.data, connectable: connectable)
            command { try? $0.startAdvertising(data) }
        }
        if startingOutOfRange { command { $0.simulateProximityChange(.outOfRange) } }
    }

    /// The peripheral changes its address: the old one goes off the air (its links drop) and
    /// the same device appears with a new identifier, as after a MAC address change.
    func changeIdentifier(to identifier: UUID) {
        command { $0.shutDown() }
        let fresh = makeIncarnation(identifier: identifier)
        lock.withLock {
            incarnation = fresh
            mocks.removeAll()
            serviceMocks.removeAll()
            locals.removeAll()
        }
        setUp(startingOutOfRange: false)
    }

    /// Applies a command to the simulated peripheral, after those sent before it.
    func command(_ command: @escaping Command) { lock.withLock { incarnation.lane }.command(command) }

    /// Publishes a service and maps its characteristics.
    private func add(_ service: CBMServiceMock) {
        let gatt = service.gattService
        let mocks = service.characteristicMocks
        command { [self] peripheral in
            guard let local = try? peripheral.add(gatt) else { return }
            lock.withLock {
                serviceMocks[local.handle] = service
                for (mock, published) in zip(mocks, local.characteristics) {
                    self.mocks[published.handle] = mock
                    locals[ObjectIdentifier(mock)] = published
                }
            }
        }
    }

    /// Replaces the services and the name.
    func replaceServices(_ services: [CBMServiceMock], name: String?) {
        command { [self] peripheral in
            peripheral.removeAllServices()
            peripheral.simulateNameChange(name)
            lock.withLock {
                mocks.removeAll()
                serviceMocks.removeAll()
                locals.removeAll()
            }
        }
        for service in services { add(service) }
    }

    /// Sends a value to the subscribed centrals.
    func update(_ data: Data, for mock: CBMCharacteristicMock) {
        command { [self] peripheral in
            guard let local = lock.withLock({ locals[ObjectIdentifier(mock)] }) else { return }
            _ = try? peripheral.updateValue(data, for: local, onSubscribedCentrals: nil)
        }
    }

    /// The setting key of `CBMCentralManagerMock.simulateRSSIDeviation(_:)`.
    static let deviationKey = "BLECBM.rssiDeviation"

    /// Seconds as a duration (to the microsecond).
    static func duration(_ seconds: TimeInterval) -> Duration {
        .microseconds(Int64((max(seconds, 0) * 1e6).rounded()))
    }

    /// An advertisement from CoreBluetooth's dictionary.
    static func advertisementData(_ data: [String: Any], connectable: Bool) -> AdvertisementData {
        var advertisement = AdvertisementData(dictionary: data, keys: .platform) { (uuid: CBMUUID) in uuid.bluetoothUUID
        }
        advertisement.isConnectable = advertisement.isConnectable ?? connectable
        return advertisement
    }

    // MARK: Requests

    /// Routes the simulated peripheral's requests to the spec's delegate (set once the
    /// simulation exists; requests only come after).
    final class Router: @unchecked Sendable {
        // @unchecked Sendable: `simulation` is set once, before the first request.
        weak var simulation: SpecSimulation?

        func answer(_ request: ATTRequest) -> RequestResponse {
            simulation?.answer(request) ?? .error(.unlikelyError)
        }
    }

    /// The delegate's answer to a request, as the simulated stack's.
    private func answer(_ request: ATTRequest) -> RequestResponse {
        guard let mock = lock.withLock({ mocks[request.characteristic.handle] }) else { return .error(.invalidHandle) }
        if request.isCommand {
            delegate.peripheral(spec, didReceiveWriteCommandFor: mock, data: request.value ?? Data())
            return .success()
        }
        guard let value = request.value else {
            switch delegate.peripheral(spec, didReceiveReadRequestFor: mock) {
            case .success(let data):
                guard request.offset <= data.count else { return .error(.invalidOffset) }
                return .success(data.dropFirst(request.offset))
            case .failure(let error):
                return .error(Self.code(of: error))
            }
        }
        switch delegate.peripheral(spec, didReceiveWriteRequestFor: mock, data: value) {
        case .success: return .success()
        case .failure(let error): return .error(Self.code(of: error))
        }
    }

    /// The ATT code an error answers with.
    static func code(of error: any Error) -> ATTError.Code {
        if let error = error as? CBMATTError {
            return ATTError.Code(rawValue: UInt8(truncatingIfNeeded: error.errorCode))
        }
        let nsError = error as NSError
        if nsError.domain == CBMATTErrorDomain {
            return ATTError.Code(rawValue: UInt8(truncatingIfNeeded: nsError.code))
        }
        return .unlikelyError
    }

    /// CoreBluetoothMock's default answers, for a spec without a delegate.
    struct DefaultAnswers: CBMPeripheralSpecDelegate {}
}
