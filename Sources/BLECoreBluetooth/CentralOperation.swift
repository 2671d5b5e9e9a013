#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// What a waiting central call is waiting for: the key of ``PendingOperations`` in the
/// CoreBluetooth-backed central. Attribute numbers are those of ``AttributeNumbering``.
///
/// Every key names its peripheral, so a dropped link fails exactly that peripheral's calls.
/// The type does not touch CoreBluetooth; it is unit-tested on every platform.
enum CentralOperation: Hashable, Sendable {
    /// `connect(_:options:)`: answered by `didConnect` or `didFailToConnect`.
    case connect(peripheral: UUID)
    /// `discoverServices`: answered by `didDiscoverServices`.
    case discoverServices(peripheral: UUID)
    /// `discoverIncludedServices`: answered by `didDiscoverIncludedServicesFor`.
    case discoverIncludedServices(peripheral: UUID, service: UInt16)
    /// `discoverCharacteristics`: answered by `didDiscoverCharacteristicsFor`.
    case discoverCharacteristics(peripheral: UUID, service: UInt16)
    /// `discoverDescriptors`: answered by `didDiscoverDescriptorsFor`.
    case discoverDescriptors(peripheral: UUID, characteristic: UInt16)
    /// A characteristic read: answered by `didUpdateValueFor` (characteristic).
    case readCharacteristic(peripheral: UUID, characteristic: UInt16)
    /// A characteristic write with response: answered by `didWriteValueFor` (characteristic).
    case writeCharacteristic(peripheral: UUID, characteristic: UInt16)
    /// `setNotifyValue`: answered by `didUpdateNotificationStateFor`.
    case setNotifyValue(peripheral: UUID, characteristic: UInt16)
    /// A descriptor read: answered by `didUpdateValueFor` (descriptor).
    case readDescriptor(peripheral: UUID, descriptor: UInt16)
    /// A descriptor write: answered by `didWriteValueFor` (descriptor).
    case writeDescriptor(peripheral: UUID, descriptor: UInt16)
    /// `readRSSI`: answered by `didReadRSSI`.
    case readRSSI(peripheral: UUID)
    /// `openL2CAPChannel`: answered by `didOpen` (channel).
    case openL2CAPChannel(peripheral: UUID, psm: UInt16)

    /// The peripheral the call concerns.
    var peripheral: UUID {
        switch self {
        case .connect(let peripheral), .discoverServices(let peripheral), .readRSSI(let peripheral),
            .discoverIncludedServices(let peripheral, _), .discoverCharacteristics(let peripheral, _),
            .discoverDescriptors(let peripheral, _), .readCharacteristic(let peripheral, _),
            .writeCharacteristic(let peripheral, _), .setNotifyValue(let peripheral, _),
            .readDescriptor(let peripheral, _), .writeDescriptor(let peripheral, _),
            .openL2CAPChannel(let peripheral, _):
            peripheral
        }
    }

    /// Whether the call needs an established link (everything but connecting), and so fails
    /// when the link drops.
    var needsLink: Bool {
        if case .connect = self { false } else { true }
    }
}
