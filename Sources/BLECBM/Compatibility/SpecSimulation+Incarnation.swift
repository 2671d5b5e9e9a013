import BLECore
import BLEMockKit
import Foundation

extension SpecSimulation {
    /// One simulated peripheral of a spec: the spec's peripheral under one identifier (a MAC
    /// address change makes a new one), with the map between the spec's mocks and the handles
    /// its services got, and the lane its commands go through.
    final class Incarnation: @unchecked Sendable {
        // @unchecked Sendable: the maps are only read and written with `lock` held; the rest is
        // immutable.
        let identifier: UUID
        let peripheral: MockPeripheralManager
        let lane: FrontEndLane<MockPeripheralManager>
        private let spec: CBMPeripheralSpec
        private let router: Router
        private let lock = Lock()
        private var mocks: [UInt16: CBMCharacteristicMock] = [:]
        private var serviceMocks: [UInt16: CBMServiceMock] = [:]
        private var locals: [ObjectIdentifier: LocalCharacteristic] = [:]
        /// The services published, by their mock.
        private var published: [ObjectIdentifier: LocalService] = [:]
        /// The mocks of the services published or on their way (set when the command is sent).
        private var publishing: Set<ObjectIdentifier> = []
        /// The value each central's current read got from the delegate, by characteristic
        /// handle: the parts of a long read after the first come from it.
        private var reads: [ReadKey: Data] = [:]
        /// The delegate's errors the stack carries as ATT 0x0E (unlikely error), oldest first, by
        /// central and characteristic handle: the app gets the delegate's own error.
        private var delegateErrors: [ReadKey: [any Error]] = [:]

        private struct ReadKey: Hashable {
            let central: UUID
            let handle: UInt16
        }

        init(simulation: SpecSimulation, identifier: UUID) {
            let bridge = simulation.bridge
            let spec = simulation.spec
            self.identifier = identifier
            self.spec = spec
            router = Router()
            var configuration =
                bridge.configuration.timing.isInstant ? MockPeripheralManager.Configuration.fast : .realistic(seed: 0)
            configuration.seed = nil
            // A spec's peripheral is on from the start, as in CoreBluetoothMock.
            configuration.initialState = .poweredOn
            configuration.stateTransition = .instant
            configuration.identifier = identifier
            configuration.name = spec.builtName
            if let mtu = spec.mtu { configuration.mtu = .fixed(min(max(mtu, 23), 517)) }
            // `simulateValueUpdate` cannot be told to try again, so the device keeps every value
            // until the link carries it (at its connection events, in realistic timing), as
            // CoreBluetoothMock delivers every one: a bounded queue would drop a burst's tail.
            configuration.updateQueue = .unlimited
            // Its links end after the spec's supervision timeout, not the bridge's.
            configuration.supervisionTimeout = spec.supervisionTimeout.map(SpecSimulation.supervisionTimeout)
            // Once a link is up it asks for the spec's interval (realistic timing; fast mode
            // ignores it), in place of the bridge's peripheral profile's preference.
            configuration.preferredConnectionIntervals = spec.connectionInterval.map {
                let interval = SpecSimulation.connectionInterval($0)
                return interval...interval
            }
            let proximity = spec.builtProximity
            configuration.rssi = proximity == .outOfRange ? -100 : proximity.RSSI
            configuration.rssiVariation =
                bridge.frontEndSettings[SpecSimulation.deviationKey] ?? CBMProximity.Deviation.default.spread
            let router = router
            // The spec's delegate answers (see `answer(_:)`), some requests later: the deferring
            // handler stands in for the handler.
            configuration.requestHandling = .handler { _ in .error(.unlikelyError) }
            configuration.deferringHandler = { request in router.answer(request) }
            configuration.handlerGetsWholeLongWrites = true
            // A resident of the bridge: the bridge keeps the simulation (its front-end settings
            // hold the registry), so the peripheral must not keep the bridge.
            peripheral = MockPeripheralManager(
                configuration: configuration, bridge: bridge, joinsAtFirstCall: true, resident: true)
            lane = FrontEndLane(bridge: bridge, target: peripheral, key: identifier, queue: nil, delivers: false)
            router.incarnation = self
        }

        /// Applies a command to the peripheral, after those sent before it.
        func command(_ command: @escaping Command) { lane.command(command) }

        /// Publishes the spec's services and starts its advertising sets (or not, out of range);
        /// `connectedBySystem`: another app is connected to it from the start, before it
        /// advertises (its sets not `alsoWhenConnected` are not heard).
        func setUp(state: State, startOutOfRange: Bool, connectedBySystem: Bool) {
            let listed = Set((state.services ?? []).map(ObjectIdentifier.init))
            for service in Self.publishingOrder(state.services ?? []) {
                add(service, listed: listed.contains(ObjectIdentifier(service)))
            }
            // Its signal strength follows its proximity from the start.
            let proximity = startOutOfRange ? Proximity.outOfRange : state.proximity.proximity
            command { $0.simulateProximityChange(proximity) }
            if connectedBySystem { command { $0.simulateConnectionBySystem(true) } }
            advertise(state.advertisement, connectable: state.services != nil)
        }

        /// Advertises the spec's sets from now on, each after its delay (counted from now) and at
        /// its interval (once for 0), the first set too; `nil` stops advertising.
        /// A set not `isAdvertisingWhenConnected` is not heard while the device is connected (to
        /// an app on the phone, or another app), as in CoreBluetoothMock.
        func advertise(_ sets: [CBMAdvertisementConfig]?, connectable: Bool) {
            command { $0.stopAdvertising() }
            guard let first = sets?.first else { return command { $0.setAdditionalAdvertisingSets([]) } }
            // Every set's timing alike: an interval of 0 advertises once; a negative or NaN one
            // leaves the peripheral's default interval (100 ms); a positive one is at least 1 µs.
            let extra = (sets ?? []).dropFirst().map { set in
                (
                    advertisement: SpecSimulation.advertisementData(set.data, connectable: connectable),
                    interval: Self.interval(set.interval), delay: SpecSimulation.duration(set.delay),
                    once: set.interval == 0, alsoWhenConnected: set.isAdvertisingWhenConnected
                )
            }
            let data = SpecSimulation.advertisementData(first.data, connectable: connectable)
            let alsoWhenConnected = first.isAdvertisingWhenConnected
            let interval = Self.interval(first.interval)
            let delay = SpecSimulation.duration(first.delay)
            let once = first.interval == 0
            command { peripheral in
                let defaultInterval = peripheral.configuration.advertisingInterval
                peripheral.setAdditionalAdvertisingSets(
                    extra.map { set in
                        (
                            advertisement: set.advertisement, interval: set.interval ?? defaultInterval,
                            delay: set.delay, once: set.once, alsoWhenConnected: set.alsoWhenConnected
                        )
                    })
                peripheral.setAdvertisesWhenConnected(alsoWhenConnected)
                peripheral.setAdvertisingTiming(
                    interval: interval ?? peripheral.configuration.advertisingInterval, delay: delay, once: once)
                try? peripheral.startAdvertisingAsGiven(data)
            }
        }

        /// The interval of a CoreBluetoothMock advertising set: at least 1 µs when positive, zero
        /// when zero (it advertises once), `nil` (the peripheral's default) when negative or NaN.
        /// (A set repeating with no interval between its advertisements would keep the
        /// simulation at one instant for ever.)
        private static func interval(_ seconds: TimeInterval) -> Duration? {
            if seconds == 0 { return .zero }
            return seconds > 0 ? max(SpecSimulation.duration(seconds), .microseconds(1)) : nil
        }

        /// Listed again by `simulatePeripherals(_:)`: back where its spec says, advertising
        /// from the start.
        func restart(state: State) {
            let proximity = state.proximity.proximity
            command { $0.simulateProximityChange(proximity) }
            advertise(state.advertisement, connectable: state.services != nil)
        }

        /// Not listed by `simulatePeripherals(_:)`: off the air (its links time out).
        func takeOffAir() {
            command { peripheral in
                peripheral.stopAdvertising()
                peripheral.simulateProximityChange(.outOfRange)
            }
        }

        /// Replaced by a peripheral with a new address: it stops advertising (its links stay).
        func retire() {
            command { $0.stopAdvertising() }
        }

        /// Publishes a service and maps its characteristics. One the spec does not list (only
        /// included by one it lists) is published as a secondary service, whatever it declares:
        /// CoreBluetoothMock's service discovery lists the spec's services alone, and a GATT
        /// server's primary service discovery lists every primary service it has.
        private func add(_ service: CBMServiceMock, listed: Bool) {
            var declared = service.gattService
            if !listed { declared.isPrimary = false }
            let gatt = declared
            let characteristicMocks = service.characteristicMocks
            lock.withLock { _ = publishing.insert(ObjectIdentifier(service)) }
            command { [self] peripheral in
                guard let local = try? peripheral.add(gatt) else { return }
                lock.withLock {
                    published[ObjectIdentifier(service)] = local
                    serviceMocks[local.handle] = service
                    for (mock, published) in zip(characteristicMocks, local.characteristics) {
                        mocks[published.handle] = mock
                        locals[ObjectIdentifier(mock)] = published
                    }
                }
            }
        }

        /// Replaces the services and the name, as CoreBluetoothMock does: a service listed again
        /// (the same mock) stays as it is, discovered by centrals that had it; the others go
        /// (centrals hear them invalidated), then the new ones are published. Centrals hear of
        /// the name only when it is `renamed` (a name given again is no change).
        func replaceServices(_ services: [CBMServiceMock], name: String?, renamed: Bool) {
            let ordered = Self.publishingOrder(services)
            let listed = Set(ordered.map(ObjectIdentifier.init))
            command { [self] peripheral in
                let gone = lock.withLock { () -> [LocalService] in
                    let gone = published.filter { !listed.contains($0.key) }
                    for (key, local) in gone {
                        published[key] = nil
                        serviceMocks[local.handle] = nil
                        for characteristic in local.characteristics {
                            if let mock = mocks.removeValue(forKey: characteristic.handle) {
                                locals[ObjectIdentifier(mock)] = nil
                            }
                        }
                    }
                    return gone.values.sorted { $0.handle < $1.handle }
                }
                // (Included services go after the services including them.)
                for local in gone.reversed() { try? peripheral.remove(local) }
                if renamed { peripheral.simulateNameChange(name) }
            }
            let kept = lock.withLock { () -> Set<ObjectIdentifier> in
                defer { publishing.formIntersection(listed) }
                return publishing
            }
            for service in ordered where !kept.contains(ObjectIdentifier(service)) {
                add(service, listed: services.contains { $0 === service })
            }
        }

        /// The services to publish, each after the services it includes (a GATT server can
        /// only include a service it has), once each: CoreBluetoothMock takes a spec's services
        /// in any order, and an included service it does not list is published too.
        static func publishingOrder(_ services: [CBMServiceMock]) -> [CBMServiceMock] {
            var ordered: [CBMServiceMock] = []
            var placed = Set<ObjectIdentifier>()
            func place(_ service: CBMServiceMock, including: Set<ObjectIdentifier>) {
                let key = ObjectIdentifier(service)
                // (A service that includes itself, or one including it, is placed once.)
                guard !placed.contains(key), !including.contains(key) else { return }
                for included in service.includedServiceMocks {
                    place(included, including: including.union([key]))
                }
                placed.insert(key)
                ordered.append(service)
            }
            for service in services { place(service, including: []) }
            return ordered
        }

        /// Sends a value to the subscribed centrals.
        func update(_ data: Data, for mock: CBMCharacteristicMock) {
            command { [self] peripheral in
                guard let local = lock.withLock({ locals[ObjectIdentifier(mock)] }) else { return }
                _ = try? peripheral.updateValue(data, for: local, onSubscribedCentrals: nil)
            }
        }

        /// The service mock published at a handle.
        func serviceMock(at handle: UInt16) -> CBMServiceMock? { lock.withLock { serviceMocks[handle] } }

        /// The characteristic mock published at a handle.
        func characteristicMock(at handle: UInt16) -> CBMCharacteristicMock? { lock.withLock { mocks[handle] } }

        /// The oldest error the delegate answered a central's request on a characteristic with
        /// that the stack carried as ATT 0x0E, taken.
        func takeDelegateError(central: UUID, handle: UInt16) -> (any Error)? {
            lock.withLock {
                let key = ReadKey(central: central, handle: handle)
                guard var errors = delegateErrors[key], !errors.isEmpty else { return nil }
                let first = errors.removeFirst()
                delegateErrors[key] = errors.isEmpty ? nil : errors
                return first
            }
        }

        /// The stack's answer for the delegate's `error`: its ATT code, or 0x0E (unlikely error)
        /// for any other error, which the app gets as it is (kept for it, see
        /// ``takeDelegateError(central:handle:)``), as CoreBluetoothMock passes it through.
        private func refusal(_ error: any Error, to request: ATTRequest) -> RequestResponse {
            let code = SpecSimulation.code(of: error)
            if code == .unlikelyError {
                let key = ReadKey(central: request.central.identifier, handle: request.characteristic.handle)
                lock.withLock { delegateErrors[key, default: []].append(error) }
            }
            return .error(code)
        }

        /// The spec delegate's answer to a request, as the simulated stack's, or `nil` when it
        /// comes later.
        ///
        /// A CoreBluetooth-shaped central's request is answered on that central's app queue (the
        /// main queue when it gave none), where CoreBluetoothMock calls the delegate too (in the
        /// app's call, on the app's thread): the delegate is asked in a block handed to the queue
        /// in the simulation's order, among the central's callbacks, and its answer goes back to
        /// the peripheral as a command, at the same virtual instant in a run (whose driver waits
        /// for the block before moving time). A write command's answer is not waited for (it gets
        /// no response). A request of the async API's central, which has no queue, is answered
        /// here, on the bridge, at once.
        ///
        /// A long read asks the delegate once, for its first part; the Read Blob requests that
        /// follow are served from that value, so one `readValue` is one delegate call and the app
        /// never sees parts of two values (CoreBluetoothMock answers a read with one call). A
        /// long write reaches the delegate once, with the whole value, when it is executed.
        fileprivate func answer(_ request: ATTRequest) -> RequestResponse? {
            guard let mock = lock.withLock({ mocks[request.characteristic.handle] }) else {
                return .error(.invalidHandle)
            }
            let key = ReadKey(central: request.central.identifier, handle: request.characteristic.handle)
            if request.value == nil, request.offset > 0, let read = lock.withLock({ reads[key] }) {
                return Self.part(of: read, from: request.offset)
            }
            guard let engine = appCentral(request.central.identifier) else { return ask(about: request, mock) }
            engine.deliver { [self] in
                let response = ask(about: request, mock)
                if !request.isCommand { command { $0.answer(request, with: response) } }
            }
            return request.isCommand ? .success() : nil
        }

        /// The CoreBluetooth-shaped central on this bridge with this identifier, if any (a central
        /// of the async API has none).
        private func appCentral(_ identifier: UUID) -> MockCentralEngine? {
            MockCentralEngine.engines(on: lane.bridge).first { $0.central.identifier == identifier }
        }

        /// Asks the spec's delegate about a request (a Read, the first part of a long one, a
        /// Write, a long write's whole value, or a Write Command) and returns its answer.
        private func ask(about request: ATTRequest, _ mock: CBMCharacteristicMock) -> RequestResponse {
            let delegate = spec.connectionDelegate ?? DefaultAnswers()
            if request.isCommand {
                delegate.peripheral(spec, didReceiveWriteCommandFor: mock, data: request.value ?? Data())
                return .success()
            }
            guard let value = request.value else {
                switch delegate.peripheral(spec, didReceiveReadRequestFor: mock) {
                case .success(let data):
                    let key = ReadKey(central: request.central.identifier, handle: request.characteristic.handle)
                    lock.withLock { reads[key] = data }
                    return Self.part(of: data, from: request.offset)
                case .failure(let error): return refusal(error, to: request)
                }
            }
            switch delegate.peripheral(spec, didReceiveWriteRequestFor: mock, data: value) {
            case .success: return .success()
            case .failure(let error): return refusal(error, to: request)
            }
        }

        /// A read's answer: the value from `offset` on (0x07 past its end).
        private static func part(of value: Data, from offset: Int) -> RequestResponse {
            guard offset <= value.count else { return .error(.invalidOffset) }
            return .success(offset == 0 ? value : Data(value.dropFirst(offset)))
        }
    }

    /// Routes a simulated peripheral's requests to its incarnation (set once the incarnation
    /// exists; requests only come after).
    final class Router: @unchecked Sendable {
        // @unchecked Sendable: `incarnation` is set once, before the first request.
        weak var incarnation: Incarnation?

        func answer(_ request: ATTRequest) -> RequestResponse? {
            guard let incarnation else { return .error(.unlikelyError) }
            return incarnation.answer(request)
        }
    }
}
