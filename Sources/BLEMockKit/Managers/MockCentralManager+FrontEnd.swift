import BLECore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The door a callback-style front end (the kit's CoreBluetooth-shaped API) uses: operations
/// that start now and report their end through a callback, commands applied in the order the
/// app issued them, and the central's events handed over in the simulation's order.
extension MockCentralManager {
    /// An operation a front end starts.
    package enum FrontEndOperation: Sendable {
        /// Connecting; `refusal`: the peripheral refuses the connection (a CoreBluetoothMock
        /// spec's delegate said no), and the attempt fails with it where its link would have
        /// come up.
        case connect(UUID, timeout: Duration?, refusal: CoreBluetoothError? = nil)
        case discoverServices([BluetoothUUID]?, UUID)
        case discoverIncludedServices([BluetoothUUID]?, RemoteService)
        case discoverCharacteristics([BluetoothUUID]?, RemoteService)
        case discoverDescriptors(RemoteCharacteristic)
        case read(RemoteCharacteristic)
        case readDescriptor(RemoteDescriptor)
        case write(Data, RemoteCharacteristic)
        case writeDescriptor(Data, RemoteDescriptor)
        case setNotify(Bool, RemoteCharacteristic)
        case readRSSI(UUID)
        case openL2CAP(UInt16, UUID)

        /// The peripheral whose link a GATT operation runs on (`nil` for `connect`, which makes
        /// the link).
        package var linkPeripheral: UUID? {
            switch self {
            case .connect: nil
            case .discoverServices(_, let peripheral), .readRSSI(let peripheral), .openL2CAP(_, let peripheral):
                peripheral
            case .discoverIncludedServices(_, let service), .discoverCharacteristics(_, let service):
                service.peripheral
            case .discoverDescriptors(let characteristic), .read(let characteristic), .write(_, let characteristic),
                .setNotify(_, let characteristic):
                characteristic.peripheral
            case .readDescriptor(let descriptor), .writeDescriptor(_, let descriptor): descriptor.peripheral
            }
        }

        /// The role API call it corresponds to (a constant: describing the whole operation, as
        /// string interpolation would, costs a reflection walk on every call).
        package var name: String {
            switch self {
            case .connect: "connect"
            case .discoverServices: "discoverServices"
            case .discoverIncludedServices: "discoverIncludedServices"
            case .discoverCharacteristics: "discoverCharacteristics"
            case .discoverDescriptors: "discoverDescriptors"
            case .read: "readValue"
            case .readDescriptor: "readDescriptorValue"
            case .write: "writeValue"
            case .writeDescriptor: "writeDescriptorValue"
            case .setNotify: "setNotifyValue"
            case .readRSSI: "readRSSI"
            case .openL2CAP: "openL2CAPChannel"
            }
        }
    }

    /// What an operation of a front end ended with.
    package enum FrontEndResult: Sendable {
        case done
        case value(Data)
        case services([RemoteService])
        case characteristics([RemoteCharacteristic])
        case descriptors([RemoteDescriptor])
        case rssi(Int)
        case channel(L2CAPChannel)
    }

    /// Attaches a front end: from now on it hears this central's events and the length of its
    /// write-without-response queues. The central joins the bridge here, so the front end
    /// hears its first state too.
    package func attachFrontEnd(_ frontEnd: CentralFrontEnd) {
        // A manager refused for another's identifier stays off the bridge: its calls are refused
        // with `invalidConfiguration`, and the other manager keeps its front end.
        guard duplicateProblem == nil else { return }
        bridge.assumeIsolated { bridge in
            // A central that joined before its front end attached (another call on the bridge
            // admitted it first) reported its first state to nobody: the front end gets it now.
            // (Not one that joins now in place of a predecessor the app let go of: it starts
            // afresh, and reports its first state as a new manager does.)
            let joinedBefore =
                bridge.centralStreams[identifier].map {
                    $0 === broadcaster || !bridge.world.centrals[existing: identifier].isShutDown
                } ?? false
            // (Nor a relaunched app's, joining now: it reports its state after its restored one.)
            let restores = bridge.world.awaitsRestoration(.central(identifier))
            bridge.centralFrontEnds[identifier] = frontEnd
            bridge.admitArrivals()
            bridge.join(central: identifier, events: broadcaster, configuration: configuration)
            // (A manager still on its way to its first state reports it when it gets there.)
            let state = bridge.world.state(of: .central(identifier))
            if joinedBefore, !restores, state != .unknown { frontEnd.event(.stateChanged(state)) }
            bridge.world.commandQueueReporters.insert(identifier)
            bridge.updateSystemView()
            bridge.runDue()
        }
    }

    /// What the system kept of a link for a restored manager: a front end rebuilds its
    /// peripheral objects from it, as CoreBluetooth restores "any discovered services,
    /// characteristics, characteristic descriptors, and characteristic notification states".
    package struct RestoredLink: Sendable {
        /// Whether the link is up.
        package var isConnected: Bool
        /// Whether the system is still connecting (an attempt the app made stands).
        package var isConnecting: Bool
        /// The longest write without response it carries (ATT_MTU − 3), when it is up.
        package var maximumWriteLength: Int?
        /// The services discovered on the peripheral, in order.
        package var services: [RemoteService]
        /// The services discovered as included services, by the service that includes them (of
        /// ``services``, or itself included), in order.
        package var includedServices: [RemoteService: [RemoteService]]
        /// The characteristics discovered in each service (an included one too).
        package var characteristics: [RemoteService: [RemoteCharacteristic]]
        /// The value handles of the characteristics subscribed to.
        package var subscribed: Set<UInt16>
    }

    /// What the system kept of this central's link to `peripheral` (call it on the bridge's
    /// executor, as a restored manager's first event reaches its front end).
    package func restoredLink(to peripheral: UUID) -> RestoredLink {
        bridge.assumeIsolated { bridge in
            let key = LinkKey(central: identifier, peripheral: peripheral)
            let link = bridge.world.links[key]
            let services = bridge.world.discoveredServices(central: identifier, peripheral: peripheral)
            var characteristics: [RemoteService: [RemoteCharacteristic]] = [:]
            var includedServices: [RemoteService: [RemoteService]] = [:]
            // Each service discovered, then those it includes that were discovered, and so on.
            var pending = services
            var visited = Set(services)
            while !pending.isEmpty {
                let service = pending.removeFirst()
                characteristics[service] = bridge.world.discoveredCharacteristics(central: identifier, service: service)
                let included = bridge.world.discoveredIncludedServices(central: identifier, of: service)
                guard !included.isEmpty else { continue }
                includedServices[service] = included
                for service in included where visited.insert(service).inserted { pending.append(service) }
            }
            return RestoredLink(
                isConnected: link != nil, isConnecting: bridge.world.attempts[key] != nil,
                maximumWriteLength: link?.maximumValueLength, services: services, includedServices: includedServices,
                characteristics: characteristics, subscribed: link.map { Set($0.subscriptions.keys) } ?? [])
        }
    }

    /// The system knows these peripherals, as it does those a state restoration hands an app:
    /// it had been connected to them for the app, so they can be connected (and retrieved)
    /// without a scan. Peripherals not on the bridge are left out.
    package func systemKnows(_ peripherals: [UUID]) {
        bridge.assumeIsolated { bridge in
            for peripheral in peripherals { bridge.world.cache(peripheral: peripheral) }
            bridge.updateSystemView()
        }
    }

    /// Detaches this central's front end (it went away). Once the app was terminated with a
    /// restore identifier, the front end attached is the next manager's: it stays.
    package func detachFrontEnd() {
        detachFrontEnd(handingOver: false)
    }

    /// Detaches the front end; `handingOver` as the app is terminated (later calls then leave
    /// the successor's front end alone).
    func detachFrontEnd(handingOver: Bool) {
        // (A manager refused for another's identifier never attached: the front end under
        // that identifier is the other's, as it is a later manager's once one holds it.)
        guard duplicateProblem == nil, handingOver || refusal("detachFrontEnd") == nil else { return }
        bridge.assumeIsolated { bridge in
            bridge.centralFrontEnds[identifier] = nil
            bridge.world.commandQueueReporters.remove(identifier)
        }
    }

    /// Starts an operation; `completion` runs on the bridge's executor when it ends.
    package func begin(
        _ operation: FrontEndOperation, _ completion: @escaping @Sendable (Result<FrontEndResult, any Error>) -> Void
    ) {
        if let refusal = refusal(operation.name) { return completion(.failure(refusal)) }
        withBridge(operation.name) { bridge in
            let central = identifier
            let request: World.Request
            switch operation {
            case .connect(let peripheral, let timeout, let refusal):
                request = .connect(central: central, peripheral: peripheral, timeout: timeout, refusal: refusal)
            case .discoverServices(let uuids, let peripheral):
                request = .gatt(central: central, peripheral: peripheral, .discoverServices(uuids))
            case .discoverIncludedServices(let uuids, let service):
                request = .gatt(
                    central: central, peripheral: service.peripheral, .discoverIncludedServices(service, uuids))
            case .discoverCharacteristics(let uuids, let service):
                request = .gatt(
                    central: central, peripheral: service.peripheral, .discoverCharacteristics(service, uuids))
            case .discoverDescriptors(let characteristic):
                request = .gatt(
                    central: central, peripheral: characteristic.peripheral, .discoverDescriptors(characteristic))
            case .read(let characteristic):
                request = .gatt(central: central, peripheral: characteristic.peripheral, .read(characteristic))
            case .readDescriptor(let descriptor):
                request = .gatt(central: central, peripheral: descriptor.peripheral, .readDescriptor(descriptor))
            case .write(let value, let characteristic):
                request = .gatt(central: central, peripheral: characteristic.peripheral, .write(characteristic, value))
            case .writeDescriptor(let value, let descriptor):
                request = .gatt(
                    central: central, peripheral: descriptor.peripheral, .writeDescriptor(descriptor, value))
            case .setNotify(let enabled, let characteristic):
                request = .gatt(
                    central: central, peripheral: characteristic.peripheral,
                    .setNotify(characteristic, enabled: enabled))
            case .readRSSI(let peripheral):
                request = .readRSSI(central: central, peripheral: peripheral)
            case .openL2CAP(let psm, let peripheral):
                request = .openL2CAP(central: central, peripheral: peripheral, psm: psm)
            }
            // The bridge keeps the completion until the operation ends and calls it on its own
            // executor, with the outcome as a front end gets it.
            bridge.begin(request, completion)
        }
    }

    /// Queues a write without response as the app's `writeValue(_:for:type: .withoutResponse)`
    /// does: what the stack refuses is dropped, not thrown. Returns what became of the write
    /// (the error, when the stack refused it) and how many write commands are queued for the
    /// peripheral afterwards.
    package func queueWriteWithoutResponse(
        _ value: Data, for characteristic: RemoteCharacteristic
    ) -> (outcome: Result<WriteWithoutResponseOutcome, any Error>, queued: Int) {
        let outcome = Result { try writeWithoutResponse(value, for: characteristic) }
        // A strict central's refusal, which the front end's call cannot throw: recorded.
        if case .failure(let error as APIMisuseError) = outcome {
            world {
                $0.recordUnthrown(
                    error, central: identifier, peripheral: characteristic.peripheral,
                    characteristic: characteristic.uuid, handle: characteristic.handle)
            }
        }
        let queued = world {
            $0.links[LinkKey(central: identifier, peripheral: characteristic.peripheral)]?.queuedCommands ?? 0
        }
        return (outcome, queued)
    }

    /// The capacity of this central's write-without-response queue as its links have it (its
    /// own, or the bridge's ``LinkLimits`` when smaller), or `nil` when unlimited.
    package nonisolated var writeWithoutResponseCapacity: Int? {
        LinkLimits.limit(
            configuration.writeWithoutResponseQueue, to: bridge.configuration.limits.writeWithoutResponseQueueCapacity
        ).capacity
    }
}
