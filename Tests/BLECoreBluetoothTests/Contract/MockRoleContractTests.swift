import BLECore
import BLEMockKit
import Testing

/// The role contract against the mocks, powered on and powered off.
@Suite("Role contract: mocks", .timeLimit(.minutes(10)))
struct MockRoleContractTests {
    static let states: [ManagerState] = [.poweredOn, .poweredOff, .unauthorized]
    static let unpoweredStates: [ManagerState] = [.poweredOff, .unauthorized, .unsupported]

    static func central(_ state: ManagerState) -> MockCentralManager {
        MockCentralManager(configuration: .init(initialState: state))
    }

    static func peripheral(_ state: ManagerState) -> MockPeripheralManager {
        MockPeripheralManager(configuration: .init(initialState: state))
    }

    @Test(arguments: states)
    func aCentralWithoutConnectionsAnswersQueriesAlike(_ state: ManagerState) async throws {
        try await RoleContract.centralWithoutConnections(Self.central(state))
    }

    @Test(arguments: unpoweredStates)
    func aCentralRefusesWhatNeedsPower(_ state: ManagerState) async throws {
        #expect(try await RoleContract.centralRefusesWhatNeedsPower(Self.central(state)))
        #expect(try await !RoleContract.centralRejectsUnknownPeripherals(Self.central(state)))
    }

    @Test func aCentralRejectsUnknownPeripherals() async throws {
        #expect(try await RoleContract.centralRejectsUnknownPeripherals(Self.central(.poweredOn)))
        #expect(try await !RoleContract.centralRefusesWhatNeedsPower(Self.central(.poweredOn)))
    }

    @Test func aShutDownCentralEndsItsStreamsAndRefusesCalls() async throws {
        try await RoleContract.centralShutDownEndsStreamsAndRefusesCalls(Self.central(.poweredOn))
    }

    @Test(arguments: states)
    func aPeripheralWithoutServicesAnswersQueriesAlike(_ state: ManagerState) async throws {
        try await RoleContract.peripheralWithoutServices(Self.peripheral(state))
    }

    @Test(arguments: unpoweredStates)
    func aPeripheralRefusesWhatNeedsPower(_ state: ManagerState) async throws {
        #expect(try await RoleContract.peripheralRefusesWhatNeedsPower(Self.peripheral(state)))
        #expect(try await !RoleContract.peripheralKeepsItsServiceBookkeeping(Self.peripheral(state)))
    }

    @Test func aPeripheralKeepsItsServiceBookkeeping() async throws {
        #expect(try await RoleContract.peripheralKeepsItsServiceBookkeeping(Self.peripheral(.poweredOn)))
        #expect(try await !RoleContract.peripheralRefusesWhatNeedsPower(Self.peripheral(.poweredOn)))
    }

    @Test func aShutDownPeripheralEndsItsStreamsAndRefusesCalls() async throws {
        try await RoleContract.peripheralShutDownEndsStreams(Self.peripheral(.poweredOn))
    }
}
