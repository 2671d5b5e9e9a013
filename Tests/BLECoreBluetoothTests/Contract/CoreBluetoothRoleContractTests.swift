#if canImport(CoreBluetooth)
    import BLECore
    import BLECoreBluetooth
    import Testing

    /// The role contract against the CoreBluetooth-backed adapters, in whatever state the
    /// host's Bluetooth is (powered-off, unauthorized and unsupported hosts exercise the
    /// refusals; a powered-on host the bookkeeping). Runs on Apple platforms only.
    @Suite("Role contract: CoreBluetooth", .timeLimit(.minutes(10)))
    struct CoreBluetoothRoleContractTests {
        @Test func aCentralWithoutConnectionsAnswersQueriesAlike() async throws {
            try await RoleContract.centralWithoutConnections(CoreBluetoothCentralManager())
        }

        @Test func aCentralRefusesWhatNeedsPower() async throws {
            try await RoleContract.centralRefusesWhatNeedsPower(CoreBluetoothCentralManager())
        }

        @Test func aCentralRejectsUnknownPeripherals() async throws {
            try await RoleContract.centralRejectsUnknownPeripherals(CoreBluetoothCentralManager())
        }

        @Test func aShutDownCentralEndsItsStreamsAndRefusesCalls() async throws {
            try await RoleContract.centralShutDownEndsStreamsAndRefusesCalls(CoreBluetoothCentralManager())
        }

        @Test func aPeripheralWithoutServicesAnswersQueriesAlike() async throws {
            try await RoleContract.peripheralWithoutServices(CoreBluetoothPeripheralManager())
        }

        @Test func aPeripheralRefusesWhatNeedsPower() async throws {
            try await RoleContract.peripheralRefusesWhatNeedsPower(CoreBluetoothPeripheralManager())
        }

        @Test func aPeripheralKeepsItsServiceBookkeeping() async throws {
            try await RoleContract.peripheralKeepsItsServiceBookkeeping(CoreBluetoothPeripheralManager())
        }

        @Test func aShutDownPeripheralEndsItsStreamsAndRefusesCalls() async throws {
            try await RoleContract.peripheralShutDownEndsStreams(CoreBluetoothPeripheralManager())
        }
    }
#endif
