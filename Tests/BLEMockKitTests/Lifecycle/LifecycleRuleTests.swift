import BLECore
import BLEMockKit
import Foundation
import Testing

/// Rules of a manager's state and of connection attempts, as CoreBluetooth has them (the
/// production adapter reports the same).
@Suite("Lifecycle rules: state and retrieval", .timeLimit(.minutes(10)))
struct LifecycleRuleTests {
    @Test("waitForPoweredOn waits through resetting and returns the state the manager settles in")
    func waitingThroughResetting() async throws {
        let bridge = MockBLEBridge()
        let central = MockCentralManager(bridge: bridge)
        #expect(await central.waitForPoweredOn() == .poweredOn)
        await central.simulateStateChange(.resetting)
        let waiting = Task { await central.waitForPoweredOn() }
        await bridge.waitUntil { $0.pendingOperations.count == 1 }
        #expect(
            await bridge.pendingOperations == [
                .operation(
                    "waitForPoweredOn", central: central.identifier, peripheral: nil, characteristic: nil, since: .zero)
            ])
        await central.simulateStateChange(.poweredOff)
        #expect(await waiting.value == .poweredOff)
        #expect(await bridge.pendingOperations.isEmpty)
    }

    @Test("waitForPoweredOn on a manager stuck in unknown keeps waiting until its task is cancelled")
    func waitingWhileStuckInUnknown() async throws {
        let bridge = MockBLEBridge()
        let central = MockCentralManager(configuration: .init(stateTransition: .stuck(.unknown)), bridge: bridge)
        let waiting = Task { await central.waitForPoweredOn() }
        await bridge.waitUntil { $0.pendingOperations.count == 1 }
        waiting.cancel()
        #expect(await waiting.value == .unknown)
        #expect(await bridge.pendingOperations.isEmpty)
    }

    static let unsettling: [(ManagerState, StateTransition)] = [
        (.unknown, .instant), (.resetting, .instant), (.unknown, .realistic(duration: .milliseconds(100))),
        (.resetting, .delayed(.milliseconds(10))),
    ]

    @Test(
        "A manager configured to settle in unknown or resetting is refused, and waitForPoweredOn returns at once",
        arguments: unsettling)
    func unsettledInitialStatesAreRefused(initial: ManagerState, transition: StateTransition) async throws {
        let bridge = MockBLEBridge()
        let problem = { (owner: String) in
            APIMisuseError.invalidConfiguration(
                "\(owner).Configuration.initialState: .\(initial) is not a state a manager settles in, so it would "
                    + "never settle and waitForPoweredOn() would wait for ever; give a settled state (.poweredOn, "
                    + ".poweredOff, .unauthorized, .unsupported), or stateTransition .stuck(.\(initial)) for a "
                    + "manager that never settles")
        }
        let central = MockCentralManager(
            configuration: .init(initialState: initial, stateTransition: transition), bridge: bridge)
        // Before, this waited for ever (outside a run nothing reports it); now it is the state now.
        let now: ManagerState = transition == .instant ? initial : .unknown
        #expect(await central.waitForPoweredOn() == now)
        await #expect(throws: problem("MockCentralManager")) { try await central.scanForPeripherals(withServices: nil) }
        let peripheral = MockPeripheralManager(
            configuration: .init(initialState: initial, stateTransition: transition), bridge: bridge)
        #expect(await peripheral.waitForPoweredOn() == now)
        await #expect(throws: problem("MockPeripheralManager")) {
            try await peripheral.startAdvertising(AdvertisementData(localName: "X"))
        }
        // A manager that never settles on purpose is .stuck, and accepted.
        let stuck = MockCentralManager(
            configuration: .init(initialState: initial, stateTransition: .stuck(initial)), bridge: bridge)
        await #expect(throws: APIMisuseError.notPoweredOn(operation: "scanForPeripherals", state: initial)) {
            try await stuck.scanForPeripherals(withServices: nil)
        }
    }

    @Test("A central that is not powered on retrieves no peripherals, and retrieval lists each identifier once")
    func retrievalNeedsPower() async throws {
        let bridge = MockBLEBridge()
        let (peripheral, _) = try await TestPeripherals.advertisingHeartRate(on: bridge)
        let (central, _) = try await TestPeripherals.connectedCentral(to: peripheral, on: bridge)
        let id = peripheral.identifier
        let remote = RemotePeripheral(identifier: id, name: "HRM-1")
        #expect(await central.retrievePeripherals(withIdentifiers: [id, id, UUID(), id]) == [remote])
        #expect(await central.retrieveConnectedPeripherals(withServices: ["180D", "180D"]) == [remote])
        let other = MockCentralManager(bridge: bridge)
        #expect(await other.retrievePeripherals(withIdentifiers: [id]) == [remote])
        await other.simulateStateChange(.poweredOff)
        #expect(await other.retrievePeripherals(withIdentifiers: [id]).isEmpty)
        #expect(await other.retrieveConnectedPeripherals(withServices: ["180D"]).isEmpty)
    }

    @Test("A central that is not powered on receives no connection events")
    func connectionEventsNeedPower() async throws {
        let bridge = MockBLEBridge()
        let (peripheral, _) = try await TestPeripherals.advertisingHeartRate(on: bridge)
        let listening = MockCentralManager(bridge: bridge)
        let sleeping = MockCentralManager(bridge: bridge)
        await listening.registerForConnectionEvents(options: nil)
        await sleeping.registerForConnectionEvents(options: nil)
        await sleeping.simulateStateChange(.poweredOff)
        let (central, _) = try await TestPeripherals.connectedCentral(to: peripheral, on: bridge)
        try await central.cancelPeripheralConnection(peripheral.identifier)
        let events = await bridge.log.filter { $0.kind == .connectionEvent }
        #expect(events.map(\.central) == [listening.identifier, listening.identifier])
        #expect(events.map(\.detail) == ["peerConnected", "peerDisconnected"])
    }
}

/// Which operations an error injection applies to, and when it counts as fired.
@Suite("Lifecycle rules: error injection", .timeLimit(.minutes(10)))
struct InjectionRuleTests {
    @Test("A write injection does not touch a write without response; the next write with response takes it")
    func writeInjectionsSkipWriteCommands() async throws {
        let bridge = MockBLEBridge()
        let (peripheral, _) = try await TestPeripherals.advertisingHeartRate(on: bridge)
        let injection = ErrorInjection(.write, failure: .att(.unlikelyError))
        let (central, characteristics) = try await TestPeripherals.connectedCentral(
            to: peripheral, on: bridge, configuration: .init(errorInjection: [injection]))
        let remote = characteristics[2]
        try await central.writeValue(Data([5]), for: remote, type: .withoutResponse)
        let command = try #require(await bridge.log.last { $0.kind == .write })
        #expect(command.writeType == .withoutResponse && command.error == nil && command.detail == nil)
        #expect(
            await bridge.finish() == .leftovers([.unfiredInjection(injection, owner: central.identifier), .seed(0)]))
        await #expect(throws: ATTError(.unlikelyError)) {
            try await central.writeValue(Data([6]), for: remote, type: .withResponse)
        }
        #expect(await bridge.finish() == .clean)
    }

    @Test("A never-answered request holds the link's one outstanding ATT request: a retry waits behind it")
    func neverAnsweredRequestsHoldTheBearer() async throws {
        let bridge = MockBLEBridge()
        let (peripheral, _) = try await TestPeripherals.advertisingHeartRate(on: bridge)
        let injection = ErrorInjection(.read, failure: .neverAnswers)
        let (central, characteristics) = try await TestPeripherals.connectedCentral(
            to: peripheral, on: bridge, configuration: .init(errorInjection: [injection]))
        let first = Task { try await central.readValue(for: characteristics[1]) }
        await bridge.waitUntil { $0.pendingOperations.count == 1 }
        // The app gives up on the first read (its own timeout) and tries again.
        first.cancel()
        await #expect(throws: CancellationError.self) { try await first.value }
        let retry = Task { try await central.readValue(for: characteristics[1]) }
        await bridge.waitUntil { $0.pendingOperations.count == 1 }
        await bridge.advance(by: .seconds(10))
        // Vol 3, Part F, 3.3.2: no second request until the first is answered.
        #expect(await bridge.log.filter { $0.kind == .read }.isEmpty)
        #expect(await bridge.pendingOperations.count == 1)
        // The link dropping ends the wait.
        await peripheral.simulateDisconnection(of: central.identifier)
        await #expect(throws: CoreBluetoothError(.peripheralDisconnected)) { try await retry.value }
    }

    @Test("A connect injection whose attempt timed out before it took effect is still owed, and fires next time")
    func connectInjectionsCountWhenSeen() async throws {
        let bridge = MockBLEBridge()
        let (peripheral, _) = try await TestPeripherals.advertisingHeartRate(on: bridge)
        let injection = ErrorInjection(.connect, failure: .coreBluetooth(.connectionFailed))
        let central = MockCentralManager(configuration: .init(errorInjection: [injection]), bridge: bridge)
        try await central.scanForPeripherals(withServices: nil)
        await central.stopScan()
        await peripheral.stopAdvertising()
        await #expect(throws: CoreBluetoothError(.connectionTimeout)) {
            try await central.connect(peripheral.identifier, timeout: .seconds(1))
        }
        #expect(
            await bridge.finish() == .leftovers([.unfiredInjection(injection, owner: central.identifier), .seed(0)]))
        try await peripheral.startAdvertising(AdvertisementData(localName: "HRM-1"))
        await #expect(throws: CoreBluetoothError(.connectionFailed)) {
            try await central.connect(peripheral.identifier)
        }
        #expect(await bridge.finish() == .clean)
        try await central.connect(peripheral.identifier)
        #expect(await central.isConnected(peripheral.identifier))
    }

    @Test(
        "An injection of the other role's operation, a count below one, a probability outside 0…1, an ATT error no ATT response carries, or neverAnswers of a peripheral's operation is refused",
        arguments: [
            (
                ErrorInjection(.updateValue, failure: .att(.unlikelyError)), true,
                ".updateValue is a peripheral manager's"
            ),
            (ErrorInjection(.read, failure: .att(.unlikelyError)), false, ".read is a central manager's"),
            (ErrorInjection(.read, failure: .att(.unlikelyError), frequency: .times(0)), true, ".times(0) must be"),
            (
                ErrorInjection(.read, failure: .att(.unlikelyError), frequency: .probability(1.5)), true,
                ".probability(1.5)"
            ),
            (
                ErrorInjection(.serviceAdd, failure: .att(.unlikelyError), frequency: .probability(-0.1)), false,
                ".probability(-0.1)"
            ),
            // No ATT response answers these: before, a connect failed with connectionFailed and
            // readRSSI threw the ATT error.
            (
                ErrorInjection(.connect, failure: .att(.insufficientAuthentication)), true,
                ".att(0x05 insufficientAuthentication) cannot fail .connect: no ATT response answers it"
            ),
            (ErrorInjection(.readRSSI, failure: .att(.unlikelyError)), true, ".att(0x0E unlikelyError) cannot fail"),
            // 0x00 is not an error: a read used to throw ATTError(0x00 success).
            (
                ErrorInjection(.read, failure: .att(.success)), true,
                ".att(0x00 success) is not an error: ATT result 0x00 is the answer to a granted request, so .read "
                    + "could not fail with it; inject an ATT error code (0x01 or above)"
            ),
            (
                ErrorInjection(.updateValue, failure: .att(.unlikelyError)), false,
                ".att(0x0E unlikelyError) cannot fail"
            ),
            (ErrorInjection(.advertisingStart, failure: .att(.unlikelyError)), false, ".att(0x0E unlikelyError)"),
            // A peripheral manager's operation waits for no peer: before, neverAnswers let adding
            // and advertising succeed, and made updateValue return false with no ready event to follow.
            (
                ErrorInjection(.serviceAdd, failure: .neverAnswers), false,
                ".neverAnswers cannot apply to .serviceAdd: a peripheral manager's operation waits for no answer "
                    + "from a peer (.neverAnswers applies to a central manager's operations); inject a "
                    + ".coreBluetooth(_:) failure"
            ),
            (ErrorInjection(.advertisingStart, failure: .neverAnswers), false, ".neverAnswers cannot apply to"),
            (ErrorInjection(.updateValue, failure: .neverAnswers), false, ".neverAnswers cannot apply to .updateValue"),
            // A characteristic only aims operations made on one: elsewhere it would never match.
            (
                ErrorInjection(.connect, failure: .coreBluetooth(.connectionFailed), characteristic: "2A37"), true,
                "characteristic 2A37 never matches .connect: it is not made on a characteristic (an injection aims "
                    + "at one for .descriptorDiscovery, .read, .write, .subscribe and .updateValue); leave the "
                    + "characteristic out"
            ),
            (
                ErrorInjection(.serviceDiscovery, failure: .att(.unlikelyError), characteristic: "2A37"), true,
                "characteristic 2A37 never matches .serviceDiscovery"
            ),
            (
                ErrorInjection(.characteristicDiscovery, failure: .neverAnswers, characteristic: "2A37"), true,
                "characteristic 2A37 never matches .characteristicDiscovery"
            ),
            (
                ErrorInjection(.readRSSI, failure: .coreBluetooth(.unknown), characteristic: "2A37"), true,
                "characteristic 2A37 never matches .readRSSI"
            ),
            (
                ErrorInjection(.advertisingStart, failure: .coreBluetooth(.unknown), characteristic: "2A37"), false,
                "characteristic 2A37 never matches .advertisingStart"
            ),
        ])
    func misplacedInjectionsAreRefused(injection: ErrorInjection, inCentral: Bool, message: String) async throws {
        await expectConfigurationRefusal(of: injection, inCentral: inCentral, saying: message)
    }

    @Test("A runtime injection is checked as a configuration's: after a refused one, its manager refuses every call")
    func runtimeInjectionsAreChecked() async throws {
        let bridge = MockBLEBridge()
        let (peripheral, _) = try await TestPeripherals.advertisingHeartRate(on: bridge)
        let (central, characteristics) = try await TestPeripherals.connectedCentral(to: peripheral, on: bridge)
        await central.inject(ErrorInjection(.read, failure: .att(.unlikelyError), frequency: .probability(.nan)))
        await #expect(
            throws: APIMisuseError.invalidConfiguration(
                "MockCentralManager.inject(_:): .probability(nan) must be in 0…1")
        ) { try await central.readValue(for: characteristics[1]) }
        await peripheral.inject(ErrorInjection(.read, failure: .att(.unlikelyError)))
        await #expect(
            throws: APIMisuseError.invalidConfiguration(
                "MockPeripheralManager.inject(_:): .read is a central manager's operation and never happens on a "
                    + "peripheral manager; put it in a MockCentralManager's configuration")
        ) { try await peripheral.add(TestPeripherals.heartRate) }
        // Neither injection is owed.
        #expect(await bridge.finish() == .clean)

        let other = MockBLEBridge()
        let (sensor, _) = try await TestPeripherals.advertisingHeartRate(on: other)
        await other.inject(ErrorInjection(.read, failure: .att(.unlikelyError), frequency: .times(0)))
        let problem = APIMisuseError.invalidConfiguration("MockBLEBridge.inject(_:): .times(0) must be at least 1")
        await #expect(throws: problem) { try await sensor.startAdvertising(AdvertisementData(localName: "Again")) }
        let scanner = MockCentralManager(bridge: other)
        await #expect(throws: problem) { try await scanner.scanForPeripherals(withServices: nil) }
    }
}
