#if canImport(CoreBluetooth)
    import BLECore
    @preconcurrency import CoreBluetooth

    /// The peripheral role (`PeripheralManaging`) backed by Apple's `CBPeripheralManager`.
    ///
    /// **Threading.** As ``CoreBluetoothCentralManager``: the actor runs on the serial queue
    /// CoreBluetooth calls back on (``DispatchQueueExecutor``), and callbacks reach it in
    /// delivery order through a ``CallbackInbox``.
    ///
    /// **Handles.** `add(_:)` numbers the new `CBMutableService`, then each characteristic and
    /// its descriptors, with the manager's ``AttributeNumbering`` (from 1, in publication order,
    /// never reused): the service's number is `LocalService.handle`, the last number
    /// `LocalService.endHandle`, and each characteristic's number its
    /// `LocalCharacteristic.handle`. They are stand-ins: CoreBluetooth's real handles are hidden.
    ///
    /// **Requests.** Each `CBATTRequest` gets the next `ATTRequest.id`; the manager keeps the
    /// CoreBluetooth request (a write batch under its first request's id) until
    /// ``respond(to:withResult:value:)`` answers it, exactly once.
    ///
    /// Leaving `poweredOn` ends advertising and forgets the pending requests and the known
    /// centrals; waiting calls fail with `APIMisuseError.notPoweredOn(operation:state:)`. A state
    /// below `poweredOff` also forgets the published services (CoreBluetooth clears its database
    /// then: add the services again when powered on); turned off, CoreBluetooth keeps them, and
    /// its advertising goes on once powered on, as its documentation says.
    ///
    /// On Linux this type is only type-checked (against a declaration-only CoreBluetooth);
    /// it runs only on Apple platforms. Its bookkeeping types are tested everywhere.
    public actor CoreBluetoothPeripheralManager: PeripheralManaging {
        /// How the manager is created.
        public struct Configuration: Sendable, Hashable {
            /// Whether the system warns the user when Bluetooth is off
            /// (`CBPeripheralManagerOptionShowPowerAlertKey`). Defaults to `false`.
            public var showPowerAlert: Bool
            /// The label of the serial queue callbacks and the actor run on. Defaults to
            /// `"BLECoreBluetooth.peripheral"`.
            public var queueLabel: String
            /// The restore identifier (`CBPeripheralManagerOptionRestoreIdentifierKey`): with it the
            /// system keeps the manager's services and advertising when the app is terminated and
            /// hands them back as a `PeripheralEvent.willRestoreState(_:)` event. Needs
            /// the `bluetooth-peripheral` background mode. Defaults to `nil`.
            public var restoreIdentifier: String?

            /// Creates a configuration.
            public init(
                showPowerAlert: Bool = false, queueLabel: String = "BLECoreBluetooth.peripheral",
                restoreIdentifier: String? = nil
            ) {
                self.showPowerAlert = showPowerAlert
                self.queueLabel = queueLabel
                self.restoreIdentifier = restoreIdentifier
            }
        }

        /// A published service with its CoreBluetooth object.
        struct Published {
            let service: CBMutableService
            let local: LocalService
        }

        nonisolated let executor: DispatchQueueExecutor
        nonisolated let inbox = CallbackInbox<PeripheralCallback>()
        nonisolated let fanOut = EventFanOut<PeripheralEvent>()
        let delegate: PeripheralManagerDelegate
        let manager: CBPeripheralManager
        let operations = PendingOperations<PeripheralOperation, Void>()
        let psmOperations = PendingOperations<PeripheralOperation, UInt16>()
        var nextChannelID: UInt64 = 1
        var numbering = AttributeNumbering<CBAttribute>()
        var published: [UInt16: Published] = [:]
        var localCharacteristics: [UInt16: (object: CBMutableCharacteristic, local: LocalCharacteristic)] = [:]
        var requests: [UInt64: [CBATTRequest]] = [:]
        var nextRequestID: UInt64 = 1
        var centrals: [UUID: CBCentral] = [:]
        var stateWaiters: [CheckedContinuation<ManagerState, Never>] = []
        /// Whether the manager advertises (paused while Bluetooth is off: see
        /// `AdvertisingMirror`).
        var advertising = AdvertisingMirror()
        var isShutDown = false

        /// The manager's state, as CoreBluetooth last reported it.
        public internal(set) var state: ManagerState = .unknown

        /// Runs on the queue CoreBluetooth calls back on.
        public nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }

        /// Creates a peripheral manager.
        public init(configuration: Configuration = Configuration()) {
            executor = DispatchQueueExecutor(label: configuration.queueLabel)
            delegate = PeripheralManagerDelegate(inbox: inbox)
            var options: [String: Any] = [
                CBPeripheralManagerOptionShowPowerAlertKey: NSNumber(value: configuration.showPowerAlert)
            ]
            if let restoreIdentifier = configuration.restoreIdentifier {
                options[CBPeripheralManagerOptionRestoreIdentifierKey] = restoreIdentifier
            }
            manager = CBPeripheralManager(delegate: delegate, queue: executor.queue, options: options)
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

        /// Stops advertising, fails every waiting call with
        /// `CoreBluetoothError.Code.operationCancelled` and finishes every event stream.
        public func shutDown() {
            guard !isShutDown else { return }
            isShutDown = true
            if advertising.isAdvertising { manager.stopAdvertising() }
            advertising.isAdvertising = false
            operations.failAll(with: CoreBluetoothError(.operationCancelled))
            psmOperations.failAll(with: CoreBluetoothError(.operationCancelled))
            settleWaiters(with: state)
            inbox.finish()
            fanOut.finish()
        }

        public func waitForPoweredOn() async -> ManagerState {
            if state != .unknown && state != .resetting || isShutDown { return state }
            return await withCheckedContinuation { stateWaiters.append($0) }
        }

        public nonisolated func events() -> AsyncStream<PeripheralEvent> { fanOut.stream() }

        public var services: [LocalService] {
            published.keys.sorted().map { published[$0]!.local }
        }

        public var isAdvertising: Bool { advertising.isAdvertising }

        public func startAdvertising(_ advertisement: AdvertisementData) async throws {
            try requirePoweredOn("startAdvertising")
            guard !advertising.isAdvertising, !operations.isWaiting(for: .startAdvertising) else {
                throw CoreBluetoothError(.alreadyAdvertising)
            }
            try await operations.wait(for: .startAdvertising) {
                manager.startAdvertising(advertisement.coreBluetoothDictionary)
            }
            advertising.isAdvertising = true
        }

        public func stopAdvertising() async {
            manager.stopAdvertising()
            advertising.isAdvertising = false
            operations.failAll(where: { $0 == .startAdvertising }, with: CoreBluetoothError(.operationCancelled))
        }

        public func respond(to request: ATTRequest, withResult result: ATTError.Code, value: Data?) async throws {
            guard let batch = requests.removeValue(forKey: request.id), let first = batch.first else {
                throw APIMisuseError.unknownRequest(id: request.id)
            }
            if let value { first.value = value }
            manager.respond(to: first, withResult: CoreBluetoothErrorMapping.cbATTErrorCode(for: result))
        }

        public func updateValue(
            _ value: Data, for characteristic: LocalCharacteristic, onSubscribedCentrals centrals: [UUID]?
        ) async throws -> Bool {
            try requirePoweredOn("updateValue")
            let object = try publishedCharacteristic(characteristic)
            guard !characteristic.properties.isDisjoint(with: [.notify, .indicate]) else {
                throw APIMisuseError.characteristicCannotNotify(characteristic.uuid, handle: characteristic.handle)
            }
            let targets = centrals?.compactMap { self.centrals[$0] }
            return manager.updateValue(value, for: object, onSubscribedCentrals: targets)
        }

        public func subscribedCentrals(for characteristic: LocalCharacteristic) -> [RemoteCentral] {
            (localCharacteristics[characteristic.handle]?.object.subscribedCentrals ?? []).map(remote)
        }

        func requirePoweredOn(_ operation: String) throws {
            guard !isShutDown else { throw APIMisuseError.managerShutDown(operation: operation) }
            guard state == .poweredOn else {
                throw APIMisuseError.notPoweredOn(operation: operation, state: state)
            }
        }

        func publishedCharacteristic(_ characteristic: LocalCharacteristic) throws -> CBMutableCharacteristic {
            guard let entry = localCharacteristics[characteristic.handle], entry.local == characteristic else {
                throw APIMisuseError.characteristicNotPublished(characteristic.uuid, handle: characteristic.handle)
            }
            return entry.object
        }

        func remote(_ central: CBCentral) -> RemoteCentral {
            RemoteCentral(identifier: central.identifier, maximumUpdateValueLength: central.maximumUpdateValueLength)
        }

        func settleWaiters(with state: ManagerState) {
            let waiters = stateWaiters
            stateWaiters = []
            for waiter in waiters { waiter.resume(returning: state) }
        }
    }
#endif
