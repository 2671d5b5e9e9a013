import BLECBM
import BLEMockKit
import Foundation
import Testing

/// CoreBluetoothMock's API as test code written for it uses it, compiled in Swift 6 mode: the
/// shapes of its calls, not only their behaviour (third-party suites written against
/// CoreBluetoothMock stopped compiling on each of these).
@Suite("CoreBluetoothMock's API shapes in Swift 6 code", .timeLimit(.minutes(10)))
struct CoreBluetoothMockSignatureTests {
    /// What a test case keeps, as an `XCTestCase`'s properties: not `Sendable`.
    final class TestState {
        var asked: [String] = []
    }

    /// A delegate that notes the restored state it is given.
    final class RestoreListener: NSObject, CBMCentralManagerDelegate, @unchecked Sendable {
        // @unchecked Sendable: `restored` is only read and written with `lock` held.
        private let lock = NSLock()
        private var restored: [String: Any]?

        var restoredKeys: [String]? { lock.withLock { restored.map { $0.keys.sorted() } } }

        func centralManagerDidUpdateState(_ central: CBMCentralManager) {}

        func centralManager(_ central: CBMCentralManager, willRestoreState dict: [String: Any]) {
            lock.withLock { restored = dict }
        }
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(
        "simulateStateRestoration and simulateFeaturesSupport take closures that capture a test's state that is not Sendable, as CoreBluetoothMock's do, and call them where the app asks"
    )
    func theSimulationClosuresNeedNotBeSendable() async throws {
        let bridge = MockBLEBridge(configuration: .init(seed: 41))
        let asked = try await bridge.run { @MainActor () -> [String] in
            let state = TestState()
            CBMCentralManagerMock.simulateFeaturesSupport = { features in
                state.asked.append("features \(features.rawValue)")
                return false
            }
            CBMCentralManagerMock.simulateStateRestoration = { identifier in
                state.asked.append("restore \(identifier)")
                return [CBMCentralManagerRestoredStateScanServicesKey: [CBMUUID(string: "180F")]]
            }
            #expect(!CBMCentralManager.supports(.extendedScanAndConnect))
            let listener = RestoreListener()
            let manager = CBMCentralManager(
                delegate: listener, queue: nil, options: [CBMCentralManagerOptionRestoreIdentifierKey: "watch"])
            try await bridge.waitForApp { manager.state == .poweredOn }
            #expect(listener.restoredKeys == [CBMCentralManagerRestoredStateScanServicesKey])
            return state.asked
        }
        #expect(asked == ["features 1", "restore watch"])
    }

    /// A manager of the app's own, made as CoreBluetoothMock tells subclasses to.
    final class AppCentralManager: CBMCentralManager, @unchecked Sendable {
        init() { super.init(true) }
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(
        "A manager made with CoreBluetoothMock's init(_ dummy:), or a subclass calling it, is a manager on the test's bridge"
    )
    func theDummyInitializerMakesAManager() async throws {
        let bridge = MockBLEBridge(configuration: .init(seed: 42))
        try await bridge.run { @MainActor in
            let plain = CBMCentralManager(true)
            let subclassed = AppCentralManager()
            #expect(plain.bridge === bridge)
            #expect(subclassed.bridge === bridge)
            try await bridge.waitForApp { plain.state == .poweredOn && subclassed.state == .poweredOn }
        }
    }

    /// Code naming CoreBluetoothMock's peripheral class.
    static func name(of peripheral: CBMPeripheralMock) -> String { peripheral.identifier.uuidString }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test("Code that names CBMPeripheralMock takes the peripheral objects a central hands out")
    func peripheralMockNamesThePeripheralClass() async throws {
        let bridge = MockBLEBridge(configuration: .init(seed: 43))
        let watch =
            CBMPeripheralSpec
            .simulatePeripheral(proximity: .near)
            .advertising(advertisementData: [CBMAdvertisementDataLocalNameKey: "Watch"], withInterval: 0.1)
            .connectable(name: "Watch", services: [], delegate: nil)
            .allowForRetrieval()
            .build()
        let name = try await bridge.run { @MainActor () -> String in
            CBMCentralManagerMock.simulatePeripherals([watch])
            let manager = CBMCentralManagerMock(delegate: nil, queue: nil)
            try await bridge.waitForApp { manager.state == .poweredOn }
            let peripheral = try #require(manager.retrievePeripherals(withIdentifiers: [watch.identifier]).first)
            return Self.name(of: peripheral)
        }
        #expect(name == watch.identifier.uuidString)
    }
}
