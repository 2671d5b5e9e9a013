import BLECore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Faults a test applies now or schedules: disconnections, resets, proximity and
/// advertisement changes, state changes.
extension World {
    mutating func apply(_ fault: Fault) {
        guard knowsTargets(of: fault) else { return }
        switch fault {
        case .disconnect(let central, let peripheral, let error):
            tearDown(LinkKey(central: central, peripheral: peripheral), reason: error, pendingError: error)
        case .reset(let peripheral):
            record(.stateChanged, peripheral: peripheral, detail: "reset")
            resetLinks(of: peripheral)
        case .proximity(let peripheral, let proximity):
            setProximity(proximity, of: peripheral)
        case .advertisementChange(let peripheral, let advertisement):
            guard peripherals[peripheral]?.advertisement != nil else { return }
            peripherals[peripheral]!.advertisement = advertisement
            record(.advertisingStarted, peripheral: peripheral, detail: "advertisement changed")
            for central in centralOrder {
                centrals[central]!.scan?.reported.remove(peripheral)
                deliverAdvertisement(from: peripheral, to: central)
            }
            // A pending attempt goes on once the advertisement says connectable.
            connectPendingAttempts(to: peripheral)
        case .nameChange(let peripheral, let name):
            guard peripherals.contains(peripheral) else { return }
            peripherals[peripheral]!.configuration.name = name
            systemChanges &+= 1
            record(.stateChanged, peripheral: peripheral, detail: "name=\(name ?? "nil")")
            for key in links(ofPeripheral: peripheral) {
                deliver(.nameUpdated(remotePeripheral(peripheral)), to: key.central)
            }
        case .centralState(let central, let state):
            setState(.central(central), to: state)
        case .peripheralState(let peripheral, let state):
            setState(.peripheral(peripheral), to: state)
        }
    }

    /// Moves a peripheral. Out of range, nothing crosses its links and they drop after its
    /// supervision timeout (``supervisionTimeout(of:)``: at once when that is zero, as with
    /// instant timing); back in range, their pipes move again at their next connection event,
    /// scanners hear it, and pending attempts go on.
    mutating func setProximity(_ proximity: Proximity, of peripheral: UUID) {
        guard peripherals.contains(peripheral) else { return }
        peripherals[peripheral]!.proximity = proximity
        peripherals[peripheral]!.proximitySimulated = true
        record(.stateChanged, peripheral: peripheral, detail: "proximity=\(proximity)")
        if proximity == .outOfRange {
            let timeout = supervisionTimeout(of: peripheral)
            if timeout == .zero {
                supervisionTimedOut(peripheral)
            } else {
                schedule.schedule(.supervisionTimeout(peripheral), at: now.advanced(by: timeout))
            }
        } else {
            schedule.removeAll { $0 == .supervisionTimeout(peripheral) }
            for key in links(ofPeripheral: peripheral) { scheduleConnectionEvent(key) }
            for central in centralOrder { deliverAdvertisement(from: peripheral, to: central) }
            connectPendingAttempts(to: peripheral)
        }
    }

    /// A peripheral reboots: its end of every link is gone at once (its subscriptions end),
    /// and each central notices only when the supervision timeout passes with nothing heard,
    /// then loses the link with `connectionTimeout`, as on a device (Core, Vol 6, Part B,
    /// 4.5.2; CoreBluetoothMock's `simulateReset` reports the same error). With no supervision
    /// timeout (instant timing) the links drop at once, with the same error.
    mutating func resetLinks(of peripheral: UUID) {
        losePeer(peripheral, detail: "reset")
    }

    /// A peripheral drops every link without a word (CoreBluetoothMock's
    /// `simulateDisconnection(withError:)` with a connection timeout): as after a reset
    /// (``resetLinks(of:)``), its end of each link is gone at once and each central notices
    /// when the supervision timeout passes, losing the link with `connectionTimeout`.
    mutating func dropLinksSilently(of peripheral: UUID) {
        guard peripherals.contains(peripheral) else { return }
        record(.stateChanged, peripheral: peripheral, detail: "links dropped silently")
        losePeer(peripheral, detail: "dropped silently")
    }

    /// The peripheral's end of every link is gone: its subscriptions end at once (logged with
    /// `detail`), nothing crosses any more (requests get no answer), and each link drops with
    /// `connectionTimeout` after the peripheral's supervision timeout (at once when that is zero).
    private mutating func losePeer(_ peripheral: UUID, detail: String) {
        let timeout = supervisionTimeout(of: peripheral)
        guard timeout > .zero else {
            let error = CoreBluetoothError(.connectionTimeout)
            for key in links(ofPeripheral: peripheral) { tearDown(key, reason: error, pendingError: error) }
            return
        }
        for key in links(ofPeripheral: peripheral) {
            guard let slot = links.position(of: key), !links[at: slot].peerLost else { continue }
            links.entries[slot]!.peerLost = true
            tellSubscriptionsEnded(links.entries[slot]!, detail: detail)
            links.entries[slot]!.subscriptions.removeAll()
            schedule.schedule(
                .peerLost(key, generation: links[at: slot].generation), at: now.advanced(by: timeout))
        }
    }

    /// The supervision timeout after going out of range: every link drops with
    /// `connectionTimeout`, unless the peripheral came back.
    mutating func supervisionTimedOut(_ peripheral: UUID) {
        guard peripherals[peripheral]?.proximity == .outOfRange else { return }
        let error = CoreBluetoothError(.connectionTimeout)
        for key in links(ofPeripheral: peripheral) { tearDown(key, reason: error, pendingError: error) }
    }

    // MARK: RSSI

    /// Starts reading a link's RSSI: the controller measures it at the next connection event.
    mutating func startReadingRSSI(central: UUID, peripheral: UUID, id: OperationID) {
        do {
            _ = try requireLink(central: central, peripheral: peripheral, "readRSSI")
        } catch {
            return complete(id, .failure(error))
        }
        let key = LinkKey(central: central, peripheral: peripheral)
        var operation = PendingOperation(
            id: id, owner: .central(central), kind: .readRSSI(key), since: now, stage: .sent)
        if let fired = firedInjection(.readRSSI, central: central, peripheral: peripheral) {
            operation.injected = fired.failure
            operation.injectedEntry = fired.entry
        }
        pending[id] = operation
        sendToPeripheral(.rssi(id), on: key)
    }

    /// The connection event of an RSSI reading.
    mutating func rssiMeasured(_ id: OperationID, on key: LinkKey) {
        guard let operation = pending[id] else { return }
        if operation.isCancelled { return complete(id, .failure(CancellationError())) }
        if let failure = operation.injected {
            guard let error = failure.error else {
                pending[id]!.stage = .neverAnswered
                return
            }
            record(.rssiRead, central: key.central, peripheral: key.peripheral, error: error)
            return complete(id, .failure(error))
        }
        let rssi = currentRSSI(of: key.peripheral)
        record(.rssiRead, central: key.central, peripheral: key.peripheral, detail: "rssi=\(rssi)")
        complete(id, .success(.rssi(rssi)))
    }
}

extension World {
    /// Whether every manager `fault` names is on this bridge (it may have shut down since); if
    /// not, the fault does nothing, and the call is noted for ``MockBLEBridge/finish()`` (a
    /// mistyped or another bridge's identifier).
    mutating func knowsTargets(of fault: Fault) -> Bool {
        let (central, peripheral): (UUID?, UUID?) =
            switch fault {
            case .disconnect(let central, let peripheral, _): (central, peripheral)
            case .reset(let peripheral), .proximity(let peripheral, _), .advertisementChange(let peripheral, _),
                .nameChange(let peripheral, _), .peripheralState(let peripheral, _):
                (nil, peripheral)
            case .centralState(let central, _): (central, nil)
            }
        return knows(central: central, peripheral: peripheral, in: "the fault \(fault)")
    }

    /// Whether `central` and `peripheral` (each when given) are managers on this bridge; if
    /// not, notes that `call` named one that is not.
    mutating func knows(central: UUID?, peripheral: UUID?, in call: @autoclosure () -> String) -> Bool {
        var unknown: [String] = []
        if let central, !centrals.contains(central) { unknown.append("central \(central.uuidString)") }
        if let peripheral, !peripherals.contains(peripheral) { unknown.append("peripheral \(peripheral.uuidString)") }
        guard !unknown.isEmpty else { return true }
        let note = "\(call()) names no \(unknown.joined(separator: " and no ")) on this bridge"
        if !unknownTargets.contains(note) { unknownTargets.append(note) }
        return false
    }
}
