import BLECore
import BLEMockKit
import Foundation

/// A simulated peripheral, declared once (CoreBluetoothMock's `CBMPeripheralSpec`): what it
/// advertises, its services, and the delegate answering its requests.
///
/// Unlike CoreBluetoothMock, which keeps one simulation in statics, a spec is a description
/// plus one simulation per bridge: ``CBMCentralManagerMock/simulatePeripherals(_:)`` puts it on
/// the current test's bridge (`MockBLEBridge.current`) or, when none is current, on the installed
/// ``SimulatedSystem``; every `simulate…` call and every property below acts on that
/// simulation. So a spec declared as a global `let` serves many tests at once, each with its own
/// state, and the calls work from any thread (a delegate callback, a notification handler).
///
/// Calls that change the spec's state (``simulateProximityChange(_:)``, ``simulateCaching()``,
/// ``simulateMacChange(_:)``, ``simulateAdvertisementChange(_:)``) count before the spec is
/// simulated, as CoreBluetoothMock keeps that state in the spec: on the current test's bridge,
/// or outside one on the simulated system (installed if none is), and the spec's simulation
/// there starts in it. A spec's state does not outlive its simulation: after
/// ``CBMCentralManagerMock/tearDownSimulation()`` the next system starts it as built.
public final class CBMPeripheralSpec: @unchecked Sendable, Hashable {
    // @unchecked Sendable: the `built…` properties are set by the builder before `build()`
    // returns and never changed; the state the `simulate…` calls change lives in each
    // simulation of the spec (one per bridge), and `simulations` is a lock-guarded list.

    let builtIdentifier: UUID
    let builtName: String?
    let builtProximity: CBMProximity
    let builtIsKnown: Bool
    let builtAdvertisement: [CBMAdvertisementConfig]?
    let builtServices: [CBMServiceMock]?
    /// Where the spec is simulated (held weakly: a bridge's simulation goes with the bridge).
    private let simulations = WeakList<SpecSimulation>()

    /// Whether another app is connected to it from the start (``Builder/connected(name:services:delegate:connectionInterval:supervisionTimeout:mtu:)``).
    public let isInitiallyConnected: Bool
    /// The connection interval, in seconds, the peripheral asks for (`nil` for a spec that is not
    /// connectable). CoreBluetoothMock completes each request one interval after it is made;
    /// here, in realistic timing (virtual time, or the ``SimulatedSystem``'s wall-clock time),
    /// once a link to the peripheral is up it asks for this interval, as a device asks with a
    /// connection parameter update request, and the central grants it within its own rules:
    /// the link's connection events, which carry every request and answer, then fall at it (so a
    /// read takes about one interval), in place of the bridge's `LinkTiming.connectionInterval`
    /// or the interval its `peripheralProfile` asks for, for this peripheral's links only. With
    /// a `LinkTiming.centralProfile` the central grants only a whole number of its steps (15 ms
    /// on iOS) within its range, and keeps its default interval otherwise; without one, it
    /// grants the interval asked for. Connecting still takes the bridge's timing (the link comes
    /// up at the central's interval). In fast mode nothing takes time, this interval included.
    ///
    /// The interval asked for is this one to the nearest 1.25 ms (the unit of the request), within
    /// 7.5 ms…4 s (the Core specification's intervals): a shorter one, zero included, is taken
    /// as 7.5 ms, a longer one as 4 s, and a negative or NaN one as the builder's default,
    /// 45 ms, as a bad ``supervisionTimeout`` or advertising interval is the default one. A
    /// ``supervisionTimeout`` (not zero) that is not more than twice the interval granted, which
    /// the Core specification forbids, is lengthened to the shortest it allows: the next 10 ms
    /// above twice the interval. (This property keeps the value as given.)
    public let connectionInterval: TimeInterval?
    /// How long, in seconds, the links to the peripheral survive once nothing is heard from it
    /// (`nil` for a spec that is not connectable): when it resets (``simulateReset()``), goes out of
    /// range (``simulateProximityChange(_:)``) or drops its links with a connection timeout
    /// (``simulateDisconnection(withError:)``), centrals lose their links with `connectionTimeout`
    /// this long after, as in CoreBluetoothMock, in place of the bridge's
    /// `LinkTiming.supervisionTimeout`, in fast and realistic timing, virtual or wall-clock time
    /// alike. Zero drops them at once; a longer one than 32 s (the Core specification's longest)
    /// is cut to 32 s; a negative or NaN one is taken as the builder's default, 4 s, as a bad
    /// advertising interval is the default one. In realistic timing one not more than twice the
    /// link's interval is lengthened (see ``connectionInterval``). (This property keeps the
    /// value as given.)
    public let supervisionTimeout: TimeInterval?
    /// The peripheral's ATT_MTU (23…517): the link uses the smaller of it and the central's.
    public let mtu: Int?
    /// Answers the peripheral's requests.
    public let connectionDelegate: (any CBMPeripheralSpecDelegate)?

    init(builder: Builder) {
        builtIdentifier = builder.identifier
        builtName = builder.name
        builtProximity = builder.proximity
        builtIsKnown = builder.isKnown
        isInitiallyConnected = builder.isInitiallyConnected
        builtAdvertisement = builder.advertisement
        builtServices = builder.services
        connectionInterval = builder.connectionInterval
        supervisionTimeout = builder.supervisionTimeout
        mtu = builder.mtu
        connectionDelegate = builder.delegate
    }

    // The spec's state, as CoreBluetoothMock keeps it in the spec: in the simulation the calls
    // below act on (see ``simulation(for:)``), or as built when it is simulated nowhere.

    /// The peripheral's identifier (a new one after ``simulateMacChange(_:)``).
    public var identifier: UUID { state?.identifier ?? builtIdentifier }
    /// Its GAP name (connectable peripherals; changed by ``simulateServiceChange(newName:newServices:)``).
    public var name: String? { state.map { $0.name } ?? builtName }
    /// Where it is, relative to the central (changed by ``simulateProximityChange(_:)``).
    public var proximity: CBMProximity { state?.proximity ?? builtProximity }
    /// Whether the system knows it: retrievable by identifier without a scan (``Builder/allowForRetrieval()``,
    /// ``simulateCaching()``, or a scan that found it; not after ``simulateMacChange(_:)``).
    public var isKnown: Bool { state?.isKnown ?? builtIsKnown }
    /// Whether the device is connected, as CoreBluetoothMock counts its connections: a central
    /// manager's link to it is up, or another app holds a connection to it (built
    /// ``Builder/connected(name:services:delegate:connectionInterval:supervisionTimeout:mtu:)``, or
    /// ``simulateConnection()``). It becomes `true` as the link comes up (before the app's
    /// `didConnect`), and `false` once the last link ends (before the app's `didDisconnect`), or at
    /// once when the device drops its links (``simulateDisconnection(withError:)``,
    /// ``simulateReset()``, ``simulateProximityChange(_:)`` out of range).
    public var isConnected: Bool {
        // (Not simulated where calls act now: as built, since only a simulation connects.)
        target(for: nil, installing: false)?.simulation?.hasConnection ?? isInitiallyConnected
    }
    /// Its advertising sets (changed by ``simulateAdvertisementChange(_:)``).
    public var advertisement: [CBMAdvertisementConfig]? { state.map { $0.advertisement } ?? builtAdvertisement }
    /// Its services, for connectable peripherals (changed by ``simulateServiceChange(newName:newServices:)``).
    public var services: [CBMServiceMock]? { state.map { $0.services } ?? builtServices }

    /// Starts describing a simulated peripheral. Without an identifier, ``Builder/build()``
    /// derives one from what the spec describes (its names, advertised data and service UUIDs),
    /// so it is the same in every run, as the kit draws nothing at random.
    public static func simulatePeripheral(identifier: UUID? = nil, proximity: CBMProximity = .immediate) -> Builder {
        Builder(identifier: identifier, proximity: proximity)
    }

    /// Whether the two are one spec. (CoreBluetoothMock compares identifiers; a spec's identifier
    /// changes with ``simulateMacChange(_:)``, and a spec is `Hashable` here, so it is compared by
    /// identity: two specs built with one identifier are two specs.)
    public static func == (lhs: CBMPeripheralSpec, rhs: CBMPeripheralSpec) -> Bool { lhs === rhs }

    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }

    /// Describes a simulated peripheral step by step.
    public final class Builder {
        let givenIdentifier: UUID?
        let proximity: CBMProximity
        var name: String?
        var isKnown = false
        var isInitiallyConnected = false
        var advertisement: [CBMAdvertisementConfig]?
        var services: [CBMServiceMock]?
        var connectionInterval: TimeInterval?
        var supervisionTimeout: TimeInterval?
        var mtu: Int?
        var delegate: (any CBMPeripheralSpecDelegate)?

        init(identifier: UUID?, proximity: CBMProximity) {
            self.givenIdentifier = identifier
            self.proximity = proximity
        }

        /// The identifier given, or one derived from the description (FNV-1a over its text).
        var identifier: UUID {
            if let givenIdentifier { return givenIdentifier }
            var text = "\(name ?? "")|\(isKnown)|\(isInitiallyConnected)|\(mtu ?? 0)"
            for set in advertisement ?? [] {
                let keys = set.data.keys.sorted()
                text += "|" + keys.map { "\($0)=\(String(describing: set.data[$0]!))" }.joined(separator: ",")
                text += "@\(set.interval)+\(set.delay)"
            }
            for service in services ?? [] {
                text += "|" + service.uuid.uuidString
                text += (service.characteristics ?? []).map { ":" + $0.uuid.uuidString }.joined()
            }
            var high: UInt64 = 0xcbf2_9ce4_8422_2325
            var low: UInt64 = 0x8422_2325_cbf2_9ce4
            for byte in text.utf8 {
                high = (high ^ UInt64(byte)) &* 0x0000_0100_0000_01B3
                low = (low ^ UInt64(byte)) &* 0x0000_0100_0000_01B3 &+ high
            }
            var bytes = [UInt8](repeating: 0, count: 16)
            for index in 0..<8 {
                bytes[index] = UInt8(truncatingIfNeeded: high >> (8 * index))
                bytes[8 + index] = UInt8(truncatingIfNeeded: low >> (8 * index))
            }
            bytes[6] = (bytes[6] & 0x0F) | 0x80  // a version nibble no random UUID has
            bytes[8] = (bytes[8] & 0x3F) | 0x80
            return UUID(
                uuid: (
                    bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7], bytes[8],
                    bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]
                ))
        }

        /// Adds an advertising set: the data (CoreBluetooth's keys), every `interval` seconds
        /// (once if 0), starting after `delay`. Unless `alsoWhenConnected`, scans do not hear it
        /// while the device is connected (to any app), and hear it again once it disconnects.
        public func advertising(
            advertisementData: [String: Any], withInterval interval: TimeInterval = 0.100, delay: TimeInterval = 0.0,
            alsoWhenConnected advertisingWhenConnected: Bool = false
        ) -> Builder {
            advertisement =
                (advertisement ?? []) + [
                    CBMAdvertisementConfig(
                        data: advertisementData, interval: interval, delay: delay,
                        isAdvertisingWhenConnected: advertisingWhenConnected)
                ]
            return self
        }

        /// Makes the peripheral connectable, with its services and the delegate answering them.
        /// Its `mtu` is clamped to 23…517, as in CoreBluetoothMock. Its `connectionInterval`
        /// (45 ms by default, as in CoreBluetoothMock) is the interval its links run at in
        /// realistic timing, as far as the central grants it (see
        /// ``CBMPeripheralSpec/connectionInterval``). Its `supervisionTimeout` (4 s by default,
        /// as in CoreBluetoothMock) is how long its links survive once nothing is heard from it
        /// (see ``CBMPeripheralSpec/supervisionTimeout``).
        public func connectable(
            name: String, services: [CBMServiceMock], delegate: (any CBMPeripheralSpecDelegate)?,
            connectionInterval: TimeInterval = 0.045, supervisionTimeout: TimeInterval = 4.0, mtu: Int = 23
        ) -> Builder {
            self.name = name
            self.services = services
            self.delegate = delegate
            self.connectionInterval = connectionInterval
            self.supervisionTimeout = supervisionTimeout
            self.mtu = min(max(mtu, 23), 517)
            // (As in CoreBluetoothMock: the last of `connected` and `connectable` says which.)
            isInitiallyConnected = false
            return self
        }

        /// As ``connectable(name:services:delegate:connectionInterval:supervisionTimeout:mtu:)``,
        /// with another app already connected to it (retrievable as connected, and known).
        public func connected(
            name: String, services: [CBMServiceMock], delegate: (any CBMPeripheralSpecDelegate)?,
            connectionInterval: TimeInterval = 0.045, supervisionTimeout: TimeInterval = 4.0, mtu: Int = 23
        ) -> Builder {
            _ = connectable(
                name: name, services: services, delegate: delegate, connectionInterval: connectionInterval,
                supervisionTimeout: supervisionTimeout, mtu: mtu)
            isInitiallyConnected = true
            isKnown = true
            return self
        }

        /// Makes the peripheral known to the system: retrievable by identifier without a scan.
        public func allowForRetrieval() -> Builder {
            isKnown = true
            return self
        }

        /// The spec.
        public func build() -> CBMPeripheralSpec { CBMPeripheralSpec(builder: self) }
    }
}

extension CBMPeripheralSpec {
    /// Where a `simulate…` call acts: the spec's simulation, or a bridge it is not simulated on
    /// yet (calls that change its state, as CoreBluetoothMock keeps it in the spec object,
    /// change the state its simulation there will start in).
    enum Target {
        case simulation(SpecSimulation)
        case unsimulated(on: MockBLEBridge)

        var simulation: SpecSimulation? {
            if case .simulation(let simulation) = self { return simulation }
            return nil
        }
    }

    /// Where a `simulate…` call acts: on the current test's bridge when one is current (the
    /// spec's simulation there, or the spec's state there until it is simulated); else its
    /// simulation on the installed ``SimulatedSystem``; else the one bridge it is simulated on,
    /// wherever the call comes from (a spec remembers where it is simulated; an uninstalled
    /// system's bridge does not count); else, simulated nowhere, the spec's state on the
    /// system (installing it if none is, as CoreBluetoothMock's statics do). With `call`, a call
    /// that finds no target (the spec is simulated on several bridges, none current) says so on
    /// standard error; without, none is installed.
    func target(for call: String?, installing: Bool = true) -> Target? {
        if let bridge = BridgeScope.testBridge {
            return SpecSimulation.existing(for: self, on: bridge).map(Target.simulation) ?? .unsimulated(on: bridge)
        }
        let system = SimulatedSystem.current
        if let system, let simulation = SpecSimulation.existing(for: self, on: system.bridge) {
            return .simulation(simulation)
        }
        let live = simulations.all.filter { !$0.isOnRetiredBridge }
        if live.count == 1 { return .simulation(live[0]) }
        if live.isEmpty {
            if let system { return .unsimulated(on: system.bridge) }
            guard let call, installing else { return nil }
            return .unsimulated(on: BridgeScope.forCoreBluetoothMock(call, of: "CBMPeripheralSpec"))
        }
        if let call {
            Warning.emit(
                "CBMPeripheralSpec.\(call): the spec is simulated on \(live.count) bridges and none is current; "
                    + "call it inside the test's bridge scope (a delegate callback of its managers is one). "
                    + "The call does nothing.")
        }
        return nil
    }

    /// The spec's simulation a `simulate…` call acts on (see ``target(for:installing:)``); none
    /// when it is not simulated there yet: the call then does nothing, as in CoreBluetoothMock,
    /// whose central manager ignores a peripheral it does not simulate (with `call`, a call made
    /// outside any bridge or system says so on standard error).
    func simulation(for call: String?) -> SpecSimulation? {
        let target = target(for: call, installing: false)
        if let call, target == nil, BridgeScope.testBridge == nil, SimulatedSystem.current == nil,
            simulations.all.allSatisfy(\.isOnRetiredBridge)
        {
            Warning.emit(
                "CBMPeripheralSpec.\(call): the spec is not simulated on any bridge; call "
                    + "CBMCentralManagerMock.simulatePeripherals(_:) first. The call does nothing.")
        }
        return target?.simulation
    }

    /// The spec's state where calls act now (without installing a system), if it is simulated
    /// there or calls changed it there.
    var state: SpecSimulation.State? {
        switch target(for: nil, installing: false) {
        case .simulation(let simulation): simulation.snapshot
        case .unsimulated(let bridge): SpecSimulation.registry(on: bridge).unsimulatedState(of: self)
        case nil: nil
        }
    }

    /// A `simulate…` call that changes the spec's state: `simulated` on its simulation, or
    /// `unsimulated` on the state its simulation on a bridge will start in (see
    /// ``target(for:installing:)``).
    private func changeState(
        _ call: String, simulated: (SpecSimulation) -> Void,
        unsimulated: (inout SpecSimulation.State, MockBLEBridge) -> Void
    ) {
        switch target(for: call) {
        case .simulation(let simulation): simulated(simulation)
        case .unsimulated(let bridge):
            SpecSimulation.registry(on: bridge).changeUnsimulated(self) { unsimulated(&$0, bridge) }
        case nil: break
        }
    }

    /// Notes a simulation of the spec (so calls from anywhere find it).
    func remember(_ simulation: SpecSimulation) { simulations.add(simulation) }

    /// Another app connects to the peripheral (it becomes retrievable as connected); nothing
    /// happens out of range, or when the last ``CBMCentralManagerMock/simulatePeripherals(_:)``
    /// did not list the spec, as in CoreBluetoothMock.
    public func simulateConnection() {
        simulation(for: "simulateConnection()")?.connectBySystem()
    }

    /// The peripheral drops every link; the app's delegate hears `error`
    /// (`peripheralDisconnected` by default), whatever error it is, and so does the spec's
    /// delegate, once, at once, if the device was connected. The app hears it at once, but for
    /// `CBMError(.connectionTimeout)`: then, as in CoreBluetoothMock, it hears it after the
    /// spec's ``supervisionTimeout`` (4 s by default); until then its links stay up with nothing
    /// heard from the device, as when a peer goes silent (requests get no answer and fail with
    /// the disconnection; subscriptions send nothing).
    public func simulateDisconnection(withError error: any Error = CBMError(.peripheralDisconnected)) {
        simulation(for: "simulateDisconnection(withError:)")?.disconnect(withError: error)
    }

    /// The peripheral resets: the delegate's `reset()` is called (and not
    /// `peripheral(_:didDisconnect:)`), and centrals lose their links with `connectionTimeout`
    /// after the spec's ``supervisionTimeout`` (4 s by default), as in CoreBluetoothMock; until
    /// then their links stay up with nothing heard from the device (requests get no answer).
    /// A reset changes none of the state the spec keeps, so a call outside any bridge and
    /// simulated system (a `tearDown` after ``CBMCentralManagerMock/tearDownSimulation()``)
    /// calls `reset()` alone and installs no system, which the next test would find installed.
    public func simulateReset() {
        let target = target(for: "simulateReset()", installing: false)
        // (None: simulated on several bridges, none current, which the call said; or simulated
        // nowhere, where the delegate is told all the same, as in CoreBluetoothMock.)
        guard target != nil || simulations.all.allSatisfy(\.isOnRetiredBridge) else { return }
        connectionDelegate?.reset()
        target?.simulation?.reset()
    }

    /// The peripheral changes its name and services, as in CoreBluetoothMock: a service listed
    /// again (the same mock) stays, discovered where it was; centrals see the others invalidated
    /// (`didModifyServices`), then the name, when it is not the name it had. Does nothing for a
    /// spec that is not connectable (built with no services), as in CoreBluetoothMock. (A
    /// connectable spec built with no delegate connects here, answering as CoreBluetoothMock's
    /// default delegate methods do, so its service changes reach its apps too; CoreBluetoothMock
    /// never connects such a spec.)
    public func simulateServiceChange(newName: String?, newServices: [CBMServiceMock]) {
        guard builtServices != nil,
            let simulation = simulation(for: "simulateServiceChange(newName:newServices:)")
        else { return }
        simulation.replaceServices(newServices, name: newName)
    }

    /// The peripheral moves. Out of range, scans no longer hear it and its links time out: the
    /// spec's delegate hears `connectionTimeout` at once, centrals after the spec's
    /// ``supervisionTimeout`` (4 s by default), as in CoreBluetoothMock (back in range before
    /// then, the links live on); back in range, pending connections complete at its next
    /// advertisement.
    public func simulateProximityChange(_ proximity: CBMProximity) {
        changeState("simulateProximityChange(_:)") {
            $0.move(to: proximity)
        } unsimulated: { state, _ in
            state.proximity = proximity
        }
    }

    /// The peripheral notifies (or indicates) a new value to its subscribed centrals. Does
    /// nothing for a characteristic that is not one of the spec's, as in CoreBluetoothMock.
    /// The characteristic takes the value wherever the spec is simulated, or not; called outside
    /// any bridge or system, with the spec simulated nowhere, that is all it does (it installs no
    /// simulated system: no central could hear the value).
    public func simulateValueUpdate(_ data: Data, for characteristic: CBMCharacteristicMock) {
        let target = target(for: "simulateValueUpdate(_:for:)", installing: false)
        guard
            (target?.simulation?.snapshot.services ?? services)?.contains(where: {
                $0.characteristicMocks.contains { $0 === characteristic }
            }) == true
        else { return }
        characteristic.value = data
        target?.simulation?.update(data, for: characteristic)
    }

    /// The peripheral advertises something else (`nil`: it stops advertising), from now on, as
    /// in CoreBluetoothMock: each set, the first too, starts after its delay, counted from now,
    /// and repeats at its interval (once for an interval of 0).
    public func simulateAdvertisementChange(_ advertisement: [CBMAdvertisementConfig]?) {
        changeState("simulateAdvertisementChange(_:)") {
            $0.changeAdvertisement(advertisement)
        } unsimulated: { state, _ in
            state.advertisement = advertisement
        }
    }

    /// The peripheral changes its address (CoreBluetoothMock's `simulateMacChange(_:)`): from now
    /// on ``identifier`` is `newIdentifier` (by default one derived from the bridge's seed, so
    /// the same in every run) and the system no longer knows it: centrals that scan see a new
    /// peripheral, and retrieving it needs ``simulateCaching()`` or a scan again. Links it has
    /// stay up, as in CoreBluetoothMock.
    public func simulateMacChange(_ newIdentifier: UUID? = nil) {
        changeState("simulateMacChange(_:)") {
            $0.changeIdentifier(to: newIdentifier)
        } unsimulated: { state, bridge in
            SpecSimulation.changeIdentifier(of: &state, spec: self, to: newIdentifier, seed: bridge.configuration.seed)
        }
    }

    /// The system caches the peripheral: retrievable by identifier without a scan, at once.
    public func simulateCaching() {
        changeState("simulateCaching()") {
            $0.cache()
        } unsimulated: { state, _ in
            state.isKnown = true
        }
    }
}
