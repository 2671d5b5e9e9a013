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
    /// What the system knows of a peripheral's name.
    private enum Known: Sendable {
        /// The local name it last advertised (it has not been connected).
        case advertised(String)
        /// It has been connected: its GAP name is known (and the name it last advertised, if any,
        /// stands in for a GAP name the simulation does not know).
        case connected(advertised: String?)
    }

    /// By peripheral: one table, so a lookup is one hash.
    private var known: [UUID: Known] = [:]

    /// A scan heard `peripheral` advertise `localName` (or no name).
    mutating func noteAdvertisement(_ localName: String?, of peripheral: UUID) {
        guard let localName else { return }
        if case .connected = known[peripheral] {
            known[peripheral] = .connected(advertised: localName)
        } else {
            known[peripheral] = .advertised(localName)
        }
    }

    /// The system connected to `peripheral`, and read its GAP name.
    mutating func noteConnected(_ peripheral: UUID) {
        switch known[peripheral] {
        case .connected: return
        case .advertised(let name): known[peripheral] = .connected(advertised: name)
        case nil: known[peripheral] = .connected(advertised: nil)
        }
    }

    /// The system retrieved `peripheral` for an app (it knows it): when it never heard the
    /// peripheral advertise a name, it knows it from an earlier connection (a test's
    /// `simulateCaching()`), whose GAP name it kept.
    mutating func noteRetrieved(_ peripheral: UUID) {
        guard known[peripheral] == nil else { return }
        known[peripheral] = .connected(advertised: nil)
    }

    /// Whether the system has been connected to `peripheral`.
    func hasConnected(_ peripheral: UUID) -> Bool {
        if case .connected = known[peripheral] { return true }
        return false
    }

    /// `peripheral` (whose `name` is its GAP name, as the simulation knows it) named as the
    /// system names it now.
    func naming(_ peripheral: RemotePeripheral) -> RemotePeripheral {
        let name: String?
        switch known[peripheral.identifier] {
        case .connected(let advertised): name = peripheral.name ?? advertised
        case .advertised(let advertised): name = advertised
        case nil: name = nil
        }
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
