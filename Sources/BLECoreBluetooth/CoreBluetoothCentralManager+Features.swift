#if canImport(CoreBluetooth)
    import BLECore
    @preconcurrency import CoreBluetooth

    extension CoreBluetoothCentralManager {
        // MARK: Connection events and ANCS

        /// Registers with `registerForConnectionEvents(options:)` (iOS, iPadOS and visionOS; on
        /// macOS, tvOS and watchOS CoreBluetooth has no connection events and this does
        /// nothing). The condition also admits the Linux type-check against the stub.
        public func registerForConnectionEvents(options: ConnectionEventOptions?) {
            #if !(os(macOS) || os(tvOS) || os(watchOS))
                guard let options else {
                    manager.registerForConnectionEvents(options: nil)
                    return
                }
                var dictionary: [CBConnectionEventMatchingOption: Any] = [:]
                if !options.serviceUUIDs.isEmpty { dictionary[.serviceUUIDs] = options.serviceUUIDs.map(\.cbUUID) }
                if !options.peripheralIdentifiers.isEmpty {
                    dictionary[.peripheralUUIDs] = options.peripheralIdentifiers
                }
                manager.registerForConnectionEvents(options: dictionary)
            #endif
        }

        /// `CBPeripheral.ancsAuthorized` (iOS, iPadOS and visionOS; `false` on macOS, tvOS and
        /// watchOS).
        public func isANCSAuthorized(_ peripheral: UUID) -> Bool {
            guard let record = peripherals[peripheral] else { return false }
            return Self.ancsAuthorized(record.peripheral)
        }

        nonisolated static func ancsAuthorized(_ peripheral: CBPeripheral) -> Bool {
            #if !(os(macOS) || os(tvOS) || os(watchOS))
                peripheral.ancsAuthorized
            #else
                false
            #endif
        }

        // MARK: L2CAP

        /// Opens a channel with `openL2CAPChannel(_:)`; CoreBluetooth's answer (`didOpen`)
        /// completes the call, and the link dropping fails it with the link's error.
        public func openL2CAPChannel(_ psm: UInt16, on peripheral: UUID) async throws -> L2CAPChannel {
            try requirePoweredOn("openL2CAPChannel")
            let record = try record(for: peripheral)
            guard record.peripheral.state == .connected else { throw CoreBluetoothError(.notConnected) }
            return try await channelOpens.wait(for: .openL2CAPChannel(peripheral: peripheral, psm: psm)) {
                record.peripheral.openL2CAPChannel(psm)
            }
        }

        func channelOpened(_ channel: CBL2CAPChannel?, on peripheral: CBPeripheral, error: (any Error)?) {
            guard let psm = channel?.psm ?? pendingPSM(on: peripheral.identifier) else { return }
            let key = CentralOperation.openL2CAPChannel(peripheral: peripheral.identifier, psm: psm)
            guard let channel, error == nil else {
                channelOpens.resume(key, with: .failure(CoreBluetoothErrorMapping.operationError(from: error)))
                return
            }
            let id = nextChannelID
            nextChannelID += 1
            let endpoint = CoreBluetoothL2CAPEndpoint(channel: channel)
            let opened = L2CAPChannel(
                psm: psm, peer: peripheral.identifier, id: id, mtu: CoreBluetoothL2CAPEndpoint.mtu, endpoint: endpoint)
            if !channelOpens.resume(key, with: .success(opened)) { endpoint.closeNow() }
        }

        /// The PSM of the oldest channel waiting to open on a peripheral (CoreBluetooth reports
        /// a failed open without a channel).
        func pendingPSM(on peripheral: UUID) -> UInt16? {
            channelOpens.waitingKeys.compactMap { key -> UInt16? in
                if case .openL2CAPChannel(peripheral, let psm) = key { return psm }
                return nil
            }.min()
        }

        // MARK: State restoration

        /// The system relaunched the app: registers the restored peripherals and reports what
        /// it restored, before any other event.
        func restore(_ dictionary: [String: Any]) {
            let restored = (dictionary[CBCentralManagerRestoredStatePeripheralsKey] as? [CBPeripheral]) ?? []
            for peripheral in restored where peripheral.state == .connected {
                connectedIDs.insert(peripheral.identifier)
            }
            var scanServices: [BluetoothUUID]?
            var scanOptions: ScanOptions?
            if let services = dictionary[CBCentralManagerRestoredStateScanServicesKey] as? [CBUUID] {
                scanServices = services.map(BluetoothUUID.init)
            }
            if let options = dictionary[CBCentralManagerRestoredStateScanOptionsKey] as? [String: Any] {
                scanOptions = ScanOptions(
                    allowDuplicates: (options[CBCentralManagerScanOptionAllowDuplicatesKey] as? NSNumber)?.boolValue
                        ?? false,
                    solicitedServiceUUIDs: (options[CBCentralManagerScanOptionSolicitedServiceUUIDsKey] as? [CBUUID])?
                        .map(BluetoothUUID.init) ?? [])
            }
            if scanServices != nil || scanOptions != nil { scanning = true }
            fanOut.yield(
                .willRestoreState(
                    RestoredCentralState(
                        peripherals: restored.map(register), scanServices: scanServices, scanOptions: scanOptions)))
        }
    }

    extension ConnectionEvent {
        /// The kit's value for CoreBluetooth's.
        init(_ event: CBConnectionEvent) {
            self = event == .peerConnected ? .peerConnected : .peerDisconnected
        }
    }
#endif
