import BLECBM
import BLEMockKit
import BLEMockKitTesting
import Foundation
import Testing

/// The `.simulatedSystem` trait with a delegate-style app and CoreBluetoothMock's statics, as a
/// team moving its XCTest suite to Swift Testing writes it. Part of ``SimulatedSystemTraitTests``
/// (so they run in the process of their own it runs in).
extension SimulatedSystemTraitTests {
    /// Resumes once, with the first value given, or `nil` after `seconds` of wall time.
    final class Waiter<Value: Sendable>: @unchecked Sendable {
        // @unchecked Sendable: `continuation` and `value` are only touched under `lock`.
        private let lock = NSLock()
        private var continuation: CheckedContinuation<Value?, Never>?
        private var value: Value??

        func give(_ value: Value?) {
            let waiting = lock.withLock { () -> CheckedContinuation<Value?, Never>? in
                guard self.value == nil else { return nil }
                self.value = .some(value)
                defer { continuation = nil }
                return continuation
            }
            waiting?.resume(returning: value)
        }

        func wait(seconds: Double) async -> Value? {
            DispatchQueue.global().asyncAfter(deadline: .now() + seconds) { self.give(nil) }
            return await withCheckedContinuation { continuation in
                let given = lock.withLock { () -> Value?? in
                    if let value { return value }
                    self.continuation = continuation
                    return nil
                }
                if let given { continuation.resume(returning: given) }
            }
        }
    }

    /// A sensor as CoreBluetoothMock's specs describe one: it answers reads with 0x2A.
    static func sensor(_ name: String, _ last: UInt8) -> CBMPeripheralSpec {
        let characteristic = CBMCharacteristicMock(
            type: CBMUUID(string: "7A1E0002-0000-1000-8000-00805F9B34FB"), properties: [.read])
        return CBMPeripheralSpec.simulatePeripheral(
            identifier: UUID(uuidString: "7A1E0000-0000-0000-0000-0000000010\(String(format: "%02X", last))")!
        )
        .advertising(
            advertisementData: [
                CBMAdvertisementDataLocalNameKey: name,
                CBMAdvertisementDataServiceUUIDsKey: [CBMUUID(string: "7A1E0001-0000-1000-8000-00805F9B34FB")],
            ], withInterval: 0.05
        )
        .connectable(
            name: name,
            services: [
                CBMServiceMock(
                    type: CBMUUID(string: "7A1E0001-0000-1000-8000-00805F9B34FB"), primary: true,
                    characteristics: characteristic)
            ], delegate: SensorDelegate()
        )
        .build()
    }

    /// A retrievable, connectable peripheral named "Far" that is out of range: a connection to it
    /// waits for ever, as CoreBluetooth's do.
    static func farSpec(_ identifier: UUID) -> CBMPeripheralSpec {
        CBMPeripheralSpec.simulatePeripheral(identifier: identifier, proximity: .outOfRange)
            .advertising(advertisementData: [CBMAdvertisementDataLocalNameKey: "Far"], withInterval: 0.05)
            .connectable(name: "Far", services: [], delegate: nil)
            .allowForRetrieval()
            .build()
    }

    final class SensorDelegate: CBMPeripheralSpecDelegate {
        func peripheral(_ peripheral: CBMPeripheralSpec, didReceiveReadRequestFor characteristic: CBMCharacteristicMock)
            -> Result<Data, any Error>
        { .success(Data([0x2A])) }
    }

    /// Finds `name`, connects and reads its characteristic, all from the delegate.
    final class Reader: NSObject, CBMCentralManagerDelegate, CBMPeripheralDelegate, @unchecked Sendable {
        // @unchecked Sendable: `manager` and `peripheral` are set once on the app's queue.
        let name: String
        let read = Waiter<Data>()
        /// The bridge its manager reported its state from.
        let bridge = Waiter<MockBLEBridge>()
        var manager: CBMCentralManager?
        var peripheral: CBMPeripheral?

        init(name: String) { self.name = name }

        func centralManagerDidUpdateState(_ central: CBMCentralManager) {
            bridge.give(central.bridge)
            if central.state == .poweredOn { central.scanForPeripherals(withServices: nil) }
        }
        func centralManager(
            _ central: CBMCentralManager, didDiscover peripheral: CBMPeripheral, advertisementData: [String: Any],
            rssi: NSNumber
        ) {
            guard self.peripheral == nil, advertisementData[CBMAdvertisementDataLocalNameKey] as? String == name
            else { return }
            self.peripheral = peripheral
            central.stopScan()
            peripheral.delegate = self
            central.connect(peripheral)
        }
        func centralManager(_ central: CBMCentralManager, didConnect peripheral: CBMPeripheral) {
            peripheral.discoverServices(nil)
        }
        func peripheral(_ peripheral: CBMPeripheral, didDiscoverServices error: (any Error)?) {
            peripheral.discoverCharacteristics(nil, for: peripheral.services![0])
        }
        func peripheral(
            _ peripheral: CBMPeripheral, didDiscoverCharacteristicsFor service: CBMService, error: (any Error)?
        ) {
            peripheral.readValue(for: service.characteristics![0])
        }
        func peripheral(
            _ peripheral: CBMPeripheral, didUpdateValueFor characteristic: CBMCharacteristic, error: (any Error)?
        ) {
            read.give(characteristic.value)
        }
    }

    @Test(
        "An app that creates its manager in a detached task reads a spec the statics simulated on the trait's system",
        .simulatedSystem(.realistic(seed: 2)))
    func anAppInADetachedTaskReadsASpec() async throws {
        let system = try #require(SimulatedSystem.current)
        CBMCentralManagerMock.simulatePeripherals([Self.sensor("Sensor", 1)])
        #expect(SimulatedSystem.current === system)
        let app = Reader(name: "Sensor")
        let queue = DispatchQueue(label: "app")
        Task.detached { queue.async { app.manager = CBMCentralManager(delegate: app, queue: queue) } }
        let value = await app.read.wait(seconds: 5)
        #expect(value == Data([0x2A]))
        #expect(await app.bridge.wait(seconds: 0) === system.bridge)
    }

    @Test("A test that tears the simulation down and simulates again leaves no system installed after it")
    func tearingDownAndSimulatingAgainLeavesNoSystem() async throws {
        let test = try #require(Test.current)
        defer { CBMCentralManagerMock.tearDownSimulation() }
        let second = Waiter<Bool>()
        try await SimulatedSystemTrait().provideScope(for: test, testCase: Test.Case.current) {
            let first = try #require(SimulatedSystem.current)
            CBMCentralManagerMock.tearDownSimulation()
            #expect(!first.isInstalled)
            CBMCentralManagerMock.simulatePeripherals([Self.sensor("Again", 2)])
            CBMCentralManagerMock.simulatePowerOn()
            let app = Reader(name: "Again")
            let queue = DispatchQueue(label: "app")
            queue.async { app.manager = CBMCentralManager(delegate: app, queue: queue) }
            second.give(await app.read.wait(seconds: 5) == Data([0x2A]))
        }
        #expect(await second.wait(seconds: 0) == true)
        #expect(SimulatedSystem.current == nil)
    }

    @Test("A test that throws midway leaves no system installed, and the next test installs its own")
    func aTestThatThrowsLeavesNoSystem() async throws {
        let test = try #require(Test.current)
        struct Midway: Error {}
        await #expect(throws: Midway.self) {
            try await SimulatedSystemTrait().provideScope(for: test, testCase: Test.Case.current) {
                _ = CBMCentralManager(delegate: nil, queue: nil)
                throw Midway()
            }
        }
        #expect(SimulatedSystem.current == nil)
        let ran = Flag()
        try await SimulatedSystemTrait().provideScope(for: test, testCase: Test.Case.current) {
            #expect(SimulatedSystem.current != nil)
            ran.set()
        }
        #expect(ran.isSet)
    }

    @Test("A test that tears the simulation down midway keeps its turn: the next waits until it ends")
    func tearingDownMidwayKeepsTheTurn() async throws {
        let test = try #require(Test.current)
        let testCase = Test.Case.current
        let journal = Journal()
        let (entered, enter) = AsyncStream<Void>.makeStream()
        let first = Task {
            try await SimulatedSystemTrait().provideScope(for: test, testCase: testCase) {
                let own = try #require(SimulatedSystem.current)
                journal.add("first in", own)
                enter.yield()
                CBMCentralManagerMock.tearDownSimulation()
                // Long enough for the other scope to take the turn, were it free.
                try await Task.sleep(for: .milliseconds(50))
                CBMCentralManagerMock.simulatePeripherals([Self.sensor("Mine", 3)])
                let again = try #require(SimulatedSystem.current)
                #expect(again.installedBy == "CBMCentralManagerMock.simulatePeripherals(_:)")
                try await Task.sleep(for: .milliseconds(50))
                #expect(SimulatedSystem.current === again)
                journal.add("first out", again)
            }
        }
        for await _ in entered { break }
        try await SimulatedSystemTrait().provideScope(for: test, testCase: testCase) {
            let system = try #require(SimulatedSystem.current)
            journal.add("second in", system)
        }
        try await first.value
        #expect(journal.entries.map(\.what) == ["first in", "first out", "second in"])
        #expect(SimulatedSystem.current == nil)
    }

    #if compiler(>=6.2)
        @Test("A failed test's report names the connection its app was still waiting for")
        func aFailedTestsReportNamesAPendingConnection() async throws {
            let identifier = UUID(uuidString: "7A1E0000-0000-0000-0000-0000000010F0")!
            let centrals = UnansweredCallsInAFailedRunTests.Notes()
            let kept = Kept()  // (the app outlives the test's body, as a test case's property does)
            let comments = try await Self.capturingIssues {
                CBMCentralManagerMock.simulatePeripherals([SimulatedSystemTraitTests.farSpec(identifier)])
                let app = Connector(identifier: identifier)
                kept.app = app
                let queue = DispatchQueue(label: "app")
                queue.async { app.manager = CBMCentralManager(delegate: app, queue: queue) }
                _ = await app.connecting.wait(seconds: 5)
                let bridge = SimulatedSystem.current!.bridge
                await bridge.waitUntil { !$0.pendingOperations.isEmpty }
                // (After an await on the system's bridge the test goes on off the app's queue:
                // the system applies its apps' calls from the global executor.)
                if let name = queue.sync(execute: { app.manager?.simulatedCentral?.identifier.uuidString }) {
                    centrals.add(String(name.prefix(8)))
                }
                Issue.record("not connected")
            }
            kept.app = nil
            let central = try #require(centrals.all.first)
            #expect(comments.count == 2)
            #expect(comments.first == "not connected")
            #expect(
                comments.last?.hasPrefix(
                    "operations the app started on the simulated system that were still waiting for their callback "
                        + "(a connection attempt does not time out, as with CoreBluetooth):\n"
                        + "- central \(central): connect on peripheral 7A1E0000 was still waiting (since ") == true,
                "\(comments)")
        }

        final class Kept: @unchecked Sendable {
            // @unchecked Sendable: set by the test's body, then after it.
            var app: Connector?
        }

        /// Connects to a peripheral it retrieves, once powered on.
        final class Connector: NSObject, CBMCentralManagerDelegate, @unchecked Sendable {
            // @unchecked Sendable: `manager` and `peripheral` are set on the app's queue.
            let identifier: UUID
            let connecting = Waiter<Bool>()
            var manager: CBMCentralManager?
            var peripheral: CBMPeripheral?

            init(identifier: UUID) { self.identifier = identifier }

            func centralManagerDidUpdateState(_ central: CBMCentralManager) {
                guard central.state == .poweredOn else { return }
                peripheral = central.retrievePeripherals(withIdentifiers: [identifier]).first
                if let peripheral { central.connect(peripheral) }
                connecting.give(peripheral != nil)
            }
        }
    #endif
}
