import BLECore
import BLEMockKit
import Foundation

/// The names the simulated system gives the peripherals it has met, as CoreBluetooth names a
/// `CBPeripheral`: the local name it last advertised until the system has been connected to it,
/// then the GAP device name the system read over that connection, which it keeps from then on
/// (also when the device advertises another name later: an app that wants the advertised name
/// reads `CBAdvertisementDataLocalNameKey`). A peripheral never connected that advertises no
/// name has none.
///
/// A pure value: the engines note what the simulation reports, in its order, and name each
/// peripheral of an event from it (see ``SystemPeripheralNameBook``).
struct SystemPeripheralNames: Sendable {
    /// The local name each peripheral last advertised (advertisements without one leave it).
    private var advertised: [UUID: String] = [:]
    /// The peripherals the system has been connected to (by any app or manager).
    private var connected: Set<UUID> = []

    /// A scan heard `peripheral` advertise `localName` (or no name).
    mutating func noteAdvertisement(_ localName: String?, of peripheral: UUID) {
        guard let localName else { return }
        advertised[peripheral] = localName
    }

    /// The system connected to `peripheral`, and read its GAP name.
    mutating func noteConnected(_ peripheral: UUID) {
        connected.insert(peripheral)
    }

    /// The system retrieved `peripheral` for an app (it knows it): when it never heard the
    /// peripheral advertise a name, it knows it from an earlier connection (a test's
    /// `simulateCaching()`), whose GAP name it kept.
    mutating func noteRetrieved(_ peripheral: UUID) {
        guard advertised[peripheral] == nil else { return }
        connected.insert(peripheral)
    }

    /// Whether the system has been connected to `peripheral`.
    func hasConnected(_ peripheral: UUID) -> Bool { connected.contains(peripheral) }

    /// `peripheral` (whose `name` is its GAP name, as the simulation knows it) named as the
    /// system names it now.
    func naming(_ peripheral: RemotePeripheral) -> RemotePeripheral {
        let advertisedName = advertised[peripheral.identifier]
        let name =
            connected.contains(peripheral.identifier) ? (peripheral.name ?? advertisedName) : advertisedName
        guard name != peripheral.name else { return peripheral }
        return RemotePeripheral(identifier: peripheral.identifier, name: name)
    }
}

/// The ``SystemPeripheralNames`` of one bridge (the system the managers on it share), behind a
/// lock.
final class SystemPeripheralNameBook: @unchecked Sendable {
    // @unchecked Sendable: `names` is only read and written with `lock` held.
    private let lock = Lock()
    private var names = SystemPeripheralNames()

    /// The book of `bridge`.
    static func of(_ bridge: MockBLEBridge) -> SystemPeripheralNameBook {
        bridge.frontEndSettings.object(for: ObjectIdentifier(SystemPeripheralNameBook.self)) {
            SystemPeripheralNameBook()
        }
    }

    /// Changes the names (see ``SystemPeripheralNames``).
    func update(_ change: (inout SystemPeripheralNames) -> Void) {
        lock.withLock { change(&names) }
    }

    /// `peripheral` named as the system names it now.
    func naming(_ peripheral: RemotePeripheral) -> RemotePeripheral {
        lock.withLock { names.naming(peripheral) }
    }

    /// Every peripheral an event names, named as the system names it once the event is noted:
    /// an advertisement notes its local name, a connection (this manager's, or one another app
    /// made that the system reports) notes that the GAP name is known.
    func naming(_ event: CentralEvent) -> CentralEvent {
        lock.withLock {
            switch event {
            case .stateChanged, .valueUpdated:
                return event
            case .discovered(var discovery):
                names.noteAdvertisement(discovery.advertisementData.localName, of: discovery.peripheral.identifier)
                discovery.peripheral = names.naming(discovery.peripheral)
                return .discovered(discovery)
            case .connected(let peripheral):
                names.noteConnected(peripheral.identifier)
                return .connected(names.naming(peripheral))
            case .failedToConnect(let peripheral, let error):
                return .failedToConnect(names.naming(peripheral), error)
            case .disconnected(let peripheral, let error):
                return .disconnected(names.naming(peripheral), error)
            case .readyToSendWriteWithoutResponse(let peripheral):
                return .readyToSendWriteWithoutResponse(names.naming(peripheral))
            case .servicesModified(let peripheral, let invalidated):
                return .servicesModified(names.naming(peripheral), invalidated: invalidated)
            case .nameUpdated(let peripheral):
                // Only a connected peripheral's name change reaches a central: its GAP name.
                names.noteConnected(peripheral.identifier)
                return .nameUpdated(names.naming(peripheral))
            case .connectionEvent(let kind, let peripheral):
                if kind == .peerConnected { names.noteConnected(peripheral.identifier) }
                return .connectionEvent(kind, names.naming(peripheral))
            case .ancsAuthorizationUpdated(let peripheral, let isAuthorized):
                return .ancsAuthorizationUpdated(names.naming(peripheral), isAuthorized: isAuthorized)
            case .willRestoreState(var restored):
                // The system kept these peripherals for the app: it had connected to them.
                for peripheral in restored.peripherals { names.noteConnected(peripheral.identifier) }
                restored.peripherals = restored.peripherals.map(names.naming)
                return .willRestoreState(restored)
            }
        }
    }
}
