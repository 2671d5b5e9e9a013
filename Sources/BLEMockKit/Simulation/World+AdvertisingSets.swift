import BLECore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Advertising sets besides a peripheral's main advertisement: a device that advertises
/// several payloads at their own intervals (Bluetooth 5 extended advertising, or a
/// CoreBluetoothMock spec with several `advertising(…)` calls). They are on the air while the
/// peripheral advertises; each starts its own delay after advertising starts, and one that does
/// not advertise also when connected keeps quiet while the peripheral holds a connection.
struct AdvertisingSet: Sendable, Equatable {
    /// What the set advertises.
    var advertisement: AdvertisementData
    /// Time between its advertisements.
    var interval: Duration
    /// Time from the start of advertising to its first advertisement.
    var delay: Duration
    /// Whether it advertises only once.
    var once: Bool
    /// Whether it is heard while the peripheral holds a connection (see
    /// ``World/holdsConnection(_:)``); when not, its advertisements then go unheard, as a
    /// device's connectable advertising stops when a central connects.
    var alsoWhenConnected: Bool
    /// When its first advertisement goes out.
    var started: VirtualClock.Instant = .zero
    /// Whether its next advertisement is scheduled.
    var scheduled = false
    /// When its last advertisement went out, heard or not (`nil` before the first since
    /// advertising started): the phase it keeps while nobody listens.
    var lastAdvertised: VirtualClock.Instant?
    /// Whether a one-time set has advertised.
    var finished = false

    init(
        advertisement: AdvertisementData, interval: Duration, delay: Duration, once: Bool,
        alsoWhenConnected: Bool = true
    ) {
        self.advertisement = advertisement
        self.interval = interval
        self.delay = delay
        self.once = once
        self.alsoWhenConnected = alsoWhenConnected
    }
}

extension World {
    /// Replaces a peripheral's additional advertising sets. If it is advertising, each starts
    /// its delay from now.
    mutating func setAdvertisingSets(_ sets: [AdvertisingSet], of peripheral: UUID) {
        guard peripherals.contains(peripheral) else { return }
        schedule.removeAll {
            if case .advertiseSet(peripheral, _) = $0 { return true }
            return false
        }
        advertisingSets[peripheral] = sets.isEmpty ? nil : sets
        restartAdvertisingSets(of: peripheral)
        scheduleAdvertising(of: peripheral, needed: advertisingEventsNeeded)
    }

    /// Starts a peripheral's additional sets' delays from now (advertising started); the
    /// caller schedules them.
    mutating func restartAdvertisingSets(of peripheral: UUID) {
        guard let count = advertisingSets[peripheral]?.count else { return }
        for index in 0..<count {
            let delay = advertisingSets[peripheral]![index].delay
            advertisingSets[peripheral]![index].started = now.advanced(by: delay)
            advertisingSets[peripheral]![index].lastAdvertised = nil
            advertisingSets[peripheral]![index].finished = false
        }
    }

    /// Schedules the next advertisement of each of a peripheral's additional sets that has none
    /// scheduled, when someone listens or its first advertisement is still to come.
    mutating func scheduleAdvertisingSets(of peripheral: UUID, needed: Bool) {
        guard let count = advertisingSets[peripheral]?.count, count > 0,
            peripherals[existing: peripheral].advertisement != nil
        else { return }
        for index in 0..<count {
            let set = advertisingSets[peripheral]![index]
            guard !set.scheduled, !set.finished else { continue }
            let delayed = set.started > now
            guard needed || delayed else { continue }
            advertisingSets[peripheral]![index].scheduled = true
            let advDelay = drawAdvDelay(of: peripheral)
            let next =
                delayed
                ? set.started
                : Self.nextAdvertisingEvent(
                    after: now, interval: set.interval, since: set.lastAdvertised ?? set.started
                )
                .advanced(by: advDelay)
            schedule.schedule(.advertiseSet(peripheral: peripheral, index: index), at: next)
        }
    }

    /// A scheduled advertisement of an additional set: every scanning central hears it.
    mutating func advertisingSetDue(from peripheral: UUID, index: Int) {
        guard let count = advertisingSets[peripheral]?.count, index < count else { return }
        advertisingSets[peripheral]![index].scheduled = false
        guard peripherals[existing: peripheral].advertisement != nil else { return }
        advertisingSets[peripheral]![index].lastAdvertised = now
        let set = advertisingSets[peripheral]![index]
        for central in centralOrder {
            deliverAdvertisement(from: peripheral, to: central, set: set)
        }
        if set.once {
            advertisingSets[peripheral]![index].finished = true
            return
        }
        scheduleAdvertisingSets(of: peripheral, needed: advertisingEventsNeeded)
    }

    // MARK: The main advertisement's timing

    /// Sets how a peripheral's main advertisement goes out from its next `startAdvertising`:
    /// first `delay` after it starts, then every `interval`, or only once. Unlike its
    /// configuration's, the interval is not held to the 20 ms…10.24 s of legacy advertising.
    mutating func setAdvertisingTiming(of peripheral: UUID, interval: Duration, delay: Duration, once: Bool) {
        guard let p = peripherals.position(of: peripheral) else { return }
        peripherals.inPlace(at: p) { record in
            record.configuration.advertisingInterval = interval
            record.configuration.advertisingDelay = max(delay, .zero)
            record.configuration.advertisesOnce = once
        }
    }

    // MARK: Advertising while connected

    /// Whether a peripheral's main advertisement is heard while it holds a connection.
    mutating func setAdvertisesWhenConnected(_ advertises: Bool, peripheral: UUID) {
        guard peripherals.contains(peripheral) else { return }
        peripherals[peripheral]!.advertisesWhenConnected = advertises
    }

    /// Whether a peripheral holds a connection, as its advertising sees it: a link to a central
    /// that its end still has (after a reset its end of every link is gone, though the centrals
    /// notice only at the supervision timeout), or the connection of something outside the
    /// simulation (``setConnectedToSystem(peripheral:_:)``).
    func holdsConnection(_ peripheral: UUID) -> Bool {
        if connectedToSystem.contains(peripheral) { return true }
        return links.keys.contains { key in
            key.peripheral == peripheral && links.position(of: key).map { !links[at: $0].peerLost } == true
        }
    }

    /// A peripheral's connection may have ended: with instant timing, the advertisements that
    /// went unheard while it was connected are heard at once by the centrals scanning (as a scan
    /// hears every advertiser at once); realistic timing hears them at their next advertising
    /// event. Touches nothing for a peripheral whose advertisements are all heard when connected.
    mutating func connectionMayHaveEnded(of peripheral: UUID) {
        guard timing.isInstant, let p = peripherals.position(of: peripheral),
            peripherals.inPlace(at: p, { record in record.advertisement != nil })
        else { return }
        let main = !peripherals.inPlace(at: p) { record in record.advertisesWhenConnected }
        let now = now
        let quiet = (advertisingSets[peripheral] ?? []).filter {
            !$0.alsoWhenConnected && $0.started <= now && !$0.finished
        }
        guard main || !quiet.isEmpty, !holdsConnection(peripheral) else { return }
        for central in centralOrder {
            if main { deliverAdvertisement(from: peripheral, to: central) }
            for set in quiet { deliverAdvertisement(from: peripheral, to: central, set: set) }
        }
    }
}
