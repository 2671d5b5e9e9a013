import BLECore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Scanning and advertising: an advertiser's first advertisement goes out its
/// `advertisingDelay` after it starts (at once by default), then one every interval (plus the
/// specification's random 0–10 ms advDelay in realistic timing). Only those someone hears are
/// scheduled, but the train keeps its phase meanwhile: a scan that starts mid-interval hears
/// the advertiser at its next slot, within the rest of that interval. With instant timing a
/// scan hears every advertiser at once.
extension World {
    // MARK: Scanning

    mutating func startScan(central: UUID, services: [BluetoothUUID]?, options: ScanOptions) throws {
        try requirePoweredOn(central: central, "scanForPeripherals")
        centrals[central]!.scan = Scan(services: services, options: options, started: now)
        record(
            .scanStarted, central: central,
            detail: "services=\(services.map(Self.uuidList) ?? "any")"
                + (options.allowDuplicates ? " allowDuplicates" : ""))
        if timing.isInstant {
            // Instant timing: every advertiser on the air is heard at once.
            for peripheral in peripheralOrder where peripherals.inPlace(peripheral, { $0.advertisement != nil }) == true
            {
                deliverAdvertisement(from: peripheral, to: central)
                for set in advertisingSets[peripheral] ?? [] where set.started <= now && !set.finished {
                    deliverAdvertisement(from: peripheral, to: central, set: set)
                }
            }
        }
        scheduleAdvertisingIfNeeded()
    }

    mutating func stopScan(central: UUID) {
        guard centrals.inPlace(central, { $0.scan != nil }) == true else { return }
        centrals[central]!.scan = nil
        record(.scanStopped, central: central)
    }

    func isScanning(central: UUID) -> Bool { centrals[central]?.scan != nil }

    /// Reports one advertisement (the main one, or an additional `set`'s) to one central if its
    /// scan matches it. An advertisement that does not go out also when connected is not heard
    /// while the peripheral holds a connection.
    mutating func deliverAdvertisement(from peripheral: UUID, to central: UUID, set: AdvertisingSet? = nil) {
        // (The records are read in place: binding one copied all of it, for every advertisement.)
        let now = now
        guard let p = peripherals.position(of: peripheral), let c = centrals.position(of: central) else { return }
        let aired = peripherals.inPlace(at: p) { (record) -> (AdvertisementData, alsoWhenConnected: Bool)? in
            guard record.isHeard, record.advertisingStarted <= now,
                let advertisement = set?.advertisement ?? record.airAdvertisement
            else { return nil }
            return (advertisement, set?.alsoWhenConnected ?? record.advertisesWhenConnected)
        }
        guard let (advertisement, alsoWhenConnected) = aired, alsoWhenConnected || !holdsConnection(peripheral)
        else { return }
        let listening = centrals.inPlace(at: c) { (record) -> ScanMatch? in
            guard record.state == .poweredOn, let scan = record.scan, scan.matches(advertisement) else { return nil }
            return ScanMatch(
                services: scan.services, allowDuplicates: scan.options.allowDuplicates,
                reported: scan.reported.contains(peripheral), isInBackground: record.isInBackground)
        }
        guard let scan = listening else { return }
        // In the background iOS discovers only peripherals advertising the services the scan
        // names; a scan for all services discovers nothing.
        if scan.isInBackground, scan.services?.isEmpty ?? true { return }
        // In the background iOS reports each peripheral once per scan, whatever the options say.
        let duplicates = scan.allowDuplicates && !scan.isInBackground
        guard duplicates || !scan.reported else { return }
        centrals.entries[c]!.scan!.reported.insert(peripheral)
        if known.insert(peripheral) { systemChanges &+= 1 }
        let rssi = currentRSSI(of: peripheral)
        self.record(.discovered, central: central, peripheral: peripheral, detail: "rssi=\(rssi)")
        var heard = advertisement
        // The system knows the name it heard from now on (see `Peripheral.heardName`).
        if let name = heard.localName { peripherals.inPlace(at: p) { if $0.heardName != name { $0.heardName = name } } }
        if !heard.overflowServiceUUIDs.isEmpty {
            // The overflow area is a hashed bit mask: only a scan that names a UUID can tell it is there.
            heard.overflowServiceUUIDs = heard.overflowServiceUUIDs.filter { scan.services?.contains($0) ?? false }
        }
        deliver(
            .discovered(
                DiscoveredPeripheral(peripheral: remotePeripheral(peripheral), advertisementData: heard, rssi: rssi)),
            to: central)
    }

    /// Whether advertising events must be scheduled: someone scans with realistic timing
    /// (each advertiser is heard at its next advertising event), or wants duplicates.
    var advertisingEventsNeeded: Bool {
        @inline(__always) get {
            centralOrder.contains { central in
                guard let scan = centrals[existing: central].scan else { return false }
                return !timing.isInstant || scan.options.allowDuplicates
            }
        }
    }

    /// Schedules the next advertisement of every advertising peripheral, if anyone listens
    /// (and always the first one of a delayed advertiser).
    mutating func scheduleAdvertisingIfNeeded() {
        let needed = advertisingEventsNeeded
        for peripheral in peripheralOrder { scheduleAdvertising(of: peripheral, needed: needed) }
    }

    /// Schedules the next advertisement of one peripheral if it advertises, has none scheduled,
    /// and either someone listens (`needed`) or its first advertisement is still to come.
    ///
    /// Only this peripheral's record is touched, so an advertisement costs the same however
    /// many peripherals share the bridge.
    mutating func scheduleAdvertising(of peripheral: UUID, needed: Bool) {
        if !advertisingSets.isEmpty, advertisingSets[peripheral] != nil {
            scheduleAdvertisingSets(of: peripheral, needed: needed)
        }
        // (Read in place: binding the record copied all of it.)
        guard let p = peripherals.position(of: peripheral),
            let (advertisingStarted, lastAdvertised, interval, advertisesOnce) = peripherals.inPlace(
                at: p,
                { record in
                    record.advertisement != nil && !record.advertisingScheduled
                        ? (
                            record.advertisingStarted, record.lastAdvertised, record.configuration.advertisingInterval,
                            record.configuration.advertisesOnce
                        ) : nil
                })
        else { return }
        let delayed = advertisingStarted > now
        // A one-time advertisement goes out when it is due whether or not anyone listens: a
        // scan that starts later does not hear it.
        guard needed || delayed || advertisesOnce else { return }
        peripherals.entries[p]!.advertisingScheduled = true
        let next: VirtualClock.Instant
        if delayed {
            next = advertisingStarted
        } else {
            let advDelay = drawAdvDelay(of: peripheral)
            next = Self.nextAdvertisingEvent(
                after: now, interval: interval, since: lastAdvertised ?? advertisingStarted
            ).advanced(by: advDelay)
        }
        schedule.schedule(.advertise(peripheral: peripheral), at: next)
    }

    /// A scheduled advertisement: report it to every scanning central, then schedule the next
    /// (a one-time advertiser stops advertising after its advertisement).
    mutating func advertisementDue(from peripheral: UUID) {
        guard peripherals.contains(peripheral) else { return }
        peripherals[peripheral]!.advertisingScheduled = false
        guard peripherals[existing: peripheral].advertisement != nil else { return }
        peripherals[peripheral]!.lastAdvertised = now
        for central in centralOrder { deliverAdvertisement(from: peripheral, to: central) }
        if peripherals[existing: peripheral].configuration.advertisesOnce {
            stopAdvertising(peripheral: peripheral)
            return
        }
        scheduleAdvertising(of: peripheral, needed: advertisingEventsNeeded)
    }

    /// The random 0–10 ms by which an advertising event of `peripheral` (or of one of its
    /// additional sets) is delayed, as the specification requires, drawn from its advertising
    /// stream when timing is realistic; none with instant timing.
    mutating func drawAdvDelay(of peripheral: UUID) -> Duration {
        timing.isInstant
            ? .zero : peripherals[peripheral]!.random.advertising.duration(in: .zero ... .milliseconds(10))
    }

    /// When the next advertising event of a train that went out at `anchor` and every
    /// `interval` since is due, strictly after `now` (before its random advDelay): one interval
    /// after the last event when it went out now, as each event schedules the next; the train's
    /// next slot when nobody listened meanwhile, so a scan that starts mid-interval hears the
    /// advertiser within the rest of that interval, as on the air, not a whole interval later.
    static func nextAdvertisingEvent(
        after now: VirtualClock.Instant, interval: Duration, since anchor: VirtualClock.Instant
    ) -> VirtualClock.Instant {
        guard interval > .zero, anchor < now else { return now.advanced(by: interval) }
        // Whole intervals since the anchor, counted in nanoseconds (exact for every interval the
        // kit accepts, 20 ms to 10.24 s).
        let elapsed = SeededGenerator.wholeNanoseconds(in: anchor.duration(to: now))
        let intervals = elapsed / SeededGenerator.wholeNanoseconds(in: interval) + 1
        return anchor.advanced(by: interval * intervals)
    }

    // MARK: Advertising

    mutating func startAdvertising(peripheral: UUID, advertisement: AdvertisementData) throws {
        try requirePoweredOn(peripheral: peripheral, "startAdvertising")
        let p = peripherals.position(of: peripheral)!
        guard peripherals[at: p].advertisement == nil else {
            let error = CoreBluetoothError(.alreadyAdvertising)
            record(.advertisingStarted, peripheral: peripheral, error: error)
            throw error
        }
        if let error = injection(.advertisingStart, peripheral: peripheral)?.error {
            record(.advertisingStarted, peripheral: peripheral, error: error)
            throw error
        }
        beginAdvertising(peripheral, at: p, advertisement)
    }

    /// Advertising that Bluetooth's turning off paused goes on as Bluetooth is on again (see
    /// `setState(_:to:automatic:)`): as started again, with its delay, and no injection meets it
    /// (the app made no call).
    mutating func resumePausedAdvertising(of peripheral: UUID) {
        guard let p = peripherals.position(of: peripheral), let advertisement = peripherals[at: p].pausedAdvertisement
        else { return }
        peripherals.entries[p]!.pausedAdvertisement = nil
        guard peripherals[at: p].advertisement == nil else { return }
        beginAdvertising(peripheral, at: p, advertisement)
    }

    /// Puts `advertisement` on the air for the peripheral at position `p` (powered on, not
    /// advertising).
    private mutating func beginAdvertising(_ peripheral: UUID, at p: Int, _ advertisement: AdvertisementData) {
        peripherals.entries[p]!.advertisement = advertisement
        peripherals.entries[p]!.advertisingStarted = now.advanced(
            by: peripherals[at: p].configuration.advertisingDelay)
        peripherals.entries[p]!.lastAdvertised = nil
        let services = "services=" + Self.uuidList(advertisement.serviceUUIDs)
        record(
            .advertisingStarted, peripheral: peripheral,
            detail: advertisement.localName.map { "name=\($0) " + services } ?? services)
        restartAdvertisingSets(of: peripheral)
        // Without a delay the first advertisement goes out as advertising starts (in realistic
        // timing too: the advDelay spaces an advertisement from the previous one), heard by the
        // centrals scanning then; the next follows an interval (plus advDelay) later.
        if peripherals[at: p].advertisingStarted == now {
            peripherals.entries[p]!.lastAdvertised = now
            for central in centralOrder { deliverAdvertisement(from: peripheral, to: central) }
            if peripherals.inPlace(peripheral, { $0.configuration.advertisesOnce }) == true {
                stopAdvertising(peripheral: peripheral)
                return
            }
        }
        scheduleAdvertising(of: peripheral, needed: advertisingEventsNeeded)
        connectPendingAttempts(to: peripheral)
    }

    mutating func stopAdvertising(peripheral: UUID) {
        guard peripherals.inPlace(peripheral, { $0.advertisement != nil }) == true else { return }
        peripherals[peripheral]!.advertisement = nil
        if peripherals[existing: peripheral].advertisingScheduled {
            // Its next advertisement goes with it: advertising started again has its own delay
            // and timing (a one-time advertisement, say, must not be spent at the old time).
            schedule.removeAll { $0 == .advertise(peripheral: peripheral) }
            peripherals[peripheral]!.advertisingScheduled = false
        }
        record(.advertisingStopped, peripheral: peripheral)
    }

    func isAdvertising(peripheral: UUID) -> Bool { peripherals[peripheral]?.advertisement != nil }

    /// The RSSI a central sees from a peripheral now: its proximity's (or configured)
    /// strength with seeded variation, kept within the −127…20 dBm a controller reports (a
    /// variation past a bound gives the bound).
    mutating func currentRSSI(of peripheral: UUID) -> Int {
        // (Each field is read through the table: binding the record would copy all of it.)
        let p = peripherals.position(of: peripheral)!
        let configured = peripherals[at: p].configuration.rssi
        let base =
            peripherals[at: p].proximitySimulated ? (peripherals[at: p].proximity.rssi ?? configured) : configured
        let spread = peripherals[at: p].configuration.rssiVariation
        guard spread > 0 else { return base }
        let varied = base + peripherals.entries[p]!.random.rssi.int(in: -spread...spread)
        let reportable = ConfigurationProblems.rssiValues
        return min(max(varied, reportable.lowerBound), reportable.upperBound)
    }
}

/// What ``World/deliverAdvertisement(from:to:set:)`` needs of a scan that matches.
private struct ScanMatch {
    var services: [BluetoothUUID]?
    var allowDuplicates: Bool
    /// Whether the scan reported the peripheral already.
    var reported: Bool
    var isInBackground: Bool
}
