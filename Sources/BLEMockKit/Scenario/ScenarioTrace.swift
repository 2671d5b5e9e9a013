import BLECore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// What running a ``Scenario`` produced: one ``Record`` per step, and the expectations that
/// failed. Print it with ``json``, ``text(for:)``, ``mermaid(for:)`` or ``html(for:)``.
public struct ScenarioTrace: Sendable, Hashable {
    /// The scenario's name.
    public var name: String
    /// The mode it ran in.
    public var mode: Scenario.Mode
    /// The seed it ran with.
    public var seed: UInt64
    /// One record per step that ran, in order.
    public var records: [Record]
    /// The steps whose expectation did not hold, in order.
    public var failures: [Failure]
    /// Everything the run's bridge logged, set-up and shut-down included (each record's
    /// ``Record/logRange`` says which entries are its step's). ``html(for:)`` draws it;
    /// ``json`` leaves it out. Empty for a trace built without a run.
    public var log: [BridgeLogEntry]
    /// The run's central and peripheral, with their identifiers in ``log``.
    public var participants: [TimelinePage.Participant]

    /// Creates a trace.
    public init(
        name: String, mode: Scenario.Mode, seed: UInt64, records: [Record], failures: [Failure],
        log: [BridgeLogEntry] = [], participants: [TimelinePage.Participant] = []
    ) {
        self.name = name
        self.mode = mode
        self.seed = seed
        self.records = records
        self.failures = failures
        self.log = log
        self.participants = participants
    }

    /// Whether every expectation held.
    public var passed: Bool { failures.isEmpty }

    /// A step whose `expect` did not hold.
    public struct Failure: Sendable, Hashable, CustomStringConvertible {
        /// The step's index.
        public var step: Int
        /// The step's op.
        public var op: String
        /// The step's line in the scenario file (0 when unknown).
        public var line: Int
        /// One message per mismatching field.
        public var mismatches: [String]

        /// Creates a failure.
        public init(step: Int, op: String, line: Int, mismatches: [String]) {
            self.step = step
            self.op = op
            self.line = line
            self.mismatches = mismatches
        }

        /// E.g. `step 3 (read, line 12): expected attError 3, got 5`.
        public var description: String {
            let location = line > 0 ? "\(op), line \(line)" : op
            return "step \(step) (\(location)): " + mismatches.joined(separator: "; ")
        }
    }

    /// An error as a trace shows it: its domain (`att`, `cb` or `kit`), code and name.
    public struct TraceError: Sendable, Hashable {
        /// `att` for ATT errors, `cb` for CoreBluetooth errors, `kit` for calls the kit refused.
        public var domain: String
        /// The ATT error code, the CBError code, or the kit's code (see ``init(_:)``).
        public var code: Int
        /// The code's name, e.g. `readNotPermitted`.
        public var name: String

        /// Creates an error record.
        public init(domain: String, code: Int, name: String) {
            self.domain = domain
            self.code = code
            self.name = name
        }

        /// The record of a thrown error. Kit errors (`APIMisuseError`) are numbered in the
        /// order ``kitNames`` lists them.
        public init(_ error: any Error) {
            switch error {
            case let error as ATTError:
                self.init(domain: "att", code: Int(error.code.rawValue), name: error.code.name)
            case let error as CoreBluetoothError:
                self.init(domain: "cb", code: error.code.rawValue, name: error.code.description)
            case ScenarioStepError.updateQueueFull:
                self.init(
                    domain: "kit", code: Self.kitNames.firstIndex(of: "updateQueueFull")!, name: "updateQueueFull")
            case ScenarioStepError.descriptorNotFound:
                self.init(
                    domain: "kit", code: Self.kitNames.firstIndex(of: "descriptorNotFound")!,
                    name: "descriptorNotFound")
            case let error as APIMisuseError:
                let name = Self.kitName(error)
                self.init(domain: "kit", code: Self.kitNames.firstIndex(of: name) ?? Self.kitNames.count, name: name)
            default:
                self.init(domain: "kit", code: Self.kitNames.count, name: String(describing: type(of: error)))
            }
        }

        /// The kit's error names, in code order.
        public static let kitNames = [
            "notPoweredOn", "characteristicNotFound", "ambiguousCharacteristic", "unknownRequest",
            "characteristicNotPublished", "serviceNotPublished", "characteristicCannotNotify", "invalidService",
            "valueTooLong", "staticCharacteristic", "invalidConfiguration", "updateQueueFull", "managerShutDown",
            "writeWithoutResponseNotSupported", "clientConfigurationWrite", "writeWithoutResponseQueueFull",
            "responseToCommand", "descriptorNotFound", "l2capChannelNotPublished",
            "invalidArgument",
        ]

        static func kitName(_ error: APIMisuseError) -> String {
            switch error {
            case .notPoweredOn: "notPoweredOn"
            case .characteristicNotFound: "characteristicNotFound"
            case .ambiguousCharacteristic: "ambiguousCharacteristic"
            case .unknownRequest: "unknownRequest"
            case .characteristicNotPublished: "characteristicNotPublished"
            case .serviceNotPublished: "serviceNotPublished"
            case .characteristicCannotNotify: "characteristicCannotNotify"
            case .invalidService: "invalidService"
            case .valueTooLong: "valueTooLong"
            case .staticCharacteristic: "staticCharacteristic"
            case .invalidConfiguration: "invalidConfiguration"
            case .managerShutDown: "managerShutDown"
            case .writeWithoutResponseNotSupported: "writeWithoutResponseNotSupported"
            case .clientConfigurationWrite: "clientConfigurationWrite"
            case .writeWithoutResponseQueueFull: "writeWithoutResponseQueueFull"
            case .responseToCommand: "responseToCommand"
            case .l2capChannelNotPublished: "l2capChannelNotPublished"
            case .invalidArgument: "invalidArgument"
            }
        }

        var value: TraceValue {
            .object([("domain", .string(domain)), ("code", .int(code)), ("name", .string(name))])
        }
    }
}
