import BLECore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

extension MockBLEBridge {
    /// Applies a fault now.
    public func simulate(_ fault: Fault) {
        apply(fault)
    }

    /// Schedules a fault at a virtual time (at once if that time has passed); it fires when
    /// the simulation reaches it, in order with everything else scheduled.
    public func schedule(_ fault: Fault, at instant: VirtualClock.Instant) {
        world.schedule.schedule(.fault(fault), at: max(instant, world.now))
    }

    /// Schedules a fault `delay` from now.
    public func schedule(_ fault: Fault, after delay: Duration) {
        schedule(fault, at: world.now.advanced(by: max(delay, .zero)))
    }

    func apply(_ fault: Fault) {
        switch fault {
        case .disconnect(let central, let peripheral, let error):
            tearDown(LinkKey(central: central, peripheral: peripheral), reason: error, pendingError: error)
        case .reset(let peripheral):
            world.record(.stateChanged, peripheral: peripheral, detail: "reset")
            for key in world.links(ofPeripheral: peripheral) {
                let error = CoreBluetoothError(.peripheralDisconnected)
                tearDown(key, reason: error, pendingError: error)
            }
        case .proximity(let peripheral, let proximity):
            setProximity(proximity, of: peripheral)
        case .advertisementChange(let peripheral, let advertisement):
            guard world.peripherals[peripheral]?.advertisement != nil else { return }
            world.peripherals[peripheral]!.advertisement = advertisement
            world.record(.advertisingStarted, peripheral: peripheral, detail: "advertisement changed")
            for central in world.centralOrder {
                world.centrals[central]!.scan?.reported.remove(peripheral)
                deliverAdvertisement(from: peripheral, to: central)
            }
        case .nameChange(let peripheral, let name):
            guard world.peripherals[peripheral] != nil else { return }
            world.peripherals[peripheral]!.configuration.name = name
            world.record(.stateChanged, peripheral: peripheral, detail: "name=\(name ?? "nil")")
            for key in world.links(ofPeripheral: peripheral) {
                world.centrals[key.central]?.events.yield(.nameUpdated(world.remotePeripheral(peripheral)))
            }
        case .centralState(let central, let state):
            setState(.central(central), to: state)
        case .peripheralState(let peripheral, let state):
            setState(.peripheral(peripheral), to: state)
        }
    }

    func setProximity(_ proximity: Proximity, of peripheral: UUID) {
        guard world.peripherals[peripheral] != nil else { return }
        world.peripherals[peripheral]!.proximity = proximity
        world.peripherals[peripheral]!.proximitySimulated = true
        world.record(.stateChanged, peripheral: peripheral, detail: "proximity=\(proximity)")
        if proximity == .outOfRange {
            let timeout = world.timing.supervisionTimeout
            if timeout == .zero {
                supervisionTimedOut(peripheral)
            } else {
                world.schedule.schedule(.supervisionTimeout(peripheral), at: world.now.advanced(by: timeout))
            }
        } else {
            world.schedule.removeAll { $0 == .supervisionTimeout(peripheral) }
            // Requests sent while it was out of range get through now; those still in flight
            // complete as scheduled.
            let scheduled = Set(
                world.schedule.ordered.compactMap { entry -> UInt64? in
                    if case .complete(let id) = entry.event { return id }
                    return nil
                })
            for id in waiting.keys.sorted()
            where waiting[id]!.link.peripheral == peripheral && !scheduled.contains(id) {
                completions.removeValue(forKey: id)?()
            }
            for central in world.centralOrder { deliverAdvertisement(from: peripheral, to: central) }
            connectPendingAttempts(to: peripheral)
        }
    }

    /// The supervision timeout after going out of range: every link drops with
    /// `connectionTimeout`, unless the peripheral came back.
    func supervisionTimedOut(_ peripheral: UUID) {
        guard world.peripherals[peripheral]?.proximity == .outOfRange else { return }
        for key in world.links(ofPeripheral: peripheral) {
            let error = CoreBluetoothError(.connectionTimeout)
            tearDown(key, reason: error, pendingError: error)
        }
    }

    /// The RSSI a central sees from a peripheral now: its proximity's (or configured)
    /// strength with seeded variation.
    func currentRSSI(of peripheral: UUID) -> Int {
        let record = world.peripherals[peripheral]!
        let base =
            record.proximitySimulated ? (record.proximity.rssi ?? record.configuration.rssi) : record.configuration.rssi
        let spread = record.configuration.rssiVariation
        guard spread > 0 else { return base }
        return base + world.peripherals[peripheral]!.random.int(in: -spread...spread)
    }
}

extension MockBLEBridge {
    /// A manager's app moves to the background or back (test hook of both managers).
    func setBackground(_ manager: SimulationWorld.Manager, _ isInBackground: Bool) {
        switch manager {
        case .central(let central):
            guard world.centrals[central] != nil, world.centrals[central]!.isInBackground != isInBackground else {
                return
            }
            world.centrals[central]!.isInBackground = isInBackground
            world.record(.stateChanged, central: central, detail: isInBackground ? "background" : "foreground")
        case .peripheral(let peripheral):
            guard world.peripherals[peripheral] != nil,
                world.peripherals[peripheral]!.isInBackground != isInBackground
            else { return }
            world.peripherals[peripheral]!.isInBackground = isInBackground
            world.record(.stateChanged, peripheral: peripheral, detail: isInBackground ? "background" : "foreground")
        }
    }
}
