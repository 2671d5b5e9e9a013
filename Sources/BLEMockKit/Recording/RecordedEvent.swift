import BLECore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// One thing an app did or saw through a central, as a ``SessionRecorder`` keeps it.
///
/// Attributes are named by their handle on the peripheral (as `RemoteCharacteristic.handle`
/// and `RemoteDescriptor.handle`), so a read or write of a descriptor is a read or write of
/// its handle, as on the air.
public enum RecordedEvent: Hashable, Sendable {
    /// The app started scanning, for these services (`nil`: all).
    case scanStarted(services: [BluetoothUUID]?, allowDuplicates: Bool)
    /// The app stopped scanning.
    case scanStopped
    /// An advertisement arrived.
    case discovered(peripheral: UUID, name: String?, advertisement: AdvertisementData, rssi: Int)
    /// A connection was established, with the ATT_MTU the link negotiated, as
    /// `maximumWriteValueLength(for: .withoutResponse)` + 3 shows it: exact below 515, and 515
    /// for any link of 515 or more (see ``SessionRecording/lowerBoundMTU``).
    case connected(peripheral: UUID, mtu: Int)
    /// A connection attempt failed.
    case connectionFailed(peripheral: UUID, error: RecordedError)
    /// A connection ended: `error` is `nil` when the app cancelled it.
    case disconnected(peripheral: UUID, error: RecordedError?)
    /// Service discovery found these services.
    case servicesDiscovered(peripheral: UUID, services: [RecordedService])
    /// Characteristic discovery in the service at `service` found these characteristics.
    case characteristicsDiscovered(peripheral: UUID, service: UInt16, characteristics: [RecordedCharacteristic])
    /// Descriptor discovery of the characteristic at `characteristic` found these descriptors.
    case descriptorsDiscovered(peripheral: UUID, characteristic: UInt16, descriptors: [RecordedDescriptor])
    /// A read of a characteristic or descriptor: the value, or the error.
    case read(peripheral: UUID, handle: UInt16, result: Result<RecordedValue, RecordedError>)
    /// A write of a characteristic (with or without response) or a descriptor (with response).
    case write(peripheral: UUID, handle: UInt16, value: RecordedValue, withResponse: Bool, error: RecordedError?)
    /// The app enabled or disabled notifications or indications of the characteristic at `handle`.
    case notificationState(peripheral: UUID, handle: UInt16, enabled: Bool, error: RecordedError?)
    /// A notification or indication arrived.
    case valueUpdated(peripheral: UUID, handle: UInt16, value: RecordedValue, isIndication: Bool)

    /// The peripheral the event concerns, if any.
    public var peripheral: UUID? {
        switch self {
        case .scanStarted, .scanStopped: nil
        case .discovered(let peripheral, _, _, _), .connected(let peripheral, _),
            .connectionFailed(let peripheral, _), .disconnected(let peripheral, _),
            .servicesDiscovered(let peripheral, _), .characteristicsDiscovered(let peripheral, _, _),
            .descriptorsDiscovered(let peripheral, _, _), .read(let peripheral, _, _),
            .write(let peripheral, _, _, _, _), .notificationState(let peripheral, _, _, _),
            .valueUpdated(let peripheral, _, _, _):
            peripheral
        }
    }
}

/// A value as a recording keeps it: the bytes, or the name of a placeholder that stands for
/// a value the app marked private (see ``SessionRecorder/markPrivate(_:as:)``).
public enum RecordedValue: Hashable, Sendable {
    /// The bytes seen.
    case bytes(Data)
    /// A private value, left out; the name says which value a replay must supply.
    case placeholder(String)
}

/// An error an operation ended with, as a recording keeps it: its domain and code.
public struct RecordedError: Error, Hashable, Sendable {
    /// Where the code comes from.
    public enum Domain: String, Hashable, Sendable, CaseIterable {
        /// An ATT error code (`ATTError`), 0x01…0xFF.
        case att
        /// A CoreBluetooth error code (`CoreBluetoothError`).
        case coreBluetooth = "cb"
        /// Anything else: the app's call was refused or cancelled.
        case kit
    }

    /// Where the code comes from.
    public var domain: Domain
    /// The error code.
    public var code: Int

    /// Creates a recorded error.
    public init(domain: Domain, code: Int) {
        self.domain = domain
        self.code = code
    }

    /// The domain and code of an error a central threw: ATT and CoreBluetooth errors keep
    /// their codes; cancellation is ``Domain/kit`` code 1, anything else ``Domain/kit`` code 0.
    public init(_ error: any Error) {
        switch error {
        case let error as ATTError: self.init(domain: .att, code: Int(error.code.rawValue))
        case let error as CoreBluetoothError: self.init(domain: .coreBluetooth, code: error.code.rawValue)
        case is CancellationError: self.init(domain: .kit, code: Self.cancelledCode)
        default: self.init(domain: .kit, code: 0)
        }
    }

    /// The ``Domain/kit`` code a cancelled call is recorded with.
    public static let cancelledCode = 1
}

/// A service as discovery reported it.
public struct RecordedService: Hashable, Sendable {
    /// The service type.
    public var uuid: BluetoothUUID
    /// Whether it is primary.
    public var isPrimary: Bool
    /// The handle of its declaration.
    public var handle: UInt16
    /// Its last handle.
    public var endHandle: UInt16

    /// Creates a recorded service.
    public init(uuid: BluetoothUUID, isPrimary: Bool, handle: UInt16, endHandle: UInt16) {
        self.uuid = uuid
        self.isPrimary = isPrimary
        self.handle = handle
        self.endHandle = endHandle
    }

    /// A discovered service as recorded.
    public init(_ service: RemoteService) {
        self.init(
            uuid: service.uuid, isPrimary: service.isPrimary, handle: service.handle, endHandle: service.endHandle)
    }
}

/// A characteristic as discovery reported it.
public struct RecordedCharacteristic: Hashable, Sendable {
    /// The characteristic type.
    public var uuid: BluetoothUUID
    /// What it supports.
    public var properties: CharacteristicProperties
    /// The handle of its value.
    public var handle: UInt16

    /// Creates a recorded characteristic.
    public init(uuid: BluetoothUUID, properties: CharacteristicProperties, handle: UInt16) {
        self.uuid = uuid
        self.properties = properties
        self.handle = handle
    }

    /// A discovered characteristic as recorded.
    public init(_ characteristic: RemoteCharacteristic) {
        self.init(uuid: characteristic.uuid, properties: characteristic.properties, handle: characteristic.handle)
    }
}

/// A descriptor as discovery reported it.
public struct RecordedDescriptor: Hashable, Sendable {
    /// The descriptor type.
    public var uuid: BluetoothUUID
    /// Its handle.
    public var handle: UInt16

    /// Creates a recorded descriptor.
    public init(uuid: BluetoothUUID, handle: UInt16) {
        self.uuid = uuid
        self.handle = handle
    }

    /// A discovered descriptor as recorded.
    public init(_ descriptor: RemoteDescriptor) {
        self.init(uuid: descriptor.uuid, handle: descriptor.handle)
    }
}
