// swift-format-ignore-file: AlwaysUseLowerCamelCase
// (`RSSI` is CoreBluetoothMock's name.)

import BLEMockKit
import Foundation

/// How far a simulated peripheral is from the central (CoreBluetoothMock's `CBMProximity`),
/// with CoreBluetoothMock's RSSI values (its `CBMPeripheralSpec.swift`): `immediate` -40 dBm
/// (the closest), `near` -70 dBm, `far` -100 dBm; out of range it is not heard (``RSSI`` is
/// then 127). The kit's own `Proximity` has the same cases with the same values.
public enum CBMProximity: Sendable, Hashable {
    case immediate
    case near
    case far
    case outOfRange

    /// The signal strength at this distance (127 when out of range, as CoreBluetooth reports
    /// an unavailable RSSI).
    public var RSSI: Int { proximity.rssi ?? 127 }

    /// How much a simulated peripheral's RSSI varies around its proximity's
    /// (CoreBluetoothMock's `CBMProximity.Deviation`): drawn from the bridge's seed.
    public enum Deviation: Sendable, Hashable {
        /// No variation.
        case none
        /// ±15 dBm, CoreBluetoothMock's default.
        case `default`
        /// ± the given dBm.
        case custom(_ deviation: Int)

        /// The spread in dBm.
        var spread: Int {
            switch self {
            case .none: 0
            case .default: 15
            case .custom(let value): abs(value)
            }
        }
    }

    /// The kit's proximity with the same RSSI.
    var proximity: Proximity {
        switch self {
        case .immediate: .immediate
        case .near: .near
        case .far: .far
        case .outOfRange: .outOfRange
        }
    }
}

/// One advertising set of a simulated peripheral (CoreBluetoothMock's `CBMAdvertisementConfig`).
///
/// As in CoreBluetoothMock, a set equals itself (and its copies) only: two sets made alike are
/// two sets.
public struct CBMAdvertisementConfig: @unchecked Sendable, Hashable {
    // @unchecked Sendable: `data` holds the advertisement's plist-like values, never mutated.

    /// What makes a set itself: an object made with it, shared by its copies.
    private final class Identity: Sendable {}
    private let identity = Identity()

    /// The advertisement, with CoreBluetooth's keys.
    public let data: [String: Any]
    /// Seconds between advertisements; 0 advertises once, after ``delay``.
    public let interval: TimeInterval
    /// Seconds before the first advertisement.
    public let delay: TimeInterval
    /// Whether the peripheral keeps advertising this set while connected. When `false` (the
    /// default), scans do not hear the set while the device is connected (to a central manager,
    /// or to another app: ``CBMPeripheralSpec/isConnected``), as a device's connectable
    /// advertising stops when a central connects; they hear it again once the connection ends.
    public let isAdvertisingWhenConnected: Bool

    /// Creates an advertising set.
    public init(
        data: [String: Any], interval: TimeInterval, delay: TimeInterval = 0.0, isAdvertisingWhenConnected: Bool = false
    ) {
        self.data = data
        self.interval = interval
        self.delay = delay
        self.isAdvertisingWhenConnected = isAdvertisingWhenConnected
    }

    /// Whether both are the same set (one is a copy of the other).
    public static func == (lhs: CBMAdvertisementConfig, rhs: CBMAdvertisementConfig) -> Bool {
        lhs.identity === rhs.identity
    }

    /// Hashes the set's identity.
    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(identity)) }
}
