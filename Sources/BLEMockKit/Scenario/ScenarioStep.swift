import BLECore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// One step of a ``Scenario``: an operation, and what its trace record must show.
public struct ScenarioStep: Sendable, Hashable {
    /// The step's index in the scenario, from 0 (the trace's `step`).
    public var index: Int
    /// What the step does.
    public var operation: Operation
    /// The trace fields the step's record must match (`"expect"`), if any.
    public var expectation: ScenarioExpectation?
    /// Where the step starts in its file (1-based; 0 when built in code).
    public var line: Int
    /// The column where the step starts.
    public var column: Int

    /// Creates a step.
    public init(
        index: Int, operation: Operation, expectation: ScenarioExpectation? = nil, line: Int = 0, column: Int = 0
    ) {
        self.index = index
        self.operation = operation
        self.expectation = expectation
        self.line = line
        self.column = column
    }

    /// Which manager a `powerOn`, `setState` or `fault` of kind `powerOff` acts on.
    public enum Role: String, Sendable, Hashable, CaseIterable {
        case central, peripheral
    }

    /// A characteristic of the scenario's peripheral, as a step names it.
    public struct CharacteristicReference: Sendable, Hashable, CustomStringConvertible {
        /// The name as written: an `id`, or a UUID string.
        public var name: String
        /// The index of its service in the profile.
        public var serviceIndex: Int
        /// The index of the characteristic in its service.
        public var characteristicIndex: Int

        /// Creates a reference.
        public init(name: String, serviceIndex: Int, characteristicIndex: Int) {
            self.name = name
            self.serviceIndex = serviceIndex
            self.characteristicIndex = characteristicIndex
        }

        public var description: String { name }
    }

    /// The failures an `inject` step can install, as the format writes them.
    public struct Injection: Sendable, Hashable {
        /// The operation that fails (`target`).
        public var target: ErrorInjection.Operation
        /// Only operations on this characteristic fail (`char`), if given.
        public var characteristic: CharacteristicReference?
        /// How it fails (`attError`, `cbError` or `neverAnswers`).
        public var failure: ErrorInjection.Failure
        /// How many matching operations fail (`times`). Defaults to 1.
        public var times: Int

        /// Creates an injection step's payload.
        public init(
            target: ErrorInjection.Operation, characteristic: CharacteristicReference? = nil,
            failure: ErrorInjection.Failure, times: Int = 1
        ) {
            self.target = target
            self.characteristic = characteristic
            self.failure = failure
            self.times = times
        }
    }

    /// What an `advance` step with `to` counts its time from (`from`).
    public enum AdvanceOrigin: String, Sendable, Hashable, CaseIterable {
        /// The end of the most recent `connect` step that succeeded (the run's start before
        /// one): where a recording's and a capture's times count from.
        case connect
        /// The run's start: the origin of the trace's `time`.
        case start
    }

    /// The kinds of `fault`.
    public enum FaultKind: String, Sendable, Hashable, CaseIterable {
        /// The link drops (default error: connection timeout).
        case disconnect
        /// The peripheral resets: its links drop, it keeps its services and advertising.
        case reset
        /// The peripheral goes out of range: not heard; links time out.
        case outOfRange
        /// The peripheral comes back in range.
        case inRange
        /// Bluetooth is turned off on the central (or `role: peripheral`).
        case powerOff
    }

    /// What a step does; the cases mirror the format's ops.
    public enum Operation: Sendable, Hashable {
        /// Brings a manager to `poweredOn` (and waits for it in realistic mode).
        case powerOn(Role)
        /// Sets a manager's state.
        case setState(ManagerState, Role)
        /// Scans for `duration` (or until the peripheral is found), optionally filtered.
        case scan(services: [BluetoothUUID]?, allowDuplicates: Bool, solicited: [BluetoothUUID], duration: Duration?)
        /// Stops scanning.
        case stopScan
        /// Connects to the peripheral.
        case connect(timeout: Duration?)
        /// Discovers services, included services, characteristics and descriptors.
        case discover
        /// Reads a characteristic, long values in parts (Read, then Read Blobs).
        case read(CharacteristicReference)
        /// One Read Request without the long-read continuation (`read` with `"long": false`):
        /// the first ATT_MTU − 1 bytes.
        case readOnce(CharacteristicReference)
        /// Reads a descriptor of a characteristic (`readDescriptor`).
        case readDescriptor(CharacteristicReference, descriptor: BluetoothUUID)
        /// Writes a descriptor of a characteristic (`writeDescriptor`).
        case writeDescriptor(CharacteristicReference, descriptor: BluetoothUUID, value: Data)
        /// Sets a manager's preferred ATT_MTU for links made from then on (`setMTU`), so the
        /// next connection negotiates with it.
        case setMTU(Int, Role)
        /// Writes a characteristic.
        case write(CharacteristicReference, value: Data, withResponse: Bool)
        /// Writes a characteristic without response once per value, back to back, as an app
        /// fills the transmit queue (`write` with `values`): each write waits only for room in
        /// the queue, so a connection event carries as many as the link allows; the step ends
        /// when all have crossed.
        case writeWithoutResponseBurst(CharacteristicReference, values: [Data])
        /// Enables notifications or indications (notifications when the characteristic has
        /// both, as CoreBluetooth does).
        case subscribe(CharacteristicReference)
        /// Enables indications on a characteristic that has both kinds (`subscribe` with
        /// `"indicate": true`).
        case subscribeToIndications(CharacteristicReference)
        /// Disables them.
        case unsubscribe(CharacteristicReference)
        /// The peripheral notifies its subscribed centrals.
        case notify(CharacteristicReference, value: Data)
        /// The peripheral notifies its subscribed centrals once per value, back to back
        /// (`notify` with `values`): each update waits only for room in the peripheral's
        /// queue, so a connection event carries as many as the link allows; the step ends when
        /// all have crossed.
        case notifyBurst(CharacteristicReference, values: [Data])
        /// The peripheral indicates to its subscribed centrals.
        case indicate(CharacteristicReference, value: Data)
        /// A Read Blob Request at `offset`, as the peripheral receives it.
        case readRequest(CharacteristicReference, offset: Int)
        /// Reads the RSSI of the link.
        case readRSSI
        /// Lets virtual time pass.
        case advance(Duration)
        /// Lets virtual time pass until this long after `origin` (`advance` with `to` and
        /// `from`), or not at all if that time has passed: a replay at recorded times that
        /// does not add the time its own steps took.
        case advanceTo(Duration, from: AdvanceOrigin)
        /// Installs an error for the next matching operation(s).
        case inject(Injection)
        /// Something goes wrong on the air.
        case fault(FaultKind, role: Role, error: CoreBluetoothError.Code?)
        /// Ends the connection from one side.
        case disconnect(by: Role)
        /// The peripheral sets a dynamic characteristic's current value (what reads get),
        /// without notifying anyone.
        case setValue(CharacteristicReference, value: Data)

        /// The op's name as the format writes it.
        public var name: String {
            switch self {
            case .powerOn: "powerOn"
            case .setState: "setState"
            case .scan: "scan"
            case .stopScan: "stopScan"
            case .connect: "connect"
            case .discover: "discover"
            case .read, .readOnce: "read"
            case .readDescriptor: "readDescriptor"
            case .writeDescriptor: "writeDescriptor"
            case .setMTU: "setMTU"
            case .write, .writeWithoutResponseBurst: "write"
            case .subscribe, .subscribeToIndications: "subscribe"
            case .unsubscribe: "unsubscribe"
            case .notify, .notifyBurst: "notify"
            case .indicate: "indicate"
            case .readRequest: "readRequest"
            case .readRSSI: "readRSSI"
            case .advance, .advanceTo: "advance"
            case .inject: "inject"
            case .fault: "fault"
            case .disconnect: "disconnect"
            case .setValue: "setValue"
            }
        }

        /// Every op name, in the format's order.
        public static let names = [
            "powerOn", "setState", "scan", "stopScan", "connect", "discover", "read", "write", "subscribe",
            "unsubscribe", "notify", "indicate", "readRequest", "readRSSI", "advance", "inject", "fault", "disconnect",
            "setValue", "readDescriptor", "writeDescriptor", "setMTU",
        ]
    }
}
