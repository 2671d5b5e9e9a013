import BLECore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

extension World {
    /// A manager's seeded streams, one per purpose: each is a child of the manager's stream
    /// (``SeededGenerator/derived(_:)-(String)``), so drawing more for one purpose never shifts
    /// another's draws. A central that only scans draws RSSI values, and those never change
    /// the MTU or the timing of another link.
    struct Streams: Sendable {
        /// Where the manager's own stream comes from. Only its seed matters: children are
        /// derived from the seed, so the manager's own stream is never drawn from.
        private enum Base: Sendable {
            /// A stream seeded so (a configured seed).
            case seed(UInt64)
            /// The child of the root stream (seeded `rootSeed`) named `role`, then the
            /// identifier's canonical string: derived when a purpose's child is first needed
            /// (hashing the identifier's text for every new manager showed in fast mode's
            /// profile, which draws nothing).
            case derived(rootSeed: UInt64, role: Role, identifier: UUID)
        }

        /// The role a manager's stream is named after.
        enum Role: String, Sendable {
            case central, peripheral
        }

        /// What a child stream is for; its raw value is the child's name.
        enum Purpose: String, Sendable {
            case mtu, rssi, advertising, connection, injection
        }

        private let source: Base
        /// The children drawn from so far, in the order first drawn (drawn in place through
        /// the accessors' `_modify`). (An array, empty and
        /// unallocated until a first draw — fast mode draws none — rather than five optional
        /// generators of 40 bytes each inline in every manager's record.)
        private var children: [(purpose: Purpose, stream: SeededGenerator)] = []

        /// The streams of a manager whose own stream is `base`.
        init(_ base: SeededGenerator) {
            source = .seed(base.seed)
        }

        /// The streams of a manager whose own stream is `root.derived(role).derived(identifier's
        /// canonical string)`, derived on first use.
        init(deriving role: Role, of identifier: UUID, from root: SeededGenerator) {
            source = .derived(rootSeed: root.seed, role: role, identifier: identifier)
        }

        /// The manager's own stream, which each purpose's child is derived from.
        private var base: SeededGenerator {
            switch source {
            case .seed(let seed): SeededGenerator(seed: seed)
            case .derived(let rootSeed, let role, let identifier):
                SeededGenerator(seed: rootSeed).derived(role.rawValue).derived(identifier.canonicalString)
            }
        }

        /// The child for `purpose`, where its draws have got to.
        private func child(_ purpose: Purpose) -> SeededGenerator {
            for child in children where child.purpose == purpose { return child.stream }
            return base.derived(purpose.rawValue)
        }

        /// The position of the child for `purpose` in `children`, deriving it first if needed.
        private mutating func position(_ purpose: Purpose) -> Int {
            for index in children.indices where children[index].purpose == purpose { return index }
            children.append((purpose, base.derived(purpose.rawValue)))
            return children.count - 1
        }

        /// ATT_MTU preferences drawn per link.
        var mtu: SeededGenerator {
            get { child(.mtu) }
            _modify {
                let index = position(.mtu)
                yield &children[index].stream
            }
        }
        /// RSSI values of advertisements and `readRSSI`.
        var rssi: SeededGenerator {
            get { child(.rssi) }
            _modify {
                let index = position(.rssi)
                yield &children[index].stream
            }
        }
        /// Advertising delays.
        var advertising: SeededGenerator {
            get { child(.advertising) }
            _modify {
                let index = position(.advertising)
                yield &children[index].stream
            }
        }
        /// Connection latency, failure chances, and the intervals before a link exists.
        var connection: SeededGenerator {
            get { child(.connection) }
            _modify {
                let index = position(.connection)
                yield &children[index].stream
            }
        }
        /// Probabilities of error injections.
        var injection: SeededGenerator {
            get { child(.injection) }
            _modify {
                let index = position(.injection)
                yield &children[index].stream
            }
        }
    }

    /// A central manager's simulated stack.
    struct Central: Sendable {
        let identifier: UUID
        var configuration: MockCentralManager.Configuration
        var state: ManagerState
        /// This central's own random streams, one per purpose.
        var random: Streams
        var scan: Scan?
        /// Whether the app runs in the background: scans then ignore allow-duplicates.
        var isInBackground = false
        /// Set by `shutDown()`: from then on the manager refuses every call and ignores state changes.
        var isShutDown = false
        /// What is wrong with the configuration, if anything: every call is refused with it.
        var configurationProblem: String?
        /// The connection events this central registered for, if any.
        var connectionEventOptions: ConnectionEventOptions?
        /// Whether the user allowed each connected ANCS-requesting peripheral to receive
        /// notifications.
        var ancsAuthorizations: [UUID: Bool] = [:]
        /// Services discovered per peripheral (as `CBPeripheral.services`).
        var services: [UUID: [RemoteService]] = [:]
        /// Included services discovered per peripheral (as `CBService.includedServices`).
        var includedServices: [UUID: [RemoteService]] = [:]
        /// Characteristics discovered per service (as `CBService.characteristics`).
        var characteristics: [RemoteService: [RemoteCharacteristic]] = [:]
        /// What the system kept for the app after it was terminated, until a manager with the
        /// same restore identifier takes it.
        var pendingRestoration: RestoredCentralState?
        /// What this manager got back when it was created, if it restored a predecessor.
        var restored: RestoredCentralState?
    }

    /// A scan in progress.
    struct Scan: Sendable {
        var services: [BluetoothUUID]?
        var options: ScanOptions
        /// When the scan started.
        var started: VirtualClock.Instant
        /// Peripherals already reported in this scan (without duplicates, each is reported once).
        var reported = IdentifierSet()

        func matches(_ advertisement: AdvertisementData) -> Bool {
            advertisement.matches(services: services ?? [])
                || (!options.solicitedServiceUUIDs.isEmpty
                    && advertisement.solicits(anyOf: options.solicitedServiceUUIDs))
        }
    }

    /// How a peripheral answers requests for its dynamic characteristics (the world never
    /// calls a handler: it asks the bridge to).
    enum Answering: Hashable, Sendable {
        case automatic, manual, handler
    }

    /// A peripheral manager's simulated stack and GATT server.
    struct Peripheral: Sendable {
        let identifier: UUID
        /// The configuration, with a request handler's closure left out (see ``answering``).
        var configuration: MockPeripheralManager.Configuration
        var answering: Answering
        var state: ManagerState
        /// This peripheral's own random streams, one per purpose.
        var random: Streams
        var database = GATTDatabase()
        /// Notifications and indications waiting in its links' pipes.
        var queuedUpdates = 0
        /// Whether `updateValue` returned `false` since the queue last had room.
        var updateQueueWasFull = false
        /// Published L2CAP PSMs, and whether each needs an encrypted link.
        var publishedPSMs: [UInt16: Bool] = [:]
        /// How far the peripheral is (`.near` until a proximity is simulated).
        var proximity: Proximity = .near
        /// Whether a proximity was simulated: its RSSI then replaces the configured one.
        var proximitySimulated = false
        /// The advertisement on the air, or `nil` when not advertising.
        var advertisement: AdvertisementData?
        /// The advertisement Bluetooth's turning off paused: on the air again once it is on.
        var pausedAdvertisement: AdvertisementData?
        /// The last local name a central heard in its advertisements: the system keeps knowing
        /// it (as CoreBluetooth keeps a peripheral's name) once the peripheral stops advertising,
        /// advertises without a name, or advertises from the background.
        var heardName: String?
        /// Whether an advertising event is scheduled for this peripheral.
        var advertisingScheduled = false
        /// When its first advertisement since `startAdvertising` goes out.
        var advertisingStarted: VirtualClock.Instant = .zero
        /// When its last advertising event went out, heard or not (`nil` before the first):
        /// the phase its events keep while nobody listens (see
        /// ``World/nextAdvertisingEvent(after:interval:since:)``).
        var lastAdvertised: VirtualClock.Instant?
        /// Whether its advertisement is heard while it holds a connection (see
        /// ``World/holdsConnection(_:)``). `true` unless a front end says otherwise: iOS keeps
        /// a peripheral manager's advertising going while centrals are connected.
        var advertisesWhenConnected = true
        /// Whether the app runs in the background: its advertisement is then cut down.
        var isInBackground = false
        /// Set by `shutDown()`: from then on the manager refuses every call and ignores state changes.
        var isShutDown = false
        /// What is wrong with the configuration, if anything: every call is refused with it.
        var configurationProblem: String?
        /// What the system kept for the app after it was terminated.
        var pendingRestoration: RestoredPeripheralState?
        /// What this manager got back when it was created, if it restored a predecessor.
        var restored: RestoredPeripheralState?

        init(
            identifier: UUID, configuration: MockPeripheralManager.Configuration, state: ManagerState,
            random: Streams
        ) {
            self.identifier = identifier
            var stored = configuration
            switch configuration.requestHandling {
            case .automatic: answering = .automatic
            case .manual: answering = .manual
            case .handler:
                answering = .handler
                stored.requestHandling = .manual
                stored.deferringHandler = nil
            }
            self.configuration = stored
            self.state = state
            self.random = random
        }

        /// Whether centrals can hear the peripheral at all.
        var isHeard: Bool { proximity != .outOfRange }

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

        /// What centrals see as its name: the GAP name, else the local name its advertisements
        /// carry on the air now (`airAdvertisement?.localName`, without building the cut-down
        /// advertisement), else the last one a central heard (``heardName``).
        var name: String? { configuration.name ?? (isInBackground ? nil : advertisement?.localName) ?? heardName }

        var isConnectable: Bool { advertisement.map { $0.isConnectable ?? true } ?? false }
    }

    /// A connection attempt waiting to be established.
    struct ConnectionAttempt: Sendable {
        /// An injected failure, reported when the attempt would have completed.
        var injected: ErrorInjection.Failure?
        /// The injection entry that fired for it, taken back if the attempt ends before the
        /// failure is seen (timed out, cancelled, powered off).
        var injectedEntry: Int?
        /// Whether the injected failure took effect (the attempt failed with it, or never completes).
        var injectionSeen = false
        /// Whether the seeded draw failed the attempt (`connectionFailed`).
        var failsByChance: Bool
        /// When the link will be up, once the peripheral is connectable.
        var establishesAt: VirtualClock.Instant?
        /// An injection made it never complete: it waits for its timeout or a cancel.
        var neverCompletes = false
    }
}
