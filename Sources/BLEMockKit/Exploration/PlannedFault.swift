import BLECore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// One fault of an exploration's schedule: what goes wrong, at which virtual time, and on
/// which of the managers present then.
///
/// A planned fault names no identifiers: when it fires it picks its target among the links,
/// peripherals or centrals on the bridge at that moment (the one at ``target``, counting
/// modulo how many there are, in the order they joined the bridge). When there is none (no
/// link is up for a disconnect, no central has pairing to refuse), it does nothing and
/// counts as not fired in the exploration's coverage.
public struct PlannedFault: Sendable, Hashable {
    /// What goes wrong.
    public enum Kind: String, Sendable, Hashable, CaseIterable, Comparable {
        /// A link drops: the central sees a disconnect with ``PlannedFault/coreBluetoothError``
        /// and its waiting operations fail with it.
        case disconnect
        /// A peripheral goes out of range for ``PlannedFault/duration`` (longer than the
        /// supervision timeout, so its links drop with `connectionTimeout`), then comes back.
        case outOfRange
        /// A peripheral's signal fades for ``PlannedFault/duration``, shorter than the
        /// supervision timeout: packets wait both ways (requests and answers are delayed) and
        /// nothing drops.
        case fade
        /// A peripheral resets: its end of every link is gone at once, and each central notices
        /// at the supervision timeout.
        case reset
        /// A central's Bluetooth goes off (the user toggles it) for ``PlannedFault/duration``,
        /// then on again.
        case powerCycle
        /// The next ``PlannedFault/operation`` of any central (an ATT request: a discovery, a
        /// read, a write or a subscription) fails with ``PlannedFault/attError``, as if the
        /// peripheral answered so.
        case attError
        /// The next ``PlannedFault/operation`` of any central fails with
        /// ``PlannedFault/coreBluetoothError``. An exploration draws it for a connect
        /// (`connectionFailed`); a plan written by hand may aim it at another operation.
        case coreBluetoothError
        /// The next ``PlannedFault/operation`` of any central is never answered
        /// (``ErrorInjection/Failure/neverAnswers``): it waits until the link drops, which
        /// tests the app's own timeouts.
        case neverAnswered
        /// The next pairing a central starts is refused (the user declines it).
        case pairingRefused
        /// A central's Bluetooth resets (the system's Bluetooth process restarts): its state is
        /// `resetting` for ``PlannedFault/duration``, then `poweredOn`. Its scan, connection
        /// attempts and links end, and, unlike a power cycle, everything the app held from it is
        /// invalid: a CoreBluetooth-shaped app must discover or retrieve its peripherals again.
        case bluetoothReset

        public static func < (lhs: Kind, rhs: Kind) -> Bool {
            allCases.firstIndex(of: lhs)! < allCases.firstIndex(of: rhs)!
        }

        /// The kind's name after "a" or "an": `an attError`, `a reset`.
        var withArticle: String {
            ("aeiou".contains(rawValue.first ?? "x") ? "an " : "a ") + rawValue
        }

        /// The fields besides `at` and `target` a fault of this kind reads.
        var fieldsRead: [Field] {
            switch self {
            case .outOfRange, .fade, .powerCycle, .bluetoothReset: [.duration]
            case .disconnect: [.coreBluetoothError]
            case .attError: [.operation, .characteristic, .attError]
            case .coreBluetoothError: [.operation, .characteristic, .coreBluetoothError]
            case .neverAnswered: [.operation, .characteristic]
            case .reset, .pairingRefused: []
            }
        }

        /// Whether the fault arms an error for a later operation (it fires when that operation
        /// comes, if it does).
        public var isInjection: Bool {
            switch self {
            case .attError, .coreBluetoothError, .neverAnswered: true
            default: false
            }
        }
    }

    /// What goes wrong.
    public var kind: Kind
    /// When, in virtual time from the start of the run.
    public var at: Duration
    /// How long it lasts, for ``Kind/outOfRange``, ``Kind/fade``, ``Kind/powerCycle`` and
    /// ``Kind/bluetoothReset``; zero for the others.
    public var duration: Duration
    /// Which link, peripheral or central it hits, among those present when it fires (modulo
    /// their number).
    public var target: Int
    /// The operation an injected error fails (``Kind/attError``,
    /// ``Kind/coreBluetoothError``, ``Kind/neverAnswered``).
    public var operation: ErrorInjection.Operation?
    /// The characteristic an injected error aims at: the next ``operation`` on it fails,
    /// however many operations on others come first; `nil` for the next on any.
    public var characteristic: BluetoothUUID?
    /// The ATT error of an ``Kind/attError``.
    public var attError: ATTError.Code?
    /// The CoreBluetooth error of a ``Kind/disconnect`` or ``Kind/coreBluetoothError``.
    public var coreBluetoothError: CoreBluetoothError.Code?

    /// Creates a planned fault.
    public init(
        _ kind: Kind, at: Duration, duration: Duration = .zero, target: Int = 0,
        operation: ErrorInjection.Operation? = nil, characteristic: BluetoothUUID? = nil,
        attError: ATTError.Code? = nil, coreBluetoothError: CoreBluetoothError.Code? = nil
    ) {
        self.kind = kind
        self.at = at
        self.duration = duration
        self.target = target
        self.operation = operation
        self.characteristic = characteristic
        self.attError = attError
        self.coreBluetoothError = coreBluetoothError
    }

    /// Why the fault could not do what it says, if so, naming the field: an injected-error
    /// kind without an ``operation``, a field its kind never reads (set, it would be ignored), a
    /// negative ``at`` or ``duration``, or an injection the bridge would refuse as it fires
    /// (``ErrorInjection``'s rules: an ``attError`` of `.success`, or for an operation no ATT
    /// response answers). ``Exploration/replay(_:timeLimit:stallPatience:failsOnLeftovers:_:)``
    /// refuses a plan with such a fault (``ExplorationPlan/problem``) rather than run it.
    public var problem: String? {
        if at < .zero {
            return "at: \(FixtureDuration.string(at)) is before the run's start; give a time of 0s or later"
        }
        if duration < .zero { return "duration: \(FixtureDuration.string(duration)) is negative; give 0s or more" }
        if kind.isInjection, operation == nil {
            return "operation: \(kind.withArticle) fault needs an operation to fail (.read, .connect, …)"
        }
        let reads = kind.fieldsRead
        let set: [Field: Bool] = [
            .duration: duration != .zero, .operation: operation != nil, .characteristic: characteristic != nil,
            .attError: attError != nil, .coreBluetoothError: coreBluetoothError != nil,
        ]
        for field in Field.allCases where set[field] == true && !reads.contains(field) {
            return "\(field.rawValue): \(kind.withArticle) fault does not read it"
                + (reads.isEmpty ? "" : " (it reads \(reads.map(\.rawValue).joined(separator: ", ")))")
                + "; leave it out"
        }
        if let injection, let problem = injection.problem(inCentral: true) {
            return "operation: \(kind.withArticle) fault's error would be refused as it fires: \(problem)"
        }
        return nil
    }

    /// A field of a fault besides ``at``, ``kind`` and ``target`` (which every kind reads), with
    /// its name in a scenario's plan.
    enum Field: String, CaseIterable {
        case duration, operation, characteristic, attError, coreBluetoothError

        /// The field's name in a scenario's `plan`.
        var scenarioName: String {
            switch self {
            case .duration: "for"
            case .coreBluetoothError: "error"
            default: rawValue
            }
        }
    }

    /// The injection an injected-error fault installs when it fires, if it is one.
    var injection: ErrorInjection? {
        guard let operation else { return nil }
        switch kind {
        case .attError:
            return ErrorInjection(
                operation, failure: .att(attError ?? .unlikelyError), frequency: .once, characteristic: characteristic)
        case .coreBluetoothError:
            return ErrorInjection(
                operation, failure: .coreBluetooth(coreBluetoothError ?? .connectionFailed), frequency: .once,
                characteristic: characteristic)
        case .neverAnswered:
            return ErrorInjection(operation, failure: .neverAnswers, frequency: .once, characteristic: characteristic)
        default:
            return nil
        }
    }
}

extension PlannedFault: CustomStringConvertible {
    /// The fault in words, e.g. `"at 1.2s a link drops with peripheralDisconnected"`.
    public var description: String {
        let when = "at \(FixtureDuration.string(at))"
        let lasting = "for \(FixtureDuration.string(duration))"
        let which = target == 0 ? "" : " (target \(target))"
        switch kind {
        case .disconnect:
            return "\(when) a link drops with \(coreBluetoothError ?? .connectionTimeout)\(which)"
        case .outOfRange:
            return "\(when) a peripheral goes out of range \(lasting)\(which)"
        case .fade:
            return "\(when) a peripheral's signal fades \(lasting) (packets wait)\(which)"
        case .reset:
            return "\(when) a peripheral resets\(which)"
        case .powerCycle:
            return "\(when) a central's Bluetooth turns off \(lasting)\(which)"
        case .attError:
            let code = attError ?? .unlikelyError
            return "\(when) the next \(aimed) fails with ATT \(code)"
        case .coreBluetoothError:
            return "\(when) the next \(aimed) fails with \(coreBluetoothError ?? .connectionFailed)"
        case .neverAnswered:
            return "\(when) the next \(aimed) is never answered"
        case .pairingRefused:
            return "\(when) the next pairing is refused\(which)"
        case .bluetoothReset:
            return "\(when) a central's Bluetooth resets \(lasting)\(which)"
        }
    }
}

extension PlannedFault {
    /// What an injected-error fault aims at: its operation, on its characteristic if it names
    /// one; `nil` for a fault that injects no error.
    var aim: Target? { operation.map { Target($0, on: characteristic) } }

    /// What an injected-error fault aims at, in words: `write`, or `write on FE03`.
    var aimed: String { aim?.description ?? "operation" }

    /// An operation an injected-error fault can aim at: an operation of a kind, on one
    /// characteristic (or on none: a connect, a service discovery). An exploration collects
    /// those its calibration run made, and aims three in four of its injected errors at one of them, drawn
    /// evenly: an operation made once (a commit, an authentication) is hit as often as one made
    /// a hundred times, which aiming at "the next operation" of a kind would almost never do.
    public struct Target: Sendable, Hashable, Comparable, CustomStringConvertible {
        /// The operation.
        public var operation: ErrorInjection.Operation
        /// The characteristic it is made on, if any.
        public var characteristic: BluetoothUUID?

        /// Creates a target.
        public init(_ operation: ErrorInjection.Operation, on characteristic: BluetoothUUID? = nil) {
            self.operation = operation
            self.characteristic = characteristic
        }

        public static func < (lhs: Target, rhs: Target) -> Bool {
            (lhs.operation.rawValue, lhs.characteristic?.description ?? "")
                < (rhs.operation.rawValue, rhs.characteristic?.description ?? "")
        }

        /// E.g. `"write on FE03"`, or `"connect"`.
        public var description: String {
            characteristic.map { "\(operation.rawValue) on \($0)" } ?? operation.rawValue
        }
    }
}
