#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A connection the system made or lost with a peripheral, reported to centrals registered
/// with ``CentralManaging/registerForConnectionEvents(options:)`` (as `CBConnectionEvent`,
/// with its raw values).
public enum ConnectionEvent: Int, Hashable, Sendable, CaseIterable, CustomStringConvertible {
    /// A link to the peripheral went down.
    case peerDisconnected = 0
    /// A link to the peripheral came up.
    case peerConnected = 1

    /// The case name, e.g. `"peerConnected"`.
    public var description: String {
        switch self {
        case .peerDisconnected: "peerDisconnected"
        case .peerConnected: "peerConnected"
        }
    }
}

/// Which peripherals' connection events a central wants (as CoreBluetooth's
/// `CBConnectionEventMatchingOption` keys). A peripheral matches when it offers one of
/// ``serviceUUIDs`` or is one of ``peripheralIdentifiers``; with both empty, every peripheral
/// matches.
public struct ConnectionEventOptions: Hashable, Sendable {
    /// Services whose peripherals match (`CBConnectionEventMatchingOptionServiceUUIDs`).
    public var serviceUUIDs: [BluetoothUUID]
    /// Peripherals that match (`CBConnectionEventMatchingOptionPeripheralUUIDs`).
    public var peripheralIdentifiers: [UUID]

    /// Creates matching options.
    public init(serviceUUIDs: [BluetoothUUID] = [], peripheralIdentifiers: [UUID] = []) {
        self.serviceUUIDs = serviceUUIDs
        self.peripheralIdentifiers = peripheralIdentifiers
    }

    /// Whether a peripheral with `identifier` offering `services` matches.
    public func matches(identifier: UUID, services: [BluetoothUUID]) -> Bool {
        if serviceUUIDs.isEmpty && peripheralIdentifiers.isEmpty { return true }
        return peripheralIdentifiers.contains(identifier) || services.contains { serviceUUIDs.contains($0) }
    }
}
