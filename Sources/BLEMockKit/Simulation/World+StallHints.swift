import BLECore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// What may explain a stalled run, read from the world as it stalled: the waits a stall report
/// lists say what never came, these say what happened that the app may not have handled (the
/// usual bugs of app code that hangs on a device: no reconnection, no new subscription after
/// one, an error it ignored).
extension World {
    /// An update a peripheral sent while no central was subscribed to its characteristic.
    struct UnheardUpdate: Sendable {
        var peripheral: UUID
        var characteristic: BluetoothUUID
        var handle: UInt16
        var at: VirtualClock.Instant
    }

    /// The most updates to nobody a world remembers (the latest, one per characteristic).
    static let unheardUpdatesKept = 8

    /// Notes that `peripheral` updated a characteristic no central was subscribed to.
    mutating func noteUnheardUpdate(peripheral: UUID, characteristic: LocalCharacteristic) {
        let update = UnheardUpdate(
            peripheral: peripheral, characteristic: characteristic.uuid, handle: characteristic.handle, at: now)
        unheardUpdates.removeAll { $0.peripheral == peripheral && $0.handle == characteristic.handle }
        if unheardUpdates.count == Self.unheardUpdatesKept { unheardUpdates.removeFirst() }
        unheardUpdates.append(update)
    }

    /// The most failed operations a stall report recalls.
    static let failuresRecalled = 3

    /// What may explain a stall, in words, most telling first.
    func stallHints() -> [String] {
        var hints: [String] = []
        // Links that went down with an error, or for an ATT transaction timeout (which the central
        // hears with no error, as from CoreBluetooth), and were not made again, nor are being made.
        var lastDisconnection: [LinkKey: (entry: BridgeLogEntry, timedOut: Bool, centralState: String?)] = [:]
        var pairs: [LinkKey] = []
        for (index, entry) in log.enumerated() where entry.kind == .disconnected {
            guard let central = entry.central, let peripheral = entry.peripheral else { continue }
            let key = LinkKey(central: central, peripheral: peripheral)
            let timedOut = entry.error == nil && index > 0 && log[index - 1].isTransactionTimeout(of: key)
            let cause = (entry, timedOut, centralStateLeft(before: index, central: central))
            if lastDisconnection.updateValue(cause, forKey: key) == nil { pairs.append(key) }
        }
        for key in pairs {
            guard let (entry, timedOut, centralState) = lastDisconnection[key], entry.error != nil || timedOut,
                !links.contains(key), attempts[key] == nil, centrals.contains(key.central),
                !centrals[existing: key.central].isShutDown
            else { continue }
            let why =
                centralState.map {
                    "when its own Bluetooth went \($0) (the app heard the state change, not a disconnection, as "
                        + "from CoreBluetooth: once powered on again it connects again, after a reset with the "
                        + "peripheral objects it retrieves or discovers again)"
                }
                ?? entry.error.map { "(\($0))" }
                ?? "when an ATT transaction timed out (the central heard of the disconnection with no error, as "
                + "CoreBluetooth reports this one: an app that takes no error for its own cancellation does not "
                + "reconnect)"
            hints.append(
                "central \(key.central.uuidString.prefix(8)) lost its link to peripheral "
                    + "\(key.peripheral.uuidString.prefix(8)) at \(entry.time) \(why) and has not connected "
                    + "to it again: nothing the app waits for over that link can come")
        }
        // Connection attempts waiting for a peripheral that cannot be connected to now: they do
        // not time out, so an app that waits for them waits for ever (on a device too).
        let waiting = attempts.keys.sorted {
            $0.central != $1.central ? $0.central.precedes($1.central) : $0.peripheral.precedes($1.peripheral)
        }
        for key in waiting {
            guard let why = unconnectable(key.peripheral)?.phrase else { continue }
            hints.append(
                "central \(key.central.uuidString.prefix(8)) is still trying to connect to peripheral "
                    + "\(key.peripheral.uuidString.prefix(8)), \(why): a connection attempt does not time out (as "
                    + "with CoreBluetooth); it completes once the peripheral is in range, powered on and connectable")
        }
        hints += fruitlessScans()
        for update in unheardUpdates {
            hints.append(
                "peripheral \(update.peripheral.uuidString.prefix(8)) updated \(update.characteristic)@\(update.handle) "
                    + "at \(update.at) with no central subscribed, so nobody received it (subscriptions end with "
                    + "the link: a central that connects again subscribes again)")
        }
        hints += refusedUpdatesNotSentAgain()
        let failures = log.reversed().lazy.filter { $0.error != nil && $0.kind != .disconnected }
            .prefix(Self.failuresRecalled)
        for entry in failures.reversed() {
            hints.append("an operation failed (did the app handle it?): \(entry)")
        }
        return hints
    }

    /// The state `central` left powered on for, if a change of its own Bluetooth's state at the
    /// same instant took down the link the disconnection at `index` ends (the app hears the state
    /// change then, not the disconnection).
    private func centralStateLeft(before index: Int, central: UUID) -> String? {
        let time = log[index].time
        var earlier = index - 1
        while earlier >= 0, log[earlier].time == time {
            let entry = log[earlier]
            if entry.kind == .stateChanged, entry.central == central, entry.peripheral == nil {
                return entry.detail == ManagerState.poweredOn.description ? nil : entry.detail
            }
            earlier -= 1
        }
        return nil
    }

    /// An update `updateValue` refused as the transmit queue was full, and when the peripheral
    /// was told it may update again since (`nil` until then).
    struct RefusedUpdate: Sendable {
        var peripheral: UUID
        var characteristic: BluetoothUUID
        var handle: UInt16
        var at: VirtualClock.Instant
        var readyAt: VirtualClock.Instant?
    }

    /// The log detail of an update `updateValue` refused for a full transmit queue.
    static let updateRefusedDetail = "transmit queue full: updateValue returned false"

    /// Notes that `updateValue` refused `peripheral`'s update of `characteristic`.
    mutating func noteRefusedUpdate(peripheral: UUID, characteristic: LocalCharacteristic, answered: Bool = false) {
        refusedUpdates.removeAll { $0.peripheral == peripheral }
        var update = RefusedUpdate(
            peripheral: peripheral, characteristic: characteristic.uuid, handle: characteristic.handle, at: now)
        // (A front end's refusal that a ready event on its way to the app answers: told now.)
        if answered { update.readyAt = now }
        refusedUpdates.append(update)
    }

    /// Peripherals whose last update `updateValue` refused (the transmit queue was full), told
    /// since that they may update again (`peripheralManagerIsReady(toUpdateSubscribers:)`), that
    /// have had none accepted since: a refused update is not sent, so an app that does not send
    /// it again loses it (a receipt the phone waits for, say).
    func refusedUpdatesNotSentAgain() -> [String] {
        refusedUpdates.compactMap { update in
            guard let ready = update.readyAt, peripherals.contains(update.peripheral),
                !peripherals[existing: update.peripheral].isShutDown
            else { return nil }
            return "peripheral \(update.peripheral.uuidString.prefix(8)) had updateValue of "
                + "\(update.characteristic)@\(update.handle) refused at \(update.at) (its transmit queue was full) "
                + "and has sent no update since, though told at \(ready) that it may (peripheralManagerIsReady): a "
                + "refused update is not sent, so an app that does not send it again loses it"
        }
    }

    /// What a caller suspended on operation `id` outside a run waits for, for its report should
    /// the wait stand still (see `QuietWaits`): the operation, and what would end it. `nil` when
    /// the operation is not pending.
    func quietWait(for id: OperationID) -> QuietWaits.Wait? {
        guard let operation = pending[id] else { return nil }
        let owner =
            switch operation.owner {
            case .central(let central): "MockCentralManager \(central.uuidString)"
            case .peripheral(let peripheral): "MockPeripheralManager \(peripheral.uuidString)"
            }
        let target = operation.link.map { " on peripheral \($0.peripheral.uuidString.prefix(8))" } ?? ""
        let needs: String
        switch (operation.kind, operation.stage) {
        case (_, .awaitingAnswer(let request)):
            needs = "the peripheral's app to answer request \(request) (`respond(to:withResult:value:)`)"
        case (_, .neverAnswered):
            needs =
                "an answer an injected fault swallowed (none comes: the ATT transaction times out after 30 s of "
                + "virtual time, once time moves)"
        case (.connect(let key), _):
            needs =
                unconnectable(key.peripheral).map { "the peripheral, \($0.phrase), to become connectable" }
                ?? "the connection to be established"
        case (.settle(let manager), _):
            needs = "its Bluetooth to be powered on (it is \(state(of: manager)))"
        default:
            needs = "what the operation waits for"
        }
        return .operation("\(owner): \(operation.summary)\(target)", needs: needs)
    }

    /// The most peripherals a fruitless scan's hint explains, one by one.
    static let unheardPeripheralsExplained = 4

    /// Scans that have discovered nothing, each with why no peripheral on the bridge was heard:
    /// an app that waits for a discovery (a peripheral out of range, powered off, advertising
    /// other services, or not at all) waits for ever, as a scan does not time out.
    func fruitlessScans() -> [String] {
        var hints: [String] = []
        for central in centralOrder {
            let record = centrals[existing: central]
            guard record.state == .poweredOn, !record.isShutDown, let scan = record.scan, scan.reported.isEmpty
            else { continue }
            let scanned =
                "central \(central.uuidString.prefix(8)) has scanned for "
                + (scan.services.map { $0.isEmpty ? "any services" : "services " + Self.uuidList($0) } ?? "any services")
                + " since \(scan.started) and discovered nothing"
            if record.isInBackground, scan.services?.isEmpty ?? true {
                hints.append(scanned + ": in the background a scan for any services discovers nothing (as on iOS)")
                continue
            }
            var reasons: [String] = []
            for peripheral in peripheralOrder {
                guard let reason = unheard(peripheral, by: scan) else { continue }
                reasons.append("peripheral \(peripheral.uuidString.prefix(8)) \(reason)")
            }
            if peripheralOrder.isEmpty {
                reasons.append("no peripheral is on this bridge")
            } else if reasons.count > Self.unheardPeripheralsExplained {
                let more = reasons.count - Self.unheardPeripheralsExplained
                reasons.removeLast(more)
                reasons.append("\(more) more")
            }
            guard !reasons.isEmpty else { continue }
            hints.append(
                scanned + ": " + reasons.joined(separator: "; ")
                    + " (a scan does not time out: it discovers a peripheral once it is in range, powered on and "
                    + "advertising what the scan asks for)")
        }
        return hints
    }

    /// Why `scan` cannot hear `peripheral` now, or nil if it can.
    private func unheard(_ peripheral: UUID, by scan: Scan) -> String? {
        guard let p = peripherals.position(of: peripheral) else { return nil }
        let record = peripherals[at: p]
        if record.isShutDown { return Unconnectable.shutDown.phrase }
        if !record.isHeard { return "is out of range" }
        if record.state != .poweredOn { return "has Bluetooth \(record.state)" }
        let sets = (advertisingSets[peripheral] ?? []).filter { !$0.finished }
        var aired: [(AdvertisementData, alsoWhenConnected: Bool)] = sets.map {
            ($0.advertisement, $0.alsoWhenConnected)
        }
        if let main = record.airAdvertisement { aired.insert((main, record.advertisesWhenConnected), at: 0) }
        if aired.isEmpty { return "is not advertising" }
        let matching = aired.filter { scan.matches($0.0) }
        if matching.isEmpty {
            let advertised = aired.flatMap(\.0.serviceUUIDs)
            return advertised.isEmpty
                ? "advertises no service UUIDs"
                : "advertises services \(Self.uuidList(advertised)), none the scan asks for"
        }
        if !matching.contains(where: \.alsoWhenConnected), holdsConnection(peripheral) {
            return "is connected and does not advertise while it is"
        }
        return nil
    }
}

extension World.Unconnectable {
    /// Why, as a relative clause about the peripheral ("which is out of range").
    var phrase: String {
        switch self {
        case .notOnBridge: "which is not on this bridge"
        case .shutDown:
            "whose manager was shut down (its app let go of it: an app keeps its CBPeripheralManager, as with "
                + "CoreBluetooth, or the test keeps its MockPeripheralManager)"
        case .outOfRange: "which is out of range"
        case .bluetooth(let state): "whose Bluetooth is \(state)"
        case .notAdvertising: "which is not advertising"
        case .notConnectable: "which advertises as not connectable"
        }
    }
}

extension BridgeLogEntry {
    /// Whether this is the refusal that records an ATT transaction timeout on the link `key`
    /// (the entry right before the disconnection it causes).
    fileprivate func isTransactionTimeout(of key: LinkKey) -> Bool {
        guard kind == .refused, central == key.central, peripheral == key.peripheral,
            case .coreBluetooth(let error) = error, error.code == .connectionTimeout
        else { return false }
        return detail?.hasPrefix(World.transactionTimeoutDetail) == true
    }
}
