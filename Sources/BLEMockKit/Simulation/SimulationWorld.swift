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
        let events: EventBroadcaster<CentralEvent>
        var configuration: MockCentralManager.Configuration
        var state: ManagerState
        var scan: Scan?
        /// Peripherals this central discovered, retrieved or connected, with their names.
        var known: [UUID: RemotePeripheral] = [:]
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
                || (!options.solicitedServiceUUIDs.isEmpty && advertisement.solicits(anyOf: options.solicitedServiceUUIDs))
        }
    }

    /// A peripheral manager's simulated stack and GATT server.
    struct Peripheral: Sendable {
        let identifier: UUID
        let events: EventBroadcaster<PeripheralEvent>
        var configuration: MockPeripheralManager.Configuration
        var state: ManagerState
        var database = GATTDatabase()
        /// The advertisement on the air, or `nil` when not advertising.
        var advertisement: AdvertisementData?
        /// Whether an advertising event is scheduled for this peripheral.
        var advertisingScheduled = false

        /// What centrals see as its name: the GAP name, else the advertised local name.
        var name: String? { configuration.name ?? advertisement?.localName }

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
        var security = LinkSecurity()
        /// This central's subscriptions on the peripheral, by characteristic value handle.
        var subscriptions: [UInt16: SubscriptionKind] = [:]
    }

    /// Something scheduled to happen at a virtual time.
    enum ScheduledEvent: Sendable, Equatable {
        /// A peripheral sends an advertisement (repeating at its interval while anyone scans).
        case advertise(peripheral: UUID)
        /// A pending connection gives up.
        case connectionTimeout(LinkKey)
    }

    var now: VirtualClock.Instant = .zero
    var random: SeededGenerator
    var centrals: [UUID: Central] = [:]
    /// Centrals in the order they joined, for deterministic iteration.
    var centralOrder: [UUID] = []
    /// Peripherals known to the system: discovered or connected by any central.
    var known: Set<UUID> = []
    var peripherals: [UUID: Peripheral] = [:]
    /// Peripherals in the order they joined, for deterministic iteration.
    var peripheralOrder: [UUID] = []
    var links: [LinkKey: Link] = [:]
    var schedule = EventQueue<ScheduledEvent>()
    var log: [BridgeLogEntry] = []

    init(seed: UInt64) {
        random = SeededGenerator(seed: seed)
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

    /// The ATT_MTU a new link between these two gets: the smaller preference, clamped to 23…517.
    func negotiatedMTU(central: Central, peripheral: Peripheral) -> Int {
        min(max(min(central.configuration.preferredMTU, peripheral.configuration.preferredMTU), 23), 517)
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
