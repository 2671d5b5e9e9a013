import BLECore
import BLEMockKit
import Foundation

/// CoreBluetoothMock's central manager class and its static simulation calls, acting on the
/// current test's bridge (`MockBLEBridge.current`) rather than on process-wide statics: tests
/// running in parallel each simulate their own peripherals and states.
///
/// Every static call needs a current bridge: inside `bridge.run { }` or
/// `MockBLEBridge.$current.withValue(bridge) { }`. Without one it stops the program with a
/// message saying so.
open class CBMCentralManagerMock: CBMCentralManager, @unchecked Sendable {
    /// The current test's bridge, or a stop with a message saying how to set one.
    static func currentBridge(_ call: String) -> MockBLEBridge {
        guard let bridge = MockBLEBridge.current else {
            preconditionFailure(
                "CBMCentralManagerMock.\(call): no current MockBLEBridge. Call it inside `bridge.run { }` or "
                    + "`MockBLEBridge.$current.withValue(bridge) { }`: the simulation belongs to the test's bridge.")
        }
        return bridge
    }

    /// Creates a mock manager on the current test's bridge.
    public override init(
        delegate: (any CBMCentralManagerDelegate)?, queue: DispatchQueue?, options: [String: Any]? = nil
    ) {
        super.init(bridge: Self.currentBridge("init"), delegate: delegate, queue: queue, options: options)
    }

    /// Puts peripherals on the current test's bridge (each spec once per bridge).
    public static func simulatePeripherals(_ peripherals: [CBMPeripheralSpec]) {
        let bridge = currentBridge("simulatePeripherals(_:)")
        for spec in peripherals { SpecSimulation.simulate(spec, on: bridge) }
    }

    /// The state managers created from now on start in (`poweredOn` unless set).
    public static func simulateInitialState(_ state: CBMManagerState) {
        MockCentralEngine.setInitialState(state, on: currentBridge("simulateInitialState(_:)"))
    }

    /// Bluetooth is turned on: every manager on the bridge, and those created later.
    public static func simulatePowerOn() { simulateStateChange(.poweredOn, "simulatePowerOn()") }

    /// Bluetooth is turned off: every manager on the bridge, and those created later.
    public static func simulatePowerOff() { simulateStateChange(.poweredOff, "simulatePowerOff()") }

    private static func simulateStateChange(_ state: CBMManagerState, _ call: String) {
        let bridge = currentBridge(call)
        MockCentralEngine.setInitialState(state, on: bridge)
        for engine in MockCentralEngine.engines(on: bridge) { engine.simulateStateChange(state) }
    }

    /// The app's Bluetooth authorization on the bridge.
    public static func simulateAuthorization(_ authorization: CBMManagerAuthorization) {
        AuthorizationBook.set(authorization, for: currentBridge("simulateAuthorization(_:)"))
    }

    /// Which features ``CBMCentralManager/supports(_:)`` reports on the bridge (`nil`: the
    /// kit's answer, connection events supported).
    public static var simulateFeaturesSupport: (@Sendable (CBMCentralManagerFeature) -> Bool)? {
        get { FeatureBook.value(for: currentBridge("simulateFeaturesSupport")) }
        set { FeatureBook.set(newValue, for: currentBridge("simulateFeaturesSupport")) }
    }

    /// How much simulated peripherals' RSSI varies, for specs simulated on the bridge from now
    /// on (none unless set: the kit's RSSI is the proximity's).
    public static func simulateRSSIDeviation(_ deviation: CBMProximity.Deviation) {
        currentBridge("simulateRSSIDeviation(_:)").frontEndSettings[SpecSimulation.deviationKey] = deviation.spread
    }

    /// What the system restores to a manager created on the bridge with a restore identifier
    /// (`CBMCentralManagerOptionRestoreIdentifierKey`): the dictionary its delegate's
    /// `centralManager(_:willRestoreState:)` receives before its first state, or `nil` for none.
    public static var simulateStateRestoration: (@Sendable (_ identifierKey: String) -> [String: Any]?)? {
        get { RestorationBook.value(for: currentBridge("simulateStateRestoration")) }
        set { RestorationBook.set(newValue, for: currentBridge("simulateStateRestoration")) }
    }

    /// Nothing to tear down: each test's simulation ends with its bridge. Kept so tests written
    /// for CoreBluetoothMock compile; `await bridge.finish()` reports what was left over.
    public static func tearDownSimulation() {}
}

/// CoreBluetoothMock's factory: a mock manager inside a test's bridge scope, CoreBluetooth
/// elsewhere.
public enum CBMCentralManagerFactory {
    /// A central manager: on the current test's bridge when there is one; otherwise on
    /// CoreBluetooth (Apple platforms), or, with `forceMock`, a stop with a message saying how
    /// to set a bridge.
    public static func instance(
        delegate: (any CBMCentralManagerDelegate)?, queue: DispatchQueue?, options: [String: Any]? = nil,
        forceMock: Bool = false
    ) -> CBMCentralManager {
        if forceMock || MockBLEBridge.current != nil {
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

/// A value a test set on a bridge, read and written under a lock.
final class LockedValue<Value: Sendable>: @unchecked Sendable {
    // @unchecked Sendable: `stored` is only read and written with `lock` held.
    private let lock = Lock()
    private var stored: Value

    init(_ value: Value) { stored = value }

    var value: Value {
        get { lock.withLock { stored } }
        set { lock.withLock { stored = newValue } }
    }

    /// The bridge's value for the setting named by `key` (`initial` until set).
    static func on(_ bridge: MockBLEBridge, key: Any.Type, initial: Value) -> LockedValue {
        bridge.frontEndSettings.object(for: ObjectIdentifier(key)) { LockedValue(initial) }
    }
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
