import BLECore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// An exploration run's fault schedule inside the world, and what became of each fault.
struct ExplorationState: Sendable, Equatable {
    /// What became of a planned fault.
    enum Fate: Sendable, Equatable {
        /// Its time has not come.
        case waiting
        /// It did something.
        case fired
        /// It found no target when its time came (no link up, no peripheral, no central).
        case noTarget
        /// It armed the injection at this index of the world's injection book; it fired if
        /// that injection did.
        case armed(injection: Int)
        /// It armed a pairing refusal, not yet used.
        case armedPairingRefusal
    }

    /// The faults, in plan order.
    var faults: [PlannedFault]
    /// What became of each.
    var fates: [Fate]
    /// How many lasting faults hold each peripheral out of range or each central's Bluetooth
    /// off now: overlapping faults end together with the last of them, not the first.
    var holds: [UUID: Int] = [:]

    init(faults: [PlannedFault]) {
        self.faults = faults
        self.fates = Array(repeating: .waiting, count: faults.count)
    }
}

extension World {
    /// Schedules an exploration's faults, their times counted from now.
    mutating func plan(_ faults: [PlannedFault]) {
        exploration = ExplorationState(faults: faults)
        for (index, fault) in faults.enumerated() {
            schedule.schedule(.planned(index: index), at: now.advanced(by: max(fault.at, .zero)))
        }
    }

    /// Whether each planned fault took effect (an armed injection counts when its operation
    /// failed with it).
    var plannedFaultsFired: [Bool] {
        guard let exploration else { return [] }
        return exploration.fates.map { fate in
            switch fate {
            case .fired: true
            case .armed(let entry): injections.entries.indices.contains(entry) && injections.entries[entry].fired > 0
            case .waiting, .noTarget, .armedPairingRefusal: false
            }
        }
    }

    /// A planned fault's time came: it picks its target among what is on the air now.
    mutating func firePlanned(_ index: Int) {
        guard let fault = exploration?.faults[index] else { return }
        var fate = ExplorationState.Fate.noTarget
        switch fault.kind {
        case .disconnect:
            if let key = plannedTarget(fault, among: liveLinkKeys) {
                let error = CoreBluetoothError(fault.coreBluetoothError ?? .connectionTimeout)
                record(
                    .stateChanged, central: key.central, peripheral: key.peripheral, detail: "explored fault: \(fault)")
                tearDown(key, reason: error, pendingError: error)
                fate = .fired
            }
        case .outOfRange, .fade:
            // A fade only matters on a link; going out of range matters to scanners too.
            let candidates = fault.kind == .fade ? peripheralOrder.filter { !links(ofPeripheral: $0).isEmpty } : heard
            if let peripheral = plannedTarget(fault, among: candidates) {
                record(.stateChanged, peripheral: peripheral, detail: "explored fault: \(fault)")
                // (Already held out of range by an earlier fault: its links' supervision
                // timeouts run on, from when they went.)
                if hold(peripheral) { setProximity(.outOfRange, of: peripheral) }
                scheduleEnd(of: index, fault, target: peripheral)
                fate = .fired
            }
        case .reset:
            if let peripheral = plannedTarget(fault, among: peripheralOrder.filter { !links(ofPeripheral: $0).isEmpty })
            {
                record(.stateChanged, peripheral: peripheral, detail: "explored fault: \(fault)")
                resetLinks(of: peripheral)
                fate = .fired
            }
        case .powerCycle, .bluetoothReset:
            let candidates = centralOrder.filter { centrals[$0]?.state == .poweredOn }
            if let central = plannedTarget(fault, among: candidates) {
                record(.stateChanged, central: central, detail: "explored fault: \(fault)")
                _ = hold(central)
                setState(.central(central), to: fault.kind == .powerCycle ? .poweredOff : .resetting)
                scheduleEnd(of: index, fault, target: central)
                fate = .fired
            }
        case .attError, .coreBluetoothError, .neverAnswered:
            if let injection = fault.injection {
                record(.stateChanged, detail: "explored fault: \(fault)")
                let installed = injections.entries.count
                inject(injection, owner: nil)
                // (A plan's injection that could never apply is refused, and arms nothing.)
                fate = injections.entries.count > installed ? .armed(injection: installed) : .noTarget
            }
        case .pairingRefused:
            record(.stateChanged, detail: "explored fault: \(fault)")
            fate = .armedPairingRefusal
        }
        exploration?.fates[index] = fate
    }

    /// A lasting planned fault ends: the peripheral is back in range, or the central's
    /// Bluetooth is on again, unless another planned fault still holds it (a fade inside an
    /// out-of-range stretch ends with neither; the stretch's links drop as they would alone).
    mutating func endPlanned(_ index: Int, target: UUID) {
        guard let fault = exploration?.faults[index], release(target) else { return }
        switch fault.kind {
        case .outOfRange, .fade:
            guard peripherals[target] != nil else { return }
            record(.stateChanged, peripheral: target, detail: "explored fault: back in range")
            setProximity(.near, of: target)
        case .powerCycle, .bluetoothReset:
            guard centrals[target] != nil else { return }
            record(.stateChanged, central: target, detail: "explored fault: Bluetooth on")
            setState(.central(target), to: .poweredOn)
        default:
            return
        }
    }

    /// Notes one more lasting fault on `target`; returns whether it is the first (the one that
    /// takes effect).
    private mutating func hold(_ target: UUID) -> Bool {
        exploration!.holds[target, default: 0] += 1
        return exploration!.holds[target] == 1
    }

    /// Notes that one lasting fault on `target` ended; returns whether it was the last.
    private mutating func release(_ target: UUID) -> Bool {
        guard let count = exploration?.holds[target], count > 0 else { return true }
        exploration!.holds[target] = count == 1 ? nil : count - 1
        return count == 1
    }

    /// Uses up an armed pairing refusal, if there is one: the pairing ending now is refused.
    mutating func takePlannedPairingRefusal() -> Bool {
        guard let index = exploration?.fates.firstIndex(of: .armedPairingRefusal) else { return false }
        exploration!.fates[index] = .fired
        return true
    }

    private mutating func scheduleEnd(of index: Int, _ fault: PlannedFault, target: UUID) {
        schedule.schedule(.plannedEnd(index: index, target: target), at: now.advanced(by: max(fault.duration, .zero)))
    }

    /// The links up now, in the order their centrals and then peripherals joined.
    private var liveLinkKeys: [LinkKey] {
        var keys: [LinkKey] = []
        for central in centralOrder {
            for peripheral in peripheralOrder where links.contains(LinkKey(central: central, peripheral: peripheral)) {
                keys.append(LinkKey(central: central, peripheral: peripheral))
            }
        }
        return keys
    }

    /// The peripherals in range now, in the order they joined.
    private var heard: [UUID] {
        peripheralOrder.filter { peripherals[$0]?.isHeard == true }
    }

    private func plannedTarget<T>(_ fault: PlannedFault, among candidates: [T]) -> T? {
        guard !candidates.isEmpty else { return nil }
        return candidates[abs(fault.target % candidates.count)]
    }
}

extension World {
    /// The operations the centrals made so far, as injected-error faults can aim at them (each
    /// kind on each characteristic once; a failed operation was made too), each with the instant
    /// (from the run's start) it was last made: for a connection, when it was asked for (an injected error is taken then);
    /// for the others, when it ended. An injected error aimed at one is drawn before that
    /// instant, so that the operation comes after it (``ExplorationPlan/draw(seed:budget:window:targets:)``).
    var explorationTargetTimes: [PlannedFault.Target: Duration] {
        var seen: [PlannedFault.Target: Duration] = [:]
        var asked: Duration?
        for entry in log where entry.central != nil {
            let target: PlannedFault.Target
            switch entry.kind {
            case .connecting:
                asked = entry.time.offset
                continue
            case .connected:
                seen[PlannedFault.Target(.connect)] = asked ?? entry.time.offset
                continue
            case .servicesDiscovered: target = PlannedFault.Target(.serviceDiscovery)
            case .characteristicsDiscovered: target = PlannedFault.Target(.characteristicDiscovery)
            case .descriptorsDiscovered: target = PlannedFault.Target(.descriptorDiscovery, on: entry.attribute)
            case .read: target = PlannedFault.Target(.read, on: entry.attribute)
            case .write where entry.writeType == .withResponse:
                target = PlannedFault.Target(.write, on: entry.attribute)
            case .subscribe: target = PlannedFault.Target(.subscribe, on: entry.attribute)
            case .unsubscribe:
                // (A subscription a manager's release ends is logged as the run ends: only an
                // unsubscription with no subscription before it gives the target its instant.)
                let target = PlannedFault.Target(.subscribe, on: entry.attribute)
                if seen[target] == nil { seen[target] = entry.time.offset }
                continue
            default: continue
            }
            seen[target] = entry.time.offset
        }
        return seen
    }
}
