import BLECore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The door a callback-style front end of a peripheral manager (the kit's CoreBluetooth-shaped
/// API) uses: commands applied in the order the app issued them, and the manager's events
/// handed over in the simulation's order.
extension MockPeripheralManager {
    /// Attaches a front end: from now on it hears this manager's events and the length of its
    /// update queue. The manager joins the bridge here, so the front end hears its first state.
    package func attachFrontEnd(_ frontEnd: PeripheralFrontEnd) {
        // A manager refused for another's identifier stays off the bridge: its calls are refused
        // with `invalidConfiguration`, and the other manager keeps its front end.
        guard duplicateProblem == nil else { return }
        bridge.assumeIsolated { bridge in
            // A peripheral that joined before its front end attached (another call on the bridge
            // admitted it first) reported its first state to nobody: the front end gets it now.
            // (Not one that joins now in place of a predecessor the app let go of: it starts
            // afresh, and reports its first state as a new manager does.)
            let joinedBefore =
                bridge.peripheralStreams[identifier].map {
                    $0 === broadcaster || !bridge.world.peripherals[existing: identifier].isShutDown
                } ?? false
            // (Nor a relaunched app's, joining now: it reports its state after its restored one.)
            let restores = bridge.world.awaitsRestoration(.peripheral(identifier))
            bridge.peripheralFrontEnds[identifier] = frontEnd
            bridge.admitArrivals()
            bridge.join(peripheral: identifier, events: broadcaster, configuration: configuration)
            // (A manager still on its way to its first state reports it when it gets there.)
            let state = bridge.world.state(of: .peripheral(identifier))
            if joinedBefore, !restores, state != .unknown { frontEnd.event(.stateChanged(state)) }
            bridge.world.updateQueueReporters.insert(identifier)
            bridge.runDue()
        }
    }

    /// The centrals subscribed to each characteristic (by value handle), in the order of their
    /// links: what the system kept for a restored manager (call it on the bridge's executor, as
    /// the restored manager's first event reaches its front end).
    package func restoredSubscribers() -> [UInt16: [RemoteCentral]] {
        bridge.assumeIsolated { bridge in
            var subscribers: [UInt16: [RemoteCentral]] = [:]
            for key in bridge.world.links(ofPeripheral: identifier) {
                guard let link = bridge.world.links[key] else { continue }
                let central = RemoteCentral(identifier: key.central, maximumUpdateValueLength: link.maximumValueLength)
                for handle in link.subscriptions.keys.sorted() { subscribers[handle, default: []].append(central) }
            }
            return subscribers
        }
    }

    /// The characteristics the system kept published for a restored manager, as the app
    /// described them, by value handle: a static one with the value it answers reads with, each
    /// with its descriptors (call it on the bridge's executor, as ``restoredSubscribers()``).
    package func restoredCharacteristics() -> [UInt16: GATTCharacteristic] {
        bridge.assumeIsolated { bridge in
            var characteristics: [UInt16: GATTCharacteristic] = [:]
            for service in bridge.world.peripherals[identifier]?.database.services ?? [] {
                for kept in service.characteristics {
                    characteristics[kept.local.handle] = GATTCharacteristic(
                        uuid: kept.local.uuid, properties: kept.local.properties, permissions: kept.local.permissions,
                        value: kept.isStatic ? kept.value : nil,
                        descriptors: kept.descriptors.map { GATTDescriptor(uuid: $0.uuid, value: $0.value) })
                }
            }
            return characteristics
        }
    }

    /// Detaches this manager's front end (it went away). Once the app was terminated with a
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
            bridge.peripheralFrontEnds[identifier] = nil
            bridge.world.updateQueueReporters.remove(identifier)
        }
    }

    /// Answers a request the configuration's `deferringHandler` left for later: the answer
    /// crosses the link as a manual peripheral's does (in the connection event its request
    /// crossed in, when given in that instant). One nothing waits for any more (its link went
    /// away meanwhile) is dropped.
    package func answer(_ request: ATTRequest, with response: RequestResponse) {
        guard refusal("answer") == nil else { return }
        withBridge { $0.answerLater(peripheral: identifier, to: request, with: response) }
    }

    /// Whether request `id` this peripheral was handed still waits for its answer (one
    /// answered, or whose central went away, does not).
    package func awaitsAnswer(to id: UInt64) -> Bool {
        world { $0.awaitsAnswer(from: identifier, to: id) }
    }

    /// Sends an update for a front end whose call cannot throw (CoreBluetooth's `updateValue`
    /// returns a `Bool`): as ``updateValue(_:for:onSubscribedCentrals:)``, and a refusal of a
    /// strict peripheral (a value too long for a subscriber's link) is also recorded as a misuse,
    /// which ``MockBLEBridge/finish()`` reports, before it is thrown to the front end.
    package func sendUpdate(
        _ value: Data, for characteristic: LocalCharacteristic, onSubscribedCentrals centrals: [UUID]?
    ) throws -> Bool {
        do {
            return try updateValue(value, for: characteristic, onSubscribedCentrals: centrals)
        } catch let error as APIMisuseError {
            world {
                $0.recordUnthrown(
                    error, central: nil, peripheral: identifier, characteristic: characteristic.uuid,
                    handle: characteristic.handle)
            }
            throw error
        }
    }

    /// Whether the update queue is full (an update to a subscriber would be refused now).
    package var updateQueueIsFull: Bool {
        guard let capacity = updateQueueCapacity else { return false }
        return world { $0.peripherals[identifier]?.queuedUpdates ?? 0 } >= capacity
    }

    /// How many updates wait in the update queue.
    package var queuedUpdates: Int {
        world { $0.peripherals[identifier]?.queuedUpdates ?? 0 }
    }

    /// The front end refused an update because its mirror of the update queue was full: the
    /// manager is owed a ready event once the queue drains, as when the stack refuses one, or at
    /// once if it drained while the refusal was on its way (the mirror lags the queue by the
    /// commands in flight: waiting for the next drain would wait for ever).
    package func noteUpdateRefused() {
        world { world in
            guard world.peripherals.contains(identifier) else { return }
            world.peripherals[identifier]!.updateQueueWasFull = true
            world.updatesLeftQueue(0, of: identifier)
        }
    }

    /// The front end's `updateValue` returned `false` for `value` of `characteristic` (its mirror
    /// of the update queue was full): logged and noted as the stack's own refusal is (for the
    /// stall report, should the app not send it again), then owed a ready event as above, unless
    /// it is `answered`: a ready event the app has yet to hear was already made after the point it
    /// refused at (the queue drained while the refusal was on its way), so the app is told it may
    /// send again by that one.
    package func noteUpdateRefused(_ value: Data, for characteristic: LocalCharacteristic, answered: Bool) {
        world { world in
            guard world.peripherals.contains(identifier) else { return }
            world.record(
                .notification, peripheral: identifier, attribute: characteristic.uuid,
                handle: characteristic.handle, value: value, detail: World.updateRefusedDetail)
            world.noteRefusedUpdate(peripheral: identifier, characteristic: characteristic, answered: answered)
        }
        if !answered { noteUpdateRefused() }
    }

    /// The capacity of the update queue as the peripheral has it (its own, or the bridge's
    /// ``LinkLimits`` when smaller), or `nil` when unlimited.
    package nonisolated var updateQueueCapacity: Int? {
        LinkLimits.limit(configuration.updateQueue, to: bridge.configuration.limits.updateQueueCapacity).capacity
    }

    /// The centrals connected to this peripheral, in a deterministic order.
    package var connectedCentrals: [UUID] {
        world { $0.links(ofPeripheral: identifier).map(\.central) }
    }

    /// Sets advertising sets besides the main advertisement (on the air while it is; each
    /// starts `delay` after advertising starts and repeats every `interval`, or advertises once;
    /// one not `alsoWhenConnected` goes unheard while the peripheral is connected).
    package func setAdditionalAdvertisingSets(
        _ sets: [(
            advertisement: AdvertisementData, interval: Duration, delay: Duration, once: Bool,
            alsoWhenConnected: Bool
        )]
    ) {
        // (A repeating set with no time between its advertisements would hold the simulation at
        // one instant for ever: it repeats at least a microsecond apart.)
        let converted = sets.map {
            AdvertisingSet(
                advertisement: $0.advertisement, interval: $0.once ? $0.interval : max($0.interval, .microseconds(1)),
                delay: $0.delay, once: $0.once, alsoWhenConnected: $0.alsoWhenConnected)
        }
        world { $0.setAdvertisingSets(converted, of: identifier) }
    }

    /// Sets the main advertisement's timing from the next ``startAdvertising(_:)`` on, in place
    /// of the configuration's ``Configuration/advertisingInterval``,
    /// ``Configuration/advertisingDelay`` and ``Configuration/advertisesOnce`` (which keep their
    /// values): the first advertisement goes out `delay` after advertising starts, the next
    /// every `interval` (not held to legacy advertising's 20 ms…10.24 s), or none after it when
    /// `once`. For a CoreBluetoothMock spec, whose advertisement changes bring their own timing.
    package func setAdvertisingTiming(interval: Duration, delay: Duration, once: Bool) {
        world { $0.setAdvertisingTiming(of: identifier, interval: interval, delay: delay, once: once) }
    }

    /// Whether the main advertisement is heard while the peripheral is connected (to a central,
    /// or to something outside the simulation, ``simulateConnectionBySystem(_:)``). `true` until
    /// set, as iOS keeps a peripheral manager advertising while centrals are connected; `false`
    /// for a device whose connectable advertising stops when a central connects and starts again
    /// when the connection ends (CoreBluetoothMock's advertising sets not `alsoWhenConnected`).
    package func setAdvertisesWhenConnected(_ advertises: Bool) {
        world { $0.setAdvertisesWhenConnected(advertises, peripheral: identifier) }
    }
}
