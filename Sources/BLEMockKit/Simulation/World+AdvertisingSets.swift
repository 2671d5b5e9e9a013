import BLECore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Advertising sets besides a peripheral's main advertisement: a device that advertises
/// several payloads at their own intervals (Bluetooth 5 extended advertising, or a
/// CoreBluetoothMock spec with several `advertising(…)` calls). They are on the air while the
/// peripheral advertises; each starts its own delay after advertising starts.
struct AdvertisingSet: Sendable, Equatable {
    /// What the set advertises.
    var advertisement: AdvertisementData
    /// Time between its advertisements.
    var interval: Duration
    /// Time from the start of advertising to its first advertisement.
    var delay: Duration
    /// Whether it advertises only once.
    var once: Bool
    /// When its first advertisement goes out.
    var started: VirtualClock.Instant = .zero
    /// Whether its next advertisement is scheduled.
    var scheduled = false
    /// Whether a one-time set has advertised.
    var finished = false

    init(advertisement: AdvertisementData, interval: Duration, delay: Duration, once: Bool) {
        self.advertisement = advertisement
        self.interval = interval
        self.delay = delay
        self.once = once
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
            let advDelay =
                timing.isInstant
                ? Duration.zero : peripherals[peripheral]!.random.advertising.duration(in: .zero ... .milliseconds(10))
            let next = delayed ? set.started : now.advanced(by: set.interval + advDelay)
            schedule.schedule(.advertiseSet(peripheral: peripheral, index: index), at: next)
        }
    }

    /// A scheduled advertisement of an additional set: every scanning central hears it.
    mutating func advertisingSetDue(from peripheral: UUID, index: Int) {
        guard let count = advertisingSets[peripheral]?.count, index < count else { return }
        advertisingSets[peripheral]![index].scheduled = false
        guard peripherals[existing: peripheral].advertisement != nil else { return }
        let set = advertisingSets[peripheral]![index]
        for central in centralOrder {
            deliverAdvertisement(from: peripheral, to: central, advertisement: set.advertisement)
        }
        if set.once {
            advertisingSets[peripheral]![index].finished = true
            return
        }
        scheduleAdvertisingSets(of: peripheral, needed: advertisingEventsNeeded)
    }
}
