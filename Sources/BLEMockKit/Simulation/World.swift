import BLECore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Everything a bridge simulates, as plain values: the managers on the air, their links and
/// GATT servers, the operations in progress, one schedule, one virtual `now`, the seeded
/// generators and the log.
///
/// The world has no concurrency, no class references and no closures. Its mutating methods
/// take a request (an operation to start, a test hook, an answer from a peripheral) or a time
/// step (``runNextEvent(dueBy:)``) and append what must happen outside it to ``effects``:
/// complete an operation with a typed reply, deliver an event to a manager, ask a request
/// handler, open or close a channel. ``MockBLEBridge`` owns one world and performs those effects;
/// tests drive a world directly, synchronously.
///
/// The rules live in extensions named after what a newcomer would look for:
/// `World+ManagerState` (registration, state, shut-down), `World+Advertising` (scanning and
/// advertising), `World+Connection` (attempts, links, tear-down), `World+Link` (the ordered
/// pipe and its connection events), `World+GATTClient` (procedures a central runs),
/// `World+GATTServer` (services, values, notifications), `World+Requests` (how a peripheral
/// answers), `World+Pairing`, `World+L2CAP`, `World+Faults`, `World+Injection`,
/// `World+Restoration`, `World+ConnectionEvents`, `World+Events` (the schedule), and
/// `World+Operations` (starting, parking and cancelling operations).
struct World: Sendable {
    /// The seed the world was made with.
    let seed: UInt64
    /// How long things take.
    let timing: LinkTiming
    /// The current virtual time. Moves only forward, to each event's deadline as it runs.
    var now: VirtualClock.Instant = .zero
    /// The root of every seeded stream.
    var random: SeededGenerator
    /// Everything scheduled, in (deadline, sequence) order: link events, advertising, faults,
    /// timeouts, and the wake-ups of tasks sleeping on the bridge's clock.
    var schedule = EventQueue<ScheduledEvent>()
    /// The faults tests scheduled that have not fired yet, by the index their event names.
    var scheduledFaults: [Int: Fault] = [:]
    var nextFaultIndex = 0
    /// How many of the scheduled events are sleepers' wake-ups.
    var sleeperCount = 0
    /// The id of the next sleep on the bridge's clock.
    var nextSleeperID: UInt64 = 0
    /// What happened, in order.
    var log: [BridgeLogEntry] = []
    /// What must happen outside the world, in order; the bridge takes them after each call.
    var effects: [Effect] = []
    /// What is wrong with the bridge's configuration, if anything: every manager's calls are
    /// refused with it.
    var bridgeProblem: String?
    /// Limits every link obeys whatever the managers prefer.
    var limits = LinkLimits()
    /// The fault schedule of an exploration run, and which of its faults fired.
    var exploration: ExplorationState?
    /// The largest ATT_MTU a link has negotiated, if any link has (an exploration's coverage
    /// counts what the links had, which explicit preferences may keep below its conditions).
    var largestLinkMTU: Int?
    /// The misuses CoreBluetooth would let pass quietly, in order (see ``Misuse``).
    var misuses: [Misuse] = []
    /// Faults and test hooks that named a manager not on this bridge, described (see
    /// ``knows(central:peripheral:in:)``).
    var unknownTargets: [String] = []
    /// Requests a peripheral's app was handed and had not answered when their ATT transaction
    /// timed out (``Leftover/unansweredRequest(id:peripheral:characteristic:offset:)``).
    var timedOutRequests: [Leftover] = []
    /// The ATT PDUs every link carried so far.
    var attPDUCount = 0
    /// The latest updates peripherals sent with no central subscribed, one per characteristic
    /// (for a stall's report: see ``stallHints()``).
    var unheardUpdates: [UnheardUpdate] = []
    /// For each peripheral whose last update `updateValue` refused (its transmit queue full) and
    /// that has not had one accepted since, the refused update, with when it was told it may
    /// update again (for a stall's report: see ``stallHints()``).
    var refusedUpdates: [RefusedUpdate] = []

    var centrals = IdentifierMap<Central>()
    /// Centrals in the order they joined, for deterministic iteration.
    var centralOrder: [UUID] = []
    var peripherals = IdentifierMap<Peripheral>()
    /// Peripherals in the order they joined, for deterministic iteration.
    var peripheralOrder: [UUID] = []
    /// Peripherals known to the system: discovered or connected by any central.
    var known = IdentifierSet()
    /// Peripherals connected to the system by something outside the simulation (another app,
    /// the system itself): retrievable as connected, and connectable without advertising.
    var connectedToSystem = IdentifierSet()
    /// Counts changes to what a front end's system view shows (known peripherals, links,
    /// peripherals held by the system, discovered and published services, names), so the view
    /// is rebuilt only when one happened.
    var systemChanges: UInt64 = 0
    /// Peripherals' advertising sets besides their main advertisement, on the air while it is.
    /// (Kept out of the peripheral records, which hot paths copy: most peripherals have none.)
    var advertisingSets: [UUID: [AdvertisingSet]] = [:]
    var links = LinkTable()
    /// Connection attempts in progress.
    var attempts: [LinkKey: ConnectionAttempt] = [:]
    /// How many links each pair has had: every new link gets a fresh generation and stream.
    var linkCount: [LinkKey: Int] = [:]
    /// The bonds centrals keep: a central has keys for the peripheral of each link key.
    var centralBonds: Set<LinkKey> = []
    /// The bonds peripherals keep: a peripheral has keys for the central of each link key.
    var peripheralBonds: Set<LinkKey> = []
    /// When each manager's automatic state steps end.
    var stateSettles: [Manager: VirtualClock.Instant] = [:]
    var injections = InjectionBook()
    /// Operations in progress, by id.
    var pending = OperationTable()
    var nextOperationID: UInt64 = 1
    /// The ids of ATT requests handed to peripherals (`ATTRequest.id`).
    var nextRequestID: UInt64 = 1
    /// Open L2CAP channels, by id.
    var channels: [UInt64: L2CAPChannelRecord] = [:]
    var nextChannelID: UInt64 = 1
    /// Centrals whose front end mirrors their write-without-response queues: each connection
    /// event that sends write commands of theirs reports the queue's new length
    /// (``Effect/commandQueue(central:peripheral:queued:)``).
    var commandQueueReporters = IdentifierSet()
    /// Peripherals whose front end mirrors their update queue: each time updates leave it, its
    /// new length is reported (``Effect/updateQueue(peripheral:queued:)``).
    var updateQueueReporters = IdentifierSet()
    /// What happened for managers whose app was terminated with a restore identifier, held
    /// (as the effects that deliver it) for the relaunched app's manager until it can take it
    /// (the system relaunches the app for it: a notification, a disconnection, a request).
    var heldForRestoration: [Manager: [Effect]] = [:]

    /// Creates an empty world.
    init(seed: UInt64, timing: LinkTiming) {
        self.seed = seed
        self.timing = timing
        random = SeededGenerator(seed: seed)
        // A typical test logs a few dozen entries: growing from empty would copy them several times.
        log.reserveCapacity(64)
        // Room for a few effects (a call makes one to three); kept small enough for the
        // allocator's per-thread cache (eight took a slower path).
        effects.reserveCapacity(4)
    }

    /// Takes the effects produced so far, leaving the list empty.
    mutating func takeEffects() -> [Effect] {
        defer { effects.removeAll(keepingCapacity: true) }
        return effects
    }

    /// Appends a log entry stamped with the current time.
    mutating func record(
        _ kind: BridgeLogEntry.Kind, central: UUID? = nil, peripheral: UUID? = nil, attribute: BluetoothUUID? = nil,
        handle: UInt16? = nil, value: Data? = nil, writeType: WriteType? = nil, error: (any Error)? = nil,
        detail: String? = nil
    ) {
        log.append(
            BridgeLogEntry(
                index: log.count, time: now, kind: kind, central: central, peripheral: peripheral, attribute: attribute,
                handle: handle, value: value, writeType: writeType, error: error.map(LoggedError.init), detail: detail,
                attPDUCount: attPDUCount))
    }

    /// Delivers an event to a central's streams.
    mutating func deliver(_ event: CentralEvent, to central: UUID) {
        if !heldForRestoration.isEmpty, heldForRestoration[.central(central)] != nil, event.waitsForRelaunch {
            heldForRestoration[.central(central)]!.append(.central(central, event))
            return
        }
        effects.append(.central(central, event))
    }

    /// Delivers an event to a peripheral's streams.
    mutating func deliver(_ event: PeripheralEvent, to peripheral: UUID) {
        if !heldForRestoration.isEmpty, heldForRestoration[.peripheral(peripheral)] != nil, event.waitsForRelaunch {
            heldForRestoration[.peripheral(peripheral)]!.append(.peripheral(peripheral, event))
            return
        }
        effects.append(.peripheral(peripheral, event))
    }

    /// The central-side reference for a peripheral.
    func remotePeripheral(_ identifier: UUID) -> RemotePeripheral {
        guard let position = peripherals.position(of: identifier) else {
            return RemotePeripheral(identifier: identifier, name: nil)
        }
        return RemotePeripheral(identifier: identifier, name: peripherals[at: position].name)
    }

    /// Whether centrals can hear a peripheral.
    @inline(__always)
    func isHeard(_ peripheral: UUID) -> Bool {
        guard let position = peripherals.position(of: peripheral) else { return false }
        return peripherals[at: position].proximity != .outOfRange
    }

    /// The links of a peripheral, in a deterministic order.
    @inline(__always)
    func links(ofPeripheral peripheral: UUID) -> [LinkKey] {
        var found = links.keys.filter { $0.peripheral == peripheral }
        if found.count > 1 { found.sort { $0.central.precedes($1.central) } }
        return found
    }

    /// The links of a central, in a deterministic order.
    @inline(__always)
    func links(ofCentral central: UUID) -> [LinkKey] {
        var found = links.keys.filter { $0.central == central }
        if found.count > 1 { found.sort { $0.peripheral.precedes($1.peripheral) } }
        return found
    }
}

/// The two ends of a link.
struct LinkKey: Hashable, Sendable {
    var central: UUID
    var peripheral: UUID

    /// Hashes the identifiers as four words rather than byte by byte (the world looks links
    /// up on every call that names one).
    func hash(into hasher: inout Hasher) {
        let (c0, c1) = central.words
        let (p0, p1) = peripheral.words
        hasher.combine(c0 ^ p1)
        hasher.combine(c1 ^ p0)
    }

    func _rawHashValue(seed: Int) -> Int {
        let (c0, c1) = central.words
        let (p0, p1) = peripheral.words
        let mixed = (c0 &* 0x9E37_79B9_7F4A_7C15 ^ c1) &* 0xBF58_476D_1CE4_E5B9 ^ p0 &* 0x94D0_49BB_1331_11EB ^ p1
        return Int(truncatingIfNeeded: (mixed ^ UInt64(UInt(bitPattern: seed))) &* 0x9E37_79B9_7F4A_7C15)
    }
}

extension UUID {
    /// The 16 bytes as two words, first byte most significant.
    var words: (UInt64, UInt64) {
        let bytes = uuid
        let high =
            UInt64(bytes.0) << 56 | UInt64(bytes.1) << 48 | UInt64(bytes.2) << 40 | UInt64(bytes.3) << 32
            | UInt64(bytes.4) << 24 | UInt64(bytes.5) << 16 | UInt64(bytes.6) << 8 | UInt64(bytes.7)
        let low =
            UInt64(bytes.8) << 56 | UInt64(bytes.9) << 48 | UInt64(bytes.10) << 40 | UInt64(bytes.11) << 32
            | UInt64(bytes.12) << 24 | UInt64(bytes.13) << 16 | UInt64(bytes.14) << 8 | UInt64(bytes.15)
        return (high, low)
    }

    /// The same text as `uuidString` (uppercase, hyphenated), built directly: Foundation
    /// formats `uuidString` through `snprintf`, and the world names a stream after an
    /// identifier for every manager and link.
    var canonicalString: String {
        let (high, low) = words
        return String(unsafeUninitializedCapacity: 36) { buffer in
            var count = 0
            for nibble in 0..<32 {
                if nibble == 8 || nibble == 12 || nibble == 16 || nibble == 20 {
                    buffer[count] = UInt8(ascii: "-")
                    count += 1
                }
                let word = nibble < 16 ? high : low
                let digit = UInt8(truncatingIfNeeded: word >> UInt64(60 - 4 * (nibble % 16))) & 0xF
                buffer[count] = digit < 10 ? UInt8(ascii: "0") + digit : UInt8(ascii: "A") + digit - 10
                count += 1
            }
            return count
        }
    }

    /// Whether this identifier sorts before `other`, byte by byte (the order of their
    /// `uuidString`s, without making the strings).
    func precedes(_ other: UUID) -> Bool {
        let (a0, a1) = words
        let (b0, b1) = other.words
        return a0 != b0 ? a0 < b0 : a1 < b1
    }
}

/// A manager, as the world names it.
enum Manager: Hashable, Sendable {
    case central(UUID)
    case peripheral(UUID)
}
