import BLECore
import BLEMockKit
import Foundation

/// CoreBluetoothMock's peripheral class, for code that names it (`peripheral as? CBMPeripheralMock`,
/// a subclass of it): here every peripheral object a simulated central hands out is a
/// ``CBMPeripheral``, which is a class (CoreBluetoothMock's `CBMPeripheral` is a protocol that
/// its `CBMPeripheralMock` and `CBMPeripheralNative` classes adopt).
public typealias CBMPeripheralMock = CBMPeripheral

/// CoreBluetoothMock's central manager class and its static simulation calls.
///
/// The statics act on the current test's bridge (`MockBLEBridge.current`) when there is one, so
/// tests with bridges of their own run in parallel, each simulating its own peripherals and
/// states. Otherwise they act on the process-wide ``SimulatedSystem``, installing one
/// (realistic, seed 0, time following the wall clock, Bluetooth off until a test turns it on)
/// when none is, as CoreBluetoothMock's simulation is always there: so they work in
/// `setUpWithError`, in synchronous XCTest methods, and from any thread.
/// ``tearDownSimulation()`` uninstalls it.
open class CBMCentralManagerMock: CBMCentralManager, @unchecked Sendable {
    /// Creates a mock manager with no delegate, on the main queue.
    public convenience init() {
        self.init(delegate: nil, queue: nil, options: nil)
    }

    /// Creates a mock manager whose delegate is called on `queue` (the main queue when `nil`).
    public convenience init(delegate: (any CBMCentralManagerDelegate)?, queue: DispatchQueue?) {
        self.init(delegate: delegate, queue: queue, options: nil)
    }

    /// Creates a mock manager with options, on the current test's bridge or the simulated system.
    public override init(
        delegate: (any CBMCentralManagerDelegate)?, queue: DispatchQueue?, options: [String: Any]? = nil
    ) {
        super.init(
            joining: BridgeScope.joinedForCoreBluetoothMock("init"), delegate: delegate, queue: queue, options: options,
            configuration: nil)
    }

    /// Puts peripherals on the air (CoreBluetoothMock replaces its list: specs simulated before
    /// and not listed go off the air, and each listed one starts advertising again, its delays
    /// counted from now). As in CoreBluetoothMock, it is refused (with a warning) while managers
    /// exist and Bluetooth is on: turn it off first (``simulatePowerOff()``).
    ///
    /// Two specs with the same identifier would be one device to the system: the call is refused
    /// (with a warning, also named by a stalled run's report). Give each spec its own identifier
    /// (specs built alike without one get the same, derived from what they describe).
    public static func simulatePeripherals(_ peripherals: [CBMPeripheralSpec]) {
        let bridge = BridgeScope.forCoreBluetoothMock("simulatePeripherals(_:)")
        let state = MockCentralEngine.initialState(on: bridge) ?? .poweredOn
        let live = MockCentralEngine.engines(on: bridge).filter { !$0.isInvalidated }
        guard live.isEmpty || state == .poweredOff else {
            // Which managers, and where: an earlier test whose tearDown did not call
            // tearDownSimulation() leaves its managers on the system, and this is all the next
            // test would see of it (also kept for its stall or failure).
            let names = live.map(\.name).joined(separator: ", ")
            let system = SimulatedSystem.current.flatMap { $0.bridge === bridge ? $0 : nil }
            let place = system.map { "the simulated system installed by \($0.installedBy)" } ?? "the test's bridge"
            let message =
                "CBMCentralManagerMock.simulatePeripherals(_:): peripherals cannot change while managers exist and "
                + "Bluetooth is on (\(names), on \(place)); call simulatePowerOff() first, or simulate them before "
                + "creating managers (those an earlier test left count too, when its tearDown did not call "
                + "CBMCentralManagerMock.tearDownSimulation()). The call does nothing."
            UnansweredCallLog.of(bridge).note(message)
            return Warning.emit(message)
        }
        if let shared = SpecSimulation.sharedIdentifier(of: peripherals, on: bridge) {
            let message =
                "CBMCentralManagerMock.simulatePeripherals(_:): two specs have the identifier \(shared.uuidString); "
                + "give each its own (CBMPeripheralSpec.simulatePeripheral(identifier:)). The call does nothing."
            UnansweredCallLog.of(bridge).note(message)
            return Warning.emit(message)
        }
        SpecSimulation.simulate(peripherals, on: bridge)
    }

    /// Sets Bluetooth's state: managers created from now on start in it, and existing managers
    /// change to it, as in CoreBluetoothMock (`poweredOn` unless set, on a test's bridge; a
    /// simulated system CoreBluetoothMock's statics installed starts `poweredOff`).
    public static func simulateInitialState(_ state: CBMManagerState) {
        simulateStateChange(state, "simulateInitialState(_:)")
    }

    /// Bluetooth is turned on: every central manager; managers of either role created later start
    /// powered on.
    public static func simulatePowerOn() { simulateStateChange(.poweredOn, "simulatePowerOn()") }

    /// Bluetooth is turned off: every central manager; managers of either role created later start
    /// powered off. Central managers forget their peripherals (the objects are invalid, as in
    /// CoreBluetooth). Existing peripheral managers are left alone, as a `CBMPeripheralManager`
    /// on the bridge often plays another device; turn one off with
    /// `simulatedPeripheral?.simulateStateChange(.poweredOff)`.
    public static func simulatePowerOff() { simulateStateChange(.poweredOff, "simulatePowerOff()") }

    private static func simulateStateChange(_ state: CBMManagerState, _ call: String) {
        let bridge = BridgeScope.forCoreBluetoothMock(call)
        MockCentralEngine.setInitialState(state, on: bridge)
        // (Not authorized, managers stay `unauthorized`; they take this state once authorized.)
        let effective = MockCentralEngine.isAuthorized(on: bridge) ? state : .unauthorized
        for engine in MockCentralEngine.engines(on: bridge) { engine.simulateStateChange(effective) }
    }

    /// CoreBluetoothMock's internal hook behind ``CBMPeripheralSpec/simulateDisconnection(withError:)``,
    /// which tests that import it `@testable` call: here it is that call (so the spec's delegate
    /// hears the disconnection too). The error is optional, as in a fork of CoreBluetoothMock
    /// such tests were written for; `nil` is taken as the default, `peripheralDisconnected`
    /// (CoreBluetooth reports every disconnection the app did not ask for with an error).
    static func peripheral(
        _ peripheral: CBMPeripheralSpec, didDisconnectWithError error: (any Error)? = CBMError(.peripheralDisconnected)
    ) {
        peripheral.simulateDisconnection(withError: error ?? CBMError(.peripheralDisconnected))
    }

    /// The app's Bluetooth authorization, as CoreBluetoothMock sets it: any authorization but
    /// `allowedAlways` makes every central manager `unauthorized` (its delegate is told, its scans
    /// stop and calls are refused), as CoreBluetooth reports; `allowedAlways` again brings each
    /// back to Bluetooth's simulated state. Managers created meanwhile start `unauthorized`.
    public static func simulateAuthorization(_ authorization: CBMManagerAuthorization) {
        MockCentralEngine.setAuthorization(
            authorization, on: BridgeScope.forCoreBluetoothMock("simulateAuthorization(_:)"))
    }

    /// Which features ``CBMCentralManager/supports(_:)`` reports (`nil`: the kit's answer,
    /// connection events supported). Reading it, or setting it to `nil`, with no simulation
    /// there installs none.
    ///
    /// As in CoreBluetoothMock, the closure need not be `Sendable` (a test's closure may capture
    /// the test case): it is called where the app calls `supports(_:)`, on the app's thread.
    public static var simulateFeaturesSupport: ((CBMCentralManagerFeature) -> Bool)? {
        get { BridgeScope.current.flatMap(FeatureBook.value(for:)) }
        set {
            guard newValue != nil || BridgeScope.current != nil else { return }
            var answer: (@Sendable (CBMCentralManagerFeature) -> Bool)?
            if let newValue {
                let closure = TestClosure(newValue)
                answer = { closure.call($0) }
            }
            FeatureBook.set(answer, for: BridgeScope.forCoreBluetoothMock("simulateFeaturesSupport"))
        }
    }

    /// How much simulated peripherals' RSSI varies from now on, for the specs simulated already
    /// and those simulated later (CoreBluetoothMock's default is ±15 dBm, drawn here from the
    /// bridge's seed).
    public static func simulateRSSIDeviation(_ deviation: CBMProximity.Deviation) {
        let bridge = BridgeScope.forCoreBluetoothMock("simulateRSSIDeviation(_:)")
        bridge.frontEndSettings[SpecSimulation.deviationKey] = deviation.spread
        for simulation in SpecSimulation.registry(on: bridge).all { simulation.setRSSIVariation(deviation.spread) }
    }

    /// What the system restores to a manager created with a restore identifier
    /// (`CBMCentralManagerOptionRestoreIdentifierKey`): the dictionary its delegate's
    /// `centralManager(_:willRestoreState:)` receives before its first state, or `nil` for none.
    /// As in CoreBluetoothMock, the specs listed under
    /// `CBMCentralManagerRestoredStatePeripheralsKey` reach the delegate as the manager's own
    /// peripheral objects, `connected` when the spec is connected (built `.connected(…)` or
    /// ``CBMPeripheralSpec/simulateConnection()``) and in range, else `connecting`; scan
    /// services or options make the manager scanning with them. The links come up, and the scan
    /// starts, when the manager is powered on: a connecting peripheral connects as a connection
    /// would, and reports `didConnect`; a connected one's link is there at once (the system holds
    /// it), so a call made on it in the powered-on callback is answered, and it reports no
    /// `didConnect` (one whose link does not come back reports `didDisconnectPeripheral`). The
    /// system knows every restored peripheral: none needs a scan or caching first.
    ///
    /// Reading it, or setting it to `nil`, with no simulation there installs none (a test's
    /// `tearDown` resetting it after ``tearDownSimulation()`` would otherwise leave a system
    /// installed for the next test).
    ///
    /// As in CoreBluetoothMock, the closure need not be `Sendable` (a test's closure may capture
    /// the test case and its variables): it is called as a manager with a restore identifier is
    /// created, on the thread that creates it.
    public static var simulateStateRestoration: ((_ identifierKey: String) -> [String: Any]?)? {
        get { BridgeScope.current.flatMap(RestorationBook.value(for:)) }
        set {
            guard newValue != nil || BridgeScope.current != nil else { return }
            var restore: (@Sendable (String) -> [String: Any]?)?
            if let newValue {
                let closure = TestClosure(newValue)
                restore = { closure.call($0) }
            }
            RestorationBook.set(restore, for: BridgeScope.forCoreBluetoothMock("simulateStateRestoration"))
        }
    }

    /// Ends the simulation, as CoreBluetoothMock's does: outside a test's bridge, the installed
    /// ``SimulatedSystem`` is uninstalled (its managers hear `unknown` and become invalid, their
    /// peripherals disconnected; the next static call installs a fresh one, which is still the
    /// test's when the test installed the system with `installSimulatedSystem()` or the
    /// `.simulatedSystem` trait: they uninstall it as the test ends), also when called
    /// from a delegate callback of a manager on the system. On a test's bridge nothing happens:
    /// the simulation ends with the bridge (`await bridge.finish()` reports what was left over).
    public static func tearDownSimulation() {
        guard let system = SimulatedSystem.current else { return }
        // (In a callback, the current bridge is the system's own.)
        guard MockBLEBridge.current == nil || MockBLEBridge.current === system.bridge else { return }
        system.uninstall()
    }
}

/// CoreBluetoothMock's factory: a mock manager where there is a simulation, CoreBluetooth
/// elsewhere.
public enum CBMCentralManagerFactory {
    /// A central manager: a mock (on the current test's bridge, or the simulated system) when
    /// `forceMock` is set, when a bridge or a system is there, or where CoreBluetooth is not
    /// (Linux; the iOS simulator, as in CoreBluetoothMock); otherwise CoreBluetooth's.
    public static func instance(
        delegate: (any CBMCentralManagerDelegate)?, queue: DispatchQueue?, options: [String: Any]? = nil,
        forceMock: Bool = false
    ) -> CBMCentralManager {
        if forceMock || BridgeScope.current != nil || !NativeSupport.hasBluetooth {
            return CBMCentralManagerMock(delegate: delegate, queue: queue, options: options)
        }
        return CBMCentralManager(delegate: delegate, queue: queue, options: options)
    }

    /// As ``instance(delegate:queue:options:forceMock:)`` with no delegate, on the main queue.
    public static func instance(forceMock: Bool = false) -> CBMCentralManager {
        instance(delegate: nil, queue: nil, options: nil, forceMock: forceMock)
    }

    /// As ``instance(delegate:queue:options:forceMock:)`` without options.
    public static func instance(
        delegate: (any CBMCentralManagerDelegate)?, queue: DispatchQueue?, forceMock: Bool = false
    ) -> CBMCentralManager {
        instance(delegate: delegate, queue: queue, options: nil, forceMock: forceMock)
    }
}

extension LockedValue {
    /// The bridge's value for the setting named by `key` (`initial` until set).
    static func on(_ bridge: MockBLEBridge, key: Any.Type, initial: Value) -> LockedValue {
        bridge.frontEndSettings.object(for: ObjectIdentifier(key)) { LockedValue(initial) }
    }
}

/// A closure a test gave a CoreBluetoothMock static, which CoreBluetoothMock does not require to
/// be `Sendable`: the kit calls it only where CoreBluetoothMock does (on the thread of the app's
/// call that asks for it), so it crosses no more threads than with CoreBluetoothMock.
private struct TestClosure<Argument, Result>: @unchecked Sendable {
    // @unchecked Sendable: the closure is called only on the threads of the app's calls, as
    // CoreBluetoothMock calls it; it may capture state of the test's that is not `Sendable`.
    let call: (Argument) -> Result

    init(_ call: @escaping (Argument) -> Result) { self.call = call }
}

/// The feature answer a test set on a bridge.
enum FeatureBook {
    static func value(for bridge: MockBLEBridge) -> (@Sendable (CBMCentralManagerFeature) -> Bool)? {
        LockedValue.on(bridge, key: FeatureBook.self, initial: nil).value
    }

    static func set(_ answer: (@Sendable (CBMCentralManagerFeature) -> Bool)?, for bridge: MockBLEBridge) {
        LockedValue.on(bridge, key: FeatureBook.self, initial: answer).value = answer
    }
}

/// The state restoration a test set on a bridge.
enum RestorationBook {
    static func value(for bridge: MockBLEBridge) -> (@Sendable (String) -> [String: Any]?)? {
        LockedValue.on(bridge, key: RestorationBook.self, initial: nil).value
    }

    static func set(_ restore: (@Sendable (String) -> [String: Any]?)?, for bridge: MockBLEBridge) {
        LockedValue.on(bridge, key: RestorationBook.self, initial: restore).value = restore
    }
}
