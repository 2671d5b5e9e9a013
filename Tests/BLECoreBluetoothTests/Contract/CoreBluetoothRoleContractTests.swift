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

        @Test("A central refuses what needs power or, powered on, rejects unknown peripherals: one applies")
        func aCentralRefusesWhatNeedsPowerOrRejectsUnknownPeripherals() async throws {
            let central = CoreBluetoothCentralManager()
            let refused = try await RoleContract.centralRefusesWhatNeedsPower(central)
            let rejected = try await RoleContract.centralRejectsUnknownPeripherals(central)
            #expect(refused != rejected)
        }

        @Test func aShutDownCentralEndsItsStreamsAndRefusesCalls() async throws {
            try await RoleContract.centralShutDownEndsStreamsAndRefusesCalls(CoreBluetoothCentralManager())
        }

        @Test func aPeripheralWithoutServicesAnswersQueriesAlike() async throws {
            try await RoleContract.peripheralWithoutServices(CoreBluetoothPeripheralManager())
        }

        @Test("A peripheral refuses what needs power or, powered on, keeps its service bookkeeping: one applies")
        func aPeripheralRefusesWhatNeedsPowerOrKeepsItsBookkeeping() async throws {
            let peripheral = CoreBluetoothPeripheralManager()
            let refused = try await RoleContract.peripheralRefusesWhatNeedsPower(peripheral)
            let kept = try await RoleContract.peripheralKeepsItsServiceBookkeeping(peripheral)
            #expect(refused != kept)
        }

        @Test func aShutDownPeripheralEndsItsStreamsAndRefusesCalls() async throws {
            try await RoleContract.peripheralShutDownEndsStreams(CoreBluetoothPeripheralManager())
        }
    }
#endif
