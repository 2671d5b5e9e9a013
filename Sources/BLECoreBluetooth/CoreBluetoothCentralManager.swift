#if canImport(CoreBluetooth)
    import BLECore
    @preconcurrency import CoreBluetooth

    /// The central role (`CentralManaging`) backed by Apple's `CBCentralManager`.
    ///
    /// Inject it in the app and a mock in tests:
    ///
    /// ```swift
    /// let central: any CentralManaging = CoreBluetoothCentralManager()
    /// ```
    ///
    /// **Threading.** The actor's executor is a ``DispatchQueueExecutor`` on the serial queue
    /// the `CBCentralManager` delivers its callbacks on, so the actor and CoreBluetooth share one
    /// thread discipline: CoreBluetooth objects are only touched on that queue. Delegate
    /// callbacks are posted, in delivery order, to a ``CallbackInbox`` that one task drains into
    /// the actor, so they are handled in the order CoreBluetooth sent them.
    ///
    /// **Handles.** CoreBluetooth hides ATT handles. Each `CBService`, `CBCharacteristic` and
    /// `CBDescriptor` object gets a number from ``AttributeNumbering`` when first discovered
    /// (per peripheral, from 1, in discovery order), used as `RemoteService.handle` (and
    /// `RemoteService.endHandle`, since the real range is unknown),
    /// `RemoteCharacteristic.handle` and `RemoteDescriptor.handle`. Numbers are forgotten,
    /// never reused, when the link drops or services are invalidated: rediscover to get new
    /// ones; an old value then fails with `CoreBluetoothError.Code.invalidHandle`.
    ///
    /// **Waiting calls.** Each call waits in a ``PendingOperations`` keyed by peripheral and
    /// attribute; a link drop fails that peripheral's calls with the disconnection's error
    /// (`CoreBluetoothError.Code.operationCancelled` after ``cancelPeripheralConnection(_:)``),
    /// and leaving `poweredOn` fails them with `CoreBluetoothError.Code.peripheralDisconnected`.
    /// A read answer and a notification arrive through the same CoreBluetooth callback: it
    /// answers a waiting read if there is one, and is delivered as
    /// `CentralEvent.valueUpdated(_:_:)` otherwise.
    ///
    /// On Linux this type is only type-checked (against a declaration-only CoreBluetooth);
    /// it runs only on Apple platforms. Its bookkeeping types are tested everywhere.
    public actor CoreBluetoothCentralManager: CentralManaging {
        /// How the manager is created.
        public struct Configuration: Sendable, Hashable {
            /// Whether the system warns the user when Bluetooth is off
            /// (`CBCentralManagerOptionShowPowerAlertKey`). Defaults to `false`.
            public var showPowerAlert: Bool
            /// The label of the serial queue callbacks and the actor run on. Defaults to
            /// `"BLECoreBluetooth.central"`.
            public var queueLabel: String
            /// The restore identifier (`CBCentralManagerOptionRestoreIdentifierKey`): with it the
            /// system keeps the manager's connections and scan when the app is terminated and
            /// hands them back as a `CentralEvent.willRestoreState(_:)` event. Needs the
            /// `bluetooth-central` background mode. Defaults to `nil`.
            public var restoreIdentifier: String?

            /// Creates a configuration.
            public init(
                showPowerAlert: Bool = false, queueLabel: String = "BLECoreBluetooth.central",
                restoreIdentifier: String? = nil
            ) {
                self.showPowerAlert = showPowerAlert
                self.queueLabel = queueLabel
                self.restoreIdentifier = restoreIdentifier
            }
        }

        nonisolated let executor: DispatchQueueExecutor
        nonisolated let inbox = CallbackInbox<CentralCallback>()
        nonisolated let fanOut = EventFanOut<CentralEvent>()
        let delegate: CentralDelegate
        let manager: CBCentralManager
        let clock: any Clock<Duration>
        let operations = PendingOperations<CentralOperation, Void>()
        let reads = PendingOperations<CentralOperation, Data>()
        let rssiReads = PendingOperations<CentralOperation, Int>()
        let channelOpens = PendingOperations<CentralOperation, L2CAPChannel>()
        var nextChannelID: UInt64 = 1
        var peripherals: [UUID: PeripheralRecord] = [:]
        var connectedIDs: Set<UUID> = []
        var connectTimers: [UUID: Task<Void, Never>] = [:]
        var stateWaiters: [CheckedContinuation<ManagerState, Never>] = []
        var scanning = false
        var isShutDown = false

        /// The manager's state, as CoreBluetooth last reported it.
        public internal(set) var state: ManagerState = .unknown

        /// Runs on the queue CoreBluetooth calls back on.
        public nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }

        /// Creates a central manager.
        ///
        /// - Parameters:
        ///   - configuration: power alert and queue label.
        ///   - clock: the clock connection timeouts (`ConnectOptions.timeout`) are measured on.
        public init(configuration: Configuration = Configuration(), clock: any Clock<Duration> = ContinuousClock()) {
            executor = DispatchQueueExecutor(label: configuration.queueLabel)
            delegate = CentralDelegate(inbox: inbox)
            self.clock = clock
            var options: [String: Any] = [
                CBCentralManagerOptionShowPowerAlertKey: NSNumber(value: configuration.showPowerAlert)
            ]
            if let restoreIdentifier = configuration.restoreIdentifier {
                options[CBCentralManagerOptionRestoreIdentifierKey] = restoreIdentifier
            }
            manager = CBCentralManager(delegate: delegate, queue: executor.queue, options: options)
            inbox.startConsuming { [weak self] handoff in
                guard let self else { return false }
                await self.handle(handoff)
                return true
            }
        }

        deinit {
            inbox.finish()
            fanOut.finish()
        }

        /// Stops scanning, cancels every connection, fails every waiting call with
        /// `CoreBluetoothError.Code.operationCancelled` and finishes every event stream.
        public func shutDown() {
            guard !isShutDown else { return }
            isShutDown = true
            if scanning { manager.stopScan() }
            scanning = false
            for record in peripherals.values where record.peripheral.state != .disconnected {
                manager.cancelPeripheralConnection(record.peripheral)
            }
            failAll(where: { _ in true }, with: CoreBluetoothError(.operationCancelled))
            for timer in connectTimers.values { timer.cancel() }
            connectTimers = [:]
            settleWaiters(with: state)
            inbox.finish()
            fanOut.finish()
        }

        public func waitForPoweredOn() async -> ManagerState {
            if state != .unknown && state != .resetting || isShutDown { return state }
            return await withCheckedContinuation { stateWaiters.append($0) }
        }

        public nonisolated func events() -> AsyncStream<CentralEvent> { fanOut.stream() }

        public var isScanning: Bool { scanning }

        public func scanForPeripherals(withServices serviceUUIDs: [BluetoothUUID]?, options: ScanOptions) async throws {
            try requirePoweredOn("scanForPeripherals")
            var dictionary: [String: Any] = [
                CBCentralManagerScanOptionAllowDuplicatesKey: NSNumber(value: options.allowDuplicates)
            ]
            if !options.solicitedServiceUUIDs.isEmpty {
                dictionary[CBCentralManagerScanOptionSolicitedServiceUUIDsKey] = options.solicitedServiceUUIDs.map(
                    \.cbUUID)
            }
            manager.scanForPeripherals(withServices: serviceUUIDs?.map(\.cbUUID), options: dictionary)
            scanning = true
        }

        public func stopScan() async {
            manager.stopScan()
            scanning = false
        }

        /// Connects; with `ConnectOptions.timeout`, gives up after it on this manager's clock
        /// with `CoreBluetoothError.Code.connectionTimeout` and cancels the CoreBluetooth
        /// connection attempt. Cancelling the calling task cancels the attempt too.
        public func connect(_ peripheral: UUID, options: ConnectOptions) async throws {
            try requirePoweredOn("connect")
            let record = try record(for: peripheral)
            if record.peripheral.state == .connected { return }
            if let timeout = options.timeout { startConnectTimer(for: peripheral, after: timeout) }
            do {
                try await operations.wait(for: .connect(peripheral: peripheral)) {
                    manager.connect(record.peripheral, options: nil)
                }
            } catch is CancellationError {
                if !operations.isWaiting(for: .connect(peripheral: peripheral)) {
                    stopConnectTimer(for: peripheral)
                    manager.cancelPeripheralConnection(record.peripheral)
                }
                throw CancellationError()
            }
        }

        /// Cancels a connection or a pending attempt. A peripheral this central never knew has
        /// nothing to cancel: the call does nothing, as CoreBluetooth's does for a peripheral
        /// that is not connected (clean-up code must not throw).
        public func cancelPeripheralConnection(_ peripheral: UUID) async throws {
            guard let record = peripherals[peripheral] else { return }
            stopConnectTimer(for: peripheral)
            failAll(where: { $0.peripheral == peripheral }, with: CoreBluetoothError(.operationCancelled))
            manager.cancelPeripheralConnection(record.peripheral)
        }

        public func isConnected(_ peripheral: UUID) -> Bool {
            peripherals[peripheral]?.peripheral.state == .connected
        }

        public func retrievePeripherals(withIdentifiers identifiers: [UUID]) -> [RemotePeripheral] {
            manager.retrievePeripherals(withIdentifiers: identifiers).map(register)
        }

        public func retrieveConnectedPeripherals(withServices serviceUUIDs: [BluetoothUUID]) -> [RemotePeripheral] {
            manager.retrieveConnectedPeripherals(withServices: serviceUUIDs.map(\.cbUUID)).map(register)
        }

        func startConnectTimer(for peripheral: UUID, after timeout: Duration) {
            connectTimers[peripheral]?.cancel()
            let clock = self.clock
            connectTimers[peripheral] = Task { [weak self] in
                do { try await clock.sleep(for: timeout) } catch { return }
                await self?.connectionTimedOut(peripheral)
            }
        }

        func stopConnectTimer(for peripheral: UUID) {
            connectTimers.removeValue(forKey: peripheral)?.cancel()
        }

        func connectionTimedOut(_ peripheral: UUID) {
            guard connectTimers.removeValue(forKey: peripheral) != nil, let record = peripherals[peripheral] else {
                return
            }
            let error = CoreBluetoothError(.connectionTimeout)
            if operations.resumeAll(.connect(peripheral: peripheral), with: .failure(error)) > 0 {
                manager.cancelPeripheralConnection(record.peripheral)
                fanOut.yield(.failedToConnect(remote(record.peripheral), error))
            }
        }

        func requirePoweredOn(_ operation: String) throws {
            guard !isShutDown else { throw APIMisuseError.managerShutDown(operation: operation) }
            guard state == .poweredOn else {
                throw APIMisuseError.notPoweredOn(operation: operation, state: state)
            }
        }

        func failAll(where matches: (CentralOperation) -> Bool, with error: any Error) {
            operations.failAll(where: matches, with: error)
            reads.failAll(where: matches, with: error)
            rssiReads.failAll(where: matches, with: error)
            channelOpens.failAll(where: matches, with: error)
        }

        func settleWaiters(with state: ManagerState) {
            let waiters = stateWaiters
            stateWaiters = []
            for waiter in waiters { waiter.resume(returning: state) }
        }
    }
#endif
