import BLECore
import BLEMockKit
import Foundation

/// A ``CBMPeripheralSpec`` simulated on one bridge: a ``MockPeripheralManager`` whose requests
/// the spec's delegate answers, the map between the spec's mocks and the handles the simulated
/// stack gave them, and the spec's own state on this bridge (CoreBluetoothMock keeps it in the
/// spec object: identifier, proximity, whether the system knows it), which the `simulate…`
/// calls change at once, so a query right after one sees it.
final class SpecSimulation: @unchecked Sendable {
    // @unchecked Sendable: `state`, `current`, `retired`, `active`, `disconnectionError` and
    // `links` are only read and written with `lock` held.
    typealias Command = @Sendable (isolated MockPeripheralManager) -> Void

    /// What CoreBluetoothMock keeps in the spec object, per simulation here.
    struct State {
        var identifier: UUID
        var name: String?
        var proximity: CBMProximity
        var isKnown: Bool
        var isConnectedBySystem: Bool
        var services: [CBMServiceMock]?
        var advertisement: [CBMAdvertisementConfig]?
        var macChanges: UInt64 = 0
    }

    let spec: CBMPeripheralSpec
    /// Unowned: the bridge keeps its simulations (in the registry of its front-end settings).
    unowned let bridge: MockBLEBridge
    /// The same bridge, held weakly, for ``isOnRetiredBridge``: something else may still hold
    /// a simulation as its bridge is let go of (on another thread, as a test's system is torn
    /// down), and a spec looks through its simulations from anywhere.
    private weak var weakBridge: MockBLEBridge?
    private let lock = Lock()
    private var state: State
    /// The simulated peripheral now, and those it was before a MAC address change that still
    /// have links (they keep them, as CoreBluetoothMock keeps its connections).
    private var current: Incarnation!
    private var retired: [Incarnation] = []
    /// Whether the spec is among those `simulatePeripherals(_:)` last put on the air.
    private var active = true
    /// The error the app hears for the next disconnection (`simulateDisconnection(withError:)`).
    private var disconnectionError: (any Error)?
    /// The links of this bridge's centrals to the peripheral that are up. With another app's
    /// (``State/isConnectedBySystem``), they share one physical connection to the device, as the
    /// apps of a phone share CoreBluetooth's: it ends when the last of them does, and only then
    /// does the spec's delegate hear `peripheral(_:didDisconnect:)`.
    private var links: Set<Link> = []

    /// A central's link to the peripheral (under the identifier it had when the link came up).
    struct Link: Hashable {
        let central: UUID
        let peripheral: UUID
    }

    /// The state a spec has where nothing changed it: as built.
    static func builtState(of spec: CBMPeripheralSpec) -> State {
        State(
            identifier: spec.builtIdentifier, name: spec.builtName, proximity: spec.builtProximity,
            isKnown: spec.builtIsKnown, isConnectedBySystem: spec.isInitiallyConnected,
            services: spec.builtServices, advertisement: spec.builtAdvertisement)
    }

    /// Puts `spec` on `bridge` in `state` (as built, unless calls made before changed it).
    private init(_ spec: CBMPeripheralSpec, on bridge: MockBLEBridge, state: State?) {
        self.spec = spec
        self.bridge = bridge
        weakBridge = bridge
        self.state = state ?? Self.builtState(of: spec)
        let state = self.state
        current = Incarnation(simulation: self, identifier: state.identifier)
        current.setUp(
            state: state, startOutOfRange: state.proximity == .outOfRange, connectedBySystem: state.isConnectedBySystem)
        if state.isKnown { current.command { $0.simulateCaching() } }
        if state.isConnectedBySystem {
            SystemPeripheralNameBook.of(bridge).update { $0.noteConnected(state.identifier) }
        }
    }

    // MARK: The simulations of a bridge

    /// The simulations of specs on one bridge.
    final class Registry: @unchecked Sendable {
        // @unchecked Sendable: `simulations` is only read and written with `lock` held.
        private let lock = Lock()
        private var simulations: [ObjectIdentifier: SpecSimulation] = [:]
        private var order: [ObjectIdentifier] = []
        /// The state of specs not simulated yet that `simulate…` calls changed (their proximity,
        /// advertising, identifier, whether the system knows them), as CoreBluetoothMock keeps
        /// it in the spec object: their simulation starts in it.
        private var unsimulated: [ObjectIdentifier: State] = [:]

        func existing(_ spec: CBMPeripheralSpec) -> SpecSimulation? {
            lock.withLock { simulations[ObjectIdentifier(spec)] }
        }

        /// The state `simulate…` calls gave a spec not simulated here yet, if any.
        func unsimulatedState(of spec: CBMPeripheralSpec) -> State? {
            lock.withLock { unsimulated[ObjectIdentifier(spec)] }
        }

        /// Changes the state of a spec not simulated here yet (nothing happens if it is).
        func changeUnsimulated(_ spec: CBMPeripheralSpec, _ change: (inout State) -> Void) {
            lock.withLock {
                guard simulations[ObjectIdentifier(spec)] == nil else { return }
                var state = unsimulated[ObjectIdentifier(spec)] ?? SpecSimulation.builtState(of: spec)
                change(&state)
                unsimulated[ObjectIdentifier(spec)] = state
            }
        }

        fileprivate func simulation(for spec: CBMPeripheralSpec, make: (State?) -> SpecSimulation) -> (
            SpecSimulation, Bool
        ) {
            lock.withLock {
                if let existing = simulations[ObjectIdentifier(spec)] { return (existing, false) }
                let made = make(unsimulated.removeValue(forKey: ObjectIdentifier(spec)))
                simulations[ObjectIdentifier(spec)] = made
                order.append(ObjectIdentifier(spec))
                return (made, true)
            }
        }

        /// Every simulation, in the order the specs were first simulated.
        var all: [SpecSimulation] { lock.withLock { order.compactMap { simulations[$0] } } }

        /// The simulation one of whose peripherals (now or before a MAC change) has this identifier.
        func simulation(of peripheral: UUID) -> SpecSimulation? {
            // (Asked on every event of a CoreBluetooth-shaped central: no array is made.)
            lock.withLock {
                for key in order {
                    if let simulation = simulations[key], simulation.owns(peripheral) { return simulation }
                }
                return nil
            }
        }
    }

    static func registry(on bridge: MockBLEBridge) -> Registry {
        bridge.frontEndSettings.object(for: ObjectIdentifier(Registry.self)) { Registry() }
    }

    /// The simulation of the spec with this peripheral identifier on `bridge`, if any.
    static func simulation(of peripheral: UUID, on bridge: MockBLEBridge) -> SpecSimulation? {
        registry(on: bridge).simulation(of: peripheral)
    }

    /// The spec's simulation on `bridge`, if it was simulated there.
    static func existing(for spec: CBMPeripheralSpec, on bridge: MockBLEBridge) -> SpecSimulation? {
        registry(on: bridge).existing(spec)
    }

    /// Makes `specs` the peripherals on the air on `bridge`, as CoreBluetoothMock's
    /// `simulatePeripherals(_:)` replaces its list: each starts (or starts again) advertising as its
    /// spec says, with its delays counted from now; specs simulated before and not listed go off
    /// the air (their state is kept for when they come back).
    static func simulate(_ specs: [CBMPeripheralSpec], on bridge: MockBLEBridge) {
        let registry = registry(on: bridge)
        let listed = Set(specs.map(ObjectIdentifier.init))
        for simulation in registry.all where !listed.contains(ObjectIdentifier(simulation.spec)) {
            simulation.setActive(false)
        }
        var seen = Set<ObjectIdentifier>()
        for spec in specs where seen.insert(ObjectIdentifier(spec)).inserted {
            let (simulation, made) = registry.simulation(for: spec) { SpecSimulation(spec, on: bridge, state: $0) }
            spec.remember(simulation)
            if !made { simulation.setActive(true) }
        }
    }

    /// An identifier two of the distinct `specs` share on `bridge` (the one each has there now,
    /// or as built), if any.
    static func sharedIdentifier(of specs: [CBMPeripheralSpec], on bridge: MockBLEBridge) -> UUID? {
        var seen = Set<ObjectIdentifier>()
        var identifiers = Set<UUID>()
        for spec in specs where seen.insert(ObjectIdentifier(spec)).inserted {
            let identifier =
                existing(for: spec, on: bridge)?.identifier ?? registry(on: bridge).unsimulatedState(of: spec)?
                .identifier
                ?? spec.builtIdentifier
            if !identifiers.insert(identifier).inserted { return identifier }
        }
        return nil
    }

    // MARK: State

    /// The spec's state on this bridge now.
    var snapshot: State { lock.withLock { state } }

    /// Whether the spec is on the air (listed in the last `simulatePeripherals(_:)`).
    var isActive: Bool { lock.withLock { active } }

    /// The spec's delegate, or CoreBluetoothMock's default answers.
    var delegate: any CBMPeripheralSpecDelegate { spec.connectionDelegate ?? DefaultAnswers() }

    /// The peripheral's identifier now.
    var identifier: UUID { lock.withLock { state.identifier } }

    /// The simulated peripheral now.
    var peripheral: MockPeripheralManager { lock.withLock { current.peripheral } }

    /// Whether one of the simulation's peripherals (now or before a MAC change) has this identifier.
    func owns(_ peripheral: UUID) -> Bool {
        lock.withLock { current.identifier == peripheral || retired.contains { $0.identifier == peripheral } }
    }

    /// The incarnation with this identifier.
    private func incarnation(_ peripheral: UUID) -> Incarnation? {
        lock.withLock { current.identifier == peripheral ? current : retired.first { $0.identifier == peripheral } }
    }

    /// Every incarnation (the current one first).
    private var incarnations: [Incarnation] { lock.withLock { [current] + retired } }

    /// The service mock published at a handle of a peripheral.
    func serviceMock(at handle: UInt16, of peripheral: UUID) -> CBMServiceMock? {
        incarnation(peripheral)?.serviceMock(at: handle)
    }

    /// The characteristic mock published at a handle of a peripheral.
    func characteristicMock(at handle: UInt16, of peripheral: UUID) -> CBMCharacteristicMock? {
        incarnation(peripheral)?.characteristicMock(at: handle)
    }

    /// The error the spec's delegate answered a central's read or write of a characteristic with,
    /// when the simulated stack carried it as ATT 0x0E (the oldest not yet taken), if any.
    func takeDelegateError(central: UUID, handle: UInt16, of peripheral: UUID) -> (any Error)? {
        incarnation(peripheral)?.takeDelegateError(central: central, handle: handle)
    }

    /// The descriptor mock of a remote descriptor (by its characteristic and UUID).
    func descriptorMock(of descriptor: RemoteDescriptor) -> CBMDescriptorMock? {
        characteristicMock(at: descriptor.characteristic.handle, of: descriptor.peripheral)?.declaredDescriptorMocks
            .first { $0.uuid.bluetoothUUID == descriptor.uuid }
    }

    /// A scanning central heard the peripheral: the system knows it now (CoreBluetoothMock
    /// marks a spec known when a scan receives it).
    func noteDiscovered() {
        lock.withLock { state.isKnown = true }
    }

    /// Whether the device has its physical connection: a central of this bridge or another app
    /// is connected to it. A connection request then joins it without asking the spec's
    /// delegate, as in CoreBluetoothMock.
    var hasConnection: Bool { lock.withLock { !links.isEmpty || state.isConnectedBySystem } }

    /// A central's link to the peripheral came up: a disconnection error set for an earlier link
    /// is spent.
    func noteConnected(_ link: Link) {
        lock.withLock {
            disconnectionError = nil
            links.insert(link)
        }
    }

    /// A central's link to the peripheral ended. Returns whether the physical connection ended
    /// with it (it was the last link, and no other app is connected): then the spec's delegate
    /// hears of it. A link the peripheral's side ended already (``disconnect(withError:)``,
    /// ``reset()``, ``move(to:)``), or one that never came up (a cancelled attempt), ends none.
    func noteDisconnected(_ link: Link) -> Bool {
        lock.withLock { links.remove(link) != nil && links.isEmpty && !state.isConnectedBySystem }
    }

    /// The peripheral's side ends the physical connection: every link goes, and the result says
    /// whether there was one (its delegate is then told at once, as CoreBluetoothMock tells it).
    private func endConnection() -> Bool {
        lock.withLock {
            let connected = !links.isEmpty || state.isConnectedBySystem
            links.removeAll()
            state.isConnectedBySystem = false
            return connected
        }
    }

    /// The error to report for a disconnection the simulation decided with `error`: for a link
    /// that dropped (an error), the one a test gave `simulateDisconnection(withError:)`, if it set
    /// one, else `error`; a disconnection the app asked for (no error: it cancelled, say, the
    /// system's reconnection after that drop) has none, as in CoreBluetooth.
    func disconnectionError(replacing error: (any Error)?) -> (any Error)? {
        guard let error else { return nil }
        return lock.withLock { disconnectionError } ?? error
    }

    // MARK: The hooks

    /// Another app connects to the peripheral (when in range and on the air: as CoreBluetoothMock
    /// ignores a spec its last `simulatePeripherals(_:)` did not list, no app could reach one
    /// that is off the air, and its peripheral, which is not told, would go on advertising once
    /// listed again while the system reported it connected).
    func connectBySystem() {
        let go = lock.withLock { () -> Bool in
            guard state.proximity != .outOfRange, active else { return false }
            state.isConnectedBySystem = true
            return true
        }
        guard go else { return }
        SystemPeripheralNameBook.of(bridge).update { $0.noteConnected(identifier) }
        current.command { $0.simulateConnectionBySystem(true) }
    }

    /// The peripheral drops every link; the app hears `error`, and so does the spec's delegate,
    /// once, at once, if the device was connected. The app hears it at once, but for a
    /// connection timeout: then, as in CoreBluetoothMock, its links stay up for the spec's
    /// supervision timeout with nothing heard from the device (requests get no answer), then
    /// end with `error`.
    func disconnect(withError error: any Error) {
        let reason = (error as? CBMError).flatMap { CoreBluetoothError.Code(rawValue: $0.code.rawValue) }
        if endConnection() { delegate.peripheral(spec, didDisconnect: error) }
        lock.withLock { disconnectionError = error }
        let worldError = CoreBluetoothError(reason ?? .peripheralDisconnected)
        let silently = reason == .connectionTimeout
        for incarnation in incarnations {
            incarnation.command { peripheral in
                if silently {
                    peripheral.simulateSilentDisconnection()
                } else {
                    for central in peripheral.connectedCentrals {
                        peripheral.simulateDisconnection(of: central, error: worldError)
                    }
                }
                peripheral.simulateConnectionBySystem(false)
            }
        }
    }

    /// The peripheral resets: centrals lose their links with `connectionTimeout` after the
    /// spec's supervision timeout. The spec's delegate is not told of the disconnection: its
    /// `reset()` says it all (the device restarted), as in CoreBluetoothMock.
    func reset() {
        _ = endConnection()
        for incarnation in incarnations {
            incarnation.command { peripheral in
                peripheral.simulateReset()
                // Another app's connection ends too: the device advertises again at once.
                peripheral.simulateConnectionBySystem(false)
            }
        }
    }

    /// The peripheral moves. Out of range, its connection times out: the spec's delegate hears
    /// `connectionTimeout` at once, if it was connected, and centrals after the spec's
    /// supervision timeout, as in CoreBluetoothMock.
    func move(to proximity: CBMProximity) {
        if proximity == .outOfRange, endConnection() {
            delegate.peripheral(spec, didDisconnect: CBMError(.connectionTimeout))
        }
        let go = lock.withLock { () -> Bool in
            state.proximity = proximity
            return active
        }
        guard go else { return }
        for incarnation in incarnations {
            incarnation.command { peripheral in
                peripheral.simulateProximityChange(proximity.proximity)
                // Out of range, another app's connection ends too (the spec's state says so).
                if proximity == .outOfRange { peripheral.simulateConnectionBySystem(false) }
            }
        }
    }

    /// The peripheral's RSSI varies by ±`spread` dBm from now on.
    func setRSSIVariation(_ spread: Int) {
        for incarnation in incarnations { incarnation.command { $0.setRSSIVariation(spread) } }
    }

    /// The system caches the peripheral.
    func cache() {
        let go = lock.withLock { () -> Bool in
            state.isKnown = true
            return active
        }
        if go { current.command { $0.simulateCaching() } }
    }

    /// Sends a value to the subscribed centrals.
    func update(_ data: Data, for mock: CBMCharacteristicMock) {
        guard isActive else { return }
        for incarnation in incarnations { incarnation.update(data, for: mock) }
    }

    /// Replaces the services and the name (centrals see their services invalidated, and the
    /// name change when it is a change, as in CoreBluetoothMock).
    func replaceServices(_ services: [CBMServiceMock], name: String?) {
        let (go, renamed) = lock.withLock { () -> (Bool, Bool) in
            let renamed = state.name != name
            state.services = services
            state.name = name
            return (active, renamed)
        }
        if go { current.replaceServices(services, name: name, renamed: renamed) }
    }

    /// The peripheral advertises something else (`nil`: it stops).
    func changeAdvertisement(_ advertisement: [CBMAdvertisementConfig]?) {
        let go = lock.withLock { () -> Bool in
            state.advertisement = advertisement
            return active
        }
        if go { current.advertise(advertisement, connectable: snapshot.services != nil) }
    }

    /// The peripheral changes its address: it gets `identifier` (or one derived from the
    /// bridge's seed) and the system no longer knows it. Links it has stay up, as in
    /// CoreBluetoothMock; the peripheral under the new address advertises from now on.
    func changeIdentifier(to identifier: UUID?) {
        let (fresh, old, now) = lock.withLock { () -> (Incarnation, Incarnation, State) in
            Self.changeIdentifier(of: &state, spec: spec, to: identifier, seed: bridge.configuration.seed)
            let old = current!
            let fresh = Incarnation(simulation: self, identifier: state.identifier)
            retired.append(old)
            current = fresh
            return (fresh, old, state)
        }
        old.retire()
        guard isActive else { return fresh.setUp(state: now, startOutOfRange: true, connectedBySystem: false) }
        fresh.setUp(
            state: now, startOutOfRange: now.proximity == .outOfRange, connectedBySystem: now.isConnectedBySystem)
    }

    /// A spec changes its address (`state`: its simulation's, or the state its simulation on a
    /// bridge will start in): to `identifier`, or one derived from the bridge's `seed`, unknown
    /// to the system.
    static func changeIdentifier(of state: inout State, spec: CBMPeripheralSpec, to identifier: UUID?, seed: UInt64) {
        state.macChanges += 1
        state.identifier = identifier ?? derivedIdentifier(spec: spec, seed: seed, change: state.macChanges)
        state.isKnown = false
    }

    /// The bridges of uninstalled simulated systems are marked so (a spec's calls made from
    /// elsewhere do not reach a simulation left there), with ``retiredSystemsOwn`` when the
    /// system had made the bridge, or ``retiredTestsOwn`` when a test had installed it on a bridge
    /// of its own (which stays the test's).
    static let retiredKey = "BLECBM.retiredSystem"
    /// ``retiredKey``'s value on a bridge the uninstalled system had made.
    static let retiredSystemsOwn = 1
    /// ``retiredKey``'s value on a test's bridge the uninstalled system was installed on.
    static let retiredTestsOwn = 2

    /// Whether the simulation's bridge was an uninstalled system's, or is gone.
    var isOnRetiredBridge: Bool {
        guard let bridge = weakBridge else { return true }
        return bridge.frontEndSettings[Self.retiredKey] != nil
    }

    /// An identifier for a MAC address change, from the bridge's seed and the spec's first one.
    static func derivedIdentifier(spec: CBMPeripheralSpec, seed: UInt64, change: UInt64) -> UUID {
        var generator = SeededGenerator(seed: seed).derived("BLECBM.macChange").derived(spec.builtIdentifier.uuidString)
            .derived(change)
        return generator.uuid()
    }

    /// Puts the spec on the air again (or takes it off), as `simulatePeripherals(_:)` lists it.
    private func setActive(_ isActive: Bool) {
        let (changed, state) = lock.withLock { () -> (Bool, State) in
            defer { active = isActive }
            return (active != isActive, self.state)
        }
        if isActive {
            // Listed again: advertising starts over, its delays counted from now.
            current.restart(state: state)
        } else if changed {
            current.takeOffAir()
        }
    }

    /// The seconds of a CoreBluetoothMock interval as a duration (to the microsecond): none for
    /// a negative or NaN interval, at most ``longestInterval`` (an infinite or absurdly long one
    /// waits that long, where converting it would trap).
    static func duration(_ seconds: TimeInterval) -> Duration {
        guard seconds > 0 else { return .zero }
        return .microseconds(Int64((min(seconds, longestInterval) * 1e6).rounded()))
    }

    /// The longest interval or delay a spec's time takes, in seconds: about 31 years of virtual
    /// time, far beyond any test and far from the clock's limits.
    static let longestInterval: TimeInterval = 1e9

    /// The supervision timeout of a spec's links: its `seconds` (to the microsecond; zero drops
    /// them at once, as CoreBluetoothMock does), at most ``longestSupervisionTimeout``; a
    /// negative or NaN one is the builder's default, as a bad advertising interval is the
    /// default one.
    static func supervisionTimeout(_ seconds: TimeInterval) -> Duration {
        guard seconds >= 0 else { return duration(defaultSupervisionTimeout) }
        return duration(min(seconds, longestSupervisionTimeout))
    }

    /// The builder's supervision timeout, in seconds (CoreBluetoothMock's default).
    static let defaultSupervisionTimeout: TimeInterval = 4.0

    /// The longest supervision timeout a link can have, in seconds: 32 s (Core, Vol 6, Part B,
    /// 4.5.2); a longer one a spec asks for is cut to it.
    static let longestSupervisionTimeout: TimeInterval = 32

    /// The connection interval a spec's peripheral asks for: its `seconds` to the nearest
    /// 1.25 ms (the unit of a connection parameter request, Core, Vol 3, Part A, 4.20), within
    /// 7.5 ms…4 s (the Core specification's intervals, Vol 6, Part B, 4.5.1): a shorter one,
    /// zero too, is 7.5 ms, a longer one, infinity too, 4 s; a negative or NaN one is the
    /// builder's default, as a bad supervision timeout or advertising interval is the default one.
    static func connectionInterval(_ seconds: TimeInterval) -> Duration {
        let unit = 0.001_25
        let given = seconds >= 0 ? seconds : defaultConnectionInterval
        let units = (min(given, longestConnectionInterval) / unit).rounded()
        return .microseconds(1_250 * Int64(max(units, 6)))
    }

    /// The builder's connection interval, in seconds (CoreBluetoothMock's default).
    static let defaultConnectionInterval: TimeInterval = 0.045

    /// The longest connection interval a link can have, in seconds: 4 s (Core, Vol 6, Part B,
    /// 4.5.1); a longer one a spec asks for is cut to it.
    static let longestConnectionInterval: TimeInterval = 4

    /// An advertisement from CoreBluetooth's dictionary.
    static func advertisementData(_ data: [String: Any], connectable: Bool) -> AdvertisementData {
        var advertisement = AdvertisementData(dictionary: data, keys: .platform) { (uuid: CBMUUID) in uuid.bluetoothUUID
        }
        advertisement.isConnectable = advertisement.isConnectable ?? connectable
        return advertisement
    }

    /// The setting key of `CBMCentralManagerMock.simulateRSSIDeviation(_:)`.
    static let deviationKey = "BLECBM.rssiDeviation"

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
