import BLECore
import BLEMockKit
import Foundation

/// The states of a manager, with CoreBluetooth's raw values (`CBManagerState`).
public enum CBMManagerState: Int, Sendable, CustomStringConvertible {
    case unknown = 0
    case resetting = 1
    case unsupported = 2
    case unauthorized = 3
    case poweredOff = 4
    case poweredOn = 5

    init(_ state: ManagerState) {
        switch state {
        case .unknown: self = .unknown
        case .resetting: self = .resetting
        case .unsupported: self = .unsupported
        case .unauthorized: self = .unauthorized
        case .poweredOff: self = .poweredOff
        case .poweredOn: self = .poweredOn
        }
    }

    /// The kit's state.
    var managerState: ManagerState {
        switch self {
        case .unknown: .unknown
        case .resetting: .resetting
        case .unsupported: .unsupported
        case .unauthorized: .unauthorized
        case .poweredOff: .poweredOff
        case .poweredOn: .poweredOn
        }
    }

    public var description: String {
        switch self {
        case .unknown: "unknown"
        case .resetting: "resetting"
        case .unsupported: "unsupported"
        case .unauthorized: "unauthorized"
        case .poweredOff: "poweredOff"
        case .poweredOn: "poweredOn"
        }
    }
}

/// Whether the app may use Bluetooth, with CoreBluetooth's raw values (`CBManagerAuthorization`).
public enum CBMManagerAuthorization: Int, Sendable {
    case notDetermined = 0
    case restricted = 1
    case denied = 2
    case allowedAlways = 3
}

/// The app's authorization for the peripheral role under its names before iOS 13
/// (`CBPeripheralManagerAuthorizationStatus`), with CoreBluetooth's raw values.
public enum CBMPeripheralManagerAuthorizationStatus: Int, Sendable {
    case notDetermined = 0
    case restricted = 1
    case denied = 2
    case authorized = 3

    /// The status that stands for `authorization`.
    public init(_ authorization: CBMManagerAuthorization) {
        switch authorization {
        case .notDetermined: self = .notDetermined
        case .restricted: self = .restricted
        case .denied: self = .denied
        case .allowedAlways: self = .authorized
        }
    }
}

/// The base of the managers (`CBManager`): their state and the app's authorization.
open class CBMManager: NSObject, @unchecked Sendable {
    // @unchecked Sendable: subclasses keep their state behind locks.

    /// The manager's state. It is `unknown` until the manager's first
    /// `…DidUpdateState` callback, as in CoreBluetooth.
    open var state: CBMManagerState { .unknown }

    /// The app's Bluetooth authorization (`CBManager.authorization`). For a manager on a
    /// bridge, what the test set on it with ``CBMCentralManager/simulateAuthorization(_:)``;
    /// else `allowedAlways`.
    open var authorization: CBMManagerAuthorization { .allowedAlways }

    /// The app's Bluetooth authorization, for the current test's bridge
    /// (`MockBLEBridge.current`) when there is one: `allowedAlways` unless a test changed it
    /// with ``CBMCentralManager/simulateAuthorization(_:)`` on a manager of that bridge.
    /// Without a bridge on Apple platforms, CoreBluetooth's own value.
    public class var authorization: CBMManagerAuthorization {
        if let bridge = BridgeScope.current { return AuthorizationBook.value(for: bridge) }
        return NativeSupport.authorization
    }
}

/// The kind of write (`CBCharacteristicWriteType`), with CoreBluetooth's raw values.
public enum CBMCharacteristicWriteType: Int, Sendable {
    case withResponse = 0
    case withoutResponse = 1

    var writeType: WriteType { self == .withResponse ? .withResponse : .withoutResponse }
}

/// The state of a peripheral's connection to the app (`CBPeripheralState`).
public enum CBMPeripheralState: Int, Sendable, CustomStringConvertible {
    case disconnected = 0
    case connecting = 1
    case connected = 2
    case disconnecting = 3

    public var description: String {
        switch self {
        case .disconnected: "disconnected"
        case .connecting: "connecting"
        case .connected: "connected"
        case .disconnecting: "disconnecting"
        }
    }
}

/// What a characteristic supports (`CBCharacteristicProperties`), with the ATT bits.
public struct CBMCharacteristicProperties: OptionSet, Sendable, Hashable {
    public let rawValue: UInt
    public init(rawValue: UInt) { self.rawValue = rawValue }

    public static let broadcast = CBMCharacteristicProperties(rawValue: 0x01)
    public static let read = CBMCharacteristicProperties(rawValue: 0x02)
    public static let writeWithoutResponse = CBMCharacteristicProperties(rawValue: 0x04)
    public static let write = CBMCharacteristicProperties(rawValue: 0x08)
    public static let notify = CBMCharacteristicProperties(rawValue: 0x10)
    public static let indicate = CBMCharacteristicProperties(rawValue: 0x20)
    public static let authenticatedSignedWrites = CBMCharacteristicProperties(rawValue: 0x40)
    public static let extendedProperties = CBMCharacteristicProperties(rawValue: 0x80)
    public static let notifyEncryptionRequired = CBMCharacteristicProperties(rawValue: 0x100)
    public static let indicateEncryptionRequired = CBMCharacteristicProperties(rawValue: 0x200)
}

/// The central manager's optional features (`CBCentralManager.Feature`).
public struct CBMCentralManagerFeature: OptionSet, Sendable, Hashable {
    public let rawValue: UInt
    public init(rawValue: UInt) { self.rawValue = rawValue }

    /// Connection events (`registerForConnectionEvents(options:)`).
    public static let extendedScanAndConnect = CBMCentralManagerFeature(rawValue: 1 << 0)
}

/// What happened to a peer in a connection event (`CBConnectionEvent`).
public enum CBMConnectionEvent: Int, Sendable {
    case peerDisconnected = 0
    case peerConnected = 1
}
