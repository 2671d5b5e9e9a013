import BLECore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Everything a bridge simulates, as plain data: the managers on the air, the links between
/// them, the schedule, the virtual time, the seeded generator and the log. The bridge actor
/// owns one and changes it only on its executor.
struct SimulationWorld: Sendable {
    /// A central manager's simulated stack.
    struct Central: Sendable {
        let identifier: UUID
        var events: EventBroadcaster<CentralEvent>
        /// What the system kept for the app after it was terminated, until a manager with the
        /// same restore identifier takes it.
        var pendingRestoration: RestoredCentralState?
        /// What this manager got back when it was created, if it restored a predecessor.
        var restored: RestoredCentralState?
        var configuration: MockCentralManager.Configuration
        var state: ManagerState
        /// This central's own random stream (MTU, connection failures, injection draws).
        var random: SeededGenerator
        var scan: Scan?
        /// Whether the app runs in the background: scans then ignore allow-duplicates.
        var isInBackground = false
        /// The connection events this central registered for, if any.
        var connectionEventOptions: ConnectionEventOptions?
        /// Whether the user allowed each connected ANCS-requesting peripheral to receive
        /// notifications.
        var ancsAuthorizations: [UUID: Bool] = [:]
        /// Services discovered per peripheral (as `CBPeripheral.services`).
        var services: [UUID: [RemoteService]] = [:]
        /// Characteristics discovered per service (as `CBService.characteristics`).
        var characteristics: [RemoteService: [RemoteCharacteristic]] = [:]
    }

    /// A scan in progress.
    struct Scan: Sendable {
        var services: [BluetoothUUID]?
        var options: ScanOptions
        /// Peripherals already reported in this scan (without duplicates, each is reported once).
        var reported: Set<UUID> = []

        func matches(_ advertisement: AdvertisementData) -> Bool {
            advertisement.matches(services: services ?? [])
                || (!options.solicitedServiceUUIDs.isEmpty
                    && advertisement.solicits(anyOf: options.solicitedServiceUUIDs))
        }
    }

    /// A peripheral manager's simulated stack and GATT server.
    struct Peripheral: Sendable {
        let identifier: UUID
        var events: EventBroadcaster<PeripheralEvent>
        /// What the system kept for the app after it was terminated, until a manager with the
        /// same restore identifier takes it.
        var pendingRestoration: RestoredPeripheralState?
        /// What this manager got back when it was created, if it restored a predecessor.
        var restored: RestoredPeripheralState?
        /// Published L2CAP PSMs, and whether each needs an encrypted link.
        var publishedPSMs: [UInt16: Bool] = [:]
        var configuration: MockPeripheralManager.Configuration
        var state: ManagerState
        /// This peripheral's own random stream.
        var random: SeededGenerator
        var database = GATTDatabase()
        /// Notifications and indications waiting for a connection event.
        var updateQueue: [QueuedUpdate] = []
        /// Whether `updateValue` returned `false` since the queue last had room.
        var updateQueueWasFull = false
        /// Whether a drain of the update queue is scheduled.
        var updateDrainScheduled = false
        /// How far the peripheral is (`.near` until a proximity is simulated).
        var proximity: Proximity = .near
        /// Whether a proximity was simulated: its RSSI then replaces the configured one.
        var proximitySimulated = false
        /// Whether centrals can hear the peripheral at all.
        var isHeard: Bool { proximity != .outOfRange }
        /// The advertisement on the air, or `nil` when not advertising.
        var advertisement: AdvertisementData?
        /// Whether an advertising event is scheduled for this peripheral.
        var advertisingScheduled = false
        /// When its first advertisement since `startAdvertising` goes out.
        var advertisingStarted: VirtualClock.Instant = .zero

        /// Whether the app runs in the background: its advertisement is then cut down.
        var isInBackground = false

        /// What centrals receive: the advertisement, or in the background what iOS sends for
        /// a backgrounded app — no local name, manufacturer or service data, and the service
        /// UUIDs in the overflow area.
        var airAdvertisement: AdvertisementData? {
            guard isInBackground, var cut = advertisement else { return advertisement }
            cut.localName = nil
            cut.manufacturerData = nil
            cut.serviceData = [:]
            cut.overflowServiceUUIDs += cut.serviceUUIDs.filter { !cut.overflowServiceUUIDs.contains($0) }
            cut.serviceUUIDs = []
            return cut
        }

        /// What centrals see as its name: the GAP name, else the advertised local name.
        var name: String? { configuration.name ?? airAdvertisement?.localName }

        var isConnectable: Bool { advertisement.map { $0.isConnectable ?? true } ?? false }
    }

    /// The two ends of a link.
    struct LinkKey: Hashable, Sendable {
        var central: UUID
        var peripheral: UUID
    }

    /// A connection between a central and a peripheral.
    struct Link: Sendable {
        /// The negotiated ATT_MTU.
        var mtu: Int
        /// This link's own random stream (jitter of its connection events).
        var random: SeededGenerator
        var security = LinkSecurity()
        /// This central's subscriptions on the peripheral, by characteristic value handle.
        var subscriptions: [UInt16: SubscriptionKind] = [:]
        /// Writes without response waiting for a connection event.
        var writeQueue: [QueuedWrite] = []
        /// Whether the write queue was full since it last had room.
        var writeQueueWasFull = false
        /// Whether a drain of the write queue is scheduled.
        var writeDrainScheduled = false
        /// When the link's ATT bearer is free again: ATT allows one outstanding request per
        /// link, so timed operations run one after another.
        var attBusyUntil: VirtualClock.Instant = .zero
        /// The manual-mode request the peripheral is answering (ATT allows one at a time).
        var requestInFlight: UInt64?
        /// Manual-mode requests waiting for the one in flight to be answered, in order.
        var undeliveredRequests: [UInt64] = []
    }

    /// A write without response in the central's transmit queue.
    struct QueuedWrite: Sendable {
        var characteristic: RemoteCharacteristic
        var value: Data
    }

    /// A notification or indication in the peripheral's transmit queue.
    struct QueuedUpdate: Sendable {
        var link: LinkKey
        var characteristic: RemoteCharacteristic
        var value: Data
        var kind: SubscriptionKind
    }

    /// A connection attempt waiting to be established.
    struct ConnectionAttempt: Sendable {
        /// An injected failure, reported when the attempt would have completed.
        var injected: ErrorInjection.Failure?
        /// Whether the seeded draw failed the attempt (`connectionFailed`).
        var failsByChance: Bool
        /// When the link will be up, once the peripheral is connectable.
        var establishesAt: VirtualClock.Instant?
    }

    /// A manager, as scheduled events name it.
    enum Manager: Hashable, Sendable {
        case central(UUID)
        case peripheral(UUID)
    }

    /// Something scheduled to happen at a virtual time.
    enum ScheduledEvent: Sendable, Equatable {
        /// A peripheral sends an advertisement (repeating at its interval while anyone scans).
        case advertise(peripheral: UUID)
        /// A pending connection gives up.
        case connectionTimeout(LinkKey)
        /// An operation that took virtual time completes.
        case complete(UInt64)
        /// A manager's state moves on by itself (realistic state transitions).
        case stateStep(Manager, ManagerState)
        /// A connection event carries queued writes without response.
        case drainWrites(LinkKey)
        /// A connection event carries queued notifications and indications.
        case drainUpdates(UUID)
        /// A fault a test scheduled.
        case fault(Fault)
        /// A peripheral out of range for the supervision timeout loses its links.
        case supervisionTimeout(UUID)
        /// A connection attempt's latency has passed.
        case linkEstablished(LinkKey)
    }

    var now: VirtualClock.Instant = .zero
    var random: SeededGenerator
    let timing: LinkTiming
    var injections = InjectionBook()
    /// When each manager's automatic state steps end.
    var stateSettles: [Manager: VirtualClock.Instant] = [:]
    var centrals: [UUID: Central] = [:]
    /// Centrals in the order they joined, for deterministic iteration.
    var centralOrder: [UUID] = []
    /// Open L2CAP channels, by id.
    var l2capChannels: [UInt64: L2CAPChannelRecord] = [:]
    /// The next L2CAP channel id.
    var nextL2CAPChannelID: UInt64 = 1
    /// The bonds centrals keep: a central has keys for the peripheral of each link key.
    var centralBonds: Set<LinkKey> = []
    /// The bonds peripherals keep: a peripheral has keys for the central of each link key.
    var peripheralBonds: Set<LinkKey> = []
    /// Peripherals known to the system: discovered or connected by any central.
    var known: Set<UUID> = []
    var peripherals: [UUID: Peripheral] = [:]
    /// Peripherals in the order they joined, for deterministic iteration.
    var peripheralOrder: [UUID] = []
    var links: [LinkKey: Link] = [:]
    /// Connection attempts in progress.
    var attempts: [LinkKey: ConnectionAttempt] = [:]
    /// How many links each pair has had, so every new link gets a fresh random stream.
    var linkCount: [LinkKey: Int] = [:]
    var schedule = EventQueue<ScheduledEvent>()
    var log: [BridgeLogEntry] = []
    /// The ATT PDUs carried on every link so far (requests, responses, commands,
    /// notifications, indications and confirmations).
    var attPDUCount = 0

    init(seed: UInt64, timing: LinkTiming) {
        random = SeededGenerator(seed: seed)
        self.timing = timing
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
                handle: handle, value: value, writeType: writeType, error: error.map(LoggedError.init), detail: detail))
    }

    /// The ATT_MTU a new link between these two gets: the smaller of the preferences each
    /// draws for the link, clamped to 23…517.
    mutating func negotiateMTU(central: UUID, peripheral: UUID) -> Int {
        var centralRandom = centrals[central]!.random
        let offered = centrals[central]!.configuration.mtu.draw(isCentral: true, using: &centralRandom)
        centrals[central]!.random = centralRandom
        var peripheralRandom = peripherals[peripheral]!.random
        let accepted = peripherals[peripheral]!.configuration.mtu.draw(isCentral: false, using: &peripheralRandom)
        peripherals[peripheral]!.random = peripheralRandom
        return min(max(min(offered, accepted), 23), 517)
    }

    /// One connection interval with jitter drawn from `random` (zero with instant timing).
    func connectionEvent(using random: inout SeededGenerator) -> Duration {
        guard timing.connectionInterval > .zero else { return .zero }
        let jitter = timing.jitter > .zero ? random.duration(in: (.zero - timing.jitter)...timing.jitter) : .zero
        return max(timing.connectionInterval + jitter, .milliseconds(1))
    }

    /// One connection interval of a link, jittered from the link's own stream.
    mutating func connectionEvent(on key: LinkKey) -> Duration {
        guard var random = links[key]?.random else { return timing.connectionInterval }
        defer { links[key]!.random = random }
        return connectionEvent(using: &random)
    }

    /// One connection interval for a peripheral's transmit queue, from its own stream.
    mutating func connectionEvent(forPeripheral peripheral: UUID) -> Duration {
        guard var random = peripherals[peripheral]?.random else { return timing.connectionInterval }
        defer { peripherals[peripheral]!.random = random }
        return connectionEvent(using: &random)
    }

    /// One connection interval before a link exists (the MTU exchange), from the central's stream.
    mutating func connectionEvent(forCentral central: UUID) -> Duration {
        guard var random = centrals[central]?.random else { return timing.connectionInterval }
        defer { centrals[central]!.random = random }
        return connectionEvent(using: &random)
    }

    /// A connection latency in `range`, from the central's own stream.
    mutating func drawLatency(in range: ClosedRange<Duration>, forCentral central: UUID) -> Duration {
        guard range.lowerBound != range.upperBound, var random = centrals[central]?.random else {
            return range.lowerBound
        }
        defer { centrals[central]!.random = random }
        return random.duration(in: range)
    }

    /// The virtual time `roundTrips` ATT request/response pairs take on a link.
    mutating func cost(on key: LinkKey, roundTrips: Int) -> Duration {
        var total = Duration.zero
        attPDUCount += 2 * roundTrips
        for _ in 0..<roundTrips { total += connectionEvent(on: key) }
        return total
    }

    /// The central-side reference for a peripheral.
    func remotePeripheral(_ identifier: UUID) -> RemotePeripheral {
        RemotePeripheral(identifier: identifier, name: peripherals[identifier]?.name)
    }

    /// The links of a peripheral, in a deterministic order.
    func links(ofPeripheral peripheral: UUID) -> [LinkKey] {
        links.keys.filter { $0.peripheral == peripheral }.sorted { $0.central.uuidString < $1.central.uuidString }
    }

    /// The links of a central, in a deterministic order.
    func links(ofCentral central: UUID) -> [LinkKey] {
        links.keys.filter { $0.central == central }.sorted { $0.peripheral.uuidString < $1.peripheral.uuidString }
    }
}
